r"""Closed-form minimisers of the extended (two weight layers) and deep linear UFM.

Tirer & Bruna (ICML 2022), §4: eq. (23), linear, and eq. (24), ReLU between W_1 and H_1,

.. math:: f = \frac{1}{2Kn}\|W_2\,\sigma(W_1H_1) - Y\|_F^2 + \frac{\lambda_{W_2}}{2}\|W_2\|_F^2
          + \frac{\lambda_{W_1}}{2}\|W_1\|_F^2 + \frac{\lambda_{H_1}}{2}\|H_1\|_F^2 ,

W_2 (K x d), W_1 (d x d), H_1 (d x Kn) — the convention of :mod:`nclab.theory.objectives`.

**Derivation (Thm 4.1, rebuilt from appendix C).** Minimisers are collapsed (H_1 = H̄_1 ⊗ 1ᵀ, Jensen)
and *balanced*: λ_{W_2}W_2ᵀW_2 = λ_{W_1}W_1W_1ᵀ, λ_{W_1}W_1ᵀW_1 = nλ_{H_1}H̄_1H̄_1ᵀ (appendix C.1).
Minimising the regularisers over the factorisations W_2W_1H̄_1 = Z (d >= K) gives the Schatten-2/3
penalty :math:`\frac32 a \sum_i \sigma_i(Z)^{2/3}`,
:math:`a = (n\lambda_{H_1}\lambda_{W_1}\lambda_{W_2})^{1/3}`,
so :math:`Z = sI_K` with every singular value minimising

.. math:: \phi(s) = \tfrac12 (s-1)^2 + \tfrac32 K a\, s^{2/3},\qquad
          \phi'(s) = 0 \iff t^4 - t + Ka = 0,\ t = s^{1/3}

— the quartic of the paper (there written in σ_{W_2}; both are the same root). For
:math:`Ka < \tfrac34 4^{-1/3}` it has two roots in (0, 1): the smaller is a local maximum of φ, the
larger a local minimum, which beats the zero solution (φ(0) = 1/2) iff
:math:`Ka \le 2^{-4/3}`, i.e. :math:`K^3 n\lambda_{W_2}\lambda_{W_1}\lambda_{H_1} \le 1/16`
(at equality s = 1/2 and both are optimal). The singular values of the factors follow from
balancedness: with :math:`m = a s^{2/3}`, :math:`\sigma_{W_2} = \sqrt{m/\lambda_{W_2}}`,
:math:`\sigma_{W_1} = \sqrt{m/\lambda_{W_1}}`, :math:`\sigma_{\bar H_1} = \sqrt{m/(n\lambda_{H_1})}`
(H_1 itself: √n times that), and W_2, W_1H̄_1, H̄_1 are scaled orthogonal frames.

The same argument for L weight layers (deep linear UFM) gives the penalty
:math:`\frac{L+1}{2} a\sum_i\sigma_i^{2/(L+1)}` with
:math:`a = (n\lambda_H\prod_l\lambda_{W_l})^{1/(L+1)}`,
stationarity :math:`(1-s)s^{(L-1)/(L+1)} = Ka` and the threshold
:math:`Ka \le \frac1L\left(\frac{L-1}{L}\right)^{(L-1)/(L+1)}` (s = (L-1)/L there); L = 1 is
Theorem 3.1 (s = 1 - c), L = 2 the above.

ReLU (Thm 4.2): a nonnegative orthogonal frame makes the ReLU the identity, so the ReLU model
attains
the linear optimum; under the theorem's assumption ‖H*‖_* = ‖σ(H*)‖_* nothing does better and
(W_2, σ(W_1H_1)) carries the linear model's (W_2, W_1H_1) structure and singular values. W_1 and H_1
individually are not determined by the theorem.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from .base import Prediction
from .params import check_number_list, check_positive, check_sizes, require


@dataclass(frozen=True)
class DeepUFMPrediction(Prediction):
    """Minimiser of the deep linear UFM (L weight layers; L = 2: Tirer & Bruna Thm 4.1).

    ``s``: singular value (all K equal) of the collapsed product W_L···W_1H̄ (K x K; = s I_K).
    ``sigma_w``: singular value of each W_l (l = 1..L; the last is the classifier); ``sigma_h``
    of H (d x N) and ``sigma_h_bar`` of H̄ (d x K); ``sigma_z`` of each partial product
    W_l···W_1H (d x N), ``sigma_z_bar`` of W_l···W_1H̄.
    """

    K: int
    n: int
    d: int
    L: int
    lambda_w: list[float]
    lambda_h: float
    a: float  # (n lambda_H prod lambda_W)^(1/(L+1))
    threshold_value: float  # K a
    threshold: float  # collapse iff K a <= threshold
    collapsed: bool
    structure: str  # "orthogonal_frame" | "zero"
    s: float
    stationary_points: list[float]  # roots of phi'(s) = 0 in (0, 1), ascending
    sigma_w: list[float]
    sigma_h: float
    sigma_h_bar: float
    sigma_z: list[float]
    sigma_z_bar: list[float]
    objective: float
    zero_objective: float
    applies: bool = True
    reason: str = ""


def _phi(s: float, Ka: float, L: int) -> float:
    return 0.5 * (s - 1) ** 2 + 0.5 * (L + 1) * Ka * s ** (2 / (L + 1))


def _stationary(Ka: float, L: int) -> list[float]:
    """Roots in (0, 1) of (1 - s) s^q = K a, q = (L-1)/(L+1) (ascending)."""
    if L == 1:
        return [1 - Ka] if Ka < 1 else []
    q = (L - 1) / (L + 1)
    peak = q / (1 + q)
    g = lambda s: (1 - s) * s**q - Ka  # noqa: E731
    if g(peak) < 0:
        return []
    if g(peak) == 0:
        return [peak]
    from scipy.optimize import brentq  # scipy.optimize takes 0.4 s to import: not for --list

    lo = brentq(g, 0.0, peak, xtol=1e-300, rtol=1e-15, maxiter=500)
    hi = brentq(g, peak, 1.0, xtol=1e-300, rtol=1e-15, maxiter=500)
    return [lo, hi]


def deep_linear_ufm(
    K: int, n: int, d: int, lambda_w: Sequence[float] | float, lambda_h: float, L: int | None = None
) -> DeepUFMPrediction:
    """Global minimiser of the deep linear UFM W_L···W_1H with weight decay on every factor.

    ``lambda_w``: one value per layer (W_1 first, classifier W_L last) or one value for all
    (then ``L`` is required). Needs d >= K. See the module docstring for the derivation.

    >>> p = deep_linear_ufm(K=4, n=50, d=20, lambda_w=[0.005, 0.005, 0.005], lambda_h=0.005)
    >>> p.structure, round(p.s, 6), round(p.objective, 6)
    ('orthogonal_frame', 0.9453, 0.104912)
    """
    check_sizes(K, n, d)
    lws = check_number_list("lambda_w", lambda_w, L, count_name="L", what="weight layer")
    L = len(lws)
    lh = check_positive("lambda_h", lambda_h)
    a = (n * lh * math.prod(lws)) ** (1 / (L + 1))
    Ka = K * a
    threshold = (1 / L) * ((L - 1) / L) ** ((L - 1) / (L + 1))
    roots = _stationary(Ka, L)
    s = roots[-1] if roots else 0.0
    collapsed = bool(roots) and _phi(s, Ka, L) < 0.5
    if not collapsed:
        s = 0.0
    else:
        require(
            d >= K,
            f"the collapsed minimiser is an orthogonal frame of K = {K} vectors: "
            f"the theorem needs d >= K, got d = {d}",
        )
    m = a * s ** (2 / (L + 1))
    sigma_w = [math.sqrt(m / lw) for lw in lws]
    sigma_h_bar = math.sqrt(m / (n * lh))
    z_bar, acc = [], sigma_h_bar
    for sw in sigma_w:
        acc *= sw
        z_bar.append(acc)
    return DeepUFMPrediction(
        K=K,
        n=n,
        d=d,
        L=L,
        lambda_w=lws,
        lambda_h=lh,
        a=a,
        threshold_value=Ka,
        threshold=threshold,
        collapsed=collapsed,
        structure="orthogonal_frame" if collapsed else "zero",
        s=s,
        stationary_points=roots,
        sigma_w=sigma_w,
        sigma_h=math.sqrt(n) * sigma_h_bar,
        sigma_h_bar=sigma_h_bar,
        sigma_z=[math.sqrt(n) * z for z in z_bar],
        sigma_z_bar=z_bar,
        objective=_phi(s, Ka, L) if collapsed else 0.5,
        zero_objective=0.5,
    )


@dataclass(frozen=True)
class ExtendedUFMPrediction(Prediction):
    """Minimiser of the extended UFM (Tirer & Bruna §4); singular values of each factor.

    ``sigma_w2``, ``sigma_w1``: of W_2, W_1 (K nonzero each); ``sigma_h1`` of H_1 (d x N),
    ``sigma_h1_bar`` of H̄_1; ``sigma_w1h1`` of W_1H_1 (the ReLU model: of σ(W_1H_1)); ``s`` of the
    K x K product W_2W_1H̄_1 = s I. ``quartic``: coefficients of t⁴ - t + Ka (t = s^{1/3}),
    ``quartic_roots``: its real roots, ``root``: the optimal one (0 when the zero solution wins).
    For the ReLU model, W_1 and H_1 alone are not determined (``sigma_w1``/``sigma_h1`` None).
    """

    K: int
    n: int
    d: int
    lambda_w2: float
    lambda_w1: float
    lambda_h1: float
    relu: bool
    quartic: list[float]
    quartic_roots: list[float]
    root: float
    s: float
    threshold_value: float  # K (n lambda_H1 lambda_W1 lambda_W2)^(1/3)
    threshold: float  # 2^(-4/3): the zero solution wins above it
    collapsed: bool
    structure: str
    sigma_w2: float
    sigma_w1: float | None
    sigma_h1: float | None
    sigma_h1_bar: float | None
    sigma_w1h1: float
    sigma_w1h1_bar: float
    objective: float
    zero_objective: float
    applies: bool = True
    reason: str = ""
    assumption: str = field(default="")


def _extended(K, n, d, lambda_w2, lambda_w1, lambda_h1, relu: bool) -> ExtendedUFMPrediction:
    p = deep_linear_ufm(K=K, n=n, d=d, lambda_w=[lambda_w1, lambda_w2], lambda_h=lambda_h1)
    Ka = p.threshold_value
    real = sorted(
        float(r.real)
        for r in np.roots([1.0, 0.0, 0.0, -1.0, Ka])
        if abs(r.imag) <= 1e-9 * max(1.0, abs(r))
    )
    # report the brentq-refined roots (full precision) in place of numpy's eigenvalue roots
    t_roots = [s ** (1 / 3) for s in p.stationary_points]
    shown = t_roots if len(t_roots) == len([r for r in real if 0 < r < 1]) else real
    return ExtendedUFMPrediction(
        K=K,
        n=n,
        d=d,
        lambda_w2=p.lambda_w[1],
        lambda_w1=p.lambda_w[0],
        lambda_h1=p.lambda_h,
        relu=relu,
        quartic=[1.0, 0.0, 0.0, -1.0, Ka],
        quartic_roots=shown,
        root=p.s ** (1 / 3),
        s=p.s,
        threshold_value=Ka,
        threshold=p.threshold,
        collapsed=p.collapsed,
        structure=p.structure,
        sigma_w2=p.sigma_w[1],
        sigma_w1=None if relu else p.sigma_w[0],
        sigma_h1=None if relu else p.sigma_h,
        sigma_h1_bar=None if relu else p.sigma_h_bar,
        sigma_w1h1=p.sigma_z[0],
        sigma_w1h1_bar=p.sigma_z_bar[0],
        objective=p.objective,
        zero_objective=0.5,
        assumption=(
            "Thm 4.2 assumes ||H*||_* = ||relu(H*)||_* at the minimiser (H* = W1 H1); "
            "without it the value is an upper bound of the ReLU model's minimum"
        )
        if relu
        else "",
    )


def extended_ufm(
    K: int, n: int, d: int, lambda_w2: float, lambda_w1: float, lambda_h1: float
) -> ExtendedUFMPrediction:
    """Linear extended UFM (Tirer & Bruna Thm 4.1): singular values from the quartic t⁴ - t + Ka.

    >>> p = extended_ufm(K=4, n=50, d=20, lambda_w2=0.005, lambda_w1=0.005, lambda_h1=0.005)
    >>> p.structure, round(p.sigma_w2, 6), round(p.objective, 6)
    ('orthogonal_frame', 1.869716, 0.107736)
    """
    return _extended(K, n, d, lambda_w2, lambda_w1, lambda_h1, relu=False)


def extended_ufm_relu(
    K: int, n: int, d: int, lambda_w2: float, lambda_w1: float, lambda_h1: float
) -> ExtendedUFMPrediction:
    """ReLU extended UFM (Tirer & Bruna Thm 4.2): W_2, σ(W_1H_1) as the linear W_2, W_1H_1.

    >>> p = extended_ufm_relu(K=4, n=50, d=20, lambda_w2=0.005, lambda_w1=0.005, lambda_h1=0.005)
    >>> p.sigma_w1 is None, round(p.sigma_w1h1, 6), round(p.objective, 6)
    (True, 3.495839, 0.107736)
    """
    return _extended(K, n, d, lambda_w2, lambda_w1, lambda_h1, relu=True)
