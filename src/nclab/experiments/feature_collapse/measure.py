"""What the feature-collapse experiment measures on a trained word network: accuracies, the
regularised objective, norms and the embedding-level collapse measures
(:func:`nclab.collapse.embedding.feature_collapse_measures`) of its word vectors and u blocks, and
the vectors of the paper's PCA panels with their singular values."""

from __future__ import annotations

import math
from typing import Any

import torch

from ...collapse.embedding import feature_collapse_measures, spearman
from ...errors import DegenerateError
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


def u_offset(net: WordNet) -> dict[str, Any]:
    r"""How far the trained U is from the set N = {Σ_k Û_k = 0} of Lemma G (h) and Lemma N (h*),
    Feature Collapse App. E.2 / F.2: ``norm`` = :math:`\|\sum_k \hat U_k\|_F / \sqrt K`, the
    Frobenius distance from U to N (the part of every u_{k,ℓ} common to the K classes, repeated
    K times), and ``relative`` = ``norm`` / :math:`\|U\|_F` (0 on N; 1/√K for blocks drawn
    independently of the class, as at initialisation; at most 1).

    >>> net = WordNet(nw=6, L=2, d=4, K=3)
    >>> with torch.no_grad():
    ...     _ = net.clf.weight.copy_(torch.ones(3, 8))  # every class the same: all common
    >>> round(u_offset(net)["relative"], 12)
    1.0
    """
    u = net.u_blocks().detach().to(torch.float64)
    norm = float(u.sum(0).norm()) / math.sqrt(u.shape[0])
    total = float(u.norm())
    return {"norm": norm, "relative": norm / total if total > 0 else None}


def common_u(net: WordNet, data: Any, lam_w: float, lam_u: float) -> dict[str, Any]:
    r"""Lemma G (h) / Lemma N (h*) on the network's weights as they are (:func:`u_offset`), with
    the bound that stationarity gives: the cross-entropy is blind to the part of U common to the
    classes (adding v_ℓ to every u_{k,ℓ} adds the same number to every logit), so the objective's
    gradient along it is λ_U times that part, and

    .. math:: \|\textstyle\sum_k \hat U_k\|_F / \sqrt K \le \|\nabla_U F\|_F / \lambda_U,

    with :math:`\nabla_U F` the full-batch gradient of the regularised training objective
    (``bound``; ``relative_bound`` over :math:`\|U\|_F`). A global minimiser has gradient 0, so
    lies in N (the lemma); an iterate of SGD or L-BFGS lies within this distance of N. ``excess``:
    :math:`\frac{\lambda_U}{2}\|\sum_k \hat U_k\|_F^2/K`, the objective the common part costs
    (what projecting U onto N would save). ``bound`` None without weight decay on U."""
    out = u_offset(net)
    u = net.clf.weight
    with torch.enable_grad():
        f, _ = full_batch_objective(net, data.x_train, data.y_train, lam_w, lam_u)
        (grad,) = torch.autograd.grad(f, [u])
    g = float(grad.detach().to(torch.float64).norm())
    total = float(u.detach().to(torch.float64).norm())
    bound = g / lam_u if lam_u > 0 else None
    return {
        **out,
        "grad_norm": g,
        "bound": bound,
        "relative_bound": bound / total if bound is not None and total > 0 else None,
        "excess": lam_u / 2 * out["norm"] ** 2,
    }


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


@torch.no_grad()
def u_vs_sampled_frequency(net: WordNet, task: Any, data: Any) -> dict[str, Any]:
    """§2.2's mechanism of Fig. 4b: the norm of u_{k,ℓ} against the mean frequency μ of the
    training words sampled at position ℓ of class k's sentences.

    ``spearman``: over every (k, ℓ); ``spearman_within``: over the occurrences of one concept in
    one class (the paper's u_{k,1} against u_{k,3}), both values centred on their group's mean,
    over the groups of at least two occurrences (``groups``); ``u_norm_cv_within``: the mean over
    those groups of std / mean of the u norms (how unequal their magnitudes are). None where the
    sampled frequencies are all equal (uniform words)."""
    x, y = data.x_train, data.y_train
    K, L = task.K, task.L
    if bool((task.word_freq == task.word_freq[0]).all()):  # uniform words: nothing to pair
        return {
            "spearman": None,
            "spearman_within": None,
            "spearman_within_abs": None,
            "u_norm_cv_within": None,
            "groups": 0,
        }
    freq = task.word_freq.to(torch.float64)[x]  # (N, L)
    count = torch.bincount(y, minlength=K).to(torch.float64)
    mean_freq = torch.zeros(K, L, dtype=torch.float64).index_add_(0, y, freq) / count[:, None]
    un = net.u_blocks().detach().to(torch.float64).norm(dim=2)  # (K, L)
    group = torch.arange(K)[:, None] * task.nc + task.latents  # (K, L): class and concept
    size = torch.bincount(group.flatten(), minlength=K * task.nc)
    keep = (size[group] >= 2).flatten()

    def centred(v: torch.Tensor) -> torch.Tensor:
        g = group.flatten()
        mean = torch.zeros(K * task.nc, dtype=torch.float64).index_add_(0, g, v.flatten())
        return (v.flatten() - mean[g] / size[g].clamp(min=1))[keep]

    def rho(a: torch.Tensor, b: torch.Tensor) -> float | None:
        try:
            return spearman(a, b)
        except DegenerateError:
            return None

    within = rho(centred(un), centred(mean_freq))
    g = group.flatten()[keep]
    u = un.flatten()[keep]
    sums = torch.zeros(K * task.nc, dtype=torch.float64)
    mean_u = sums.index_add(0, g, u) / size.clamp(min=1)
    var_u = sums.index_add(0, g, (u - mean_u[g]) ** 2) / size.clamp(min=1)
    groups = size >= 2
    cv = (var_u.sqrt() / mean_u.clamp(min=1e-300))[groups]
    return {
        "spearman": rho(un, mean_freq),
        "spearman_within": within,
        "spearman_within_abs": None if within is None else abs(within),
        "u_norm_cv_within": float(cv.mean()) if cv.numel() else None,
        "groups": int(groups.sum()),
    }


def _thin(vectors: torch.Tensor, groups: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    if vectors.shape[0] > PCA_POINTS:
        keep = torch.linspace(0, vectors.shape[0] - 1, PCA_POINTS).long()
        vectors, groups = vectors[keep], groups[keep]
    return vectors, groups
