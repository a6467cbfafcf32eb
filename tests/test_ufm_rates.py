"""The UFM laboratory's two issue-26 additions for Súkeník et al.'s Lemma 4.1: the GUFM-MSE's
ε-sublevel sets (:mod:`nclab.experiments.ufm.rates`) and the CE UFM's norms against the
regularisation (``ce_norms`` of a CE phase diagram). Small instances: the objective and the
deviations at the optimum, the exact worst norm deviation against the search, the summaries the
claims read, figures, and the configurations no run can use.
"""

from __future__ import annotations

import math
from types import SimpleNamespace

import pytest
import torch

from nclab.errors import ConfigError
from nclab.experiments import run_experiment
from nclab.experiments.ufm import EXPERIMENT
from nclab.experiments.ufm import rates as R
from nclab.reproduce import all_claims, lookup
from nclab.theory.gufm import gufm_mse

K, N_PER, D, LAM = 3, 2, 6, 0.05


def _claim(cid: str):
    return next(c for c in all_claims() if c.id == cid)


@pytest.mark.parametrize("objective", ["gufm", "lower_bound"])
def test_the_optimum_has_the_closed_form_objective_and_no_deviation(objective):
    pred = gufm_mse(K=K, d=D, lam=LAM)
    w, x = R.optimum(K, N_PER, D, pred.w_norm, seed=3)
    assert float(R.loss(w, x, K, N_PER, LAM, objective)) == pytest.approx(pred.objective, 1e-12)
    assert torch.allclose(R.ln_features(x), x)  # already on the LayerNorm sphere
    dev = R.deviations(w, x, K, N_PER, pred.w_norm)
    assert max(dev.values()) < 1e-12


def test_the_lower_bound_is_below_the_gufm_and_deviations_see_a_perturbation():
    pred = gufm_mse(K=K, d=D, lam=LAM)
    w, x = R.optimum(K, N_PER, D, pred.w_norm, seed=0)
    g = torch.Generator().manual_seed(1)
    w2 = w + 0.01 * torch.randn(w.shape, generator=g, dtype=w.dtype)
    x2 = R.ln_features(x + 0.01 * torch.randn(x.shape, generator=g, dtype=x.dtype))
    lo, full = (float(R.loss(w2, x2, K, N_PER, LAM, o)) for o in ("lower_bound", "gufm"))
    assert pred.objective < lo <= full
    assert min(R.deviations(w2, x2, K, N_PER, pred.w_norm).values()) > 1e-4


def test_norm_worst_is_quadratic_below_the_margin_and_beyond_it_larger():
    c = D / K + LAM
    for eps in (1e-10, 1e-8):
        assert R.norm_worst(eps, K, D, LAM) == pytest.approx(math.sqrt(2 * eps / c))
    eps = 1e-2  # far past 1/√d: the linear branch
    assert R.norm_worst(eps, K, D, LAM) > math.sqrt(2 * eps / c)


def test_front_and_slope():
    assert R.front([(1.0, 1.0), (1.0, 1.0), (2.0, 0.5), (4.0, 2.0)]) == [(1.0, 1.0), (4.0, 2.0)]
    pts = [(e, 3 * e**0.25) for e in (1e-8, 1e-6, 1e-4, 1e-2)]
    assert R.slope(pts, 1e-9, 1.0) == pytest.approx(0.25)
    assert R.slope(pts[:2], 1e-9, 1.0) is None  # too few points


def test_the_targeted_search_reaches_the_exact_worst_norm_deviation():
    cfg = EXPERIMENT.config("gufm-mse-rates-quick", [f"model.K={K}", f"model.d={D}",
                                                     f"model.n={N_PER}", f"model.lambda_w={LAM}",
                                                     "rates.eps_lo=1e-6", "rates.eps_hi=1e-3"])  # fmt: skip
    pred = gufm_mse(K=K, d=D, lam=LAM)
    pts = R.targeted(cfg, "norm", -1, 0, pred.objective, pred.w_norm)
    for p in pts:
        exact = R.norm_worst(p["eps"], K, D, LAM)
        assert p["norm"] <= exact * (1 + 1e-6)
        assert p["norm"] >= 0.95 * exact


def test_a_short_rates_run_writes_what_the_claims_read(tmp_path):
    sets = ["rates.iters=30", "rates.descent_steps=100", "rates.steps_per_decade=1"]
    cfg = EXPERIMENT.config("gufm-mse-rates-quick", sets)
    s = run_experiment(EXPERIMENT, cfg, tmp_path / "run", seeds=2, preset="gufm-mse-rates-quick")
    for cid in ("mse-rate-features", "mse-rate-norm", "mse-rate-orthogonal"):
        for path in _claim(f"sukenik/{cid}").paths():
            lookup({"main": s}, path)
    assert s["seeds"] == [0, 1] and set(s["measures"]) == set(R.MEASURES)
    assert s["measures"]["norm"]["exact_ratio_max"] <= 1 + 1e-6
    assert (tmp_path / "run" / "figures" / "rates.png").is_file()


@pytest.mark.parametrize(
    "sets",
    [
        ["model.layernorm=false", "model.lambda_h=0.005"],
        ["model.loss=ce"],
        ["rates.eps_lo=0.5"],
        ["rates.iters=0"],
        ["rates.penalty=0"],
        ["model.d=4"],
    ],
)
def test_bad_rates_configs_are_refused(sets):
    with pytest.raises(ConfigError):
        EXPERIMENT.config("gufm-mse-rates-quick", sets)


def test_ce_norms_fall_with_the_regularisation_and_gd_agrees(tmp_path):
    sets = ["model.n=5", "model.d=6", "train.steps=4000", "log_every=2000", "phase.points=3",
            "phase.lo=0.3", "phase.hi=2.0"]  # fmt: skip
    cfg = EXPERIMENT.config("ufm-ce-norms", sets)
    s = run_experiment(EXPERIMENT, cfg, tmp_path / "run", seeds=1, preset="ufm-ce-norms")
    for path in _claim("sukenik/ce-norm-grows").paths():
        lookup({"main": s}, path)
    c = s["ce_norms"]
    assert c["spearman_h"] < -0.9 and c["spearman_h_lambda_h"] < -0.9
    assert c["h_norm_at_largest"] == 0.0 < c["h_norm_at_smallest"]
    assert c["brackets_sqrt_d"] is True
    assert c["gd_h_norm"][-1] == pytest.approx(0.0, abs=1e-6)  # above the threshold: zero


def test_ce_norms_only_for_the_plain_ce_ufm(tmp_path):
    sets = ["model.n=5", "train.steps=200", "log_every=100", "phase.points=2"]
    cfg = EXPERIMENT.config("tb-phase-diagram-quick", sets)
    s = run_experiment(EXPERIMENT, cfg, tmp_path / "run", seeds=1, preset="tb-phase-diagram-quick")
    assert "ce_norms" not in s


def test_namespace_config_is_enough_for_the_samplers():
    """The samplers read only model.* and rates.* (a plain namespace works)."""
    r = SimpleNamespace(eps_lo=1e-6, eps_hi=1e-4, steps_per_decade=1, iters=20, penalty=1e3,
                        kick=0.3, start=1e-3, t_start=1e-12)  # fmt: skip
    cfg = SimpleNamespace(model=SimpleNamespace(K=K, n=N_PER, d=D, lambda_w=LAM), rates=r)
    pred = gufm_mse(K=K, d=D, lam=LAM)
    assert R.lagrangian(cfg, "orth", 1, 0, pred.objective, pred.w_norm)
