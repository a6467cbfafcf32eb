"""Theorem 5.1 (fixed, non-collapsed features): the closed-form limit against the exact minimiser.

The exact minimiser over W for features H̄ ⊗ 1ᵀ + E (N(0, σ_e²) noise) is the ridge solution
(:func:`ridge_classifier`); for growing n (λ_H = λ̃_H / n) its distance to the limit Ŵ_∞ = a H̄ᵀ
must shrink like 1/√n, with the constant of :func:`ufm_fixed_features` (``gap_constant``).
Measured here (K=4, d=20, λ_W=0.005, λ̃_H=0.25, σ_e=0.1, 4 seeds, n = 25..6400): fitted slope of
log RMS gap against log n ≈ -0.50, √n · gap at n = 6400 within a few % of the constant 1.8175.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from nclab.errors import TheoryError
from nclab.theory import objectives as O
from nclab.theory.fixed_features import ridge_classifier, ufm_fixed_features
from nclab.theory.ufm import ufm_mse

K, D, LW, LT, SE = 4, 20, 0.005, 0.25, 0.1


def pred(n: int = 50, sigma_e: float = SE):
    return ufm_fixed_features(K=K, n=n, d=D, lambda_w=LW, lambda_h=LT / n, sigma_e=sigma_e)


def frame(seed: int, rho: float) -> np.ndarray:
    q, _ = np.linalg.qr(np.random.default_rng(seed).standard_normal((D, K)))
    return math.sqrt(rho) * q


def exact(hbar: np.ndarray, n: int, sigma_e: float, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """(Ŵ_n, H) for features H̄ ⊗ 1ᵀ_n + E."""
    rng = np.random.default_rng(10_000 + seed)
    h = np.repeat(hbar, n, axis=1) + sigma_e * rng.standard_normal((D, K * n))
    y = O.targets(K, n)
    return ridge_classifier(h @ y.T, h @ h.T, K * n, LW), h


def test_limit_formula_and_its_special_cases():
    p, star = pred(), ufm_mse(K=K, n=50, d=D, lambda_w=LW, lambda_h=LT / 50)
    assert p.w_star_scale == pytest.approx(star.scale, rel=1e-14)
    assert p.rho == pytest.approx(star.rho, rel=1e-14)
    assert p.w_hat_scale == pytest.approx(1 / (p.rho + K * (LW + SE**2)), rel=1e-14)
    assert p.attenuation == pytest.approx(1 / (1 + K * SE**2 * math.sqrt(LT / LW)), rel=1e-12)
    assert p.w_hat_gram == pytest.approx(p.w_hat_scale**2 * p.rho, rel=1e-14)
    # sigma_e = 0: W_hat_inf = W*, and the W-part of the objective plus lambda_H/2 ||H*||^2 is
    # Theorem 3.1's optimum c - c^2/2
    p0 = pred(sigma_e=0.0)
    assert p0.attenuation == pytest.approx(1.0, rel=1e-12)
    h_term = (LT / 50) / 2 * 50 * K * p0.rho
    assert p0.objective + h_term == pytest.approx(star.objective, rel=1e-12)
    # the limit does not depend on n at fixed n * lambda_H
    assert pred(n=7).w_hat_scale == pytest.approx(p.w_hat_scale, rel=1e-12)


def test_ridge_classifier_is_the_minimiser():
    rng = np.random.default_rng(0)
    h, n = rng.standard_normal((D, K * 6)), 6
    y = O.targets(K, n)
    w = ridge_classifier(h @ y.T, h @ h.T, K * n, LW)
    grad = (w @ h - y) @ h.T / (K * n) + LW * w  # the gradient of O.ufm_mse in W
    assert np.abs(grad).max() < 1e-12
    f = O.ufm_mse(w, h, y, LW, 0.0)
    assert f <= O.ufm_mse(w + 1e-4 * rng.standard_normal(w.shape), h, y, LW, 0.0)


def test_collapsed_features_give_w_star_exactly():
    """The paper's remark (App. F): with H fixed at H* the minimiser over W alone is W*."""
    p = pred(sigma_e=0.0)
    hbar = frame(3, p.rho)
    w, _ = exact(hbar, 50, 0.0, 0)
    assert np.abs(w - p.w_star_scale * hbar.T).max() < 1e-10


def test_gap_shrinks_like_one_over_sqrt_n():
    ns, seeds = [25, 100, 400, 1600, 6400], range(4)
    p = pred()
    gaps = []
    for n in ns:
        sq = []
        for s in seeds:
            hbar = frame(s, p.rho)
            w, _ = exact(hbar, n, SE, s)
            w_inf = p.w_hat_scale * hbar.T
            sq.append((np.linalg.norm(w - w_inf) / np.linalg.norm(w_inf)) ** 2)
        gaps.append(math.sqrt(np.mean(sq)))
    slope = np.polyfit(np.log(ns), np.log(gaps), 1)[0]
    assert -0.6 < slope < -0.4, (slope, gaps)
    ratio = gaps[-1] * math.sqrt(ns[-1]) / p.gap_constant
    assert 0.85 < ratio < 1.15, (ratio, gaps)
    assert gaps[0] / gaps[-1] == pytest.approx(math.sqrt(ns[-1] / ns[0]), rel=0.25)


def test_limit_objective_and_orthogonal_frame_at_large_n():
    p = pred()
    hbar = frame(1, p.rho)
    w, h = exact(hbar, 20_000, SE, 1)
    f = O.ufm_mse(w, h, O.targets(K, 20_000), LW, 0.0)
    assert f == pytest.approx(p.objective, rel=1e-2)
    g = w @ w.T
    assert np.abs(g / np.linalg.norm(g) - np.eye(K) / 2).max() < 2e-2  # an orthogonal frame
    assert np.abs(g.diagonal().mean() - p.w_hat_gram) / p.w_hat_gram < 2e-2


def test_no_collapse_and_bad_parameters():
    p = ufm_fixed_features(K=K, n=50, d=D, lambda_w=0.5, lambda_h=0.5, sigma_e=SE)
    assert not p.collapsed and p.structure == "zero" and p.gap_constant is None
    assert p.rho == 0 and p.w_hat_norm == 0
    with pytest.raises(TheoryError, match="sigma_e"):
        pred(sigma_e=-0.1)
    with pytest.raises(TheoryError, match="d >="):
        ufm_fixed_features(K=K, n=50, d=3, lambda_w=LW, lambda_h=LW, sigma_e=SE)
    with pytest.raises(TheoryError, match="gram"):
        ridge_classifier(np.ones((3, 2)), np.eye(4), 4, LW)


def test_cli(capsys):
    import json

    from nclab.cli import main

    args = "theory ufm-fixed-features --K 4 --n 50 --d 20 --lambda-w 0.005 --lambda-h 0.005"
    try:
        main([*args.split(), "--sigma-e", "0.1", "--json"])
    except SystemExit as exc:
        assert not exc.code
    out = json.loads(capsys.readouterr().out)["prediction"]
    assert out["w_hat_scale"] == pytest.approx(pred().w_hat_scale)
    assert out["w_star_scale"] == pytest.approx(pred().w_star_scale)
