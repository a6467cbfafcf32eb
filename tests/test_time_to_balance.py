"""Theorem 4.4's time (Jacot et al., after (10)) on the linear-head experiment: the time lr x steps
to reach levels eps2 of imbalance (balance_rate.time_derived) on synthetic records with a known
decay, the exponents over a weight-decay sweep (summary.time_scaling), and the sweep's config."""

import math

import pytest

from nclab.errors import ConfigError
from nclab.experiments.linear_head.balance_rate import (
    TIME_KEYS,
    scaling_exponent,
    time_derived,
)
from nclab.experiments.linear_head.config import LinearHeadConfig
from nclab.experiments.linear_head.summary import time_scaling
from nclab.experiments.linear_head.units import check, jobs

ETA = 0.2
LEVELS = [1e-1, 1e-2, 1e-3]


def records(wd, d0=3.0, epochs=40000, every=100):
    """||D|| = d0 (1 - eta wd)^(2 k) after k steps on both linear pairs, a straddling pair above
    them (it must not count)."""
    out = []
    for e in range(0, epochs, every):
        d = d0 * (1 - ETA * wd) ** (2 * (e + 1))
        out.append({"epoch": e, "imbalance": [50.0, d, 0.5 * d]})
    return out


def summary(wd):
    return {"lr": ETA, "weight_decay": wd, "L1": 1, "steps_per_epoch": 1}


def exact_time(wd, eps, d0=3.0):
    return ETA * math.log(eps / d0) / (2 * math.log(1 - ETA * wd))


@pytest.mark.parametrize("wd", [1e-3, 4e-3])
def test_times_of_an_exact_decay(wd):
    d = time_derived(summary(wd), records(wd), LEVELS)
    assert set(d) == set(TIME_KEYS)
    # log-linear interpolation between records is exact for an exponential
    assert d["imbalance_time_eps2"] == pytest.approx(exact_time(wd, 0.1), rel=1e-9)
    assert d["imbalance_time_eps2_last"] == pytest.approx(exact_time(wd, 1e-3), rel=1e-9)
    slope = -ETA / (2 * math.log(1 - ETA * wd))  # time per unit of log(1/eps2)
    assert d["imbalance_time_per_log_eps2"] == pytest.approx(slope, rel=1e-9)
    # (1 - eta wd)^2 per step: wd x slope close to 1/2 for small eta wd
    assert d["imbalance_time_per_log_eps2_times_wd"] == pytest.approx(0.5, rel=2 * ETA * wd)


def test_a_level_not_reached_is_none():
    d = time_derived(summary(1e-3), records(1e-3, epochs=12000), LEVELS)
    assert d["imbalance_time_eps2"] is not None
    assert d["imbalance_time_eps2_last"] is None
    assert d["imbalance_time_per_log_eps2"] is None


def test_the_time_is_when_it_stays_below():
    recs = records(4e-3)
    recs[30]["imbalance"] = [50.0, 5.0, 1.0]  # a late excursion above 0.1 (epoch 3000)
    d = time_derived(summary(4e-3), recs, LEVELS)
    assert d["imbalance_time_eps2"] > ETA * 3001


def test_without_levels_or_records_everything_is_none():
    assert set(time_derived(summary(1e-3), records(1e-3), []).values()) == {None}
    assert set(time_derived(summary(1e-3), [], LEVELS).values()) == {None}


def test_exponents_over_a_sweep_of_exact_decays():
    rows = []
    for wd in (1e-3, 2e-3, 4e-3):
        rows.append({"weight_decay": wd, **time_derived(summary(wd), records(wd), LEVELS)})
    ts = time_scaling(rows)
    for k in ("exponent_time_eps2", "exponent_time_eps2_last", "exponent_time_per_log_eps2"):
        assert ts[k] == pytest.approx(-1.0, abs=0.01), k
    assert 0.49 < ts["time_per_log_eps2_times_wd_min"] <= ts["time_per_log_eps2_times_wd_max"]
    rows[0]["imbalance_time_eps2_last"] = None
    assert time_scaling(rows)["exponent_time_eps2_last"] is None
    assert scaling_exponent([1e-3, 1e-3], [1.0, 2.0]) is None


def test_weight_decay_sweep_jobs_and_config_errors():
    base = {
        "sweep": "weight_decay",
        "sweep_weight_decays": [1e-3, 2e-3],
        "track_imbalance": True,
        "imbalance_eps2": [0.1, 0.01],
        "seeds": 2,
    }
    cfg = LinearHeadConfig(**base)
    check(cfg)
    js = jobs(cfg)
    assert [(j["wd_group"], j["seed"]) for j in js] == [(1e-3, 0), (1e-3, 1), (2e-3, 0), (2e-3, 1)]
    assert all(j["lr"] == cfg.train.lr and j["weight_decay"] == j["wd_group"] for j in js)
    for bad in (
        {"sweep_weight_decays": [1e-3]},
        {"sweep_weight_decays": [0.0, 1e-3]},
        {"imbalance_eps2": [0.01, 0.1]},
        {"imbalance_eps2": [0.1, -0.01]},
        {"track_imbalance": False},
    ):
        with pytest.raises(ConfigError):
            check(LinearHeadConfig(**(base | bad)))
