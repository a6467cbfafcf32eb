"""What the feature-collapse experiment measures on a trained word network: accuracies, the
regularised objective, norms and the embedding-level collapse measures
(:func:`nclab.collapse.embedding.feature_collapse_measures`) of its word vectors and u blocks, and
the vectors of the paper's PCA panels with their singular values."""

from __future__ import annotations

from typing import Any

import torch

from ...collapse.embedding import feature_collapse_measures
from ...models.wordnet import WordNet, collapse_views, full_batch_objective
from ...report.figures import pca
from ..common.evaluation import accuracy

#: the word-level measures kept in every record (the first four also for the u blocks)
KEEP = ("dir_nc1", "nc1_trace", "etf", "norm_cv", "spearman_norm_freq", "spearman_norm_count")
#: a PCA panel of more vectors shows this many, evenly spaced (deterministic)
PCA_POINTS = 20000


@torch.no_grad()
def measure(
    net: WordNet,
    task: Any,
    data: Any,
    lam_w: float,
    lam_u: float,
    steps: int,
    full: bool = True,
) -> dict[str, Any]:
    """One record: accuracies, objective, norms, collapse type and the kept collapse measures
    (``full``: also every embedding metric, as ``embedding_metrics``)."""
    f, ce = full_batch_objective(net, data.x_train, data.y_train, lam_w, lam_u)
    words, u = collapse_views(net)
    m = feature_collapse_measures(
        words,
        task.word_concept,
        task.nc,
        u,
        task.latents,
        word_freq=task.word_freq,
        word_counts=data.word_counts(),
        layer_norm=net.layer_norm_kind != "none",
        geometry=net.layer_norm_kind != "learnable",
    )
    un = u.norm(dim=2)
    wn = net.W.norm(dim=1)
    out = {
        "test_acc": accuracy(net, data.x_test, data.y_test, 20000),
        "train_acc": accuracy(net, data.x_train, data.y_train, 20000),
        "train_objective": float(f),
        "train_ce": float(ce),
        "word_norm_mean": float(wn.mean()),
        "word_norm_std": float(wn.std(correction=0)),
        # the mean over concepts of the norm of the β-th word of each (Theorem 2's r_β)
        "word_norms_by_rank": wn.reshape(task.nc, -1).mean(0).tolist(),
        "rep_norm_mean": m["words"]["norm_mean"],
        "u_norm_mean": float(un.mean()),
        "u_norm_std": float(un.std(correction=0)),
        "collapse_type": m["collapse_type"],
        "steps": steps,
    }
    out["words"] = {k: m["words"].get(k) for k in KEEP}
    out["u"] = {k: m["u"].get(k) for k in KEEP[:4]}
    out["alignment"] = m["alignment"]
    if full:
        out["embedding_metrics"] = m
    return out


@torch.no_grad()
def pca_panels(net: WordNet, task: Any) -> list[tuple[str, torch.Tensor, torch.Tensor]]:
    """The paper's Fig. 3/4 panels as (title, vectors, concept of each): the word vectors (after
    the LayerNorm for h*) and the u blocks, float64, thinned to ``PCA_POINTS``."""
    words, u = collapse_views(net)
    words, u = words.detach().double(), u.detach().double().reshape(-1, net.d)
    wlabel = "word embeddings W" if net.ln is None else "word representations φ(W)"
    return [
        (wlabel, *_thin(words, task.word_concept)),
        ("vectors u_{k,ℓ} (colour: z_{k,ℓ})", *_thin(u, task.latents.reshape(-1))),
    ]


def pca_singular_values(net: WordNet, task: Any) -> dict[str, Any]:
    """The top three singular values of both PCA panels (the paper's Fig. 3 numbers) and, per
    panel, σ3/σ1 (``<panel>_third_over_first``: how far the vectors are from a plane, whatever
    their number and scale; None with fewer than three values)."""
    (_, words, _), (_, u, _) = pca_panels(net, task)
    out: dict[str, Any] = {"words": pca(words, 3)[1], "u": pca(u, 3)[1]}
    for panel in ("words", "u"):
        s = out[panel]
        out[f"{panel}_third_over_first"] = s[2] / s[0] if len(s) > 2 and s[0] > 0 else None
    return out


def _thin(vectors: torch.Tensor, groups: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    if vectors.shape[0] > PCA_POINTS:
        keep = torch.linspace(0, vectors.shape[0] - 1, PCA_POINTS).long()
        vectors, groups = vectors[keep], groups[keep]
    return vectors, groups
