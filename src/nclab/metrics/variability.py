"""NC1: within-class variability collapse (``nc1``, ``nc1_trace``, ``cdnv``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import torch

from .._kernels import svdvals, thin_svd
from ..errors import DegenerateError
from . import large_k
from ._common import F64, GlobalMean, centred_means, rank_rtol

if TYPE_CHECKING:
    from ..stats import ClassStatsBase


def nc1(
    stats: ClassStatsBase, global_mean: GlobalMean = "class", rtol: float | None = None
) -> float:
    r"""Within-class variability relative to the between-class one.

    .. math:: \mathrm{NC1} = \frac{1}{K}\,\mathrm{tr}\left(\Sigma_W \Sigma_B^{\dagger}\right)

    Source: Papyan, Han & Donoho (2020); Tirer & Bruna (2022), eq. (NC1).

    Computed in the class-mean subspace: with the thin SVD :math:`M = U S V^\top` of the D x K centred
    means, :math:`\Sigma_B^\dagger = U\,\mathrm{diag}(K/s_j^2)\,U^\top` and
    :math:`\mathrm{NC1} = \sum_j u_j^\top \Sigma_W u_j / s_j^2` over the singular values above
    ``rtol * s_1``. ``rtol`` defaults to max(D, K) times the unit roundoff of the input features
    (float32 features: 1.2e-7), since the means cannot be more precise than their inputs. No D x D
    pseudo-inverse is ever formed.

    >>> import torch
    >>> from nclab import ClassStats
    >>> x = torch.tensor([[1., 0.], [3., 0.], [-1., 0.], [-3., 0.]]); y = torch.tensor([0, 0, 1, 1])
    >>> s = ClassStats.from_features(x, y)
    >>> nc1(s)  # Sigma_W = diag(1, 0), Sigma_B = diag(4, 0): tr(Sigma_W Sigma_B^+) / K = (1/4) / 2
    0.125
    >>> t = ClassStats(2, 2, scatter="full"); t.update(x[[0, 0, 2, 2]], y)  # one pass; h = mu_y
    >>> nc1(t)
    0.0
    """
    m = centred_means(stats, global_mean)
    k = stats.num_classes
    if global_mean == "class":  # shared with the second pass's basis
        _, m, u, s = stats.centred_svd()
    else:
        u, s = thin_svd(m.T)
    if s.numel() == 0 or float(s[0]) == 0.0:
        raise DegenerateError("nc1 is undefined: all class means coincide (Sigma_B = 0)")
    tol = (rank_rtol(stats, *m.shape) if rtol is None else rtol) * float(s[0])
    keep = s > tol
    rank = int(keep.sum())  # the singular values are sorted: the leading ones are kept
    sw = stats.projected_scatter(u[:, :rank]) / stats.num_samples
    return float((torch.diagonal(sw) / s[:rank] ** 2).sum()) if k else 0.0


def nc1_rank(
    stats: ClassStatsBase, global_mean: GlobalMean = "class", rtol: float | None = None
) -> int:
    """Rank of the centred class means used by :func:`nc1` (K-1 for generic means).

    >>> import torch
    >>> from nclab import ClassStats
    >>> s = ClassStats(3, 5); s.update(torch.randn(30, 5), torch.arange(30) % 3)
    >>> nc1_rank(s)
    2
    """
    m = centred_means(stats, global_mean)
    s = svdvals(m)
    if float(s[0]) == 0.0:
        return 0
    tol = (rank_rtol(stats, *m.shape) if rtol is None else rtol) * float(s[0])
    return int((s > tol).sum())


def nc1_trace(stats: ClassStatsBase, global_mean: GlobalMean = "class") -> float:
    r"""Trace ratio of within- to between-class covariance.

    .. math:: \mathrm{NC1}_{tr} = \mathrm{tr}(\Sigma_W) / \mathrm{tr}(\Sigma_B)

    with :math:`\Sigma_W = \frac1N\sum_i (h_i-\mu_{y_i})(h_i-\mu_{y_i})^\top` and
    :math:`\Sigma_B = \frac1K\sum_c (\mu_c-\mu_G)(\mu_c-\mu_G)^\top`.
    Source: Jacot, Súkeník, Wang & Mondelli (ICLR 2025), §3.

    >>> import torch
    >>> from nclab import ClassStats
    >>> x = torch.tensor([[1., 0.], [3., 0.], [-1., 0.], [-3., 0.]]); y = torch.tensor([0, 0, 1, 1])
    >>> s = ClassStats(2, 2); s.update(x, y)
    >>> nc1_trace(s)  # tr Sigma_W = 1, means at +-2: tr Sigma_B = 4
    0.25
    """
    m = centred_means(stats, global_mean)
    tr_b = float((m * m).sum()) / stats.num_classes
    if tr_b == 0.0:
        raise DegenerateError("nc1_trace is undefined: all class means coincide (tr Sigma_B = 0)")
    return float(stats.within_trace) / stats.num_samples / tr_b


def cdnv(stats: ClassStatsBase, dist_exp: float = 1.0) -> float:
    r"""Class-distance normalised variance, averaged over pairs of distinct classes.

    .. math:: \mathrm{CDNV} = \operatorname{mean}_{c\ne c'}
       \frac{\sigma_c^2 + \sigma_{c'}^2}{2\|\mu_c-\mu_{c'}\|^{2p}},\qquad
       \sigma_c^2 = \frac{1}{n_c}\sum_{y_i=c}\|h_i-\mu_c\|^2

    Source: Galanti, György & Hutter (ICLR 2022) (p = ``dist_exp`` = 1); p != 1 is
    ``rhubarbwu/neural-collapse``'s ``variability_cdnv(..., dist_exp=p)``. Beyond the memory budget
    (:func:`nclab._kernels.set_memory_budget`) the pairs are summed in tiles
    (:func:`.large_k.cdnv_rows`), never as a K x K matrix.

    >>> import torch
    >>> from nclab import ClassStats
    >>> x = torch.tensor([[1., 0.], [3., 0.], [-1., 0.], [-3., 0.]]); y = torch.tensor([0, 0, 1, 1])
    >>> s = ClassStats(2, 2); s.update(x, y)
    >>> cdnv(s)  # sigma^2 = 1 in each class, distance 4
    0.0625
    >>> cdnv(s, dist_exp=0.5)  # 2 / (2 * 4)
    0.25
    """
    m = centred_means(stats)  # shifting by mu_G keeps the Gram trick accurate
    k = stats.num_classes
    if k < 2:
        raise DegenerateError("cdnv needs at least 2 classes")
    var = stats.class_ss / stats.counts.to(F64)
    if not large_k.fits(k) or dist_exp != 1.0:
        rows, pairs = large_k.cdnv_rows(m, var, dist_exp)
        return float(rows.sum()) / pairs
    sq = (m * m).sum(1)
    d2 = (sq[:, None] + sq[None, :] - 2 * m @ m.T).clamp_min(0)
    off = ~torch.eye(k, dtype=torch.bool, device=m.device)
    if bool((d2[off] == 0).any()):
        raise DegenerateError("cdnv is undefined: two classes have the same mean")
    ratio = (var[:, None] + var[None, :]) / (2 * d2)
    return float(ratio[off].mean())


def cdnv_per_class(stats: ClassStatsBase, dist_exp: float = 1.0) -> torch.Tensor:
    r"""The CDNV of each class against all others: (K,) float64,
    :math:`\operatorname{mean}_{c'\ne c} (\sigma_c^2+\sigma_{c'}^2)/(2\|\mu_c-\mu_{c'}\|^{2p})`
    (its mean is :func:`cdnv`); computed in tiles.

    >>> import torch
    >>> from nclab import ClassStats
    >>> x = torch.tensor([[1., 0.], [3., 0.], [-1., 0.], [-3., 0.]]); y = torch.tensor([0, 0, 1, 1])
    >>> s = ClassStats(2, 2); s.update(x, y)
    >>> cdnv_per_class(s).tolist()
    [0.0625, 0.0625]
    """
    m = centred_means(stats)
    k = stats.num_classes
    if k < 2:
        raise DegenerateError("cdnv needs at least 2 classes")
    rows, _ = large_k.cdnv_rows(m, stats.class_ss / stats.counts.to(F64), dist_exp)
    return rows / (k - 1)
