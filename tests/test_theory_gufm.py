"""The GUFM closed forms (Súkeník et al.) against numerical minimisation in our convention.

Two minimisers of the same objective, :func:`nclab.theory.objectives.gufm`: L-BFGS over W and an
unconstrained V with features X = LayerNorm(V) (a smooth parametrisation of the feasible set), and
projected gradient descent (the laboratory's solver, :class:`nclab.models.ufm.BatchedUFM`).
"""

from __future__ import annotations

import math

import pytest
import torch

from nclab.errors import TheoryError
from nclab.models.ufm import BatchedUFM, UFMSpec
from nclab.theory import objectives as O
from nclab.theory.gufm import gufm_ce, gufm_mse

F64 = torch.float64


def lbfgs_gufm(K, n, d, lam, loss, seed=0):
    g = torch.Generator().manual_seed(seed)
    w = torch.randn(K, d, generator=g, dtype=F64).requires_grad_()
    v = torch.randn(d, K * n, generator=g, dtype=F64).requires_grad_()
    y = torch.as_tensor(O.targets(K, n))
    opt = torch.optim.LBFGS(
        [w, v],
        lr=1,
        max_iter=4000,
        tolerance_grad=1e-14,
        tolerance_change=1e-18,
        history_size=50,
        line_search_fn="strong_wolfe",
    )

    def f():
        return O.gufm(w, O.layernorm_project(v), y, lam, loss)

    def closure():
        opt.zero_grad()
        val = f()
        val.backward()
        return val

    for _ in range(15):
        opt.step(closure)
    with torch.no_grad():
        return float(f()), w.detach(), O.layernorm_project(v.detach())


def check_structure(loss, pred, w, x, K, n, d):
    assert float((w.norm(dim=1) / pred.w_norm - 1).abs().max()) <= 1e-4
    assert float((x.norm(dim=0) - math.sqrt(d)).abs().max()) < 1e-12
    assert float(x.mean(dim=0).abs().max()) < 1e-12
    xbar = x.reshape(d, K, n).mean(-1)
    eye = torch.eye(K, dtype=F64)
    target = eye if loss == "mse" else (K * eye - 1) / (K - 1)  # orthogonal frame / simplex ETF
    assert float((xbar.T @ xbar / d - target).abs().max()) <= 1e-4
    logits = w @ xbar
    assert float((logits.diagonal() / pred.logit_true - 1).abs().max()) <= 1e-4
    off = logits - logits.diagonal().diag() - pred.logit_other * (1 - eye)
    assert float(off.abs().max()) <= 1e-4 * pred.logit_true


@pytest.mark.parametrize(("loss", "K", "d"), [("mse", 3, 4), ("ce", 3, 3)])  # boundary d's
def test_gufm_against_lbfgs(loss, K, d):
    n, lam = 3, 1.0
    pred = (gufm_mse if loss == "mse" else gufm_ce)(K=K, d=d, lam=lam)
    val, w, x = lbfgs_gufm(K, n, d, lam, loss)
    assert abs(val - pred.objective) <= 1e-4 * pred.objective
    check_structure(loss, pred, w, x, K, n, d)


@pytest.mark.parametrize(
    ("loss", "K", "d", "lam"),
    [
        ("mse", 3, 4, 0.1),
        ("mse", 3, 6, 0.1),
        ("mse", 4, 5, 2.0),
        ("mse", 3, 6, 2.0),
        ("ce", 3, 3, 0.05),
        ("ce", 3, 6, 0.05),
        ("ce", 4, 4, 1.0),
        ("ce", 3, 6, 1.0),
    ],
)
def test_gufm_projected_gd_reaches_theory(loss, K, d, lam):
    """Projected GD (the laboratory's solver), three seeds at once."""
    n = 3
    pred = (gufm_mse if loss == "mse" else gufm_ce)(K=K, d=d, lam=lam)
    m = BatchedUFM(
        UFMSpec(K=K, n=n, d=d, layernorm=True, loss=loss),
        seeds=[0, 1, 2],
        lambda_w=lam,
        lambda_h=0.0,
        lr=0.2,
        lr_h_scale=30.0,
    )
    for _ in range(3000):
        m.step()
    f = m.objective()
    assert float(((f - pred.objective) / pred.objective).abs().max()) <= 1e-6
    for b in range(3):
        check_structure(loss, pred, m.classifier[b], m.h[b], K, n, d)


def test_appendix_mapping_and_limits():
    # the appendix's ||w_k|| = 1/(sqrt(d)(1 + lambda K)) is ours with lambda_ours = d * lambda
    K, d, lam_app = 10, 64, 5e-3
    p = gufm_mse(K=K, d=d, lam=d * lam_app)
    assert math.isclose(p.w_norm, 1 / (math.sqrt(d) * (1 + lam_app * K)), rel_tol=1e-14)
    assert math.isclose(p.lam_appendix, lam_app) and p.w_norm == p.w_norm_appendix_formula
    assert p.w_norm < 1 / math.sqrt(d)  # the "no overshoot" condition of the proof
    assert math.isclose(gufm_mse(K=4, d=8, lam=1e-12).objective, 0, abs_tol=1e-12)
    assert gufm_mse(K=4, d=8, lam=1e12).objective == pytest.approx(0.5)
    assert gufm_ce(K=4, d=8, lam=1e-3).objective < gufm_ce(K=4, d=8, lam=1e-2).objective


def test_gufm_bad_parameters():
    with pytest.raises(TheoryError, match="d >= K\\+1 = 5"):
        gufm_mse(K=4, d=4, lam=0.1)
    with pytest.raises(TheoryError, match="d >= K"):
        gufm_ce(K=4, d=3, lam=0.1)
    with pytest.raises(TheoryError, match="lam"):
        gufm_ce(K=4, d=8, lam=0.0)
    with pytest.raises(TheoryError, match="K must be"):
        gufm_mse(K=1, d=8, lam=0.1)
