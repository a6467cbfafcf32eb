r"""Metrics of the class means at large K, in bounded memory: D x D forms and float64 tiles.

Nothing here allocates a K x K matrix. Two tools:

* **D x D forms**, exact identities through the Gram matrix of the D columns:
  :math:`\|AB^\top\|_F^2 = \langle A^\top A, B^\top B\rangle`, :math:`1^\top AA^\top 1 = \|A^\top 1\|^2`,
  so the distance of a normalised K x K Gram matrix to the simplex ETF or the orthogonal frame is
  :math:`d^2 = 2 - 2\,\mathrm{tr}(G T)/\|G\|_F` with
  :math:`\mathrm{tr}(G T_{ETF}) = (\mathrm{tr}\,G - 1^\top G 1/K)/\sqrt{K-1}` and
  :math:`\mathrm{tr}(G T_{OF}) = \mathrm{tr}\,G/\sqrt K` (:func:`frame_distance`); the sum and the sum
  of squares of all pairwise cosines come from the normalised means' Gram
  (:func:`cosine_moments`). These forms subtract two numbers of order one; where the result is so
  small that the subtraction would lose more than :data:`CANCEL_DIGITS` digits (features near a
  perfect frame), the value is recomputed in tiles instead.
* **tiles** (:func:`pair_tiles`): blocks of rows i, j of the K x K pairwise values, a block of at
  most the memory budget (:func:`nclab._kernels.set_memory_budget`), with float64 accumulation;
  means and variances over tiles are merged exactly (Chan et al.), never as E[v^2] - E[v]^2.

The metric functions of :mod:`.geometry` and :mod:`.variability` use the dense K x K forms while
they fit the budget (the small-K results are those of the dense code) and these beyond.

>>> import torch
>>> a = torch.randn(50, 8, dtype=torch.float64)
>>> g = a @ a.T; t = (torch.eye(50, dtype=torch.float64) - 1 / 50) / 49 ** 0.5
>>> dense = float(torch.linalg.matrix_norm(g / torch.linalg.matrix_norm(g) - t))
>>> abs(frame_distance(a, a, "etf", "A") - dense) < 1e-12
True
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator

import torch

from .._kernels import memory_budget
from ..errors import DegenerateError
from ..validation import F64

#: the D x D forms hand over to tiles when they would lose more digits than this to cancellation
CANCEL_DIGITS = 4


def fits(k: int, copies: int = 4) -> bool:
    """Whether ``copies`` dense K x K float64 matrices fit the memory budget."""
    return copies * 8 * k * k <= memory_budget()


def pair_tiles(k: int, upper: bool = True) -> Iterator[tuple[slice, slice]]:
    """Row blocks (i, j) covering the K x K pairs (``upper``: only j >= i), each tile at most a
    quarter of the memory budget in float64 values."""
    t = max(1, min(k, math.isqrt(max(1, memory_budget() // (8 * 4)))))
    for i in range(0, k, t):
        for j in range(i if upper else 0, k, t):
            yield slice(i, min(i + t, k)), slice(j, min(j + t, k))


class Moments:
    """Count, mean and sum of squared deviations of a stream of values, merged exactly (Chan)."""

    def __init__(self):
        self.n, self.mean, self.m2 = 0, 0.0, 0.0

    def add(self, v: torch.Tensor) -> None:
        nb = v.numel()
        if nb == 0:
            return
        mb = float(v.mean())
        m2b = float(((v - mb) ** 2).sum())
        n = self.n + nb
        delta = mb - self.mean
        self.mean += delta * nb / n
        self.m2 += m2b + delta * delta * self.n * nb / n
        self.n = n

    @property
    def var(self) -> float:
        """Population variance (ddof = 0)."""
        return self.m2 / self.n if self.n else 0.0


def pair_values(
    u: torch.Tensor, fn: Callable[[torch.Tensor, slice, slice], torch.Tensor]
) -> Moments:
    """Moments of fn(U_i U_j^T, i, j) over the pairs c < c' of the rows of ``u``, in tiles (a diagonal
    tile passes ``fn`` only its pairs c < c', flattened)."""
    mom = Moments()
    k = u.shape[0]
    for i, j in pair_tiles(k):
        c = u[i] @ u[j].T
        if i == j:  # the pairs c < c' of a diagonal tile
            c = c[torch.triu_indices(c.shape[0], c.shape[1], 1, device=c.device).unbind()]
        mom.add(fn(c, i, j).flatten())
    return mom


def frame_distance(a: torch.Tensor, b: torch.Tensor, kind: str, what: str) -> float:
    r"""|| A B^T / ||A B^T||_F - T ||_F for K-row A, B, T the normalised simplex ETF (``"etf"``) or
    orthogonal frame (``"of"``) Gram matrix, through D x D matrices (tiles near a perfect frame)."""
    k = a.shape[0]
    if kind == "etf" and k < 2:
        raise DegenerateError("a simplex ETF needs at least 2 classes")
    norm2 = float(((a.T @ a) * (b.T @ b)).sum())
    if norm2 <= 0.0:
        raise DegenerateError(
            f"the Gram matrix of {what} is zero: its normalised form is undefined"
        )
    norm = math.sqrt(norm2)
    tr = float((a * b).sum())
    if kind == "etf":
        tgt = (tr - float(a.sum(0) @ b.sum(0)) / k) / math.sqrt(k - 1)
    else:
        tgt = tr / math.sqrt(k)
    d2 = 2.0 - 2.0 * tgt / norm
    if d2 >= 10.0**-CANCEL_DIGITS:  # d^2 = 2 - 2c loses log10(1 / d^2) digits
        return math.sqrt(d2)
    return _frame_distance_tiled(a, b, kind, norm)


def _frame_distance_tiled(a, b, kind: str, norm: float) -> float:
    k = a.shape[0]
    diag, off = (1.0 / math.sqrt(k), 0.0) if kind == "of" else (None, None)
    if kind == "etf":
        diag, off = (1 - 1 / k) / math.sqrt(k - 1), -1 / k / math.sqrt(k - 1)
    total = 0.0
    for i, j in pair_tiles(k, upper=False):
        t = (a[i] @ b[j].T).div_(norm).sub_(off)
        if i == j:
            t.diagonal().sub_(diag - off)
        total += float((t * t).sum())
    return math.sqrt(total)


def cosine_moments(u: torch.Tensor) -> tuple[float, float]:
    """(mean, population variance) of the cosines u_c . u_c' over pairs c < c' of unit rows ``u``:
    the sums from the D x D Gram (tiles when the variance is lost to cancellation)."""
    k = u.shape[0]
    p = k * (k - 1) / 2
    s = u.sum(0)
    s1 = (float(s @ s) - k) / 2
    g = u.T @ u
    s2 = (float((g * g).sum()) - k) / 2
    mean = s1 / p
    var = s2 / p - mean * mean
    if var >= 10.0**-CANCEL_DIGITS * (s2 / p):  # var = E[c^2] - E[c]^2 loses as many digits
        return mean, var
    mom = pair_values(u, lambda c, i, j: c)
    return mom.mean, mom.var


def cdnv_rows(
    m: torch.Tensor, var: torch.Tensor, dist_exp: float = 1.0
) -> tuple[torch.Tensor, int]:
    r"""Row sums :math:`\sum_{c'\ne c} (\sigma_c^2+\sigma_{c'}^2)/(2\|\mu_c-\mu_{c'}\|^{2p})` (K,)
    of the centred means ``m`` and per-class variances ``var``, in tiles, and K(K-1)."""
    k = m.shape[0]
    sq = (m * m).sum(1)
    rows = torch.zeros(k, dtype=F64, device=m.device)
    for i, j in pair_tiles(k):
        d2 = (sq[i, None] + sq[None, j] - 2 * m[i] @ m[j].T).clamp_min_(0)
        if i == j:
            d2.fill_diagonal_(math.inf)
        if bool((d2 == 0).any()):
            raise DegenerateError("cdnv is undefined: two classes have the same mean")
        den = d2 if dist_exp == 1.0 else d2.pow_(dist_exp)
        r = (var[i, None] + var[None, j]).div_(den.mul_(2))
        rows[i] += r.sum(1)
        if i != j:
            rows[j] += r.sum(0)
    return rows, k * (k - 1)
