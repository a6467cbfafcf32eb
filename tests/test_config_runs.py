"""Typed configs with --set overrides, and run directories."""

import json

import pytest

from nclab.config import Config, apply_overrides, load_toml_overrides, parse_value
from nclab.errors import ConfigError, RunError
from nclab.experiments import aggregate_summaries
from nclab.runs import RunDir, to_jsonable


class Model(Config):
    width: int = 10
    lambda_w: float = 1e-3
    act: str = "relu"


class Exp(Config):
    seed: int = 0
    lr: float = 0.1
    tags: list[int] = []
    model: Model = Model()


def test_overrides_nested_and_typed():
    cfg = apply_overrides(Exp(), ["model.width=32", "lr=1e-3", "tags=[1, 2]", "model.act=gelu"])
    assert (cfg.model.width, cfg.lr, cfg.tags, cfg.model.act) == (32, 1e-3, [1, 2], "gelu")


def test_unknown_key_names_valid_keys():
    with pytest.raises(ConfigError, match="unknown key 'model.depth'.*width, lambda_w, act"):
        apply_overrides(Exp(), ["model.depth=3"])
    with pytest.raises(ConfigError, match="unknown key 'lrr'; valid keys: seed, lr, tags"):
        apply_overrides(Exp(), ["lrr=3"])


def test_wrong_type_is_an_error():
    with pytest.raises(ConfigError, match="invalid value for 'model.width'"):
        apply_overrides(Exp(), ["model.width=abc"])
    with pytest.raises(ConfigError, match="key=value"):
        apply_overrides(Exp(), ["lr"])


def test_toml_round_trip(tmp_path):
    cfg = apply_overrides(Exp(), {"model.width": 7})
    p = tmp_path / "c.toml"
    p.write_text(cfg.to_toml())
    assert Exp.from_toml(p) == cfg
    assert load_toml_overrides(p)["model.width"] == 7
    p.write_text("model = {width = 'x'}")
    with pytest.raises(ConfigError):
        Exp.from_toml(p)
    p.write_text("[[[")
    with pytest.raises(ConfigError, match="not valid TOML"):
        Exp.from_toml(p)


def test_parse_value():
    assert parse_value("3") == 3 and parse_value("1e-3") == 1e-3 and parse_value("true") is True
    assert parse_value("abc") == "abc" and parse_value("[1,2]") == [1, 2]


def test_run_dir_records(tmp_path):
    run = RunDir(tmp_path / "r")
    run.write_config(Exp(), experiment="x", preset="p")
    assert run.read_config()["nclab"] == {"experiment": "x", "preset": "p"}
    for i in range(3):
        run.log({"step": i, "v": float("nan") if i == 1 else 0.5})
    assert [r["v"] for r in run.read_metrics()] == [0.5, None, 0.5]
    run.truncate_metrics(1)
    assert len(run.read_metrics()) == 1
    assert not run.finished
    out = run.write_summary({"a": 1})
    assert run.finished and out["a"] == 1 and "torch" in out["versions"] and out["seconds"] >= 0
    json.loads((tmp_path / "r" / "summary.json").read_text())
    run.save_checkpoint({"x": 1})
    assert run.load_checkpoint() == {"x": 1}
    run.remove_checkpoint()
    assert run.load_checkpoint() is None
    with pytest.raises(RunError):
        RunDir(tmp_path / "missing", create=False)


def test_aggregate_and_jsonable():
    agg = aggregate_summaries(
        [{"a": 1.0, "n": {"b": [1.0, 3.0]}, "s": "x"}, {"a": 3.0, "n": {"b": [3.0, 5.0]}, "s": "x"}]
    )
    assert agg["a"] == 2.0 and agg["n"]["b"] == [2.0, 4.0] and agg["s"] == "x"
    assert agg["std"]["a"] == 1.0 and len(agg["per_seed"]) == 2
    assert to_jsonable({"x": float("inf")}) == {"x": None}


def test_aggregate_combines_records_entry_by_entry():
    """Per-level records (the grammar's "levels") average level by level: a claim's path
    "levels.1.nc1_trace" is level 1's mean over seeds (it read a seed's list of levels before)."""
    from nclab.reproduce.summaries import lookup

    seeds = [
        {
            "levels": [
                {"level": 1, "nc1_trace": 0.1, "kind": "none"},
                {"level": 2, "nc1_trace": 0.4},
            ]
        },
        {
            "levels": [
                {"level": 1, "nc1_trace": 0.3, "kind": "type-II"},
                {"level": 2, "nc1_trace": 0.6},
            ]
        },
    ]
    agg = aggregate_summaries(seeds)
    assert lookup({"main": agg}, "levels.1.nc1_trace") == pytest.approx(0.5)
    assert lookup({"main": agg}, "levels.0.level") == 1 and agg["levels"][0]["kind"] == [
        "none",
        "type-II",
    ]
    assert agg["std"]["levels"][0]["nc1_trace"] == pytest.approx(0.1)
    uneven = aggregate_summaries([{"r": [{"a": 1.0}]}, {"r": [{"a": 1.0}, {"a": 2.0}]}])
    assert uneven["r"] == [[{"a": 1.0}], [{"a": 1.0}, {"a": 2.0}]]  # no entry-by-entry pairing
