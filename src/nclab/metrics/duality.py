"""NC3: alignment of the classifier with the class means (self-duality)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import torch

from ..validation import check_matrix
from . import large_k
from ._common import GlobalMean, centred_means, class_means, etf_target, frob

if TYPE_CHECKING:
    from ..stats import ClassStatsBase


def nc3(stats: ClassStatsBase, weights: torch.Tensor, global_mean: GlobalMean = "class") -> float:
    r"""Self-duality of the classifier and the centred class means (Papyan et al. 2020).

    .. math:: \mathrm{NC3} = \left\| \frac{W}{\|W\|_F} - \frac{M^\top}{\|M\|_F} \right\|_F^2

    >>> import torch
    >>> from nclab import ClassStats
    >>> k = 3; mu = torch.eye(k) - 1 / k
    >>> s = ClassStats(k, k); s.update(mu + 4, torch.arange(k))  # means shifted: M is centred
    >>> round(nc3(s, 2.5 * mu), 12)
    0.0
    """
    m = centred_means(stats, global_mean)
    w = check_matrix(weights, "weights", stats.num_classes, stats.dim).to(m.device)
    diff = w / frob(w, "the classifier") - m / frob(m, "the centred class means")
    return float((diff * diff).sum())


def nc3_of(stats: ClassStatsBase, weights: torch.Tensor) -> float:
    r"""Alignment of the classifier with the uncentred class means (Tirer & Bruna, bias-free models).

    .. math:: \mathrm{NC3}^{OF} = \left\| \frac{W}{\|W\|_F} - \frac{\bar H^\top}{\|\bar H\|_F} \right\|_F

    >>> import torch
    >>> from nclab import ClassStats
    >>> s = ClassStats(2, 3); s.update(torch.eye(2, 3), torch.arange(2))
    >>> round(nc3_of(s, 7 * torch.eye(2, 3)), 12)
    0.0
    """
    h = class_means(stats)
    w = check_matrix(weights, "weights", stats.num_classes, stats.dim).to(h.device)
    return float(
        torch.linalg.matrix_norm(w / frob(w, "the classifier") - h / frob(h, "the class means"))
    )


def nc3_wh(
    stats: ClassStatsBase, weights: torch.Tensor, global_mean: GlobalMean = "class"
) -> float:
    r"""Alignment through the product W M (Zhu et al. 2021 "W-H relation"; not a canonical key).

    .. math:: \left\| \frac{W M}{\|W M\|_F} - \frac{I - \frac1K 11^\top}{\sqrt{K-1}} \right\|_F

    Provided to compare with code that reports this quantity as NC3 (see docs/metrics.md).

    >>> import torch
    >>> from nclab import ClassStats
    >>> k = 3; mu = torch.eye(k) - 1 / k
    >>> s = ClassStats(k, k); s.update(mu, torch.arange(k))
    >>> round(nc3_wh(s, mu), 12)
    0.0
    """
    m = centred_means(stats, global_mean)
    w = check_matrix(weights, "weights", stats.num_classes, stats.dim).to(m.device)
    if not large_k.fits(stats.num_classes):
        return large_k.frame_distance(w.to(m.dtype), m, "etf", "W M")
    wm = w @ m.T
    return float(
        torch.linalg.matrix_norm(wm / frob(wm, "W M") - etf_target(stats.num_classes, m.device))
    )
