"""Theorem 3.1 of Jacot et al. (ICLR 2025): the bounds in nclab.theory.bounds.

Checked three ways: (a) the formulas against a direct transcription of the paper's statement
(balanced classes, where ours and the paper's coincide), (b) limits (perfect interpolation and
balancedness), (c) on constructed linear heads that satisfy the hypotheses, where the measured NC1,
kappa(W_L), NC2, NC3 must respect the bounds computed from the measured epsilon_1, epsilon_2, r, c3.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from nclab.errors import TheoryError
from nclab.theory import get_prediction
from nclab.theory.bounds import (
    NetworkQuantities,
    jacot_bounds,
    jacot_certificate,
    lemma_c2_bound,
)

# --------------------------------------------------------------------------------------------------
# constructed networks
# --------------------------------------------------------------------------------------------------


def _orth(rng, n, k):
    q, _ = np.linalg.qr(rng.standard_normal((n, k)))
    return q[:, :k]


def op(a):
    return float(np.linalg.norm(a, 2))


def kappa(a):
    s = np.linalg.svd(a, compute_uv=False)
    return float(s[0] / s[-1])


def construct(
    rng,
    K=4,
    n_per=25,
    L2=3,
    widths=(12, 10, 8),
    spread=1.5,
    scale=1.8,
    noise_y=0.01,
    noise_w=0.0,
    noise_perp=0.0,
    imbalance=0,
):
    """A linear head W_{L1+1..L} (exactly balanced when noise_w = 0) and its input Z_{L1}, built so
    that Z_L = Y + noise: W_l = U_l S U_{l-1}^T, Z_{L1} = U_0 S^{-L2} U_L^T (Y + E) + perp."""
    counts = [n_per + (imbalance if c == 0 else 0) for c in range(K)]
    y = np.concatenate([[c] * n for c, n in enumerate(counts)])
    N = len(y)
    Y = np.eye(K)[:, y]
    dims = [widths[0], *widths[1:L2], K]
    assert len(dims) == L2 + 1
    s = scale * np.linspace(1.0, spread, K)
    us = [_orth(rng, d, K) for d in dims]
    ws = []
    for l in range(1, L2 + 1):
        w = us[l] @ np.diag(s) @ us[l - 1].T
        w = w + noise_w * rng.standard_normal(w.shape) / math.sqrt(w.shape[1])
        ws.append(w)
    E = noise_y * rng.standard_normal((K, N))
    z0 = us[0] @ np.diag(s ** (-L2)) @ us[-1].T @ (Y + E)
    perp = rng.standard_normal((dims[0], N))
    perp -= us[0] @ (us[0].T @ perp)
    z0 = z0 + noise_perp * perp
    zs = [z0]
    for w in ws:
        zs.append(w @ zs[-1])
    return Y, y, ws, zs


def measure(Y, y, ws, zs):
    """The hypotheses' quantities and the metrics, straight from the definitions (numpy)."""
    K, N = Y.shape
    L2 = len(ws)
    zl, zp = zs[-1], zs[-2]
    eps1 = float(np.linalg.norm(zl - Y))
    eps2 = max(op(ws[i + 1].T @ ws[i + 1] - ws[i] @ ws[i].T) for i in range(L2 - 1))
    r = max(op(zs[-3]), op(zp), *(op(w) for w in ws))
    prod = ws[0]
    for w in ws[1:]:
        prod = w @ prod
    counts = np.bincount(y, minlength=K)
    means = np.stack([zp[:, y == c].mean(1) for c in range(K)], 1)  # n_{L-1} x K
    mu_g = means.mean(1, keepdims=True)
    tr_w = sum(((zp[:, y == c] - means[:, [c]]) ** 2).sum() for c in range(K)) / N
    tr_b = ((means - mu_g) ** 2).sum() / K
    wl = ws[-1]
    cos = (zp * wl[y].T).sum(0) / (np.linalg.norm(zp, axis=0) * np.linalg.norm(wl[y], axis=1))
    q = NetworkQuantities(
        eps1=eps1,
        eps2=eps2,
        r=r,
        K=K,
        N=N,
        n_penult=zp.shape[0],
        s_k_y=math.sqrt(counts.min()),
        L2=L2,
        c3=kappa(prod),
        z_op=op(zs[0]),
        measured={
            "nc1_trace": tr_w / tr_b,
            "kappa_wl": kappa(wl),
            "nc2_kappa": kappa(means),
            "nc3_cos": float(cos.mean()),
        },
    )
    return q


ALL = ("nc1", "kappa_wl", "nc2", "nc3", "nc2_given_kappa", "nc3_given_kappa")
CASES = [
    # (kwargs, the bounds that must be available)
    (dict(), ALL),
    (dict(L2=2, widths=(10, 9), spread=1.2, noise_y=0.02), ALL),
    (dict(spread=1.02, noise_y=0.002), ALL),  # nearly orthogonal W_L: (5) is informative
    (dict(L2=4, widths=(16, 14, 12, 10), spread=3.0, noise_y=0.03), ("nc1", "kappa_wl", "nc2")),
    (dict(K=3, n_per=40, widths=(8, 6, 5), noise_y=0.05, noise_perp=0.3), ("nc1", "kappa_wl")),
    (dict(imbalance=15), ALL),
]


@pytest.mark.parametrize("kw,need", CASES)
def test_bounds_hold_on_exactly_balanced_heads(kw, need):
    """epsilon_2 = 0 (up to rounding): every bound of Theorem 3.1 holds, including (5) whose proof
    needs the features in the row space of W_L."""
    for seed in range(5):
        rng = np.random.default_rng(seed)
        q = measure(*construct(rng, **kw))
        assert q.eps2 < 1e-10
        cert = jacot_certificate(q)
        assert cert.applies, cert.reason
        for key in need:
            assert key in cert.holds, (key, cert.skipped)
        assert all(cert.holds.values()), (cert.holds, cert.bounds, cert.measured)


@pytest.mark.parametrize(
    "noise_w,need",
    [
        (1e-4, ("nc1", "kappa_wl", "nc2", "nc2_given_kappa", "nc3_given_kappa")),
        (1e-3, ("nc1", "nc2_given_kappa", "nc3_given_kappa")),
        (1e-2, ("nc1", "nc3_given_kappa")),
    ],
)
def test_bounds_hold_on_perturbed_heads(noise_w, need):
    """Perturbed (approximately balanced) heads: epsilon_2 > 0 and features partly outside the row
    space of W_L; (2)-(4) are proven there, (5) is checked too (see the module docstring)."""
    for seed in range(20):
        rng = np.random.default_rng(100 + seed)
        q = measure(*construct(rng, noise_w=noise_w, noise_perp=0.5))
        assert q.eps2 > 1e-6
        cert = jacot_certificate(q)
        assert cert.applies, cert.reason
        assert set(need) <= set(cert.holds), (need, cert.skipped)
        assert all(cert.holds.values()), (cert.holds, cert.bounds, cert.measured)


def test_nc1_bound_is_attained_in_order_of_magnitude():
    """The NC1 bound is not vacuous: with within-class noise it is within a few orders of the
    measured value, and it shrinks with epsilon_1."""
    prev = None
    for noise in (0.04, 0.02, 0.01, 0.005):
        q = measure(*construct(np.random.default_rng(3), noise_y=noise))
        cert = jacot_certificate(q)
        m, b = cert.measured["nc1_trace"], cert.bounds["nc1"]
        assert m <= b <= 100 * m
        if prev is not None:
            assert b < prev
        prev = b


def test_lemma_c2_on_perturbed_heads():
    """Lemma C.2: ||(W_L W_L^T)^L2 - W_{L:L1+1} W_{L:L1+1}^T||_op <= L2^2/2 eps2 r^(2(L2-1))."""
    for seed in range(10):
        rng = np.random.default_rng(seed)
        Y, y, ws, zs = construct(rng, noise_w=0.05, L2=4, widths=(9, 8, 7, 6))
        q = measure(Y, y, ws, zs)
        prod = ws[0]
        for w in ws[1:]:
            prod = w @ prod
        wl = ws[-1]
        lhs = op(np.linalg.matrix_power(wl @ wl.T, 4) - prod @ prod.T)
        r_w = max(op(w) for w in ws)
        assert lhs <= lemma_c2_bound(q.eps2, r_w, 4) * (1 + 1e-9)


# --------------------------------------------------------------------------------------------------
# the formulas
# --------------------------------------------------------------------------------------------------


def paper_statement(eps1, eps2, r, K, N, n, c3, L2, x_op, L1):
    """Theorem 3.1 typed from the paper (balanced classes), with sqrt(N) in (5)."""
    sky = math.sqrt(N / K)
    Psi = r * (eps1 / (sky - eps1) + math.sqrt(n * eps2))
    nc1 = r**2 / N * Psi**2 / (math.sqrt((K - 1) / K) - 2 / math.sqrt(N) * eps1) ** 2
    d = L2**2 / 2 * r ** (2 * (L2 - 1)) * eps2
    eps = d / ((sky - eps1) ** 2 / (x_op**2 * r ** (2 * L1)) - d)
    kw = c3 ** (1 / L2) * (1 + eps) ** (1 / L2) + c3 ** (1 / L2 - 1) * eps
    nc2 = (kw + r * Psi / sky) / (1 - r * Psi / sky)
    nc3 = (
        (math.sqrt(N) - eps1) ** 2 + N * kw**-2 - (r * Psi + math.sqrt(N) * (kw**2 - 1)) ** 2
    ) / (2 * N * kw * (1 + eps1))
    return nc1, kw, nc2, nc3


@pytest.mark.parametrize(
    "args",
    [
        (0.3, 1e-5, 1.1, 10, 1000, 64, 2.0, 4, 3.0, 2),
        (1.0, 0.0, 1.0, 5, 500, 20, 1.3, 2, 1.0, 5),
        (0.01, 1e-7, 0.9, 3, 30, 3, 1.05, 6, 4.0, 1),
    ],
)
def test_formulas_match_the_paper_statement(args):
    eps1, eps2, r, K, N, n, c3, L2, x_op, L1 = args
    b = jacot_bounds(
        eps1=eps1, eps2=eps2, r=r, K=K, N=N, n_penult=n, c3=c3, L2=L2, x_op=x_op, L1=L1
    )
    want = paper_statement(*args)
    got = (b.nc1_bound, b.kappa_wl_bound, b.nc2_bound, b.nc3_bound)
    for g, w in zip(got, want, strict=True):
        assert g == pytest.approx(w, rel=1e-12)
    # z_op = x_op r^L1 is the same thing
    b2 = jacot_bounds(
        eps1=eps1, eps2=eps2, r=r, K=K, N=N, n_penult=n, c3=c3, L2=L2, z_op=x_op * r**L1
    )
    assert b2.kappa_wl_bound == pytest.approx(b.kappa_wl_bound, rel=1e-12)
    assert b.kappa_wl_tight <= b.kappa_wl_bound


def test_limits_of_perfect_interpolation_and_balance():
    b = jacot_bounds(eps1=0.0, eps2=0.0, r=5.0, K=4, N=40, n_penult=8, c3=16.0, L2=4, z_op=3.0)
    assert b.nc1_bound == 0.0
    assert b.kappa_wl_bound == pytest.approx(2.0)  # 16^(1/4)
    assert b.nc2_bound == pytest.approx(2.0)
    b1 = jacot_bounds(eps1=0.0, eps2=0.0, r=5.0, K=4, N=40, n_penult=8, kappa_wl=1.0)
    assert b1.nc2_bound == 1.0 and b1.nc3_bound == 1.0
    assert b1.kappa_source == "given"


def test_monotone_in_eps():
    base = dict(eps2=1e-6, r=1.2, K=10, N=1000, n_penult=32, c3=3.0, L2=3, z_op=5.0)
    lo = jacot_bounds(eps1=0.1, **base)
    hi = jacot_bounds(eps1=0.5, **base)
    assert lo.nc1_bound < hi.nc1_bound and lo.nc2_bound < hi.nc2_bound
    assert lo.nc3_bound > hi.nc3_bound


# --------------------------------------------------------------------------------------------------
# hypotheses and errors
# --------------------------------------------------------------------------------------------------


def test_failed_hypotheses_give_no_number():
    b = jacot_bounds(eps1=11.0, eps2=0.0, r=1.0, K=4, N=400, n_penult=8)
    assert not b.applies and "s_K(Y)" in b.reason and b.nc1_bound is None
    # K=2: sqrt(K-1) s_K / 2 = 5 < s_K = 10
    b = jacot_bounds(eps1=6.0, eps2=0.0, r=1.0, K=2, N=200, n_penult=8)
    assert not b.applies and "sqrt(K-1)" in b.reason
    # balancedness too poor for (3)
    b = jacot_bounds(eps1=0.1, eps2=1.0, r=2.0, K=4, N=400, n_penult=8, c3=2.0, L2=3, z_op=50.0)
    assert b.applies and b.kappa_wl_bound is None and "balancedness" in b.skipped["kappa_wl_bound"]
    # r Psi >= s_K(Y): no NC2 bound
    b = jacot_bounds(eps1=1.0, eps2=0.0, r=10.0, K=4, N=400, n_penult=8, kappa_wl=1.1)
    assert b.nc2_bound is None and ">= 1" in b.skipped["nc2_bound"]
    # nothing to evaluate (4)-(5) with
    b = jacot_bounds(eps1=0.1, eps2=0.0, r=1.0, K=4, N=400, n_penult=8)
    assert b.nc2_bound is None and "kappa" in b.skipped["nc2_bound"]


@pytest.mark.parametrize(
    "kw,msg",
    [
        (dict(K=1), "K must be"),
        (dict(N=3), "N must be"),
        (dict(n_penult=2), "n_penult"),
        (dict(eps1=-1.0), "eps1"),
        (dict(r=0.0), "r must be"),
        (dict(r=float("nan")), "finite"),
        (dict(L2=1, c3=2.0, z_op=1.0), "L2 must be"),
        (dict(c3=0.5, L2=2, z_op=1.0), "c3"),
        (dict(s_k_y=100.0), "one-hot"),
        (dict(N=401), "multiple of K"),
    ],
)
def test_invalid_parameters_raise(kw, msg):
    args = dict(eps1=0.1, eps2=0.0, r=1.0, K=4, N=400, n_penult=8) | kw
    with pytest.raises(TheoryError, match=msg):
        jacot_bounds(**args)


def test_certificate_refuses_a_single_linear_layer():
    q = NetworkQuantities(
        eps1=0.1,
        eps2=0.0,
        r=1.0,
        K=2,
        N=10,
        n_penult=4,
        s_k_y=2.0,
        L2=1,
        c3=1.0,
        z_op=1.0,
        measured={"nc1_trace": 0.1},
    )
    c = jacot_certificate(q)
    assert not c.applies and "at least 2" in c.reason and c.bounds == {}


def test_registered_and_cli_json():
    from typer.testing import CliRunner

    from nclab.cli import app

    assert get_prediction("jacot-bounds") is jacot_bounds
    res = CliRunner().invoke(
        app,
        [
            "theory",
            "jacot-bounds",
            "--eps1",
            "0.1",
            "--eps2",
            "0",
            "--r",
            "2",
            "--K",
            "4",
            "--N",
            "400",
            "--n-penult",
            "16",
            "--c3",
            "8",
            "--L2",
            "3",
            "--z-op",
            "20",
            "--json",
        ],
    )
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    assert out["name"] == "jacot-bounds" and out["params"]["n_penult"] == 16
    assert out["prediction"]["applies"] is True
    assert out["prediction"]["kappa_wl_bound"] == pytest.approx(2.0)
