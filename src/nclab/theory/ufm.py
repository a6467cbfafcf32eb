r"""Closed-form global minimisers of the plain unconstrained-features model (UFM).

MSE (Tirer & Bruna, ICML 2022, Theorems 3.1 and 3.2), in the convention of
:mod:`nclab.theory.objectives` (eq. (3) of the paper)

.. math:: f(W,H,b) = \frac{1}{2Kn}\|WH + b1^\top - Y\|_F^2 + \frac{\lambda_W}{2}\|W\|_F^2
          + \frac{\lambda_H}{2}\|H\|_F^2 + \frac{\lambda_b}{2}\|b\|_2^2 .

**Derivation used here (it contains both theorems).** By Jensen every minimiser has collapsed
features ``H = H̄ ⊗ 1ᵀ``, and minimising the two regularisers over the factorisations ``WH̄ = Z``
(d ≥ rank Z) gives :math:`\sqrt{n\lambda_W\lambda_H}\,\|Z\|_*`, so the problem becomes the *convex*

.. math:: \min_{Z,b}\ \frac{1}{2K}\|Z + b1^\top - I_K\|_F^2 + \frac{c}{K}\|Z\|_*
          + \frac{\lambda_b}{2}\|b\|^2,
          \qquad c = K\sqrt{n\lambda_H\lambda_W}.

It is invariant under permuting the classes, so a minimiser is :math:`Z = p(I - \tfrac1K 11^\top) +
\tfrac{s}{K}11^\top`, :math:`b=\beta 1`, which separates into two scalar problems with
:math:`\mu = \lambda_b/(1+\lambda_b)`:

* :math:`p = \max(1-c, 0)` — Theorem 3.1/3.2's collapse threshold
  :math:`K\sqrt{n\lambda_H\lambda_W} \le 1`;
* :math:`s = \max(1 - c/\mu, 0)` and :math:`\beta = (1-s)/(K(1+\lambda_b))`;
* :math:`f^* = \frac{K-1}{K}\,g_1(c) + \frac1K\, g_\mu(c)`, with :math:`g_m(c) = c - c^2/(2m)` for
  :math:`c < m` and :math:`m/2` otherwise.

The factors are balanced: :math:`\bar H^\top \bar H = \sqrt{\lambda_W/(n\lambda_H)}\,Z` and
:math:`W = \sqrt{n\lambda_H/\lambda_W}\,\bar H^\top`, i.e.
:math:`\bar H^\top\bar H = \rho(I-\tfrac1K
11^\top) + \rho_{\bar h}\tfrac1K 11^\top` with :math:`\rho = (1-c)\sqrt{\lambda_W/(n\lambda_H)}`.
Bias-free (λ_b → ∞, μ = 1): s = p, an orthogonal frame, Theorem 3.1, :math:`f^* = c - c^2/2`.
Unregularised bias (λ_b = 0, μ = 0): s = 0, a simplex ETF, b = 1/K, Theorem 3.2,
:math:`f^* = \frac{K-1}{K}(c - c^2/2)`. A regularised bias interpolates (centred means still a
simplex ETF, plus a global-mean component while :math:`c < \mu`).

Cross-entropy (:func:`ufm_ce`): the regularised CE UFM of Zhu et al. (NeurIPS 2021, Thm 3.1) in the
same convention; its minimisers are a simplex ETF with norms from a scalar equation, solved in
closed
form below.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from .base import Prediction
from .params import check_choice, check_positive, check_sizes, require
from .params import check_int as check_int  # the checkers lived here before params.py: same names

# --------------------------------------------------------------------------------------------------
# MSE
# --------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class UFMMSEPrediction(Prediction):
    """Global minimiser of the regularised-MSE UFM (see the module docstring for the formulas).

    ``rho``: H̄ᵀH̄ = rho (I - 11ᵀ/K) + rho_mean 11ᵀ/K (bias-free: rho_mean = rho, so H̄ᵀH̄ = rho I).
    ``scale``: W = scale · H̄ᵀ. ``b``: every entry of the optimal bias (None when bias-free).
    """

    K: int
    n: int
    d: int
    lambda_w: float
    lambda_h: float
    lambda_b: float | None  # None: bias-free (b = 0 fixed)
    threshold: float  # c = K sqrt(n lambda_H lambda_W); collapse iff c < 1
    collapsed: bool
    structure: str  # "orthogonal_frame" | "simplex_etf" | "etf_plus_mean" | "zero"
    rho: float
    rho_mean: float
    scale: float
    w_norm: float  # ||w_k||
    h_norm: float  # ||h̄_k||
    b: float | None
    wh: float  # diagonal of W H̄ (= p + s/K - ... see wh_offdiag)
    wh_offdiag: float  # off-diagonal entries of W H̄
    objective: float
    zero_objective: float  # objective of W = 0, H = 0 (b optimal)
    rank: int  # rank of the optimal W H̄ (the d >= rank hypothesis)
    applies: bool = True
    reason: str = ""


def _g(c: float, m: float) -> float:
    """min_{t >= 0} (t - 1)^2 m / 2 ... in closed form: c - c^2/(2m) if c < m else m / 2."""
    if m <= 0:
        return 0.0
    return c - c * c / (2 * m) if c < m else m / 2


def _mse(
    K: int, n: int, d: int, lambda_w: float, lambda_h: float, lambda_b: float | None
) -> UFMMSEPrediction:
    check_sizes(K, n, d)
    lw = check_positive("lambda_w", lambda_w)
    lh = check_positive("lambda_h", lambda_h)
    if lambda_b is None:
        mu, lb = 1.0, None
    else:
        lb = check_positive("lambda_b", lambda_b, allow_zero=True)
        mu = lb / (1 + lb)
    c = K * math.sqrt(n * lh * lw)
    p = max(1 - c, 0.0)
    s = max(1 - c / mu, 0.0) if mu > 0 else 0.0
    kappa = math.sqrt(lw / (n * lh))
    rho, rho_mean = kappa * p, kappa * s
    scale = math.sqrt(n * lh / lw)
    h2 = rho * (1 - 1 / K) + rho_mean / K
    rank = (K - 1 if p > 0 else 0) + (1 if s > 0 else 0)
    require(
        rank <= d,
        f"the minimiser's W H̄ has rank {rank} but d = {d}: the theorem needs d >= {rank} "
        f"(d >= K for the bias-free / regularised-bias UFM, d >= K-1 with an unregularised bias)",
    )
    if p == 0:
        structure = "zero" if s == 0 else "mean_only"
    elif lambda_b is None:
        structure = "orthogonal_frame"
    elif s == 0:
        structure = "simplex_etf"
    else:
        structure = "etf_plus_mean"
    objective = (K - 1) / K * _g(c, 1.0) + _g(c, mu) / K
    zero = (K - 1) / (2 * K) + mu / (2 * K)
    return UFMMSEPrediction(
        K=K,
        n=n,
        d=d,
        lambda_w=lw,
        lambda_h=lh,
        lambda_b=lb,
        threshold=c,
        collapsed=p > 0,
        structure=structure,
        rho=rho,
        rho_mean=rho_mean,
        scale=scale,
        w_norm=scale * math.sqrt(h2),
        h_norm=math.sqrt(h2),
        b=None if lb is None else (1 - s) / (K * (1 + lb)),
        wh=p * (1 - 1 / K) + s / K,
        wh_offdiag=-p / K + s / K,
        objective=objective,
        zero_objective=zero,
        rank=rank,
    )


def ufm_mse(K: int, n: int, d: int, lambda_w: float, lambda_h: float) -> UFMMSEPrediction:
    """Bias-free regularised-MSE UFM (Tirer & Bruna Thm 3.1): orthogonal frame iff K√(nλ_Hλ_W) < 1.

    H̄ᵀH̄ = ρ I with ρ = (1 - K√(nλ_Hλ_W))·√(λ_W/(nλ_H)), W = √(nλ_H/λ_W)·H̄ᵀ, objective c - c²/2
    (c = K√(nλ_Hλ_W)); for c >= 1 the minimiser is (0, 0) with objective 1/2. Needs d >= K.

    >>> p = ufm_mse(K=4, n=50, d=20, lambda_w=0.005, lambda_h=0.005)
    >>> p.structure, round(p.rho, 6), round(p.objective, 8)
    ('orthogonal_frame', 0.121421, 0.13142136)
    """
    return _mse(K, n, d, lambda_w, lambda_h, None)


def ufm_mse_bias(
    K: int, n: int, d: int, lambda_w: float, lambda_h: float, lambda_b: float = 0.0
) -> UFMMSEPrediction:
    """MSE UFM with a bias (Tirer & Bruna Thm 3.2 for λ_b = 0; regularised bias for λ_b > 0).

    λ_b = 0: simplex ETF, H̄ᵀH̄ = ρ(I - 11ᵀ/K) with the ρ of Thm 3.1, b = 1/K, objective
    (K-1)/K·(c - c²/2). λ_b > 0: see the module docstring (ETF + a global-mean component while
    c < λ_b/(1+λ_b)).

    >>> p = ufm_mse_bias(K=4, n=50, d=20, lambda_w=0.005, lambda_h=0.005)
    >>> p.structure, p.b, round(p.objective, 8)
    ('simplex_etf', 0.25, 0.09856602)
    """
    return _mse(K, n, d, lambda_w, lambda_h, lambda_b)


# --------------------------------------------------------------------------------------------------
# cross-entropy
# --------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class UFMCEPrediction(Prediction):
    """Global minimiser of the regularised cross-entropy UFM (simplex ETF, or zero)."""

    K: int
    n: int
    d: int
    lambda_w: float
    lambda_h: float
    bias: str
    lambda_b: float
    threshold: float  # c = K sqrt(n lambda_W lambda_H); collapse iff c < 1
    collapsed: bool
    structure: str  # "simplex_etf" | "zero"
    z: float  # ||w_k|| ||h̄_k||
    scale: float  # W = scale · H̄ᵀ
    w_norm: float
    h_norm: float
    logit_margin: float  # w_kᵀh̄_k - w_jᵀh̄_k = z K/(K-1)
    b: float  # optimal bias entries (0; any constant vector when the bias is unregularised)
    objective: float
    zero_objective: float  # log K
    applies: bool = True
    reason: str = ""


def _check_ce_bias(bias: str, lambda_b: float) -> float:
    """The bias of the CE UFM: "none", "free" (λ_b = 0) or "regularized" (λ_b > 0); returns λ_b."""
    check_choice("bias", bias, ("none", "free", "regularized"))
    lb = check_positive("lambda_b", lambda_b, allow_zero=True)
    require(
        not (bias == "regularized" and lb == 0),
        "bias='regularized' needs lambda_b > 0, got lambda_b = 0 (use bias='free' for an "
        "unregularised bias)",
    )
    return lb


def _ce_optimum(K: int, d: int, eps: float) -> tuple[float, float]:
    """(z*, F(z*)) of the reduced objective F in :func:`ufm_ce`'s docstring, eps = √(nλ_Wλ_H):
    the simplex ETF when K eps < 1 (it needs d >= K - 1), else the zero solution (0, log K)."""
    if not K * eps < 1:
        return 0.0, math.log(K)
    require(d >= K - 1, f"a K-simplex ETF needs d >= K-1 = {K - 1}, got d = {d}")
    q = 1 - (K - 1) * eps
    u = math.log(q / eps)
    return (K - 1) / K * u, -math.log(q) + (K - 1) * eps * u


def ufm_ce(
    K: int,
    n: int,
    d: int,
    lambda_w: float,
    lambda_h: float,
    bias: str = "none",
    lambda_b: float = 0.0,
) -> UFMCEPrediction:
    r"""Regularised cross-entropy UFM: mean CE + λ_W/2‖W‖² + λ_H/2‖H‖² (+ λ_b/2‖b‖²).

    Zhu et al. (NeurIPS 2021) Thm 3.1: every minimiser is collapsed, H̄ and W form aligned simplex
    ETFs, W = √(nλ_H/λ_W)·H̄ᵀ and b is constant (0 when regularised; a constant bias leaves CE
    unchanged, so the objective is the same with ``bias`` "none", "free" or "regularized").
    With z = ‖w_k‖‖h̄_k‖ the objective reduces to

    .. math:: F(z) = \log\big(1 + (K-1)e^{-Kz/(K-1)}\big) + K\sqrt{n\lambda_W\lambda_H}\, z,

    minimised at :math:`z^* = \frac{K-1}{K}\log\frac{1-(K-1)\epsilon}{\epsilon}`,
    :math:`\epsilon = \sqrt{n\lambda_W\lambda_H}`, when :math:`K\epsilon < 1` (else z* = 0,
    objective log K);
    :math:`F(z^*) = -\log(1-(K-1)\epsilon) + (K-1)\epsilon\log\frac{1-(K-1)\epsilon}{\epsilon}`.
    Needs d >= K - 1.

    >>> p = ufm_ce(K=4, n=50, d=20, lambda_w=0.005, lambda_h=0.005)
    >>> p.structure, round(p.z, 6), round(p.objective, 6)
    ('simplex_etf', 2.422637, 0.454736)
    """
    check_sizes(K, n, d)
    lw = check_positive("lambda_w", lambda_w)
    lh = check_positive("lambda_h", lambda_h)
    lb = _check_ce_bias(bias, lambda_b)
    eps = math.sqrt(n * lw * lh)
    c = K * eps
    z, objective = _ce_optimum(K, d, eps)
    scale = math.sqrt(n * lh / lw)
    h = math.sqrt(z / scale)
    return UFMCEPrediction(
        K=K,
        n=n,
        d=d,
        lambda_w=lw,
        lambda_h=lh,
        bias=bias,
        lambda_b=lb,
        threshold=c,
        collapsed=c < 1,
        structure="simplex_etf" if c < 1 else "zero",
        z=z,
        scale=scale,
        w_norm=scale * h,
        h_norm=h,
        logit_margin=z * K / (K - 1),
        b=0.0,
        objective=objective,
        zero_objective=math.log(K),
    )
