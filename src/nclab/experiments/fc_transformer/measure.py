"""What the transformer experiments measure: accuracy (classifier) or next-token loss (language
model), the collapse by concept of the word embeddings (before positional embeddings), and of the
token states after each layer, through :func:`nclab.collapse.latent.latent_collapse`. The network
runs on its device, a chunk of sentences at a time; the collapse measures are computed on the
CPU."""

from __future__ import annotations

from typing import Any

import torch
import torch.nn.functional as F

from ...collapse.latent import latent_collapse, pca_plane_collapse
from ...models.gpt2 import word_embeddings
from ..common.latent import brief


def lm_entropies(task_model: Any) -> dict[str, float]:
    """The next-word baselines of the data model, in nats per word (exact, from the task):
    ``unigram``, the cross-entropy of the best position-blind word-frequency model (the pooled
    word marginal's entropy: a network that learnt the frequencies only); ``floor``, the data's
    entropy rate (classes uniform over the K latent sequences, words drawn within their concept
    by μ): (H(latent sequence) + L·H(μ)) / L, the Bayes loss no predictor beats.

    >>> import math
    >>> from nclab.data.sentences import make_task
    >>> e = lm_entropies(make_task(nc=3, nw=12, L=5, K=4, seed=0))
    >>> round(e["floor"], 4) == round(math.log(4) + math.log(4) / 5, 4)
    True
    """
    lat, mu = task_model.latents, task_model.mu.to(torch.float64)
    K, L, nc, sc = lat.shape[0], lat.shape[1], task_model.nc, task_model.sc
    h_mu = float(-(mu * mu.clamp_min(1e-300).log()).sum())
    _, counts = torch.unique(lat, dim=0, return_counts=True)
    p_seq = counts.to(torch.float64) / K
    h_seq = float(-(p_seq * p_seq.log()).sum())
    p_concept = torch.bincount(lat.reshape(-1), minlength=nc).to(torch.float64) / (K * L)
    p_word = (p_concept[:, None] * mu[None, :sc]).reshape(-1)
    p_word = p_word[p_word > 0]
    unigram = float(-(p_word * p_word.log()).sum())
    return {"unigram": unigram, "floor": (h_seq + L * h_mu) / L}


def inputs(x: torch.Tensor, nw: int, task: str) -> torch.Tensor:
    """Token ids: words then the class token ``nw`` (classifier), or ``nw`` (begin of sentence)
    then the words (language model)."""
    tok = torch.full((x.shape[0], 1), nw, dtype=x.dtype, device=x.device)
    return torch.cat([x, tok], 1) if task == "classify" else torch.cat([tok, x], 1)


def loss(net, x: torch.Tensor, y: torch.Tensor, nw: int, task: str) -> torch.Tensor:
    """Mean cross-entropy: of the class (classifier) or of every next word (language model)."""
    ids = inputs(x, nw, task)
    if task == "classify":
        return F.cross_entropy(net(ids), y)
    return net(input_ids=ids, labels=ids).loss  # shifted inside: the words after BOS


@torch.no_grad()
def score(net, x, y, nw: int, task: str, chunk: int = 1000) -> float:
    """Accuracy (classifier) or mean next-word cross-entropy (language model) on ``x``."""
    total, dev = 0.0, _device(net)
    for i in range(0, x.shape[0], chunk):
        xb, yb = x[i : i + chunk].to(dev), y[i : i + chunk].to(dev)
        if task == "classify":
            total += float((net(inputs(xb, nw, task)).argmax(1) == yb).sum())
        else:
            total += float(loss(net, xb, yb, nw, task)) * xb.shape[0]
    return total / x.shape[0]


@torch.no_grad()
def embeddings(net, task_model: Any) -> dict[str, Any]:
    """Collapse by concept of the word rows of the embedding table."""
    w = word_embeddings(net, task_model.nw).cpu()
    return latent_collapse(w, task_model.word_concept, task_model.nc)


@torch.no_grad()
def layers(net, x: torch.Tensor, task_model: Any, task: str) -> list[dict[str, Any]]:
    """Per hidden state (embeddings + positions, after each block) the collapse by concept of the
    states at the word positions of the sentences ``x``."""
    nw, L = task_model.nw, x.shape[1]
    ids = inputs(x, nw, task).to(_device(net))
    body = net.transformer
    hidden = body(input_ids=ids, output_hidden_states=True).hidden_states
    words = slice(0, L) if task == "classify" else slice(1, L + 1)
    labels = task_model.word_concept[x]
    out = []
    for j, h in enumerate(hidden):
        m = latent_collapse(h[:, words].double().cpu(), labels, task_model.nc, scatter="none")
        out.append({"layer": j, **brief(m)})
    return out


def _device(net) -> torch.device:
    return next(net.parameters()).device


def measure(net, task_model, data, cfg, full: bool = True) -> dict[str, Any]:
    """One record: score on test (and a train subset), the embedding collapse; ``full``: every
    embedding measure and the per-layer collapse."""
    net.eval()
    nw, task = task_model.nw, cfg.task
    key = "test_acc" if task == "classify" else "test_loss"
    n_sub = min(data.x_train.shape[0], 5000)
    sub = torch.linspace(0, data.x_train.shape[0] - 1, n_sub).long()
    emb = embeddings(net, task_model)
    out = {
        key: score(net, data.x_test, data.y_test, nw, task),
        key.replace("test", "train"): score(net, data.x_train[sub], data.y_train[sub], nw, task),
        **{f"emb_{k}": v for k, v in brief(emb).items()},
    }
    if full:
        out["embedding_metrics"] = emb
        w = word_embeddings(net, task_model.nw).detach().cpu()
        out["embedding_pca2"] = pca_plane_collapse(w, task_model.word_concept, task_model.nc)
        xs = data.x_test[: cfg.measure_sentences]
        out["layers"] = layers(net, xs, task_model, task)
    net.train()
    return out
