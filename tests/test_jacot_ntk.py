"""Proposition 5.3 of Jacot et al. (nclab.theory.jacot_ntk) against dense NTKs of tiny networks, and
the linear-head experiment's Section 5 record (experiments/linear_head/minimiser.py)."""

from __future__ import annotations

import math

import pytest
import torch

from nclab.errors import TheoryError
from nclab.experiments.linear_head.minimiser import (
    _competitor_c,
    conditioning_derived,
    partial_products,
)
from nclab.models.mlp import LinearHeadMLP
from nclab.theory.jacot_ntk import jacot_ntk, ntk_sum_bound

F64 = torch.float64


def dense_ntk_op(model, x, names=None) -> float:
    params = {k: p.detach() for k, p in model.named_parameters() if names is None or k in names}
    fixed = {k: p.detach() for k, p in model.named_parameters() if k not in params}

    def f(p):
        return torch.func.functional_call(model, (p, fixed), (x,)).reshape(-1)

    jac = torch.func.jacrev(f)(params)
    j = torch.cat([v.reshape(v.shape[0], -1) for v in jac.values()], dim=1)
    return float(torch.linalg.eigvalsh(j @ j.T)[-1])


def interpolating_net(seed: int, K: int = 3, n: int = 2, L2: int = 3, noise: float = 0.0):
    """A bias-free ReLU net (2 + L2 layers) on N = n K samples whose last layer is fitted by least
    squares (exact interpolation when the penultimate width is >= N), plus ``noise`` on W_L."""
    torch.manual_seed(seed)
    N = n * K
    x = torch.randn(N, 5, dtype=F64)
    y = torch.arange(N) % K
    model = LinearHeadMLP(5, K, [12, 10], [9] * (L2 - 1), bias=False).to(F64)
    onehot = torch.nn.functional.one_hot(y, K).to(F64)
    with torch.no_grad():
        z = model.forward_all(x)[-2]
        w = (torch.linalg.pinv(z) @ onehot).T
        model.layers[-1].weight.copy_(w + noise * torch.randn_like(w))
    return model, x, y, onehot


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("noise", [0.0, 0.05])
def test_prop53_bounds_hold_on_dense_ntks(seed, noise):
    model, x, y, onehot = interpolating_net(seed, noise=noise)
    K, L1, L2 = 3, model.L1, model.L2
    ws = [w.detach() for w in model.weights()]
    kappas = []
    for p in partial_products(ws, L1):
        s = torch.linalg.svdvals(p)
        kappas.append(float(s[0] / s[K - 1]))
    with torch.no_grad():
        eps1 = float(torch.linalg.matrix_norm(model(x) - onehot))
    r = max(float(torch.linalg.matrix_norm(w, 2)) for w in ws[L1:])
    s_k_y = math.sqrt(2.0)
    theta = dense_ntk_op(model, x)
    head = dense_ntk_op(model, x, {f"layers.{i}.weight" for i in range(L1, model.L)})
    pred = jacot_ntk(K=K, L2=L2, r=r, eps1=eps1, s_k_y=s_k_y, ntk_op=theta)
    assert pred.applies
    sum_bound = ntk_sum_bound(kappas, K, r, s_k_y, eps1)
    # the proof's chain: Theta >= Theta_head >= sum bound >= (20)
    assert theta >= head * (1 - 1e-10)
    assert head >= sum_bound * (1 - 1e-10)
    assert sum_bound >= pred.ntk_lower_bound * (1 - 1e-10)
    for M in range(1, L2 + 1):
        assert min(kappas[:M]) <= pred.kappa_bounds[M - 1]


def test_prop53_misapplied_bound_fails():
    """A bound built with a too-small r (the hypothesis violated) is exceeded: the test above is
    not vacuous."""
    model, x, y, onehot = interpolating_net(0)
    ws = [w.detach() for w in model.weights()]
    r = max(float(torch.linalg.matrix_norm(w, 2)) for w in ws[model.L1 :])
    theta = dense_ntk_op(model, x)
    pred = jacot_ntk(K=3, L2=3, r=r * 1e-3, eps1=0.0, s_k_y=math.sqrt(2.0))
    assert theta < pred.ntk_lower_bound


def test_jacot_ntk_hypotheses_and_errors():
    p = jacot_ntk(K=3, L2=2, r=1.0, eps1=5.0, N=30)
    assert not p.applies and "eps1 = 5" in p.reason and p.ntk_lower_bound is None
    assert jacot_ntk(K=3, L2=2, r=1.0, eps1=0.0, N=30).kappa_bounds == ()
    with pytest.raises(TheoryError):
        jacot_ntk(K=3, L2=0, r=1.0, eps1=0.0, N=30)
    with pytest.raises(TheoryError):
        jacot_ntk(K=3, L2=2, r=-1.0, eps1=0.0, N=30)
    with pytest.raises(TheoryError):
        jacot_ntk(K=3, L2=2, r=1.0, eps1=0.0, N=31)


def test_competitor_maps_x_to_y_with_the_norm_it_reports():
    """The rescaled competitor of minimiser._competitor_c: its layers, built explicitly, output Y
    exactly and have squared norm c (and no rescaling does better)."""
    torch.manual_seed(0)
    N, K = 8, 2
    x = torch.randn(N, 4, dtype=F64)
    onehot = torch.nn.functional.one_hot(torch.arange(N) % K, K).to(F64)
    model = LinearHeadMLP(4, K, [16, 16, 12], [6], bias=False).to(F64)
    with torch.no_grad():
        zs = model.forward_all(x)
        c, resid = _competitor_c(model, zs, onehot)
        assert resid < 1e-10
        ws = model.weights()
        L1 = model.L1
        S = sum(float((w**2).sum()) for w in ws[: L1 - 1])
        w_last = (torch.linalg.pinv(zs[L1 - 1]) @ onehot).T
        B = float((w_last**2).sum())

        def norm_at(a2):
            return a2 * S + B / a2 ** (L1 - 1)

        a2 = ((L1 - 1) * B / S) ** (1.0 / L1)
        assert c == pytest.approx(norm_at(a2), rel=1e-12)
        assert all(c <= norm_at(a2 * f) * (1 + 1e-12) for f in (0.5, 0.9, 1.1, 2.0))
        a = math.sqrt(a2)
        z = x
        for w in ws[: L1 - 1]:
            z = torch.relu(z @ (a * w).T)
        out = torch.relu(z @ (w_last / a ** (L1 - 1)).T)
        assert torch.allclose(out, onehot, atol=1e-9)


def test_conditioning_derived_is_none_without_a_record():
    d = conditioning_derived({"conditioning": {"applies": False, "reason": "biases"}})
    assert all(v is None for v in d.values())


def test_lr_sweep_units_and_class_subset():
    """sweep = "lr" trains one network per (step, seed) at lr / L2 with lr_over_linear_depth, and
    data.num_classes keeps the first K classes."""
    from nclab.experiments.linear_head.config import LinearHeadConfig
    from nclab.experiments.linear_head.data import load_data
    from nclab.experiments.linear_head.units import units

    cfg = LinearHeadConfig.model_validate(
        {
            "model": {"L2": 4},
            "sweep": "lr",
            "sweep_lrs": [1.0, 2.0],
            "lr_over_linear_depth": True,
            "seeds": 2,
            "data": {"name": "digits", "num_classes": 3, "samples_per_class": 5},
        }
    )
    jobs = units(cfg)
    assert [(j["lr0"], j["lr"], j["seed"]) for j in jobs] == [
        (1.0, 0.25, 0),
        (1.0, 0.25, 1),
        (2.0, 0.5, 0),
        (2.0, 0.5, 1),
    ]
    assert [j.seed for j in jobs] == [0, 1, 0, 1]
    assert [j.key for j in jobs] == ["lr-1_seed-0", "lr-1_seed-1", "lr-2_seed-0", "lr-2_seed-1"]
    data = load_data(cfg)
    assert data.num_classes == 3 and int(data.y_train.max()) == 2 and len(data.y_train) == 15


def test_report_on_an_interpolating_network():
    """minimiser.report: Prop 5.1's bound holds, the competitor is exact (width >= N), Theorem
    5.2's quantities are consistent, and the NTK numbers respect (20) and the head's sum bound."""
    from types import SimpleNamespace

    from nclab.experiments.linear_head.minimiser import report

    model, x, y, onehot = interpolating_net(1, K=2, n=3, noise=0.01)
    model = model.float()
    cfg = SimpleNamespace(
        model=SimpleNamespace(activation="relu"),
        train=SimpleNamespace(loss="mse", optimizer="sgd"),
        ntk=True,
        ntk_iterations=200,
    )
    rec = report(cfg, model, x.float(), y, 2, weight_decay=1e-3)
    assert rec["applies"] and rec["prop51"]["applies"] and rec["prop51"]["holds_product"]
    t = rec["thm52"]
    assert t["competitor_residual"] < 1e-6
    lam = 6 * 2 * 1e-3 / 2
    assert t["eps1"] == pytest.approx(math.sqrt(lam * (2 * 3 + t["competitor_c"])))
    n = rec["ntk"]
    assert n["applies"] and n["ntk_over_lower_bound"] >= 1 and n["ntk_head_over_sum_bound"] >= 1
    assert n["kappa_over_bound_max"] <= 1
    biased = LinearHeadMLP(5, 2, [12, 10], [9, 9], bias=True)
    assert "biases" in report(cfg, biased, x.float(), y, 2, weight_decay=1e-3)["reason"]
