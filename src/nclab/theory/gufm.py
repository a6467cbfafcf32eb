r"""Global minimisers of the generalised UFM (GUFM) of Súkeník, Lampert & Mondelli.

The GUFM's features are LayerNorm outputs: every feature column x lies on
:math:`\mathcal{S} = \{x\in\mathbb{R}^d: 1^\top x = 0,\ \|x\| = \sqrt d\}`; the last layer has
weight
decay and no bias. **Our convention** (that of :mod:`nclab.theory.objectives`, the same averaging as
Tirer & Bruna):

.. math:: \mathcal{L}(W, X) = \mathrm{loss}(WX) + \frac{\lambda}{2}\|W\|_F^2,\qquad
          \mathrm{MSE}(Z) = \frac{1}{2N}\|Z - Y\|_F^2,\quad
          \mathrm{CE} \text{ averaged over the N samples.}

**MSE** (appendix, proof of Lemma 4.1, rebuilt). Dropping the off-diagonal fit terms is a lower
bound that separates over classes; for ‖w_k‖ ≤ 1/√d the best feature is x = √d w_k/‖w_k‖ and the
class-k term becomes :math:`\frac{1}{2K}(\sqrt d z - 1)^2 + \frac{\lambda}{2}z^2`, z = ‖w_k‖,
minimised at

.. math:: \|w_k\| = \frac{\sqrt d}{d + \lambda K} = \frac{1}{\sqrt d\,(1 + \lambda K/d)}.

The bound is attained when the rows of W are orthogonal (off-diagonal terms vanish) and lie in
:math:`1^\perp` (so that x_k ∝ w_k is feasible): K orthogonal vectors in a (d-1)-dimensional space,
hence **d ≥ K + 1**. Objective :math:`\frac{\lambda K}{2(d + \lambda K)}`; features collapse to an
orthogonal frame (NC1, NC2^OF, NC3). The appendix's ‖w_k‖ = 1/(√d(1+λK)) is this formula with
λ → dλ: the appendix's λ is ours divided by d (equivalently, its bound is the one for unit-norm
features, rescaled to norm √d).

**CE** (the appendix reduces it to Zhu et al.'s regularised UFM-CE, Thm 3.1): features form a
simplex
ETF of norm √d in :math:`1^\perp` (d ≥ K), W = w·(their directions) with w solving

.. math:: \frac{\sqrt d\, e^{-u}}{1 + (K-1)e^{-u}} = \lambda w,\qquad u = \frac{\sqrt d K w}{K-1},

objective :math:`\log(1 + (K-1)e^{-u}) + \lambda K w^2/2`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from .base import Prediction
from .params import check_positive, check_sizes, require


@dataclass(frozen=True)
class GUFMPrediction(Prediction):
    """GUFM optimum: feature norm √d, classifier row norm ``w_norm``, structure and objective."""

    K: int
    d: int
    lam: float
    loss: str
    structure: str  # "orthogonal_frame" (MSE) | "simplex_etf" (CE)
    feature_norm: float  # sqrt(d)
    w_norm: float  # ||w_k|| in our convention
    logit_true: float  # w_kᵀx_k
    logit_other: float  # w_jᵀx_k, j != k
    objective: float
    lam_appendix: float | None  # the appendix's lambda giving the same optimum (MSE: lam / d)
    w_norm_appendix_formula: float | None  # 1/(sqrt(d)(1 + lam_appendix K)) (MSE; = w_norm)
    applies: bool = True
    reason: str = ""


def _checked(K: int, d: int, lam: float, extra: int, optimum: str) -> float:
    """The GUFM's instance checked (:class:`~nclab.errors.TheoryError`): sizes, λ > 0, and the
    width its ``optimum`` needs inside the zero-mean hyperplane, d >= K + ``extra``; λ as a
    float."""
    check_sizes(K, None, d)
    lam = check_positive("lam", lam)
    need = f"K+{extra} = {K + extra}" if extra else "K"
    require(
        d >= K + extra,
        f"the {optimum} inside the zero-mean hyperplane: it needs d >= {need}, got d = {d}",
    )
    return lam


def gufm_mse(K: int, d: int, lam: float) -> GUFMPrediction:
    """GUFM with MSE: orthogonal frame, ‖w_k‖ = √d/(d+λK), objective λK/(2(d+λK)); needs d >= K+1.

    >>> p = gufm_mse(K=4, d=16, lam=0.005)
    >>> p.structure, round(p.w_norm, 8), round(p.objective, 10)
    ('orthogonal_frame', 0.24968789, 0.0006242197)
    """
    lam = _checked(K, d, lam, 1, "GUFM-MSE optimum is an orthogonal frame")
    w = math.sqrt(d) / (d + lam * K)
    lam_app = lam / d
    return GUFMPrediction(
        K=K,
        d=d,
        lam=lam,
        loss="mse",
        structure="orthogonal_frame",
        feature_norm=math.sqrt(d),
        w_norm=w,
        logit_true=d / (d + lam * K),
        logit_other=0.0,
        objective=lam * K / (2 * (d + lam * K)),
        lam_appendix=lam_app,
        w_norm_appendix_formula=1 / (math.sqrt(d) * (1 + lam_app * K)),
    )


def gufm_ce(K: int, d: int, lam: float) -> GUFMPrediction:
    """GUFM with cross-entropy: simplex ETF of norm √d, ‖w_k‖ from a scalar equation; needs d >= K.

    >>> p = gufm_ce(K=4, d=16, lam=0.005)
    >>> p.structure, round(p.w_norm, 6), round(p.objective, 6)
    ('simplex_etf', 1.215861, 0.019353)
    """
    lam = _checked(K, d, lam, 0, f"GUFM-CE optimum is a simplex ETF of K = {K} vectors")
    sd = math.sqrt(d)
    a = sd * K / (K - 1)

    def grad(w: float) -> float:  # derivative of the reduced objective / K
        e = math.exp(-a * w)
        return -sd * e / (1 + (K - 1) * e) + lam * w

    from scipy.optimize import brentq  # scipy.optimize takes 0.4 s to import: not for --list

    w = brentq(grad, 0.0, sd / lam, xtol=1e-300, rtol=1e-15, maxiter=1000)
    u = a * w
    objective = math.log1p((K - 1) * math.exp(-u)) + lam * K * w * w / 2
    return GUFMPrediction(
        K=K,
        d=d,
        lam=lam,
        loss="ce",
        structure="simplex_etf",
        feature_norm=sd,
        w_norm=w,
        logit_true=sd * w,
        logit_other=-sd * w / (K - 1),
        objective=objective,
        lam_appendix=None,
        w_norm_appendix_formula=None,
    )
