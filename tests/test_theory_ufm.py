"""The closed forms of nclab.theory.ufm / extended_ufm against numerical minimisation.

Each prediction is compared with L-BFGS (float64, exact autograd gradients) on the *same* objective,
:mod:`nclab.theory.objectives`, to <= 1e-4 relative in objective and norms, on small problems, in
and near (not at) the collapse thresholds. Non-convex problems are started from a normal and from a
small initialisation and the better end point is kept (the theory claims the global minimum).
"""

from __future__ import annotations

import math

import pytest
import torch

from nclab.errors import TheoryError
from nclab.theory import get_prediction
from nclab.theory import objectives as O
from nclab.theory.extended_ufm import deep_linear_ufm, extended_ufm, extended_ufm_relu
from nclab.theory.ufm import ufm_ce, ufm_mse, ufm_mse_bias

F64 = torch.float64


RTOL = 1e-4


def minimise(fn, shapes, scales=(1.0, 0.05), seed=0, rounds=12, restarts=1):
    """Best (value, params) of L-BFGS from each initial scale (``restarts`` seeds each)."""
    best = None
    for k, scale in enumerate([s for s in scales for _ in range(restarts)]):
        g = torch.Generator().manual_seed(seed + 17 * k)
        ps = [(scale * torch.randn(s, generator=g, dtype=F64)).requires_grad_() for s in shapes]
        opt = torch.optim.LBFGS(
            ps,
            lr=1,
            max_iter=3000,
            tolerance_grad=1e-13,
            tolerance_change=1e-16,
            history_size=50,
            line_search_fn="strong_wolfe",
        )

        def closure(ps=ps, opt=opt):
            opt.zero_grad()
            f = fn(*ps)
            f.backward()
            return f

        for _ in range(rounds):
            opt.step(closure)
        with torch.no_grad():
            val = float(fn(*ps))
        if best is None or val < best[0]:
            best = (val, [p.detach() for p in ps])
    return best


def rel(a, b):
    return abs(a - b) / abs(b) if b != 0 else abs(a)


def class_means(h, K, n):
    return h.reshape(h.shape[0], K, n).mean(-1)


def lam_for(c, K, n):
    """lambda_W = lambda_H = lambda with K sqrt(n) lambda = c."""
    return c / (K * math.sqrt(n))


# --------------------------------------------------------------------------------------------------
# plain UFM, MSE
# --------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("c", [0.3, 0.9, 1.1])
@pytest.mark.parametrize("lambda_b", [None, 0.0, 0.4, 5.0])
def test_ufm_mse_against_lbfgs(c, lambda_b):
    K, n, d = 3, 4, 5
    lw = lam_for(c, K, n) * 1.5
    lh = lam_for(c, K, n) / 1.5  # unequal lambdas: same c
    y = O.targets(K, n)
    y = torch.as_tensor(y)
    if lambda_b is None:
        pred = ufm_mse(K=K, n=n, d=d, lambda_w=lw, lambda_h=lh)
        val, (w, h) = minimise(lambda w, h: O.ufm_mse(w, h, y, lw, lh), [(K, d), (d, K * n)])
    else:
        pred = ufm_mse_bias(K=K, n=n, d=d, lambda_w=lw, lambda_h=lh, lambda_b=lambda_b)
        val, (w, h, b) = minimise(
            lambda w, h, b: O.ufm_mse(w, h, y, lw, lh, b, lambda_b), [(K, d), (d, K * n), (K, 1)]
        )
        assert rel(float(b.mean()), pred.b) <= RTOL
        assert float(b.std()) <= 1e-6
    assert math.isclose(pred.threshold, c)
    assert pred.collapsed == (c < 1)
    assert rel(val, pred.objective) <= RTOL
    hbar = class_means(h, K, n)
    if pred.collapsed:
        assert rel(float(hbar.norm(dim=0).mean()), pred.h_norm) <= RTOL
        assert rel(float(w.norm(dim=1).mean()), pred.w_norm) <= RTOL
    else:
        assert pred.h_norm == pred.w_norm == 0
        assert float(hbar.norm()) < 1e-5 and float(w.norm()) < 1e-5
    if pred.collapsed:
        g = hbar.T @ hbar
        target = pred.rho * (torch.eye(K, dtype=F64) - 1 / K) + pred.rho_mean / K
        assert float((g - target).abs().max()) <= RTOL * pred.rho
        assert float((w - pred.scale * hbar.T).abs().max()) <= RTOL * float(w.abs().max())


def test_ufm_mse_structures_and_limits():
    kw = dict(K=4, n=50, d=20, lambda_w=0.005, lambda_h=0.005)
    free, reg, hard = ufm_mse_bias(**kw), ufm_mse_bias(**kw, lambda_b=1e6), ufm_mse(**kw)
    assert (free.structure, reg.structure, hard.structure) == (
        "simplex_etf",
        "etf_plus_mean",
        "orthogonal_frame",
    )
    c = hard.threshold
    assert math.isclose(hard.objective, c - c * c / 2)
    assert math.isclose(free.objective, (4 - 1) / 4 * (c - c * c / 2))
    assert math.isclose(reg.objective, hard.objective, rel_tol=1e-5)  # lambda_b -> inf: bias-free
    assert free.b == 0.25 and hard.b is None
    # the global-mean component switches off at c = lambda_b / (1 + lambda_b)
    assert ufm_mse_bias(**kw, lambda_b=0.1).structure == "simplex_etf"  # c = 0.141 > 0.0909
    assert ufm_mse_bias(**kw, lambda_b=0.2).structure == "etf_plus_mean"  # c < 0.1667
    zero = ufm_mse(K=4, n=50, d=20, lambda_w=0.05, lambda_h=0.05)
    assert (zero.collapsed, zero.structure, zero.objective, zero.rho) == (False, "zero", 0.5, 0.0)


def test_ufm_mse_bad_parameters():
    with pytest.raises(TheoryError, match="d >= 4"):
        ufm_mse(K=4, n=10, d=3, lambda_w=0.01, lambda_h=0.01)
    with pytest.raises(TheoryError, match="lambda_h"):
        ufm_mse(K=4, n=10, d=8, lambda_w=0.01, lambda_h=-0.01)
    with pytest.raises(TheoryError, match="n must be"):
        ufm_mse(K=4, n=0, d=8, lambda_w=0.01, lambda_h=0.01)
    with pytest.raises(TheoryError, match="K must be"):
        ufm_mse(K=1, n=3, d=8, lambda_w=0.01, lambda_h=0.01)
    with pytest.raises(TheoryError, match="lambda_b"):
        ufm_mse_bias(K=4, n=10, d=8, lambda_w=0.01, lambda_h=0.01, lambda_b=float("nan"))
    # an unregularised bias only needs d >= K - 1 (the ETF spans K - 1 dimensions)
    assert ufm_mse_bias(K=4, n=10, d=3, lambda_w=0.01, lambda_h=0.01).rank == 3
    # the zero solution needs no dimension
    assert ufm_mse(K=4, n=50, d=2, lambda_w=0.1, lambda_h=0.1).structure == "zero"


# --------------------------------------------------------------------------------------------------
# plain UFM, cross-entropy
# --------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("c", [0.4, 0.9, 1.2])
@pytest.mark.parametrize("bias", ["none", "free", "regularized"])
def test_ufm_ce_against_lbfgs(c, bias):
    K, n, d = 4, 3, 5
    lw, lh = lam_for(c, K, n) * 2, lam_for(c, K, n) / 2
    lb = 0.3 if bias == "regularized" else 0.0
    y = torch.as_tensor(O.targets(K, n))
    pred = ufm_ce(K=K, n=n, d=d, lambda_w=lw, lambda_h=lh, bias=bias, lambda_b=lb)
    if bias == "none":
        val, (w, h) = minimise(lambda w, h: O.ufm_ce(w, h, y, lw, lh), [(K, d), (d, K * n)])
    else:
        val, (w, h, b) = minimise(
            lambda w, h, b: O.ufm_ce(w, h, y, lw, lh, b, lb), [(K, d), (d, K * n), (K, 1)]
        )
    assert rel(val, pred.objective) <= RTOL
    hbar = class_means(h, K, n)
    if pred.collapsed:
        assert rel(float(hbar.norm(dim=0).mean()), pred.h_norm) <= RTOL
        assert rel(float(w.norm(dim=1).mean()), pred.w_norm) <= RTOL
        cos = (hbar.T @ hbar) / pred.h_norm**2
        assert float((cos - (torch.eye(K, dtype=F64) * K - 1) / (K - 1)).abs().max()) <= 1e-3
    else:
        assert float(hbar.norm()) < 1e-4 and val == pytest.approx(math.log(K), rel=RTOL)


# --------------------------------------------------------------------------------------------------
# extended / deep UFM
# --------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("ratio", [0.5, 0.95, 1.05])
@pytest.mark.parametrize("relu", [False, True])
def test_extended_ufm_against_lbfgs(ratio, relu):
    # the ReLU landscape has spurious local minima (dead units): best of six starts
    K, n, d = 3, 3, 6 if relu else 4
    # lambda_W2 : lambda_W1 : lambda_H1 = 2 : 1 : 0.5 with K a = ratio * 2^(-4/3)
    a = ratio * 2 ** (-4 / 3) / K
    base = (a**3 / n) ** (1 / 3)
    l2, l1, lh = 2 * base, base, 0.5 * base
    fn = extended_ufm_relu if relu else extended_ufm
    pred = fn(K=K, n=n, d=d, lambda_w2=l2, lambda_w1=l1, lambda_h1=lh)
    assert pred.collapsed == (ratio < 1)
    assert math.isclose(pred.threshold_value / pred.threshold, ratio)
    y = torch.as_tensor(O.targets(K, n))
    val, (w2, w1, h1) = minimise(
        lambda w2, w1, h1: O.extended_ufm(w2, w1, h1, y, l2, l1, lh, relu),
        [(K, d), (d, d), (d, K * n)],
        scales=(1.0,) if relu else (1.0, 0.05),
        restarts=6 if relu else 1,
    )
    assert rel(val, pred.objective) <= RTOL
    sv_w2 = torch.linalg.svdvals(w2)
    if pred.collapsed:
        assert float((sv_w2 / pred.sigma_w2 - 1).abs().max()) <= RTOL
        z = w1 @ h1
        post = z.clamp_min(0) if relu else z
        assert float((torch.linalg.svdvals(post)[:K] / pred.sigma_w1h1 - 1).abs().max()) <= RTOL
        if not relu:
            assert float((torch.linalg.svdvals(h1)[:K] / pred.sigma_h1 - 1).abs().max()) <= RTOL
            assert float((torch.linalg.svdvals(w1)[:K] / pred.sigma_w1 - 1).abs().max()) <= RTOL
    else:
        assert float(sv_w2.max()) < 1e-4


def test_extended_ufm_quartic_and_threshold():
    p = extended_ufm(K=4, n=50, d=20, lambda_w2=0.005, lambda_w1=0.005, lambda_h1=0.005)
    t = p.root
    assert abs(t**4 - t + p.threshold_value) < 1e-14  # the optimal root solves the quartic
    assert len(p.quartic_roots) == 2 and p.root == max(p.quartic_roots)
    assert math.isclose(p.s, t**3)
    assert math.isclose(p.sigma_w2 * p.sigma_w1 * p.sigma_h1_bar, p.s)
    assert math.isclose(p.threshold, 2 ** (-4 / 3))
    # K^3 n lambda_W2 lambda_W1 lambda_H1 = 1/16 is the threshold: just below / above
    lam = (1 / 16 / (4**3 * 50)) ** (1 / 3)
    assert extended_ufm(
        K=4, n=50, d=20, lambda_w2=lam * 0.999, lambda_w1=lam, lambda_h1=lam
    ).collapsed
    above = extended_ufm(K=4, n=50, d=20, lambda_w2=lam * 1.001, lambda_w1=lam, lambda_h1=lam)
    assert not above.collapsed and above.objective == 0.5 and len(above.quartic_roots) == 2
    far = extended_ufm(K=4, n=50, d=20, lambda_w2=1, lambda_w1=1, lambda_h1=1)
    assert far.quartic_roots == [] and far.structure == "zero"
    with pytest.raises(TheoryError, match="d >= K"):
        extended_ufm(K=4, n=50, d=3, lambda_w2=0.005, lambda_w1=0.005, lambda_h1=0.005)


@pytest.mark.parametrize("L", [1, 3])
def test_deep_linear_ufm_against_lbfgs(L):
    K, n, d = 3, 3, 4
    lws, lh = [0.02 * (i + 1) for i in range(L)], 0.03
    pred = deep_linear_ufm(K=K, n=n, d=d, lambda_w=lws, lambda_h=lh)
    y = torch.as_tensor(O.targets(K, n))
    shapes = [(d, d)] * (L - 1) + [(K, d), (d, K * n)]
    val, ps = minimise(lambda *ps: O.ufm_objective(list(ps[:L]), ps[L], y, lws, lh), shapes)
    assert rel(val, pred.objective) <= RTOL
    for w, s in zip(ps[:L], pred.sigma_w, strict=True):
        assert float((torch.linalg.svdvals(w)[:K] / s - 1).abs().max()) <= RTOL
    if L == 1:
        ref = ufm_mse(K=K, n=n, d=d, lambda_w=lws[0], lambda_h=lh)
        assert math.isclose(pred.objective, ref.objective, rel_tol=1e-14)


def test_cli_names_and_required_keys():
    p = get_prediction("ufm-mse")(K=4, n=50, d=20, lambda_w=0.005, lambda_h=0.005).to_dict()
    assert {"rho", "objective", "collapsed"} <= set(p)
    p = get_prediction("ufm-mse-bias")(K=4, n=50, d=20, lambda_w=0.005, lambda_h=0.005).to_dict()
    assert {"rho", "objective", "collapsed", "b"} <= set(p)
    p = get_prediction("extended-ufm")(
        K=4, n=50, d=20, lambda_w2=0.005, lambda_w1=0.005, lambda_h1=0.005
    ).to_dict()
    assert {"sigma_w2", "objective"} <= set(p)
    assert get_prediction("extended-ufm-relu")(
        K=4, n=50, d=20, lambda_w2=0.005, lambda_w1=0.005, lambda_h1=0.005
    ).assumption
    assert get_prediction("ufm-ce")(K=4, n=50, d=20, lambda_w=0.005, lambda_h=0.005).collapsed


def run_cli(args, capsys):
    from nclab.cli import main

    code = 0
    try:
        main(args)
    except SystemExit as exc:
        code = exc.code or 0
    out = capsys.readouterr()
    return code, out.out, out.err


def test_cli_theory_json(capsys):
    import json

    code, stdout, _ = run_cli(
        [
            "theory",
            "ufm-mse",
            "--K",
            "4",
            "--n",
            "50",
            "--d",
            "20",
            "--lambda-w",
            "0.005",
            "--lambda-h",
            "0.005",
            "--json",
        ],
        capsys,
    )
    assert code == 0
    out = json.loads(stdout)
    assert out["name"] == "ufm-mse" and out["params"]["K"] == 4
    assert out["prediction"]["structure"] == "orthogonal_frame"
    assert out["prediction"]["rho"] == pytest.approx(0.12142135623730951, rel=1e-14)
    code, _, err = run_cli(
        [
            "theory",
            "ufm-mse",
            "--K",
            "4",
            "--n",
            "50",
            "--d",
            "3",
            "--lambda-w",
            "0.005",
            "--lambda-h",
            "0.005",
        ],
        capsys,
    )
    assert code == 2 and "d >= 4" in err
    code, stdout, _ = run_cli(
        [
            "theory",
            "extended-ufm",
            "--K",
            "4",
            "--n",
            "50",
            "--d",
            "20",
            "--lambda-w2",
            "0.005",
            "--lambda-w1",
            "0.005",
            "--lambda-h1",
            "0.005",
            "--json",
        ],
        capsys,
    )
    assert code == 0 and {"sigma_w2", "objective"} <= set(json.loads(stdout)["prediction"])
