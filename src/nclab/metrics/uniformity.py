r"""GNC2: hyperspherical uniformity of the class means (Liu et al. 2023), computed in tiles.

The centred class means are normalised to the unit sphere, :math:`u_c = (\mu_c-\mu_G)/\|\mu_c-\mu_G\|`,
and a kernel of the pairwise distances :math:`d_{cc'} = \|u_c-u_{c'}\|` is averaged over the pairs
c < c'. The mean is a hyperspherical energy (low when the means spread uniformly), the variance is
what ``rhubarbwu/neural-collapse`` reports as GNC2 (``kernel_stats(...)[1]``): zero when every pair
is equally far apart, as in a simplex ETF.

Kernels (:data:`KERNELS`): ``"log"`` :math:`-\log d`, ``"riesz"`` :math:`\mathrm{sign}(s)\,d^{-s}`,
``"gaussian"`` :math:`e^{-t d^2}`, ``"dist"`` :math:`d`. The pairs are visited in tiles of the
memory budget (:func:`nclab._kernels.set_memory_budget`) with float64 accumulation and exact (Chan)
merging of the tiles' means and variances; no K x K matrix is formed.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import torch

from ..errors import DataError, DegenerateError
from . import large_k
from ._common import GlobalMean, centred_means

if TYPE_CHECKING:
    from ..stats import ClassStatsBase

KERNELS = ("log", "riesz", "gaussian", "dist")


def _kernel(name: str, s: float, t: float):
    if name not in KERNELS:
        raise DataError(f"kernel must be one of {KERNELS}, got {name!r}")

    def fn(cos: torch.Tensor, i, j) -> torch.Tensor:
        d2 = cos.mul_(-2.0).add_(2.0).clamp_min_(0.0)  # ||u - v||^2 of unit vectors
        if name == "gaussian":
            return d2.mul_(-t).exp_()
        if name != "dist" and bool((d2 == 0).any()):
            raise DegenerateError(
                f"the {name} kernel is infinite: two normalised class means coincide"
            )
        if name == "dist":
            return d2.sqrt_()
        if name == "log":
            return d2.log_().mul_(-0.5)
        return d2.pow_(-s / 2).mul_(math.copysign(1.0, s))

    return fn


def hyperspherical_uniformity(
    stats: ClassStatsBase,
    kernel: str = "log",
    s: float = 1.0,
    t: float = 2.0,
    global_mean: GlobalMean = "class",
) -> tuple[float, float]:
    r"""(mean, population variance) over pairs c < c' of a kernel of :math:`\|u_c - u_{c'}\|`.

    .. math:: u_c = \frac{\mu_c-\mu_G}{\|\mu_c-\mu_G\|},\quad
       \mathrm{GNC2} = \operatorname{Var}_{c<c'} \kappa(\|u_c-u_{c'}\|),\quad
       \kappa \in \{-\log d,\ \mathrm{sign}(s) d^{-s},\ e^{-t d^2},\ d\}

    Source: Liu et al. (2023), "Generalizing and decoupling neural collapse via hyperspherical
    uniformity gap" (GNC2); ``rhubarbwu/neural-collapse`` ``kernel_stats`` with ``log_kernel``,
    ``riesz_kernel`` (its s is D - 2) or the plain distance. Tiled, float64.

    >>> import torch
    >>> from nclab import ClassStats
    >>> k = 4; st = ClassStats(k, k, scatter="none"); st.update(torch.eye(k) - 1 / k, torch.arange(k))
    >>> mean, var = hyperspherical_uniformity(st)  # a simplex ETF: every pair equally far apart
    >>> round(var, 12), round(mean, 6)  # -log of the distance sqrt(2 K / (K - 1))
    (0.0, -0.490415)
    """
    m = centred_means(stats, global_mean)
    if stats.num_classes < 2:
        raise DegenerateError("hyperspherical uniformity needs at least 2 classes")
    n = m.norm(dim=1)
    if bool((n == 0).any()):
        raise DegenerateError("hyperspherical uniformity: a class mean equals the global mean")
    mom = large_k.pair_values(m / n[:, None], _kernel(kernel, s, t))
    return mom.mean, mom.var


def gnc2(stats: ClassStatsBase, global_mean: GlobalMean = "class") -> float:
    r"""GNC2: the variance over pairs of :math:`-\log\|u_c-u_{c'}\|` (log kernel; see
    :func:`hyperspherical_uniformity`); ``rhubarbwu``'s ``kernel_stats(M, m_G, log_kernel)[1]``.

    >>> import torch
    >>> from nclab import ClassStats
    >>> k = 5; st = ClassStats(k, k, scatter="none"); st.update(3 * torch.eye(k) + 1, torch.arange(k))
    >>> round(gnc2(st), 12)
    0.0
    """
    return hyperspherical_uniformity(stats, "log", global_mean=global_mean)[1]
