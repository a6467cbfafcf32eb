"""The ufm summary's keys of :mod:`nclab.experiments.ufm.levels` (issue 26): the levels' NC1
over training and their rates, the ReLU model's nuclear norms, the unregularised UFM."""

from __future__ import annotations

import pytest
import torch

from nclab.errors import ConfigError
from nclab.experiments import run_experiment
from nclab.experiments.ufm import EXPERIMENT
from nclab.experiments.ufm.levels import level_rates, nuclear_norms, rate_window


def _history(steps, nc1):
    """A log with the given NC1 per layer (lists over steps, one problem)."""
    return [
        {"step": s, "metrics": {ly: {"nc1": [v[i]]} for ly, v in nc1.items()}}
        for i, s in enumerate(steps)
    ]


class _Cfg:
    log_every = 10


def test_rates_are_decades_per_1000_steps_over_the_window():
    steps = [0, 10, 20, 30]
    h = [1.0, 1e-2, 1e-4, 1e-4]  # 2 decades per 10 steps in the window [10, 20]
    a = [1.0, 1e-2, 1e-8, 1e-8]  # 6 decades per 10 steps: the levels' rates differ 3x
    top, per = level_rates(_Cfg, _history(steps, {"H1": h, "A1": a}), 1)
    assert top["nc1_rate_window"] == [10, 20] and top["nc1_levels"] == ["H1", "A1"]
    assert per[0]["nc1_rates"]["H1"] == pytest.approx(200.0)
    assert per[0]["nc1_rates"]["A1"] == pytest.approx(600.0)
    assert per[0]["nc1_rate_contrast"] == pytest.approx(3.0)
    assert per[0]["nc1_value_contrast"] == pytest.approx(1e4)  # at step 20
    assert top["seeds_collapsed"] == 1 and top["nc1_rate_contrast"] == pytest.approx(3.0)


def test_a_stalled_seed_is_counted_not_judged():
    steps = [0, 10, 20]
    stalled = _history(steps, {"H1": [1.0, 1e-2, 5e-3], "A1": [1.0, 4e-3, 3.9e-3]})
    top, per = level_rates(_Cfg, stalled, 1)
    assert top["seeds_collapsed"] == 0 and "nc1_rate_contrast" not in per[0]
    assert top["nc1_rate_contrast"] is not None  # the fallback over every seed, flagged by 0


def test_short_runs_take_the_first_two_records():
    assert rate_window([0, 200, 400], 5000) == [1, 2]
    assert rate_window([0, 5000, 10000, 15000], 5000) == [1, 2]


def test_nuclear_norms_of_a_nonnegative_and_a_signed_matrix():
    z = torch.tensor([[[2.0, 0.0], [0.0, 1.0]], [[1.0, -1.0], [1.0, 1.0]]], dtype=torch.float64)
    feats = {"Z1": z, "A1": z.clamp_min(0)}
    top, per = nuclear_norms(feats, [True, False])
    assert per[0]["nuclear_gap"] == 0.0 and per[0]["nuclear_gap_at_minimiser"] == 0.0
    # [[1,-1],[1,1]] has singular values √2, √2; [[1,0],[1,1]] has nuclear norm √5
    assert per[1]["nuclear_gap"] == pytest.approx(abs(2 * 2**0.5 - 5**0.5) / (2 * 2**0.5))
    assert "nuclear_gap_at_minimiser" not in per[1]
    assert top["nuclear_gap_at_minimiser"] == 0.0
    assert top["nuclear_gap_not_reached"] == per[1]["nuclear_gap"]


def test_deep_summaries_carry_the_levels(tmp_path):
    sets = ["model.K=3", "model.n=4", "model.d=6", "train.steps=400", "log_every=100"]
    cfg = EXPERIMENT.config("tb-fig5-relu-quick", sets)
    s = run_experiment(EXPERIMENT, cfg, tmp_path / "r", seeds=2, preset="tb-fig5-relu-quick")
    assert s["nc1_steps"] == [0, 100, 200, 300, 400] and s["nc1_rate_window"] == [100, 200]
    assert set(s["nc1_rates"]) == {"H1", "Z1", "A1"}
    assert s["nuclear_gap"] is not None and s["nc1_median"] is not None
    for p in s["per_seed"]:
        assert len(p["nc1_trajectory"]["A1"]) == 5
        assert p["nuclear_norms"]["A1"] > 0


def test_the_unregularised_ufm_interpolates(tmp_path):
    """λ = 0: GD interpolates (loss ~1e-29 here) and the endpoint keeps its within-class spread
    (NC1 0.67, from 0.76 at initialisation, on this small instance)."""
    sets = ["model.K=3", "model.n=4", "model.d=6", "train.lr=0.5", "train.steps=3000"]
    cfg = EXPERIMENT.config("tb-unregularized", [*sets, "log_every=1000"])
    s = run_experiment(EXPERIMENT, cfg, tmp_path / "u", seeds=2, preset="tb-unregularized")
    assert s["theory_objective"] is None and "unregularised" in s["theorem"]
    assert s["objective_gap"] is None and s["reached_minimiser"] is None
    assert s["objective"] < 1e-20
    assert s["nc1_median"] > 0.1 * s["nc1_start_median"] > 0
    assert s["per_seed"][0]["nc1_median"] == s["per_seed"][0]["metrics"]["nc1"]


@pytest.mark.parametrize(
    "sets",
    [
        ["model.lambda_w=0"],  # one weight decay at zero: no minimiser
        ["model.lambda_w=0", "model.lambda_h=0", "model.depth=2"],
        ["model.lambda_w=0", "model.lambda_h=0", "model.bias=free"],
        ["model.lambda_w=0", "model.lambda_h=0", "model.loss=ce"],
    ],
)
def test_zero_weight_decay_outside_the_unregularised_ufm_is_refused(sets):
    with pytest.raises(ConfigError, match="unregularised plain UFM"):
        EXPERIMENT.config("tb-fig2-nobias", sets)


def test_relu_features_never_move_the_negative_entries(tmp_path):
    """W σ(H) (Tirer & Bruna §7): H's negative entries get no fit gradient, only the weight
    decay's shrinking; GD stops above the plain UFM's minimum."""
    sets = ["model.K=3", "model.n=4", "model.d=6", "train.steps=2000", "log_every=1000"]
    cfg = EXPERIMENT.config("tb-relu-plain-ufm", sets)
    s = run_experiment(EXPERIMENT, cfg, tmp_path / "p", seeds=2, preset="tb-relu-plain-ufm")
    assert s["model"].startswith("plain UFM, ReLU on the features")
    assert s["negatives_kept"] == 1.0 and s["negatives_fit_change"] < 1e-12
    assert s["weight_decay_factor"] == pytest.approx((1 - 0.1 * 0.005) ** 2000)
    assert 0 < s["dead_fraction"] < 1
    assert all(p["objective"] >= s["theory_objective"] * (1 - 1e-12) for p in s["per_seed"])


def test_relu_features_outside_the_plain_bias_free_mse_ufm_is_refused():
    with pytest.raises(ConfigError, match="relu_features"):
        EXPERIMENT.config("tb-relu-plain-ufm", ["model.bias=free"])


def test_fixed_features_extended_approaches_the_attenuated_frame(tmp_path):
    """§5 / App. F.1 for the linear extended UFM: GD over (W2, W1) reaches the convex minimum over
    W2W1, whose gap to c H̄ᵀ shrinks with n; c_0 √ρ is Theorem 4.1's σ_W2 σ_W1."""
    sets = ["train.steps=20000", "fixed_features.ns=[25, 400, 6400]", "fixed_features.seeds=2"]
    cfg = EXPERIMENT.config("tb-fixed-features-extended-quick", sets)
    s = run_experiment(EXPERIMENT, cfg, tmp_path / "x", preset="tb-fixed-features-extended-quick")
    assert s["theory_product_gap"] < 1e-12 and 0 < s["attenuation"] < 1
    assert s["limit_scale"] == pytest.approx(s["attenuation"] * s["collapsed_scale"])
    assert s["opt_gap_max"] < 1e-8
    assert s["gap"][0] > s["gap"][1] > s["gap"][2] and -0.7 < s["slope"] < -0.3
    assert len(s["per_seed"]) == 2 and len(s["per_seed"][0]["gap"]) == 3
    assert (tmp_path / "x" / "figures" / "fixed_features_extended.png").exists()


def test_fixed_features_of_the_relu_extended_ufm_is_refused():
    with pytest.raises(ConfigError, match="linear extended UFM"):
        EXPERIMENT.config("tb-fixed-features-extended-quick", ["model.relu=true"])
