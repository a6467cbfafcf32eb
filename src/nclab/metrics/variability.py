"""NC1: within-class variability collapse (``nc1``, ``nc1_trace``, ``cdnv``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import torch

from .._kernels import svdvals, thin_svd
from ..errors import DegenerateError
from . import large_k
from ._common import F64, GlobalMean, centred_means, rank_rtol

if TYPE_CHECKING:
    from ..stats import ClassStatsBase


@dataclass(frozen=True)
class NC1Parts:
    """What :func:`nc1` computes on the way: ``nc1`` = tr(Sigma_W Sigma_B^+)/K, ``rank`` = the
    rank of Sigma_B it found (of the centred class means), ``num_classes`` = K and ``dim`` = D.
    ``rank_norm`` = tr(Sigma_W Sigma_B^+)/rank(Sigma_B) (:func:`nc1_rank_norm`); ``understated``:
    whether rank(Sigma_B) < K - 1, where ``nc1``'s division by K makes it read smaller than the
    same collapse at K <= D + 1 (:func:`nc1_note` says so)."""

    nc1: float
    rank: int
    num_classes: int
    dim: int

    @property
    def rank_norm(self) -> float:
        return self.nc1 * self.num_classes / self.rank if self.rank else 0.0

    @property
    def understated(self) -> bool:
        return self.rank < self.num_classes - 1


def nc1_parts(
    stats: ClassStatsBase, global_mean: GlobalMean = "class", rtol: float | None = None
) -> NC1Parts:
    r"""``nc1``, the rank of :math:`\Sigma_B` it used, K and D, from one SVD (see :func:`nc1`).

    >>> import torch
    >>> from nclab import ClassStats
    >>> g = torch.Generator().manual_seed(0)
    >>> y = torch.arange(400) % 20; x = torch.randn(20, 4, generator=g)[y] + torch.randn(400, 4, generator=g)
    >>> p = nc1_parts(ClassStats.from_features(x, y))  # K = 20 classes in D = 4 dimensions
    >>> p.rank, p.understated, round(p.rank_norm / p.nc1, 12)  # K / rank = 5
    (4, True, 5.0)
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
    value = float((torch.diagonal(sw) / s[:rank] ** 2).sum()) if k else 0.0
    return NC1Parts(value, rank, k, stats.dim)


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

    The trace sums at most rank(Sigma_B) <= min(D, K - 1) terms but is divided by K: with more
    classes than dimensions (K > D + 1, a language model's vocabulary) nc1 reads about
    K / rank(Sigma_B) times smaller than the same collapse would at K <= D + 1. Compare such
    models with :func:`nc1_rank_norm` and :func:`cdnv`; :func:`collapse_metrics` adds a note.

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
    return nc1_parts(stats, global_mean, rtol).nc1


def nc1_rank_norm(
    stats: ClassStatsBase, global_mean: GlobalMean = "class", rtol: float | None = None
) -> float:
    r"""NC1 normalised by the rank of :math:`\Sigma_B` instead of K.

    .. math:: \mathrm{NC1}_{rank} = \frac{\mathrm{tr}\left(\Sigma_W \Sigma_B^{\dagger}\right)}
       {\mathrm{rank}(\Sigma_B)} = \mathrm{NC1}\cdot\frac{K}{\mathrm{rank}(\Sigma_B)}

    The mean of :math:`u_j^\top \Sigma_W u_j / \lambda_j(\Sigma_B)` over the directions
    :math:`\Sigma_B` spans: what ``nc1`` averages, over the terms that exist. For K <= D + 1 and
    generic means (rank K - 1) it is ``nc1 * K / (K - 1)``; for K > D + 1 (rank <= D) it does not
    shrink as K grows past D the way ``nc1`` does, so models of different vocabularies or widths
    compare. (Not in DESIGN.md's table: nclab's normalisation; see docs/metrics.md.)

    >>> import torch
    >>> from nclab import ClassStats
    >>> x = torch.tensor([[1., 0.], [3., 0.], [-1., 0.], [-3., 0.]]); y = torch.tensor([0, 0, 1, 1])
    >>> nc1_rank_norm(ClassStats.from_features(x, y))  # (1/4) / rank 1
    0.25
    """
    return nc1_parts(stats, global_mean, rtol).rank_norm


def nc1_rank(
    stats: ClassStatsBase, global_mean: GlobalMean = "class", rtol: float | None = None
) -> int:
    """Rank of the centred class means used by :func:`nc1` (K-1 for generic means, at most D).

    >>> import torch
    >>> from nclab import ClassStats
    >>> s = ClassStats(3, 5); s.update(torch.randn(30, 5), torch.arange(30) % 3)
    >>> nc1_rank(s)
    2
    """
    m = centred_means(stats, global_mean)
    s = stats.centred_svd()[3] if global_mean == "class" else svdvals(m)
    if s.numel() == 0 or float(s[0]) == 0.0:
        return 0
    tol = (rank_rtol(stats, *m.shape) if rtol is None else rtol) * float(s[0])
    return int((s > tol).sum())


def nc1_note(parts: NC1Parts) -> str | None:
    """Why ``nc1`` understates within-class variability for these statistics (None when it does
    not): rank(Sigma_B) < K - 1, e.g. more classes than dimensions (K > D + 1).

    >>> print(nc1_note(NC1Parts(0.043, 64, 1960, 64)))  # doctest: +NORMALIZE_WHITESPACE
    rank(Sigma_B) = 64 < K - 1 = 1959 (K > D + 1 = 65: the class means span at most D directions):
    nc1 = tr(Sigma_W Sigma_B^+)/K divides by K a trace of only 64 terms (one per direction of
    Sigma_B), so it understates within-class variability about K/rank = 30.6x against K <= D + 1
    classes; compare nc1_rank_norm = tr(Sigma_W Sigma_B^+)/rank(Sigma_B) = 1.317 and cdnv instead
    """
    if not parts.understated or parts.rank == 0:
        return None
    k, d, r = parts.num_classes, parts.dim, parts.rank
    why = (
        f"K > D + 1 = {d + 1}: the class means span at most D directions"
        if k > d + 1
        else "the class means are linearly dependent"
    )
    return (
        f"rank(Sigma_B) = {r} < K - 1 = {k - 1} ({why}): nc1 = tr(Sigma_W Sigma_B^+)/K divides "
        f"by K a trace of only {r} terms (one per direction of Sigma_B), so it understates "
        f"within-class variability about K/rank = {k / r:.3g}x against K <= D + 1 classes; "
        f"compare nc1_rank_norm = tr(Sigma_W Sigma_B^+)/rank(Sigma_B) = {parts.rank_norm:.4g} "
        "and cdnv instead"
    )


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
