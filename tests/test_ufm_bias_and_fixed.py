"""The UFM laboratory's two closed-form sweeps: a regularised bias over λ_b, Theorem 5.1 over n.

Small, fast instances of the presets ``tb-regularized-bias`` and ``tb-fixed-features``: summaries
(the keys the claims read, also when the run is cut short), the closed forms reached, the trend,
figures, re-rendering and the configurations no run can use.
"""

from __future__ import annotations

import math

import pytest

from nclab.errors import ConfigError
from nclab.experiments import run_experiment
from nclab.experiments.runner import redraw
from nclab.experiments.ufm import EXPERIMENT
from nclab.experiments.ufm.config import problems
from nclab.reproduce import all_claims, lookup
from nclab.runs import RunDir

SWEEP = [
    "model.K=3",
    "model.n=4",
    "model.d=6",
    "model.lambda_w=0.02",
    "model.lambda_h=0.02",
    "train.lr=0.1",
    "log_every=2000",
]
FIXED = ["fixed_features.ns=[25, 100, 400, 1600]", "fixed_features.seeds=3"]


def run(tmp_path, preset, sets, name="run", seeds=1):
    cfg = EXPERIMENT.config(preset, list(sets))
    return run_experiment(EXPERIMENT, cfg, tmp_path / name, seeds=seeds, preset=preset)


def _claim(cid: str):
    return next(c for c in all_claims() if c.id == cid)


def test_bias_sweep_problems_are_lambda_b_major():
    cfg = EXPERIMENT.config("tb-regularized-bias-quick", ["bias_sweep.points=3"])
    probs = problems(cfg)
    assert [p["seed"] for p in probs] == [0, 1] * 3
    lbs = [p["lambda_b"] for p in probs[::2]]
    assert lbs[0] == pytest.approx(0.01) and lbs[-1] == pytest.approx(16.0)
    assert lbs == sorted(lbs)


@pytest.mark.parametrize("steps", [12_000, 400])
def test_bias_sweep_reaches_the_closed_form_and_moves_from_etf_to_of(tmp_path, steps):
    sets = [*SWEEP, f"train.steps={steps}", "bias_sweep.points=4", "bias_sweep.hi=10"]
    s = run(tmp_path, "tb-regularized-bias-quick", sets)
    for path in _claim("tirer-bruna/regularized-bias").paths():  # also when cut short
        lookup({"main": s}, path)
    assert len(s["grid"]) == 8 and s["points"] == 4
    assert (tmp_path / "run" / "figures" / "bias_sweep.png").is_file()
    if steps < 1000:
        return
    assert s["objective_gap_off_kink"] <= 1e-6 and s["metric_gap_off_kink"] <= 1e-5
    assert s["monotone"] == {"nc2_of_nonincreasing": True, "nc2_w_etf_nondecreasing": True}
    etf, of = s["ends"]["etf"], s["ends"]["of"]
    assert etf["nc2_w_etf"] <= 1e-6 and etf["rho_gap_thm32"] <= 1e-8
    assert of["nc2_of"] < 0.02 < 0.4 < of["nc2_w_etf"]
    assert max(s["metrics"]["nc2_etf"]) <= 1e-6  # the centred means stay a simplex ETF


def test_fixed_features_gap_falls_like_one_over_sqrt_n(tmp_path):
    s = run(tmp_path, "tb-fixed-features-quick", FIXED)
    for path in _claim("tirer-bruna/fixed-features").paths():
        lookup({"main": s}, path)
    assert s["ns"] == [25, 100, 400, 1600] and s["seeds"] == [0, 1, 2]
    assert -0.6 < s["slope"] < -0.4
    assert s["gap_constant_ratio"] == pytest.approx(1.0, abs=0.2)
    assert s["largest_n"]["scale"] == pytest.approx(s["theory"]["w_hat_scale"], rel=1e-2)
    assert s["largest_n"]["nc1"] == pytest.approx(s["limit_nc1"], rel=0.1)
    records = RunDir(tmp_path / "run").read_metrics()
    assert [r["n"] for r in records] == s["ns"] and len(records[0]["gap"]) == 3
    # --seeds overrides fixed_features.seeds; the same seed gives the same numbers
    s2 = run(tmp_path, "tb-fixed-features-quick", FIXED, name="two", seeds=2)
    assert s2["seeds"] == [0, 1]
    assert s2["per_seed"][1]["gap"] == s["per_seed"][1]["gap"]


def test_figures_are_redrawn_from_a_finished_run(tmp_path):
    run(tmp_path, "tb-fixed-features-quick", FIXED)
    fig = tmp_path / "run" / "figures" / "fixed_features.png"
    fig.unlink()
    assert redraw(tmp_path / "run") == [str(fig)]  # as `nclab report RUN_DIR` does
    assert fig.is_file()


@pytest.mark.parametrize(
    ("preset", "sets", "match"),
    [
        ("tb-regularized-bias-quick", ["model.bias=free"], "model.bias='regularized'"),
        ("tb-regularized-bias-quick", ["bias_sweep.hi=30"], "diverges"),
        ("tb-regularized-bias-quick", ["bias_sweep.points=1"], "points >= 2"),
        ("tb-fixed-features-quick", ["model.bias=free"], "bias-free"),
        ("tb-fixed-features-quick", ["fixed_features.ns=[50]"], ">= 2 distinct"),
        ("tb-fixed-features-quick", ["model.lambda_w=0.5", "model.lambda_h=0.5"], ">= 1"),
    ],
)
def test_configurations_no_sweep_can_use(tmp_path, preset, sets, match):
    with pytest.raises(ConfigError, match=match):
        run(tmp_path, preset, sets)


def test_the_fixed_features_limit_is_the_theory_at_every_n_lambda():
    """λ_H = λ̃_H / n: the same c, ρ and limit for every n of the sweep."""
    from nclab.experiments.ufm.fixed_features import prediction

    cfg = EXPERIMENT.config("tb-fixed-features-quick", [])
    p = prediction(cfg)
    assert p.lambda_h_tilde == pytest.approx(cfg.model.n * cfg.model.lambda_h)
    assert p.threshold == pytest.approx(
        cfg.model.K * math.sqrt(p.lambda_h_tilde * cfg.model.lambda_w)
    )
