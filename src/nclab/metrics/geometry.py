"""NC2: geometry of the class means and classifier rows (ETF / orthogonal frame, conditioning)."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import torch

from .._kernels import svdvals
from ..errors import DegenerateError
from ..validation import check_matrix
from . import large_k
from ._common import (
    GlobalMean,
    centred_means,
    class_means,
    etf_target,
    frame_distance,
    of_target,
)

if TYPE_CHECKING:
    from ..stats import ClassStatsBase


def etf_distance(a: torch.Tensor) -> float:
    r"""Distance of a K-row matrix's normalised Gram matrix to a simplex ETF's.

    .. math:: \mathrm{ETF}(A) = \left\| \frac{AA^\top}{\|AA^\top\|_F} - \frac{I - \frac1K 11^\top}{\sqrt{K-1}} \right\|_F

    >>> import torch
    >>> k = 4; etf = torch.eye(k) - 1 / k  # rows of a centred identity form a simplex ETF
    >>> round(etf_distance(etf), 12)
    0.0
    """
    a = check_matrix(a, "A")
    if not large_k.fits(a.shape[0]):
        return large_k.frame_distance(a, a, "etf", "A")
    return frame_distance(a, etf_target(a.shape[0], a.device), "A")


def of_distance(a: torch.Tensor) -> float:
    r"""Distance of a K-row matrix's normalised Gram matrix to an orthogonal frame's.

    .. math:: \mathrm{OF}(A) = \left\| \frac{AA^\top}{\|AA^\top\|_F} - \frac{I}{\sqrt{K}} \right\|_F

    >>> import torch
    >>> round(of_distance(3.0 * torch.eye(4, 6)), 12)
    0.0
    """
    a = check_matrix(a, "A")
    if not large_k.fits(a.shape[0]):
        return large_k.frame_distance(a, a, "of", "A")
    return frame_distance(a, of_target(a.shape[0], a.device), "A")


def nc2_etf(stats: ClassStatsBase, global_mean: GlobalMean = "class") -> float:
    """ETF(M^T): distance of the centred class means to a simplex ETF (Papyan; Tirer & Bruna NC2^ETF).

    >>> import torch
    >>> from nclab import ClassStats
    >>> k = 5; mu = 3 * (torch.eye(k) - 1 / k) + 7  # a simplex ETF shifted away from the origin
    >>> s = ClassStats(k, k); s.update(mu, torch.arange(k))
    >>> round(nc2_etf(s), 12)
    0.0
    """
    m = centred_means(stats, global_mean)
    if not large_k.fits(stats.num_classes):
        return large_k.frame_distance(m, m, "etf", "the centred class means")
    return frame_distance(m, etf_target(stats.num_classes, m.device), "the centred class means")


def nc2_of(stats: ClassStatsBase) -> float:
    """OF(H-bar^T): distance of the uncentred class means to an orthogonal frame (Tirer & Bruna NC2^OF).

    >>> import torch
    >>> from nclab import ClassStats
    >>> s = ClassStats(3, 4); s.update(2 * torch.eye(3, 4), torch.arange(3))
    >>> round(nc2_of(s), 12)
    0.0
    """
    h = class_means(stats)
    if not large_k.fits(stats.num_classes):
        return large_k.frame_distance(h, h, "of", "the class means")
    return frame_distance(h, of_target(stats.num_classes, h.device), "the class means")


def nc2_w_etf(weights: torch.Tensor) -> float:
    """ETF(W) of a K x D classifier (Tirer & Bruna NC2^ETF of W): see :func:`etf_distance`.

    >>> import torch
    >>> round(nc2_w_etf(torch.eye(3) - 1 / 3), 12)
    0.0
    """
    return etf_distance(weights)


def nc2_w_of(weights: torch.Tensor) -> float:
    """OF(W) of a K x D classifier (Tirer & Bruna NC2^OF of W): see :func:`of_distance`.

    >>> import torch
    >>> round(nc2_w_of(torch.eye(3, 5)), 12)
    0.0
    """
    return of_distance(weights)


def nc2_kappa(stats: ClassStatsBase) -> float:
    r"""Condition number of the uncentred class-mean matrix, :math:`s_1(\bar H)/s_K(\bar H)`.

    Source: Jacot et al. (ICLR 2025), NC2. Needs D >= K and linearly independent means.

    >>> import torch
    >>> from nclab import ClassStats
    >>> s = ClassStats(2, 2); s.update(torch.tensor([[2., 0.], [0., 1.]]), torch.tensor([0, 1]))
    >>> nc2_kappa(s)
    2.0
    """
    h = class_means(stats)
    k, d = h.shape
    if d < k:
        raise DegenerateError(
            f"nc2_kappa needs D >= K (the K-th singular value of a D x K matrix); got D={d} < K={k}"
        )
    s = svdvals(h)
    if float(s[-1]) <= float(s[0]) * k * torch.finfo(s.dtype).eps:
        raise DegenerateError("nc2_kappa is infinite: the class means are linearly dependent")
    return float(s[0] / s[-1])


def nc2_equinorm(stats: ClassStatsBase, global_mean: GlobalMean = "class") -> float:
    """Coefficient of variation (population std / mean) of the norms ||mu_c - mu_G|| (Papyan).

    >>> import torch
    >>> from nclab import ClassStats
    >>> s = ClassStats(2, 1); s.update(torch.tensor([[1.], [-3.]]), torch.tensor([0, 1]))
    >>> nc2_equinorm(s)  # norms 2 and 2
    0.0
    """
    n = centred_means(stats, global_mean).norm(dim=1)
    mean = n.mean()
    if float(mean) == 0.0:
        raise DegenerateError("nc2_equinorm is undefined: all class means coincide")
    return float(n.std(correction=0) / mean)


def nc2_equiangle(stats: ClassStatsBase, global_mean: GlobalMean = "class") -> float:
    """Population std of cos(mu_c - mu_G, mu_c' - mu_G) over pairs c < c' (Papyan).

    >>> import torch
    >>> from nclab import ClassStats
    >>> k = 4; s = ClassStats(k, k); s.update(torch.eye(k) - 1 / k, torch.arange(k))
    >>> round(nc2_equiangle(s), 12)  # simplex ETF: every cosine is -1/(K-1)
    0.0
    """
    m = centred_means(stats, global_mean)
    n = m.norm(dim=1)
    if bool((n == 0).any()):
        raise DegenerateError("nc2_equiangle is undefined: a class mean equals the global mean")
    u = m / n[:, None]
    k = stats.num_classes
    if not large_k.fits(k, copies=max(4, u.shape[1])):  # the dense form gathers K^2/2 x D pairs
        return math.sqrt(max(large_k.cosine_moments(u)[1], 0.0))
    i, j = torch.triu_indices(k, k, 1, device=m.device)
    return float((u[i] * u[j]).sum(1).std(correction=0))


def frame_floor(kind: str, k: int, d: int) -> float:
    r"""The least ETF (``kind="etf"``) or OF (``"of"``) distance that K vectors in D dimensions can
    reach: 0 while D >= K - 1 (ETF) or D >= K (OF), else
    :math:`\sqrt{2 - 2\sqrt{D/(K-1)}}` or :math:`\sqrt{2 - 2\sqrt{D/K}}` (a Gram matrix of rank
    at most D, Frobenius norm 1, against the frame's: the best spreads its mass evenly over D of the
    frame's directions).

    >>> frame_floor("etf", 10, 9), round(frame_floor("etf", 50257, 768), 4)
    (0.0, 1.3239)
    """
    n = k - 1 if kind == "etf" else k
    if d >= n or n <= 0:
        return 0.0
    return math.sqrt(2.0 - 2.0 * math.sqrt(d / n))


def frame_note(key: str, k: int, d: int) -> str | None:
    """Why ``key`` (``nc2_etf``, ``nc2_w_etf``, ``nc2_of``, ``nc2_w_of``) cannot reach 0 for K
    vectors in D dimensions, with its floor (None when it can)."""
    kind = "of" if key.endswith("_of") else "etf"
    floor = frame_floor(kind, k, d)
    if floor == 0.0:
        return None
    frame, bound = ("a simplex ETF", "D + 1") if kind == "etf" else ("an orthogonal frame", "D")
    formula = "sqrt(2 - 2 sqrt(D/(K-1)))" if kind == "etf" else "sqrt(2 - 2 sqrt(D/K))"
    return (
        f"K = {k} > {bound} = {d + 1 if kind == 'etf' else d}: K vectors in D dimensions cannot "
        f"form {frame}, so {key} cannot fall below {floor:.4g} = {formula}; read it against that "
        "floor, not 0"
    )
