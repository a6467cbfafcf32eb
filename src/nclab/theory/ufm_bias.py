r"""The regularised-MSE UFM with a regularised bias, 0 < λ_b < ∞: from the simplex ETF to the
orthogonal frame.

Tirer & Bruna (ICML 2022, §3) characterise the two ends, λ_b = 0 (Theorem 3.2: a simplex ETF,
b = 1/K) and λ_b -> ∞ (Theorem 3.1, the bias-free model: an orthogonal frame), and deduce the
λ_b > 0 case from them. nclab's closed form (:func:`nclab.theory.ufm.ufm_mse_bias`, derived in the
docstring of :mod:`nclab.theory.ufm`) covers every λ_b: with c = K√(nλ_Hλ_W) < 1 and
μ = λ_b/(1+λ_b), every minimiser has collapsed features with

.. math:: \bar H^\top\bar H = \kappa\big(p\,(I - \tfrac1K 11^\top) + s\,\tfrac1K 11^\top\big),
          \quad p = 1 - c,\quad s = \max(1 - c/\mu, 0),\quad \kappa = \sqrt{\lambda_W/(n\lambda_H)},

and W = √(nλ_H/λ_W) H̄ᵀ. So the *centred* class means are a simplex ETF for every λ_b (NC2^ETF = 0)
and the global mean grows from zero to the orthogonal frame's:

* for λ_b <= λ_b^ETF = c/(1-c) (μ <= c) the minimiser is exactly Theorem 3.2's simplex ETF (s = 0),
  with b = 1/(K(1+λ_b)) instead of 1/K;
* for λ_b > λ_b^ETF the global mean appears and s/p rises monotonically to 1 as λ_b -> ∞
  (s/p = 1 - c/(λ_b (1 - c)) + ...), the orthogonal frame of Theorem 3.1.

:func:`ufm_regularized_bias` adds to that closed form the NC2 / NC3 values it implies (all
functions of the normalised Gram matrix, whose eigenvalues are p, K-1 times, and s), so a sweep
over λ_b can be checked metric by metric.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from .base import Prediction
from .ufm import ufm_mse_bias

__all__ = ["KEYS_PREDICTED", "RegularizedBiasPrediction", "nc2_along_bias", "ufm_regularized_bias"]

#: the canonical metrics (nclab.metrics keys) whose value at the minimiser the closed form gives
KEYS_PREDICTED = ("nc1", "nc2_etf", "nc2_of", "nc2_w_etf", "nc2_w_of", "nc3", "nc3_of")


@dataclass(frozen=True)
class RegularizedBiasPrediction(Prediction):
    """The minimiser at one λ_b and the metrics it implies (None where a metric is undefined)."""

    K: int
    n: int
    d: int
    lambda_w: float
    lambda_h: float
    lambda_b: float
    mu: float  # lambda_b / (1 + lambda_b)
    threshold: float  # c = K sqrt(n lambda_H lambda_W)
    collapsed: bool
    lambda_b_etf: float | None  # the largest λ_b whose minimiser is an exact simplex ETF
    structure: str  # "simplex_etf" | "etf_plus_mean" | "zero" (ufm_mse_bias's)
    p: float  # centred eigenvalue of the normalised W H̄ (1 - c)
    s: float  # global-mean eigenvalue (0: simplex ETF, p: orthogonal frame)
    of_fraction: float | None  # s / p: 0 at the ETF end, -> 1 at the OF end
    rho: float
    rho_mean: float
    b: float
    objective: float
    nc1: float | None
    nc2_etf: float | None  # centred class means vs a simplex ETF
    nc2_of: float | None  # uncentred class means vs an orthogonal frame (= nc2_w_of)
    nc2_w_etf: float | None  # classifier rows vs a simplex ETF
    nc2_w_of: float | None
    nc3: float | None  # W vs the centred means (squared distance, as nclab.metrics.nc3)
    nc3_of: float | None  # W vs the uncentred means
    applies: bool = True
    reason: str = ""


def nc2_along_bias(K: int, p: float, s: float) -> dict[str, float]:
    r"""NC2^OF, NC2^ETF of the classifier and NC3 of a Gram matrix p(I - 11ᵀ/K) + s 11ᵀ/K (p > 0).

    With R = √((K-1)p² + s²): :math:`\mathrm{OF} = \sqrt{(K-1)(p/R - 1/\sqrt K)^2 + (s/R -
    1/\sqrt K)^2}`, :math:`\mathrm{ETF} = \sqrt{(K-1)(p/R - 1/\sqrt{K-1})^2 + (s/R)^2}` (the
    uncentred rows) and NC3 = 2 - 2√((K-1)p/((K-1)p + s)) (W ∝ H̄ᵀ against the centred means).

    >>> {k: round(v, 12) for k, v in nc2_along_bias(4, 0.5, 0.5).items()}  # orthogonal frame
    {'nc2_of': 0.0, 'nc2_w_etf': 0.5, 'nc3': 0.267949192431}
    >>> round(nc2_along_bias(4, 0.5, 0.0)["nc2_w_etf"], 12)  # simplex ETF
    0.0
    """
    r = math.sqrt((K - 1) * p * p + s * s)
    of = math.sqrt((K - 1) * (p / r - K**-0.5) ** 2 + (s / r - K**-0.5) ** 2)
    etf = math.sqrt((K - 1) * (p / r - (K - 1) ** -0.5) ** 2 + (s / r) ** 2)
    nc3 = 2 - 2 * math.sqrt((K - 1) * p / ((K - 1) * p + s))
    return {"nc2_of": of, "nc2_w_etf": etf, "nc3": nc3}


def ufm_regularized_bias(
    K: int, n: int, d: int, lambda_w: float, lambda_h: float, lambda_b: float
) -> RegularizedBiasPrediction:
    """The regularised-bias MSE UFM at one λ_b > 0 with its NC metrics (module docstring).

    >>> p = ufm_regularized_bias(K=4, n=50, d=20, lambda_w=0.005, lambda_h=0.005, lambda_b=0.1)
    >>> p.structure, p.s, round(p.lambda_b_etf, 6), round(p.nc2_w_etf, 12)
    ('simplex_etf', 0.0, 0.164716, 0.0)
    >>> p = ufm_regularized_bias(K=4, n=50, d=20, lambda_w=0.005, lambda_h=0.005, lambda_b=10.0)
    >>> p.structure, round(p.of_fraction, 6), round(p.nc2_of, 6)
    ('etf_plus_mean', 0.983528, 0.007162)
    """
    base = ufm_mse_bias(K=K, n=n, d=d, lambda_w=lambda_w, lambda_h=lambda_h, lambda_b=lambda_b)
    lb = base.lambda_b
    mu, c = lb / (1 + lb), base.threshold
    p, s = max(1 - c, 0.0), (max(1 - c / mu, 0.0) if mu > 0 else 0.0)
    metrics: dict[str, float | None] = dict.fromkeys(KEYS_PREDICTED)
    if p > 0:
        along = nc2_along_bias(K, p, s)
        metrics.update(along, nc1=0.0, nc2_etf=0.0, nc2_w_of=along["nc2_of"], nc3_of=0.0)
    return RegularizedBiasPrediction(
        K=K,
        n=n,
        d=d,
        lambda_w=base.lambda_w,
        lambda_h=base.lambda_h,
        lambda_b=lb,
        mu=mu,
        threshold=c,
        collapsed=base.collapsed,
        lambda_b_etf=c / (1 - c) if c < 1 else None,
        structure=base.structure,
        p=p,
        s=s,
        of_fraction=s / p if p > 0 else None,
        rho=base.rho,
        rho_mean=base.rho_mean,
        b=base.b,
        objective=base.objective,
        **metrics,
    )
