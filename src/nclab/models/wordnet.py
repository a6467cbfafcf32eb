r"""The word networks h and h* of *Feature Collapse* (Laurent, von Brecht & Bresson, ICLR 2024).

``h``:  word ids (N, L) → embedding (rows of ``emb.weight``, nw×d; the paper's W is its transpose)
→ concatenation (N, L·d) → linear ``U`` (K×L·d, no bias). ``h*`` inserts a LayerNorm between
embedding and concatenation: ``"fixed"`` (no parameters, the paper's h*) or ``"learnable"``
(elementwise affine, appendix A.2). Initialisation as the authors' code: PyTorch defaults
(embedding N(0, 1), linear U(±1/√(Ld))) scaled by ``init_scale`` = 1e-3.

Objective (:func:`nclab.theory.feature_collapse.regularised_risk`): mean cross-entropy
+ λ_W/2 ‖W‖² + λ_U/2 ‖U‖², i.e. SGD with ``weight_decay`` λ_W on W and λ_U on U. The paper uses
λ_W = λ_U = λ for h and λ_W = 0 for h*. LayerNorm parameters (learnable variant) are not decayed.

Two training kernels besides plain autograd:

* :func:`sgd_step` — one faithful SGD step (same batch, same update
  :math:`p \leftarrow (1-\eta\lambda)p - \eta\nabla`) written out by hand: one gather, three GEMMs
  (the U update fused into ``addmm_`` with β = 1 − ηλ), an ``index_add_`` for W; no autograd tape,
  no temporary gradient tensors.
* :func:`full_batch_objective` — the exact full-batch objective, directly or through the one-hot
  structure (:math:`T_\ell = \varphi(W)^\top U_\ell^\top`, nw×K per position, logits
  :math:`= \sum_\ell T_\ell[x_\ell]` by ``embedding_bag``: :math:`L n_w d K + N L K` work instead
  of :math:`N L d K`); used by the L-BFGS fast path.

:func:`collapse_views` gives the word vectors and u blocks whose collapse is measured.

>>> import torch
>>> net = WordNet(nw=6, L=2, d=4, K=3, generator=torch.Generator().manual_seed(0))
>>> net(torch.tensor([[0, 5], [1, 2]])).shape
torch.Size([2, 3])
"""

from __future__ import annotations

import math
from typing import Literal

import torch
import torch.nn.functional as F
from torch import nn

from ..errors import ConfigError
from ..theory.feature_collapse import regularised_risk

LayerNormKind = Literal["none", "fixed", "learnable"]

__all__ = ["WordNet", "collapse_views", "full_batch_objective", "sgd_step"]


class WordNet(nn.Module):
    """h (``layer_norm="none"``) or h* (``"fixed"`` / ``"learnable"``)."""

    def __init__(
        self,
        nw: int,
        L: int,
        d: int,
        K: int,
        layer_norm: LayerNormKind = "none",
        ln_eps: float = 1e-5,
        init_scale: float = 1e-3,
        generator: torch.Generator | None = None,
        dtype: torch.dtype = torch.float32,
    ):
        super().__init__()
        for name, v in (("nw", nw), ("L", L), ("d", d), ("K", K)):
            if not isinstance(v, int) or v < 1:
                raise ConfigError(f"{name} must be a positive integer, got {v!r}")
        if layer_norm not in ("none", "fixed", "learnable"):
            raise ConfigError(
                f"layer_norm must be 'none', 'fixed' or 'learnable', got {layer_norm!r}"
            )
        if layer_norm != "none" and d < 2:
            raise ConfigError("LayerNorm needs d >= 2")
        if not (math.isfinite(init_scale) and init_scale > 0):
            raise ConfigError(f"init_scale must be > 0, got {init_scale}")
        self.nw, self.L, self.d, self.K = nw, L, d, K
        self.layer_norm_kind: LayerNormKind = layer_norm
        self.emb = nn.Embedding(nw, d, dtype=dtype)
        self.clf = nn.Linear(L * d, K, bias=False, dtype=dtype)
        self.ln = (
            None
            if layer_norm == "none"
            else nn.LayerNorm(
                d, eps=ln_eps, elementwise_affine=layer_norm == "learnable", dtype=dtype
            )
        )
        with torch.no_grad():  # PyTorch's default initialisations, drawn from ``generator``
            self.emb.weight.normal_(0.0, 1.0, generator=generator).mul_(init_scale)
            bound = 1.0 / math.sqrt(L * d)
            self.clf.weight.uniform_(-bound, bound, generator=generator).mul_(init_scale)

    # --- views of the weights ----------------------------------------------------------------
    @property
    def W(self) -> torch.Tensor:
        """(nw, d) word embeddings w_(α,β), one row per word id."""
        return self.emb.weight

    @property
    def U(self) -> torch.Tensor:
        """(K, L·d) linear weights."""
        return self.clf.weight

    def u_blocks(self) -> torch.Tensor:
        """(K, L, d): u_{k,ℓ}, the block of U that reads the ℓ-th word for class k."""
        return self.U.view(self.K, self.L, self.d)

    def represent(self, w: torch.Tensor) -> torch.Tensor:
        """Word representations: φ(w) for h*, w itself for h."""
        return w if self.ln is None else self.ln(w)

    def word_representations(self) -> torch.Tensor:
        return self.represent(self.W)

    # --- the network and its objective ---------------------------------------------------------
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        e = self.represent(self.emb(x))  # (N, L, d)
        return self.clf(e.reshape(x.shape[0], self.L * self.d))

    def sq_norms(self) -> tuple[torch.Tensor, torch.Tensor]:
        return self.W.pow(2).sum(), self.U.pow(2).sum()

    def objective(
        self,
        x: torch.Tensor,
        y: torch.Tensor,
        lam_w: float,
        lam_u: float,
        weights: torch.Tensor | None = None,
    ) -> torch.Tensor:
        """Regularised risk: mean CE (or Σ weights·CE when ``weights``, e.g. probabilities/K for the
        true risk) + λ_W/2‖W‖² + λ_U/2‖U‖²."""
        ce = F.cross_entropy(self(x), y, reduction="mean" if weights is None else "none")
        mean = ce if weights is None else (weights * ce).sum()
        sw, su = self.sq_norms()
        return regularised_risk(mean, sw, su, lam_w, lam_u)


def collapse_views(net: WordNet) -> tuple[torch.Tensor, torch.Tensor]:
    """(word vectors, u blocks) whose collapse is measured: W and U for h; φ(W) and U for h*.

    With a learnable LayerNorm, γ⊙φ(w)+β, the words are γ⊙φ(w): the bias β is the same vector for
    every word (its effect, u·β, is a per-class constant), so it is left out.

    >>> net = WordNet(nw=6, L=2, d=4, K=3, layer_norm="fixed")
    >>> words, u = collapse_views(net)
    >>> tuple(words.shape), tuple(u.shape)
    ((6, 4), (3, 2, 4))
    """
    u = net.u_blocks()
    if net.layer_norm_kind != "learnable":
        return net.word_representations(), u
    return F.layer_norm(net.W, (net.d,), eps=net.ln.eps) * net.ln.weight, u


def sgd_step(
    net: WordNet, x: torch.Tensor, y: torch.Tensor, lr: float, lam_w: float, lam_u: float
) -> torch.Tensor:
    """One faithful SGD step on a mini-batch (no momentum), in place; returns the batch loss.

    Same update as ``torch.optim.SGD(lr, weight_decay)`` on the mean cross-entropy, with
    hand-written gradients: for h the gathered embeddings X, logits Z = X Uᵀ, G = (softmax(Z) - Y)/B,
    ∇_X = G U, U ← (1-ηλ_U)U - η GᵀX, W ← (1-ηλ_W)W - η scatter(∇_X). h* adds the LayerNorm
    forward/backward. The learnable LayerNorm uses autograd (its parameters are not decayed).
    """
    if net.layer_norm_kind == "learnable":
        return _autograd_step(net, x, y, lr, lam_w, lam_u)
    b, L = x.shape
    d = net.d
    W, U = net.W.data, net.U.data
    flat = x.reshape(-1)
    e = W.index_select(0, flat)  # (B·L, d)
    if net.ln is not None:
        mean = e.mean(1, keepdim=True)
        cen = e - mean
        inv = torch.rsqrt(cen.pow(2).mean(1, keepdim=True) + net.ln.eps)
        e = cen.mul_(inv)
    xb = e.view(b, L * d)
    z = torch.mm(xb, U.t())  # (B, K)
    lse = torch.logsumexp(z, 1)
    loss = (lse - z.gather(1, y[:, None]).squeeze(1)).mean()
    g = z.sub_(lse[:, None]).exp_()  # softmax, in place
    g[torch.arange(b, device=g.device), y] -= 1.0
    g.div_(b)
    gx = torch.mm(g, U)  # (B, L·d), with the old U
    U.addmm_(g.t(), xb, beta=1.0 - lr * lam_u, alpha=-lr)
    ge = gx.view(b * L, d)
    if net.ln is not None:  # backward of (e - mean) / std: inv * (g - mean(g) - r mean(g r))
        ge = (ge - ge.mean(1, keepdim=True) - e * (ge * e).mean(1, keepdim=True)).mul_(inv)
    if lam_w:
        W.mul_(1.0 - lr * lam_w)
    W.index_add_(0, flat, ge, alpha=-lr)
    return loss


def _autograd_step(net: WordNet, x, y, lr, lam_w, lam_u) -> torch.Tensor:
    net.zero_grad(set_to_none=True)
    loss = F.cross_entropy(net(x), y)
    loss.backward()
    with torch.no_grad():
        for p, lam in ((net.W, lam_w), (net.U, lam_u)):
            p.mul_(1.0 - lr * lam).add_(p.grad, alpha=-lr)
        for p in net.ln.parameters():
            p.add_(p.grad, alpha=-lr)
    return loss.detach()


def full_batch_objective(
    net: WordNet,
    x: torch.Tensor,
    y: torch.Tensor,
    lam_w: float,
    lam_u: float,
    method: str = "auto",
    chunk: int = 20000,
) -> tuple[torch.Tensor, torch.Tensor]:
    """(regularised risk, mean CE) on all of (x, y), differentiable (backward inside is the
    caller's ``.backward()``).

    ``method="direct"``: the network on chunks of ``chunk`` sentences (N·L·d·K multiply-adds).
    ``method="table"``: through the one-hot structure, T = φ(W) U_ℓᵀ for every position ℓ
    (L×nw×K, L·nw·d·K multiply-adds) and logits = Σ_ℓ T[ℓ, x_ℓ] by ``embedding_bag`` (N·L·K
    memory-bound gathers). ``"auto"`` picks the cheaper by that count (a gather costed as 30
    multiply-adds). Both equal ``net.objective(x, y, lam_w, lam_u)`` up to rounding.
    """
    n, L = x.shape
    K, nw, d = net.K, net.nw, net.d
    if method == "auto":
        method = "table" if L * nw * d * K + 30 * n * L * K < n * L * d * K else "direct"
    if method == "table":
        r = net.word_representations()  # (nw, d)
        t = torch.matmul(r, net.u_blocks().permute(1, 2, 0)).reshape(L * nw, K)  # (L·nw, K)
        idx = x + torch.arange(L, device=x.device) * nw

        def logits(i: int) -> torch.Tensor:
            return F.embedding_bag(idx[i : i + chunk], t, mode="sum")
    elif method == "direct":

        def logits(i: int) -> torch.Tensor:
            return net(x[i : i + chunk])
    else:
        raise ConfigError(f"method must be 'auto', 'direct' or 'table', got {method!r}")
    ce = (
        sum(
            F.cross_entropy(logits(i), y[i : i + chunk], reduction="sum")
            for i in range(0, n, chunk)
        )
        / n
    )
    sw, su = net.sq_norms()
    return regularised_risk(ce, sw, su, lam_w, lam_u), ce
