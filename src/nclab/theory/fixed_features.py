r"""Tirer & Bruna, Theorem 5.1: the classifier of fixed, non-collapsed features (App. F).

The features are fixed at :math:`\tilde H_n = \bar H \otimes 1_n^\top + E_n` (d x Kn), where
:math:`\bar H^\top\bar H = \rho I_K` is the class-mean matrix of the bias-free UFM's global
minimiser (Theorem 3.1) and :math:`E_n` has i.i.d. zero-mean entries of variance
:math:`\sigma_e^2` (finite fourth moment). Only W is optimised, on the same objective
(:mod:`nclab.theory.objectives`, bias-free), with :math:`\lambda_H = \tilde\lambda_H / n`:

.. math:: \hat W_n = \arg\min_W \frac{1}{2Kn}\|W\tilde H_n - Y\|_F^2 + \frac{\lambda_W}{2}\|W\|_F^2
          = \tfrac1N Y\tilde H_n^\top\big(\tfrac1N \tilde H_n\tilde H_n^\top
          + \lambda_W I_d\big)^{-1},\qquad N = Kn .

By the law of large numbers :math:`\tfrac1N Y\tilde H_n^\top \to \bar H^\top/K` and
:math:`\tfrac1N\tilde H_n\tilde H_n^\top \to \bar H\bar H^\top/K + \sigma_e^2 I_d`, so (push-through
identity, :math:`\bar H^\top\bar H = \rho I`)

.. math:: \hat W_\infty = \frac{\bar H^\top}{\rho + K(\lambda_W + \sigma_e^2)}
          = \frac{1}{1 + K\sigma_e^2\sqrt{\tilde\lambda_H/\lambda_W}}\; W^*,
          \qquad W^* = \sqrt{\tilde\lambda_H/\lambda_W}\;\bar H^\top ,

an orthogonal frame aligned with :math:`\bar H^\top` (the structure of W*), attenuated by the noise,
while the features themselves never collapse: their NC1 tends to :math:`(K-1)\sigma_e^2/\rho`.
The fluctuations of both sample averages are :math:`O(1/\sqrt n)`, hence
:math:`\|\hat W_n - \hat W_\infty\|_F = O_P(1/\sqrt n)`. The minimum of the W-problem tends to
:math:`(1 - \rho\,a)/2` with :math:`a = 1/(\rho + K(\lambda_W + \sigma_e^2))` (at
:math:`\sigma_e = 0` it is c/2, and adding :math:`\frac{\lambda_H}{2}\|H^*\|^2` gives Theorem 3.1's
:math:`c - c^2/2`). Derivation in ``docs/theory-ufm.md``.

In nclab's parameters (those of ``ufm-mse``), :math:`\tilde\lambda_H = n\lambda_H`: the limit
n -> infinity is taken with :math:`n\lambda_H` fixed, so :math:`c = K\sqrt{n\lambda_H\lambda_W}` is
the same for every n.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .base import Prediction
from .params import check_int, check_positive, require
from .ufm import ufm_mse

__all__ = ["FixedFeaturesPrediction", "ridge_classifier", "ufm_fixed_features"]


@dataclass(frozen=True)
class FixedFeaturesPrediction(Prediction):
    """The n -> infinity limit of the classifier of fixed noisy features (Theorem 5.1).

    ``w_hat_scale``: Ŵ_∞ = w_hat_scale · H̄ᵀ; ``w_star_scale``: W* = w_star_scale · H̄ᵀ
    (Theorem 3.1); ``attenuation`` = w_hat_scale / w_star_scale. Row norms ``w_hat_norm`` /
    ``w_star_norm`` (= scale · √ρ), Gram Ŵ_∞Ŵ_∞ᵀ = ``w_hat_gram`` · I_K.
    """

    K: int
    n: int
    d: int
    lambda_w: float
    lambda_h: float
    sigma_e: float
    lambda_h_tilde: float  # n lambda_H, held fixed as n grows
    threshold: float  # c = K sqrt(n lambda_H lambda_W)
    collapsed: bool  # c < 1: H̄ != 0
    structure: str  # "orthogonal_frame" | "zero"
    rho: float  # H̄ᵀH̄ = rho I_K
    h_norm: float  # ||h̄_k|| = sqrt(rho)
    noise_norm: float  # E||e|| = sigma_e sqrt(d) (per-sample noise norm, to first order)
    nc1_features: (
        float | None
    )  # lim NC1 of the fixed features, (K-1) sigma_e² / rho: never collapsed
    w_star_scale: float
    w_hat_scale: float
    attenuation: float
    w_star_norm: float
    w_hat_norm: float
    w_hat_gram: float
    objective: float  # lim min_W of the fit + lambda_W term
    gap_constant: float | None  # lim √n · RMS ||Ŵ_n - Ŵ_∞||_F / ||Ŵ_∞||_F (Gaussian E_n)
    rate: str = "||Ŵ_n - Ŵ_∞||_F / ||Ŵ_∞||_F ≈ gap_constant / √n"
    applies: bool = True
    reason: str = ""


def ufm_fixed_features(
    K: int, n: int, d: int, lambda_w: float, lambda_h: float, sigma_e: float
) -> FixedFeaturesPrediction:
    r"""Theorem 5.1's limit: Ŵ_n -> Ŵ_∞ = H̄ᵀ / (ρ + K(λ_W + σ_e²)) = a · W*.

    ``n`` and ``lambda_h`` fix :math:`\tilde\lambda_H = n\lambda_H` (the theorem's
    λ_H = λ̃_H / n); ρ and W* are Theorem 3.1's (:func:`nclab.theory.ufm.ufm_mse`). σ_e = 0 gives
    Ŵ_∞ = W*. Above the collapse threshold (c >= 1) H̄ = 0, W* = 0 and Ŵ_n -> 0.

    >>> p = ufm_fixed_features(K=4, n=50, d=20, lambda_w=0.005, lambda_h=0.005, sigma_e=0.1)
    >>> round(p.w_star_scale, 6), round(p.w_hat_scale, 6), round(p.attenuation, 6)
    (7.071068, 5.51203, 0.779519)
    >>> p0 = ufm_fixed_features(K=4, n=50, d=20, lambda_w=0.005, lambda_h=0.005, sigma_e=0)
    >>> round(p0.attenuation, 12)
    1.0
    """
    se = check_positive("sigma_e", sigma_e, allow_zero=True)
    star = ufm_mse(K=K, n=n, d=d, lambda_w=lambda_w, lambda_h=lambda_h)
    lw, rho = star.lambda_w, star.rho
    a = 1.0 / (rho + K * (lw + se * se))
    return FixedFeaturesPrediction(
        K=K,
        n=n,
        d=d,
        lambda_w=lw,
        lambda_h=star.lambda_h,
        sigma_e=se,
        lambda_h_tilde=n * star.lambda_h,
        threshold=star.threshold,
        collapsed=star.collapsed,
        structure="orthogonal_frame" if star.collapsed else "zero",
        rho=rho,
        h_norm=math.sqrt(rho),
        noise_norm=se * math.sqrt(d),
        nc1_features=(K - 1) * se * se / rho if rho > 0 else None,
        w_star_scale=star.scale,
        w_hat_scale=a,
        attenuation=a / star.scale,
        w_star_norm=star.scale * math.sqrt(rho),
        w_hat_norm=a * math.sqrt(rho),
        w_hat_gram=a * a * rho,
        objective=(1.0 - rho * a) / 2,
        gap_constant=_gap_constant(K, d, lw, se, rho) if star.collapsed else None,
    )


def _gap_constant(K: int, d: int, lambda_w: float, sigma_e: float, rho: float) -> float:
    r"""lim √n · (E‖Ŵ_n - Ŵ_∞‖²)^{1/2} / ‖Ŵ_∞‖ for Gaussian noise (``docs/theory-ufm.md``).

    First order in the fluctuations: Ŵ_n - Ŵ_∞ ≈ (1/N) Σ_j X_j with independent zero-mean X_j, so
    n E‖·‖² -> E‖X‖²/K. With M = H̄H̄ᵀ/K + (λ_W + σ²)I (eigenvalues α on the span of H̄, β off
    it), Ŵ_∞ = τ Qᵀ (Q: orthonormal basis of H̄'s columns), γ = ρ/(Kα):
    E‖X‖² = (1-γ)²σ²(K/α² + (d-K)/β²) + τ²ρKσ²/α² - 2(1-γ)τ√ρσ²/α²
    + τ²σ⁴(K(K+1)/α² + K(d-K)/β²) (the last term uses Gaussian fourth moments).
    """
    s2 = sigma_e * sigma_e
    alpha, beta = rho / K + lambda_w + s2, lambda_w + s2
    tau, gamma = math.sqrt(rho) / (K * alpha), rho / (K * alpha)
    spread = K / alpha**2 + (d - K) / beta**2
    linear = (1 - gamma) ** 2 * s2 * spread + tau * tau * rho * K * s2 / alpha**2
    linear -= 2 * (1 - gamma) * tau * math.sqrt(rho) * s2 / alpha**2
    quadratic = tau * tau * s2 * s2 * (K * (K + 1) / alpha**2 + K * (d - K) / beta**2)
    return math.sqrt((linear + quadratic) / K) / (tau * math.sqrt(K))


def ridge_classifier(
    class_sums: np.ndarray, gram: np.ndarray, N: int, lambda_w: float
) -> np.ndarray:
    r"""The exact minimiser over W of :math:`\frac{1}{2N}\|WH - Y\|_F^2 + \frac{\lambda_W}{2}\|W\|_F^2`
    from the sufficient statistics of H (d x N): ``class_sums`` (d x K, column k the sum of class
    k's features, = H Yᵀ) and ``gram`` (d x d, = H Hᵀ), so features can be streamed.

    :math:`\hat W = \tfrac1N Y H^\top (\tfrac1N HH^\top + \lambda_W I)^{-1}` (K x d), solved with a
    Cholesky-backed symmetric solve (the matrix is positive definite for λ_W > 0).

    >>> H = np.array([[1.0, 0.0], [0.0, 1.0]]); Y = np.eye(2)
    >>> ridge_classifier(H @ Y.T, H @ H.T, 2, 0.5)  # (I/2) (I/2 + I/2)^{-1} = I/2
    array([[0.5, 0. ],
           [0. , 0.5]])
    """
    check_int("N", N, 1)
    lw = check_positive("lambda_w", lambda_w)
    s = np.asarray(class_sums, dtype=np.float64)
    g = np.asarray(gram, dtype=np.float64)
    d = g.shape[0]
    require(
        g.shape == (d, d) and s.ndim == 2 and s.shape[0] == d,
        f"gram must be d x d and class_sums d x K, got {g.shape} and {s.shape}",
    )
    a = g / N + lw * np.eye(d)
    return np.linalg.solve(a, s / N).T  # a is symmetric: (S/N)ᵀ a^{-1} = (a^{-1} S/N)ᵀ
