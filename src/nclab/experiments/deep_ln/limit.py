r"""The limit of the objective as the depth grows: Súkeník et al.'s main result
:math:`\mathcal{L}^*_{\rm GUFM} = \lim_{L\to\infty} \mathcal{L}^*_{L,1}` read on a depth sweep.

The objective of each depth's trained network is fitted by least squares as

.. math:: \mathcal{L}(L) = \mathcal{L}_\infty + c\,L^{-a}, \qquad c, a > 0,

a power law whose exponent is free: the appendix's construction moves each sample by steps
:math:`\alpha \propto 1/L_1` over :math:`L_1` layers, so its weight decay costs
:math:`O(1/L_1)` and bounds the optimal gap by :math:`O(1/L)`; that is an upper bound on the
optimum's rate, not the rate of a trained network (the recorded sweeps fall as about
:math:`L^{-1/2}`), so :math:`a` is fitted. The three parameters are fitted by profiling: for a
fixed :math:`a` the model is linear in :math:`(\mathcal{L}_\infty, c)`, solved exactly, and
:math:`a` minimises the residual over ``[A_MIN, A_MAX]``. The standard error of
:math:`\mathcal{L}_\infty` is the least-squares one, :math:`s^2 (J^\top J)^{-1}` with
:math:`s^2 = \mathrm{RSS}/(n-3)` and :math:`J` the model's Jacobian at the fit: it needs at least
four depths (one degree of freedom).

What a claim reads (:func:`limit`): the extrapolated limit, its standard error, its distance to
:math:`\mathcal{L}^*_{\rm GUFM}` in standard errors (``deviation_se``), and ``resolution``: twice
the standard error over the deepest network's remaining gap (at most 1 when the fit pins the limit
down better than the deepest network does).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

#: the range of the fitted exponent a: below A_MIN the power law is indistinguishable from
#: a logarithm (L_inf runs to -inf), above A_MAX the deepest networks would already be at the limit
A_MIN, A_MAX = 0.01, 8.0
#: the smallest number of depths with a residual left to estimate the error from
MIN_DEPTHS = 4


def _linear(x: np.ndarray, y: np.ndarray, a: float) -> tuple[float, float, float]:
    """(L_inf, c, RSS) of the least-squares fit of y = L_inf + c x^-a at a fixed ``a``."""
    basis = np.stack([np.ones_like(x), x**-a], axis=1)
    coef, *_ = np.linalg.lstsq(basis, y, rcond=None)
    r = y - basis @ coef
    return float(coef[0]), float(coef[1]), float(r @ r)


def _best_exponent(x: np.ndarray, y: np.ndarray) -> float:
    """The exponent minimising the profiled residual: a log-spaced grid, then golden sections
    around its best point (the residual of a power law in a is smooth and, on a sweep, unimodal
    near its minimum)."""
    grid = np.geomspace(A_MIN, A_MAX, 241)
    rss = [_linear(x, y, a)[2] for a in grid]
    i = int(np.argmin(rss))
    lo, hi = grid[max(i - 1, 0)], grid[min(i + 1, len(grid) - 1)]
    g = (math.sqrt(5) - 1) / 2
    for _ in range(60):
        m1, m2 = hi - g * (hi - lo), lo + g * (hi - lo)
        if _linear(x, y, m1)[2] <= _linear(x, y, m2)[2]:
            hi = m2
        else:
            lo = m1
    return float(lo + hi) / 2


def fit_power_limit(depths: Sequence[float], values: Sequence[float]) -> dict[str, Any] | None:
    r"""Least-squares fit of ``values`` against ``depths`` as :math:`\mathcal{L}_\infty +
    c L^{-a}`: ``limit`` (:math:`\mathcal{L}_\infty`), its ``stderr``, ``exponent``,
    ``coefficient``, ``residual_rms`` and ``points``. None with fewer than :data:`MIN_DEPTHS`
    finite points; ``stderr`` None where the fit has a flat direction.

    >>> fit = fit_power_limit([2, 3, 5, 8, 13], [1 + 2 * L**-0.5 for L in [2, 3, 5, 8, 13]])
    >>> round(fit["limit"], 6), round(fit["exponent"], 4), fit["points"]
    (1.0, 0.5, 5)
    """
    pts = [(float(a), float(b)) for a, b in zip(depths, values, strict=True)]
    pts = [(a, b) for a, b in pts if a > 0 and math.isfinite(b)]
    if len(pts) < MIN_DEPTHS or len({a for a, _ in pts}) < MIN_DEPTHS:
        return None
    x, y = np.array([p[0] for p in pts]), np.array([p[1] for p in pts])
    a = _best_exponent(x, y)
    lim, c, rss = _linear(x, y, a)
    n = len(x)
    s2 = rss / (n - 3)
    jac = np.stack([np.ones_like(x), x**-a, -c * x**-a * np.log(x)], axis=1)
    try:
        cov = s2 * np.linalg.inv(jac.T @ jac)
        se = math.sqrt(max(float(cov[0, 0]), 0.0))
    except np.linalg.LinAlgError:  # a flat direction (c = 0): the limit is not determined
        se = None
    return {
        "limit": lim,
        "stderr": se,
        "exponent": a,
        "coefficient": c,
        "residual_rms": math.sqrt(rss / n),
        "points": n,
    }


def limit(depths: Sequence[int], objectives: Sequence[float], gufm: float | None) -> dict | None:
    """The fit of :func:`fit_power_limit` on a sweep's objectives against :math:`\\mathcal{L}^*_{\\rm
    GUFM}` (``gufm``, the optimum every depth shares; None where the depths' optima differ, as
    with λ/L): ``deviation_se`` = |limit - gufm| / stderr, ``gap_last`` = the deepest objective
    minus gufm, ``resolution`` = 2 stderr / gap_last. None with too few depths or no ``gufm``.

    >>> out = limit([2, 3, 5, 8, 13], [1 + 2 * L**-0.5 + 1e-4 * (-1) ** L for L in [2, 3, 5, 8, 13]], 1.0)
    >>> out["deviation_se"] < 2, out["resolution"] < 1
    (True, True)
    """
    if gufm is None or not math.isfinite(gufm):
        return None
    fit = fit_power_limit([float(d) for d in depths], objectives)
    if fit is None:
        return None
    se, gap = fit["stderr"], float(objectives[-1]) - gufm
    dev = abs(fit["limit"] - gufm)
    known = se is not None and se > 0
    return {
        "model": "objective(L) = L_inf + c L^-a (least squares, a free)",
        **fit,
        "gufm": gufm,
        "deviation": fit["limit"] - gufm,
        # None (not a number: the checks fail) where the fit leaves the limit undetermined
        "deviation_se": dev / se if known else None,
        "gap_last": gap,
        "resolution": 2 * se / gap if known and gap > 0 else None,
    }
