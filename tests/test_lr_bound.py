"""Proposition 5.3's cap on the learning rate (Jacot et al. 2025, §5.2) in nclab's convention, and
the linear-head experiment's record of networks whose training diverges (issue 26)."""

from __future__ import annotations

import json
import math

import pytest
import torch

from nclab.errors import ConfigError, RunError
from nclab.experiments import get_experiment, run_experiment
from nclab.experiments.linear_head.lr_bound import sweep_record, unit_record
from nclab.experiments.linear_head.sharpness import training_sharpness
from nclab.experiments.schema import validate_summary
from nclab.models.mlp import LinearHeadMLP
from nclab.reproduce.checks import Check, Equals, Ratio
from nclab.theory import get_prediction
from nclab.theory.jacot_ntk import lr_max

EXP = get_experiment("linear-head")

#: a small full-batch GD sweep on the digits: one step that interpolates, two that diverge
SWEEP = [
    "data.samples_per_class=20",
    "data.test_samples_per_class=5",
    "model.width=32",
    "model.head_width=16",
    "train.epochs=200",
    "measure_every=100",
    "checkpoint_every=0",
    "sweep_lrs=[12.0, 1000.0, 1e6]",
]


def _data(N=24, d=6, K=3, seed=0):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(N, d, generator=g, dtype=torch.float64)
    y = torch.arange(N) % K
    return x, y


def test_nclab_hessian_is_2_over_NK_times_the_papers():
    """nclab's objective (mean over N K entries + wd/2 ||theta||^2) has the Hessian of the paper's
    (1/2 ||Z - Y||_F^2 + lambda/2 ||theta||^2, lambda = N K wd / 2) times 2 / (N K): the step bound
    in nclab's convention is N K / 2 times the paper's."""
    from nclab.curvature import hessian_top_eigenvalue

    N, K, wd = 24, 3, 1e-3
    x, y = _data(N=N, K=K)
    torch.manual_seed(0)
    model = LinearHeadMLP(6, K, [16, 16], [8, 8], bias=False).to(torch.float64)
    ours = training_sharpness(model, x, y, K, "mse", wd, iters=200)
    onehot = torch.nn.functional.one_hot(y, K).to(torch.float64)

    def half_sse(out, t):
        return 0.5 * ((out - t) ** 2).sum()

    paper = hessian_top_eigenvalue(
        model,
        half_sse,
        (x, onehot),
        reduction="sum",
        weight_decay=N * K * wd / 2,
        max_iter=200,
        tol=1e-10,
    ).value
    assert ours / paper == pytest.approx(2.0 / (N * K), rel=1e-6)


def test_gd_on_nclabs_loss_is_stable_up_to_NK_over_2_times_the_papers_step():
    """On a linear model (a quadratic loss) GD on nclab's objective converges just below
    2 / lambda_max(nclab Hessian) = (N K / 2) 2 / lambda_max(paper Hessian) and diverges just above."""
    N, K, wd = 24, 3, 1e-3
    x, y = _data(N=N, K=K)
    onehot = torch.nn.functional.one_hot(y, K).to(torch.float64)
    lam = N * K * wd / 2
    paper_top = float(torch.linalg.eigvalsh(x.T @ x).max()) + lam  # Hessian of the paper's loss
    limit = N * K / 2 * (2.0 / paper_top)

    def final_loss(step: float) -> float:
        w = torch.zeros(K, x.shape[1], dtype=torch.float64, requires_grad=True)
        opt = torch.optim.SGD([w], lr=step, weight_decay=wd)
        for _ in range(3000):
            loss = ((x @ w.T - onehot) ** 2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
        return float(((x @ w.detach().T - onehot) ** 2).mean())

    assert final_loss(0.98 * limit) < 1.0
    assert not final_loss(1.02 * limit) < 1.0


def test_lr_max_and_unit_record():
    paper, ours = lr_max(N=500, K=10, L2=3, r=1.0, eps1=2.0, s_k_y=math.sqrt(50))
    assert paper == pytest.approx(2 * 100 / (3 * (math.sqrt(50) - 2) ** 2))
    assert ours == pytest.approx(2500 * paper)
    with pytest.raises(ValueError, match="eps1 < s_K"):
        lr_max(N=500, K=10, L2=3, r=1.0, eps1=8.0, s_k_y=math.sqrt(50))
    # nclab theory jacot-lr-max is the same cap, and jacot-ntk's (2 / (20)'s bound) to rounding
    cap = get_prediction("jacot-lr-max")(K=10, L2=3, r=1.0, eps1=2.0, N=500)
    assert (cap.lr_max, cap.lr_max_mean) == (paper, ours)
    ntk = get_prediction("jacot-ntk")(K=10, L2=3, r=1.0, eps1=2.0, N=500)
    assert ntk.lr_max == pytest.approx(paper, rel=1e-14)
    assert not get_prediction("jacot-lr-max")(K=10, L2=3, r=1.0, eps1=8.0, N=500).applies
    measured = {"eps1": 2.0, "s_k_y": math.sqrt(50), "r_head": 1.0}
    rec = unit_record({"lr": 4.0, "L2": 3, "conditioning": {"measured": measured}}, 500, 10)
    assert rec["interpolates"] and rec["lr_over_bound"] == pytest.approx(4.0 / ours)
    measured["eps1"] = 9.0
    rec = unit_record({"lr": 4.0, "L2": 3, "conditioning": {"measured": measured}}, 500, 10)
    assert not rec["interpolates"] and rec["lr_max"] is None


def _net(lr, bound=None, diverged=False):
    if diverged:
        return {"lr": lr, "diverged": True}
    rec = {"interpolates": bound is not None, "lr_max": bound}
    rec["lr_over_bound"] = None if bound is None else lr / bound
    return {"lr": lr, "diverged": False, "lr_bound": rec}


def test_sweep_record_counts_and_slack():
    nets = [_net(1.0, 100.0), _net(4.0, 80.0), _net(8.0, None), _net(16.0, diverged=True)]
    nets.append(_net(1000.0, diverged=True))
    r = sweep_record(nets)
    assert (r["n_networks"], r["n_diverged"], r["n_stable_interpolating"]) == (5, 2, 2)
    assert r["n_stable_not_interpolating"] == 1
    assert r["lr_over_bound_max"] == pytest.approx(0.05)
    assert (r["largest_stable_lr"], r["bound_at_largest_stable"], r["slack"]) == (4.0, 80.0, 20.0)
    assert r["smallest_failing_lr"] == 8.0 and r["failing_over_bound"] == pytest.approx(0.1)
    assert (r["bound_max"], r["n_above_bound"], r["n_above_bound_diverged"]) == (100.0, 1, 1)
    assert r["n_above_bound_stable_interpolating"] == 0
    bad = sweep_record([_net(200.0, 100.0)])  # stable and interpolating above its bound
    assert bad["lr_over_bound_max"] == 2.0 and bad["n_stable_interpolating_above_bound"] == 1
    none = sweep_record([_net(16.0, diverged=True)])
    assert none["n_diverged"] == 1 and none["slack"] is None


def test_config_errors():
    with pytest.raises(ConfigError, match="diverge_loss_factor"):
        EXP.config("lr-bound-quick", ["diverge_loss_factor=0.5"])
    with pytest.raises(ConfigError, match="lr_bound needs"):
        EXP.config("fig1-mlp-quick", ["lr_bound=true"])
    with pytest.raises(ConfigError, match="lr_bound needs"):
        EXP.config("lr-bound-quick", ["conditioning=false"])


@pytest.fixture(scope="module")
def sweep_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("lr-bound")
    cfg = EXP.config("lr-bound-quick", SWEEP)
    return run_experiment(EXP, cfg, out, seeds=2), out


def test_diverged_units_are_recorded_not_raised(sweep_run):
    s, out = sweep_run
    units = {p.parent.name: json.loads(p.read_text()) for p in out.glob("units/*/summary.json")}
    huge = units["lr-1e+06_seed-0"]
    assert huge["diverged"] is True and huge["diverged_epoch"] >= 1
    assert "layers" not in huge and "train_acc" not in huge
    assert huge["last_finite_loss"] is None or math.isfinite(huge["last_finite_loss"])
    assert units["lr-12_seed-0"]["diverged"] is False
    for u in units.values():
        validate_summary("linear-head", u, unit=True)
    rows = {r["lr0"]: r for r in s["by_lr"].values()}
    assert rows[1e6]["n_diverged"] == 2 and rows[1e6]["nc2_last"] is None
    assert rows[12.0]["n_diverged"] == 0 and rows[12.0]["nc2_last"] is not None
    assert s["layers_from"].startswith("lr0 = 12") and s["layers"]
    assert len(s["by_seed"]) == 2 and all(b["lr_bound"]["n_diverged"] == 2 for b in s["by_seed"])
    assert (out / "figures" / "edge_of_stability.png").is_file()
    text = (out / "summary.json").read_text()
    assert "NaN" not in text and "Infinity" not in text


def test_lr_bound_on_the_sweep(sweep_run):
    s, _ = sweep_run
    b = s["lr_bound"]
    assert b["n_networks"] == 6 and b["n_diverged"] == 4
    assert b["n_stable_interpolating"] == 2
    assert b["lr_over_bound_max"] < 1.0 and b["slack"] > 1.0
    assert b["smallest_failing_lr"] == pytest.approx(1000.0 / 3)
    assert b["n_above_bound"] >= 2 and b["n_above_bound_stable_interpolating"] == 0


def test_a_check_on_a_diverged_metric_says_it_diverged(sweep_run):
    s, _ = sweep_run
    summaries = {"main": s}
    for chk in (
        Check("NC2 at the largest step", "by_lr[lr0=1000000].nc2_last", "<=", 1.0),
        Ratio("kappa", "by_lr[lr0=1000000].cond_kappa_wl", "by_lr[lr0=12].cond_kappa_wl", 1.0),
        Equals("flag", "by_lr[lr0=1000000].nc2_last", True),
    ):
        out = chk.evaluate(summaries)
        assert out["passed"] is False
        assert "every network (2 of 2) diverged" in out["detail"], out["detail"]


def test_report_redraws_a_run_with_diverged_units(sweep_run):
    from nclab.experiments.runner import redraw

    _, out = sweep_run
    (out / "figures" / "edge_of_stability.png").unlink()
    paths = redraw(out)
    assert any(str(p).endswith("edge_of_stability.png") for p in paths)


def test_a_single_network_that_diverges(tmp_path):
    sets = [*SWEEP, "sweep=none", "lr_bound=false", "train.lr=1e6", "lr_over_linear_depth=false"]
    s = run_experiment(EXP, EXP.config("lr-bound-quick", sets), tmp_path)
    assert s["n_diverged"] == 1 and s["layers"] == [] and s["certificate"] is None
    assert s["per_seed"][0]["diverged"] is True and s["derived"]["nc2_last"] is None
    out = Check("NC2", "derived.nc2_last", "<=", 1.0).evaluate({"main": s})
    assert "every network (1 of 1) diverged" in out["detail"]


def test_loss_factor_stops_a_blow_up(tmp_path):
    sets = [*SWEEP, "sweep_lrs=[6.0, 96.0]", "diverge_loss_factor=10"]
    s = run_experiment(EXP, EXP.config("lr-bound-quick", sets), tmp_path)
    unit = json.loads((tmp_path / "units" / "lr-96_seed-0" / "summary.json").read_text())
    assert unit["diverged"] is True and "x the first epoch's" in unit["diverged_reason"]
    assert s["lr_bound"]["n_diverged"] == 1


def test_schema_refuses_half_diverged_networks():
    base = {"L1": 2, "L2": 3, "weight_decay": 1e-4, "lr": 1.0, "seed": 0, "epochs": 5}
    base["steps_per_epoch"] = 1
    ok = {**base, "diverged": True, "diverged_epoch": 2, "last_finite_loss": 0.1}
    validate_summary("linear-head", ok, unit=True)
    with pytest.raises(RunError, match="no measured fields"):
        validate_summary("linear-head", {**ok, "train_acc": 0.5}, unit=True)
    with pytest.raises(RunError, match="missing measured fields"):
        validate_summary("linear-head", {**base, "diverged": False}, unit=True)
