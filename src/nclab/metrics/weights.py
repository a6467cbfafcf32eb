"""Metrics of weight matrices and pre-activations (Jacot et al.): balancedness, negativity."""

from __future__ import annotations

import torch

from .. import distributed
from .._kernels import add_gram_upper, scratch_f64, workspace
from ..errors import DegenerateError
from ..validation import F64, check_2d, check_chain, check_finite, check_matrix


def _op_norm_sym(a: torch.Tensor, uplo: str = "L") -> float:
    """Operator norm of a symmetric matrix (given by its ``uplo`` triangle): its largest absolute
    eigenvalue."""
    ev = torch.linalg.eigvalsh(a, UPLO=uplo)
    return float(ev.abs().max())


def balancedness(w_next: torch.Tensor, w_prev: torch.Tensor) -> float:
    r"""Relative imbalance of two consecutive layers :math:`W_{l+1}` (after) and :math:`W_l` (before).

    .. math:: \frac{\|W_{l+1}^\top W_{l+1} - W_l W_l^\top\|_{op}}
              {\min(\|W_{l+1}^\top W_{l+1}\|_{op}, \|W_l W_l^\top\|_{op})}

    Shapes follow ``nn.Linear``: ``w_prev`` is (n_l, n_{l-1}), ``w_next`` is (n_{l+1}, n_l).
    Source: Jacot, Súkeník, Wang & Mondelli (ICLR 2025), §6.

    >>> import torch
    >>> q, _ = torch.linalg.qr(torch.randn(4, 4, dtype=torch.float64))
    >>> round(balancedness(2 * q, 2 * q.T), 10)  # W_{l+1}^T W_{l+1} = W_l W_l^T = 4 I
    0.0
    """
    wn = check_matrix(w_next, "w_next")
    wp = check_matrix(w_prev, "w_prev")
    check_chain(wn, wp)
    a, b = wn.T @ wn, wp @ wp.T
    denom = min(_op_norm_sym(a), _op_norm_sym(b))
    if denom == 0.0:
        raise DegenerateError("balancedness is undefined: a weight matrix is zero")
    return _op_norm_sym(a - b) / denom


class NegativityStats:
    r"""Accumulates :math:`Z^\top Z` and :math:`\min(Z,0)^\top \min(Z,0)` over batches of rows of Z.

    ``compute()`` returns :math:`\|Z-\mathrm{relu}(Z)\|_{op} / \|Z\|_{op}`, the negativity of a
    pre-activation matrix (Jacot et al.), from D x D Gram matrices, so Z is never held whole. Only
    the upper triangle of ``gram`` and ``neg_gram`` is accumulated (half the work; see
    :meth:`full`).

    >>> import torch
    >>> z = torch.randn(100, 6)
    >>> s = NegativityStats(6); s.update(z[:50]); s.update(z[50:])
    >>> abs(s.compute() - negativity(z)) < 1e-12
    True
    >>> zz = z.double()
    >>> torch.allclose(s.full(s.gram), zz.T @ zz)
    True
    """

    def __init__(self, dim: int, device=None):
        self.dim = dim
        self.gram = torch.zeros(dim, dim, dtype=F64, device=device)
        self.neg_gram = torch.zeros(dim, dim, dtype=F64, device=device)
        self.n = 0

    def update(self, z: torch.Tensor) -> None:
        check_2d(z, "pre-activations", cols=self.dim)
        z = z.detach()
        dev = self.gram.device
        z64 = scratch_f64(z, "neg_z", dev)
        check_finite(z64.sum(), "pre-activations")  # the sum is non-finite if any entry is
        add_gram_upper(self.gram, z64)
        neg = torch.clamp_max(z64, 0, out=workspace.get("neg_min", z.shape[0], z.shape[1], dev))
        add_gram_upper(self.neg_gram, neg)
        self.n += z.shape[0]

    @staticmethod
    def full(upper: torch.Tensor) -> torch.Tensor:
        """The symmetric matrix whose upper triangle is ``upper`` (e.g. ``s.full(s.gram)``)."""
        return upper.triu() + upper.triu(1).T

    def merge(self, other: NegativityStats) -> NegativityStats:
        self.gram += other.gram.to(self.gram.device)
        self.neg_gram += other.neg_gram.to(self.gram.device)
        self.n += other.n
        return self

    def all_reduce(self, group=None) -> NegativityStats:
        if distributed.is_initialized():
            distributed.sum_over_ranks(self.gram, group)
            distributed.sum_over_ranks(self.neg_gram, group)
            n = torch.tensor([float(self.n)], dtype=F64, device=self.gram.device)
            self.n = int(distributed.sum_over_ranks(n, group).item())
        return self

    def compute(self) -> float:
        top = _op_norm_sym(self.gram, "U")
        if top == 0.0:
            raise DegenerateError("negativity is undefined: Z is zero")
        return (max(_op_norm_sym(self.neg_gram, "U"), 0.0) / top) ** 0.5


def negativity(z: torch.Tensor) -> float:
    r"""How much a ReLU changes a pre-activation matrix Z (rows are samples).

    .. math:: \frac{\|Z - \mathrm{relu}(Z)\|_{op}}{\|Z\|_{op}}

    Source: Jacot et al. (ICLR 2025), §6. 0 when Z >= 0 (the ReLU is the identity), 1 when Z <= 0.

    >>> import torch
    >>> negativity(torch.rand(10, 3))
    0.0
    >>> negativity(-torch.rand(10, 3))
    1.0
    """
    z = check_matrix(z, "Z")
    s = NegativityStats(z.shape[1], z.device)
    s.update(z)
    return s.compute()
