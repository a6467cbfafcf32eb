"""The regularised bias 0 < λ_b < ∞: closed form, its metrics, its two ends, and the solvers.

* the NC values of :func:`ufm_regularized_bias` against nclab's metrics on the minimiser it
  describes (built from its Gram matrix);
* the ends: λ_b -> 0 is Theorem 3.2's simplex ETF, λ_b -> ∞ Theorem 3.1's orthogonal frame;
* the batched GD solver (``BatchedUFM``, ``bias="regularized"``) at small and large λ_b against
  both theorems and against the closed form in between; L-BFGS at λ_b = 1e6 (beyond plain GD's
  step-size limit η(1 + λ_b) < 2) against Theorem 3.1.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from nclab import ClassStats, collapse_metrics
from nclab.models.ufm import BatchedUFM, UFMSpec
from nclab.theory import objectives as O
from nclab.theory.ufm import ufm_mse, ufm_mse_bias
from nclab.theory.ufm_bias import KEYS_PREDICTED, ufm_regularized_bias

K, N_, D, LAM = 4, 50, 20, 0.005
F64 = torch.float64


def pred(lambda_b: float, K: int = K, n: int = N_, d: int = D, lam: float = LAM):
    return ufm_regularized_bias(K=K, n=n, d=d, lambda_w=lam, lambda_h=lam, lambda_b=lambda_b)


def build_minimiser(p) -> tuple[torch.Tensor, torch.Tensor]:
    """(H̄ᵀ as K x d, W) with H̄ᵀH̄ = ρ(I - J/K) + ρ_mean J/K and W = √(nλ_H/λ_W) H̄ᵀ."""
    Kc = p.K
    j = np.ones((Kc, Kc)) / Kc
    gram = p.rho * (np.eye(Kc) - j) + p.rho_mean * j
    vals, vecs = np.linalg.eigh(gram)
    root = vecs * np.sqrt(np.clip(vals, 0, None))  # K x K, root rootᵀ = gram
    q, _ = np.linalg.qr(np.random.default_rng(0).standard_normal((p.d, Kc)))
    hbar_t = torch.tensor(root @ q.T, dtype=F64)  # K x d rows h̄_k
    return hbar_t, math.sqrt(p.n * p.lambda_h / p.lambda_w) * hbar_t


@pytest.mark.parametrize("lambda_b", [0.01, 0.1, 0.3, 1.0, 5.0, 100.0])
def test_predicted_metrics_match_nclab_metrics_on_the_minimiser(lambda_b):
    p = pred(lambda_b)
    hbar_t, w = build_minimiser(p)
    stats = ClassStats.from_features(hbar_t, torch.arange(K), num_classes=K, decisions=False)
    m = collapse_metrics(stats, weights=w, keys=KEYS_PREDICTED)
    for k in KEYS_PREDICTED:
        assert m[k] == pytest.approx(getattr(p, k), abs=1e-10), k


def test_small_lambda_b_is_theorem_3_2_and_large_is_theorem_3_1():
    thm32, thm31 = (
        ufm_mse_bias(K=K, n=N_, d=D, lambda_w=LAM, lambda_h=LAM),
        ufm_mse(K=K, n=N_, d=D, lambda_w=LAM, lambda_h=LAM),
    )
    small = pred(1e-9)
    assert small.structure == "simplex_etf" and small.s == 0.0
    assert small.rho == thm32.rho and small.rho_mean == 0.0
    assert small.b == pytest.approx(thm32.b, rel=1e-8)
    assert small.objective == pytest.approx(thm32.objective, rel=1e-8)
    assert small.nc2_w_etf == pytest.approx(0.0, abs=1e-12)
    big = pred(1e12)
    assert big.rho_mean == pytest.approx(thm31.rho, rel=1e-10)
    assert big.objective == pytest.approx(thm31.objective, rel=1e-10)
    assert big.nc2_of == pytest.approx(0.0, abs=1e-6)
    assert big.of_fraction == pytest.approx(1.0, rel=1e-10)


def test_the_path_is_monotone_and_exactly_etf_below_lambda_b_etf():
    lams = np.geomspace(1e-4, 1e4, 60)
    ps = [pred(float(x)) for x in lams]
    etf = ps[0].lambda_b_etf
    assert etf == pytest.approx(ps[0].threshold / (1 - ps[0].threshold), rel=1e-14)
    for x, p in zip(lams, ps, strict=True):
        assert (p.structure == "simplex_etf") == (x <= etf)
        assert p.nc2_etf == 0.0 and p.nc3_of == 0.0 and p.nc1 == 0.0
    for key, sign in (("nc2_of", -1), ("nc2_w_etf", 1), ("of_fraction", 1), ("nc3", 1)):
        v = np.array([getattr(p, key) for p in ps])
        assert (sign * np.diff(v) >= -1e-15).all(), key
    assert ps[-1].nc2_of < ps[-1].nc2_w_etf and ps[0].nc2_w_etf < ps[0].nc2_of


def test_no_collapse_gives_no_metrics():
    p = pred(1.0, lam=0.5)
    assert not p.collapsed and p.nc2_of is None and p.of_fraction is None


def test_batched_gd_solver_at_both_ends_and_between():
    """λ_b = 1e-3 and 16 (GD's step 0.1 needs λ_b < 19) and 0.5, one batched solve."""
    Ks, n, d, lam = 3, 10, 6, 0.01
    lbs = [1e-3, 0.5, 16.0]
    spec = UFMSpec(K=Ks, n=n, d=d, bias="regularized")
    m = BatchedUFM(spec, seeds=[0, 1, 2], lambda_w=lam, lambda_h=lam, lambda_b=lbs, lr=0.1)
    for _ in range(20_000):
        m.step()
    obj = m.objective().tolist()
    labels = torch.arange(Ks * n) // n
    thm32 = ufm_mse_bias(K=Ks, n=n, d=d, lambda_w=lam, lambda_h=lam)
    thm31 = ufm_mse(K=Ks, n=n, d=d, lambda_w=lam, lambda_h=lam)
    for b, lb in enumerate(lbs):
        p = pred(lb, K=Ks, n=n, d=d, lam=lam)
        assert obj[b] == pytest.approx(p.objective, rel=1e-9)
        stats = ClassStats.from_features(m.h[b].T, labels, num_classes=Ks, decisions=False)
        got = collapse_metrics(stats, weights=m.classifier[b], keys=KEYS_PREDICTED)
        for k in KEYS_PREDICTED:
            assert got[k] == pytest.approx(getattr(p, k), abs=1e-6), (lb, k)
        g = m.h[b].reshape(d, Ks, n).mean(-1)
        gram = (g.T @ g).numpy()
        assert float(m.b[b].mean()) == pytest.approx(p.b, rel=1e-6)
        if lb == lbs[0]:  # Theorem 3.2: simplex ETF, the ETF's ρ, no global mean
            assert np.abs(gram - thm32.rho * (np.eye(Ks) - 1 / Ks)).max() < 1e-6
        if lb == lbs[-1]:  # near Theorem 3.1: the OF's ρ I up to the O(c / λ_b) global-mean gap
            tol = 1.5 * thm31.threshold / (lb * (1 - thm31.threshold)) * thm31.rho
            assert np.abs(gram - thm31.rho * np.eye(Ks)).max() < tol


def test_lbfgs_at_huge_lambda_b_is_theorem_3_1():
    """b = c/√λ_b: the same minimiser, with the bias's curvature 1 + λ_b scaled back to O(1)."""
    Ks, n, d, lam, lb = 3, 4, 5, 0.02, 1e6
    yt = torch.tensor(O.targets(Ks, n))
    g = torch.Generator().manual_seed(0)
    ps = [torch.randn(s, generator=g, dtype=F64).requires_grad_() for s in
          [(Ks, d), (d, Ks * n), (Ks, 1)]]  # fmt: skip
    opt = torch.optim.LBFGS(ps, max_iter=2000, tolerance_grad=1e-14, tolerance_change=1e-18,
                            history_size=50, line_search_fn="strong_wolfe")  # fmt: skip

    def objective():
        return O.ufm_mse(ps[0], ps[1], yt, lam, lam, b=ps[2] / math.sqrt(lb), lambda_b=lb)

    def closure():
        opt.zero_grad()
        f = objective()
        f.backward()
        return f

    for _ in range(3):
        opt.step(closure)
    f = float(objective().detach())
    thm31 = ufm_mse(K=Ks, n=n, d=d, lambda_w=lam, lambda_h=lam)
    assert f == pytest.approx(pred(lb, K=Ks, n=n, d=d, lam=lam).objective, rel=1e-8)
    assert f == pytest.approx(thm31.objective, rel=1e-5)


def test_cli(capsys):
    import json

    from nclab.cli import main

    args = "theory ufm-regularized-bias --K 4 --n 50 --d 20 --lambda-w 0.005 --lambda-h 0.005"
    try:
        main([*args.split(), "--lambda-b", "10", "--json"])
    except SystemExit as exc:
        assert not exc.code
    out = json.loads(capsys.readouterr().out)["prediction"]
    assert out["nc2_of"] == pytest.approx(pred(10.0).nc2_of)
    assert out["structure"] == "etf_plus_mean"
