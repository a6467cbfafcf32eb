"""Issue 50's direct tests of three Jacot et al. predictions: Proposition 4.5 (13)-(16) along the
gradient flow of the Theorem 4.4 network, the time of phase 1 over a sweep of λ, and Theorem 3.1's
bounds composed with Theorem 5.2's (18). The quantities the claims read, and summaries on which
each new check fails."""

import dataclasses
import math

import pytest

from nclab.experiments import get_experiment
from nclab.experiments.linear_head.minimiser import composed_derived
from nclab.experiments.pyramid_flow import train as T
from nclab.experiments.pyramid_flow.phase1 import phase1, sweep_fields
from nclab.reproduce import select
from nclab.theory.jacot_conditioning import composed_nc_bounds
from nclab.theory.jacot_flow import conditions

EXP = get_experiment("pyramid-flow")
PROP45, PHASE1, THM52 = "jacot/prop45-inequality", "jacot/thm44-phase1", "jacot/thm52-nc"


def _claim(cid):
    return select([cid])[0]


def _check(cid, name):
    return next(c for c in _claim(cid).checks if c.name == name)


@pytest.fixture(scope="module")
def quick_flow():
    """The quick network at seed 0, its constants, and (10) at the largest ε1 of the sweep."""
    cfg = EXP.config("thm44-quick", {})
    X, Y, _ = T.make_data(cfg, 0)
    net = T.Network(cfg, X, Y)
    theta0 = T.init(cfg, net, 0)
    c = T.constants(cfg, net, theta0)
    cond = conditions(c, 0.5, 0.025, 1.0, net.shapes[-1][1])
    return cfg, net, theta0, c, cond


def test_phase1_reads_both_sides_of_14_along_the_flow(quick_flow):
    cfg, net, theta0, c, cond = quick_flow
    out = phase1(net, theta0, c, cond, 1e-6, 1e-8)
    assert out["prop45_points"] >= 10
    # the recorded sides are the ratio's
    assert out["prop45_lhs_at_min"] / out["prop45_rhs_at_min"] == pytest.approx(
        out["prop45_ratio_min"]
    )
    assert out["log_inv_lam"] == pytest.approx(-math.log(cond.lam))
    # tau1 is where C_lambda crosses 2 lambda m: positive, before the solve's horizon
    assert 0 < out["phase1_time"] < 2 * cond.t_phase1
    assert out["phase1_time_over_bound"] == pytest.approx(out["phase1_time"] / cond.t_phase1)
    for key in ("phase1_dist_over_bound", "phase1_dist_over_r0", "phase1_envelope_max"):
        assert out[key] > 0


def test_phase1_fails_where_alpha_is_too_large(quick_flow):
    """The same flow judged with an alpha 1e6 times the proof's (every lambda_l scaled up, so
    the ball grows too): (13) and (14) then fail on the real trajectory, and the checks with
    them."""
    cfg, net, theta0, c, cond = quick_flow
    big = dataclasses.replace(c, lambdas=tuple(v * 1e3 for v in c.lambdas))
    assert big.alpha == pytest.approx(1e6 * c.alpha)
    out = phase1(net, theta0, big, cond, 1e-6, 1e-8)
    assert out["prop45_ratio_min"] < 1 and out["pl13_ratio_min"] < 1
    summary = sweep_fields([out])
    for name in ("inequality-14", "pl-13"):
        assert _check(PROP45, name).evaluate({"main": summary})["passed"] is False


def test_sweep_fields_tell_a_logarithmic_time_from_a_power():
    xs = (12.0, 13.4, 14.8, 16.2)  # log(1/lambda), lambda a factor 4 apart
    log_rows = [{"log_inv_lam": x, "phase1_time": 3.0 + 0.7 * x} for x in xs]
    f = sweep_fields(log_rows)
    assert f["phase1_time_slope"] == pytest.approx(0.7)
    assert abs(f["phase1_slope_exponent_max"]) < 1e-9 and abs(f["phase1_slope_exponent_min"]) < 1e-9
    # a time of order 1/lambda (phase 2's): local exponent 1
    power_rows = [{"log_inv_lam": x, "phase1_time": 1e-6 * math.exp(x)} for x in xs]
    p = sweep_fields(power_rows)
    assert p["phase1_slope_exponent_min"] == pytest.approx(1.0)
    summary = {"main": p}
    assert _check(PHASE1, "log-time-shape-below").evaluate(summary)["passed"] is False
    assert _check(PHASE1, "log-time-shape-above").evaluate({"main": f})["passed"] is True
    # a phase 1 that ends later at larger lambda: the time does not grow with log(1/lambda)
    falling = [{"log_inv_lam": x, "phase1_time": 30.0 - x} for x in xs]
    assert (
        _check(PHASE1, "log-time-grows").evaluate({"main": sweep_fields(falling)})["passed"]
        is False
    )
    # a phase never reaching its level: no time, the checks fail with the key named
    none = sweep_fields([{"log_inv_lam": 12.0, "phase1_time": None}, log_rows[1]])
    assert none["phase1_time_slope"] is None
    assert _check(PHASE1, "log-time-grows").evaluate({"main": none})["passed"] is False


def test_the_phase1_claims_fail_where_a_prediction_would_not_hold():
    good = {
        "prop45_ratio_min": 3.0,
        "pl13_ratio_min": 5.0,
        "prop45_points_min": 200,
        "phase1_time_over_bound_max": 0.6,
        "phase1_dist_over_bound_max": 0.2,
        "phase1_dist_over_r0_max": 0.1,
        "phase1_envelope_max": 0.3,
        "phase1_time_slope": 0.5,
        "phase1_slope_exponent_max": 0.05,
        "phase1_slope_exponent_min": -0.05,
        "assumption43_margin": 1.9,
    }
    bad = {
        "inequality-14": {"prop45_ratio_min": 0.9},
        "pl-13": {"pl13_ratio_min": 0.5},
        "phase1-within-15": {"phase1_time_over_bound_max": 1.2},
        "distance-16": {"phase1_dist_over_bound_max": 1.5},
        "in-ball-16": {"phase1_dist_over_r0_max": 1.1},
        "enough-points": {"prop45_points_min": 3},
        "assumption-9": {"assumption43_margin": 0.9},
        "log-time-bound": {"phase1_time_over_bound_max": 1.2},
        "log-time-grows": {"phase1_time_slope": -0.1},
        "log-time-shape-below": {"phase1_slope_exponent_max": 0.8},
        "log-time-shape-above": {"phase1_slope_exponent_min": -0.8},
        "loss-exponential": {"phase1_envelope_max": 1.3},
    }
    for cid in (PROP45, PHASE1):
        for chk in _claim(cid).checks:
            assert chk.evaluate({"main": good})["passed"] is True, (cid, chk.name)
            assert chk.evaluate({"main": good | bad[chk.name]})["passed"] is False, chk.name


def test_composed_bounds_are_theorem_3_1s_at_eps2_zero():
    from nclab.theory.bounds_theorem import jacot_bounds

    args = dict(eps1=0.2, r=3.0, K=2, N=40, n_penult=8, s_k_y=math.sqrt(20))
    got = composed_nc_bounds(**args, kappa_wl=1.3)
    ref = jacot_bounds(eps2=0.0, kappa_wl=1.3, **args)
    assert got["nc1"] == ref.nc1_bound and got["nc2"] == ref.nc2_bound
    assert got["nc3"] == ref.nc3_bound
    # kappa from (18) far from 1: (5) is kept as a number below -1 (vacuous), (4) grows with it
    far = composed_nc_bounds(**args, kappa_wl=50.0)
    assert far["nc3"] < -1 and far["nc2"] > got["nc2"] and far["nc1"] == got["nc1"]
    out = composed_nc_bounds(**(args | {"eps1": 3.5}), kappa_wl=1.3)  # eps1 too large
    assert out["nc1"] is None and "eps1" in out["reason"]


def test_the_composed_claim_fails_where_a_bound_would_not_hold():
    bounds = composed_nc_bounds(0.2, 3.0, 2, 40, 8, math.sqrt(20), kappa_wl=1.3)
    printed = composed_nc_bounds(0.2, 3.0, 2, 40, 8, math.sqrt(20), kappa_wl=1.7)
    thm52 = {"composed": bounds, "composed_printed": printed}
    inside = {"nc1_trace": 1e-4, "nc2_kappa": 1.05, "nc3_cos": 0.99}
    derived = {"cond_thm52_applies": 1.0, "cond_reg_loss_over_competitor": 0.4}
    good = {"derived": derived | composed_derived(thm52, inside)}
    claim = _claim(THM52)
    for chk in claim.checks:
        assert chk.evaluate({"main": good})["passed"] is True, chk.name
    # a network whose metrics lie outside the composed bounds
    outside = {"nc1_trace": 2 * bounds["nc1"], "nc2_kappa": 1.01 * printed["nc2"], "nc3_cos": -1.0}
    bad = {"derived": derived | composed_derived(thm52, outside)}
    for name in ("nc1-within-2", "nc2-within-4", "nc2-within-4-printed", "nc3-above-5"):
        assert _check(THM52, name).evaluate({"main": bad})["passed"] is False, name
    assert printed["nc3"] > -1  # at this kappa (5) says something: -1 fails it
    assert _check(THM52, "nc3-above-5-printed").evaluate({"main": bad})["passed"] is False
    for name, key in (
        ("thm52-applies", "cond_thm52_applies"),
        ("beats-competitor", "cond_reg_loss_over_competitor"),
    ):
        worse = {"derived": good["derived"] | {key: 0.0 if "applies" in key else 1.5}}
        assert _check(THM52, name).evaluate({"main": worse})["passed"] is False, name
