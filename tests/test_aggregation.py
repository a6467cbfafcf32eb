"""How a summary aggregates over seeds is part of its declared type (``Agg``): the bookkeeping the
runner writes (seed, seconds, versions, schema version, ...) is never averaged nor printed as a
measurement; a field may keep the value all seeds share, or each seed's."""

from __future__ import annotations

from typing import Annotated

import pytest

from nclab.experiments import aggregate_summaries, get_experiment
from nclab.experiments.schema import (
    BOOKKEEPING,
    Agg,
    Num,
    Record,
    Summary,
    UnitRecord,
    aggregation,
    metric_items,
    summary_type,
)


class Level(Record):
    level: Annotated[int, Agg.SAME]
    nc1: Num
    kind: str | None = None


class Toy(Summary):
    nc1: Num
    label: Annotated[str, Agg.SAME]
    draws: Annotated[list[float], Agg.PER_SEED]
    levels: list[Level]
    by_layer: dict[str, Level]


def _seed(seed: int, nc1: float) -> dict:
    return {
        "nc1": nc1,
        "label": "x" if seed < 9 else "y",
        "draws": [float(seed), 2.0 * seed],
        "levels": [{"level": 1, "nc1": nc1}, {"level": 2, "nc1": 2 * nc1}],
        "by_layer": {"L1": {"level": 1, "nc1": nc1}},
        "schema_version": 1,
        "seed": seed,
        "seconds": 3.0 + seed,
        "versions": {"nclab": "1", "torch": "2", "numpy": "3", "python": "3.12"},
    }


def test_every_bookkeeping_field_of_the_base_types_is_declared_so():
    for key in ("schema_version", "seed", "seeds", "seconds", "versions", "experiment", "preset"):
        assert aggregation(Summary, key) is BOOKKEEPING, key
    for key in ("figures", "std", "per_seed", "by_seed", "failed", "error", "run_dir"):
        assert aggregation(Summary, key) is BOOKKEEPING, key
    for key in ("schema_version", "seconds", "versions", "remeasured"):
        assert aggregation(UnitRecord, key) is BOOKKEEPING, key
    assert aggregation(Toy, "nc1") is None  # a number: by its value (the mean, with its std)


def test_aggregation_follows_the_declaration():
    agg = aggregate_summaries([_seed(0, 1.0), _seed(1, 3.0)], Toy)
    assert agg["nc1"] == 2.0 and agg["std"]["nc1"] == 1.0
    # bookkeeping: neither averaged nor given a spread
    for key in ("schema_version", "seed", "seconds", "versions"):
        assert key not in agg and key not in agg["std"], key
    assert agg["label"] == "x" and "label" not in agg["std"]  # all seeds agree: the value
    assert agg["draws"] == [[0.0, 0.0], [1.0, 2.0]] and "draws" not in agg["std"]  # each seed's
    # inside records, list entries and mapping values alike
    assert agg["levels"] == [{"level": 1, "nc1": 2.0}, {"level": 2, "nc1": 4.0}]
    assert agg["std"]["levels"] == [{"nc1": 1.0}, {"nc1": 2.0}]
    assert agg["by_layer"] == {"L1": {"level": 1, "nc1": 2.0}}
    assert agg["std"]["by_layer"] == {"L1": {"nc1": 1.0}}
    assert [s["seed"] for s in agg["per_seed"]] == [0, 1]  # each seed's summary whole
    split = aggregate_summaries([_seed(0, 1.0), _seed(9, 1.0)], Toy)
    assert split["label"] == ["x", "y"]  # seeds that differ: the list of them


def test_without_a_type_every_number_is_averaged_as_before():
    agg = aggregate_summaries([_seed(0, 1.0), _seed(1, 3.0)])
    assert agg["seed"] == 0.5 and agg["std"]["schema_version"] == 0.0


def test_the_runner_aggregates_seed_units_by_the_declared_type(tmp_path):
    """A two-seed run of the demo: its summary keeps the run's seed and seeds, and its std no
    spread of the schema version, the wall time or the versions (a toy run wrote
    ``std.schema_version: 0.0`` before)."""
    from nclab.experiments import run_experiment

    demo = get_experiment("demo")
    cfg = demo.config(None, {"train.epochs": 1, "model.width": 8, "model.depth": 1})
    out = run_experiment(demo, cfg, tmp_path / "run", seeds=2)
    assert out["seed"] == 0 and out["seeds"] == [0, 1] and len(out["per_seed"]) == 2
    assert not {"schema_version", "seconds", "versions", "seed"} & set(out["std"])
    assert out["std"]["train_acc"] >= 0 and "train_acc" in metric_items("demo", out)
    assert out["schema_version"] == 1 and out["seconds"] > 0  # the runner's own, for the run


def test_nclab_run_prints_measurements_not_bookkeeping(capsys):
    from nclab.cli.run import print_summary

    summary = {
        **aggregate_summaries([_seed(0, 1.0), _seed(1, 3.0)], summary_type("fc-grammar")),
        "experiment": "fc-grammar",
        "preset": "a5-cfg-quick",
        "seeds": [0, 1],
        "seed": 0,
        "seconds": 12.34,
        "schema_version": 1,
    }
    measured = metric_items("fc-grammar", summary)
    assert not {"seed", "seeds", "seconds", "schema_version", "std", "per_seed"} & set(measured)
    print_summary(summary, "runs/x")
    text = capsys.readouterr().out
    assert "schema_version" not in text and "seconds" not in text
    assert "seeds 0, 1, 12.3 s; run directory: runs/x" in " ".join(text.split())


@pytest.mark.parametrize("experiment", ["demo", "fc-grammar", "deep-ln"])
def test_every_summary_type_declares_its_bookkeeping(experiment):
    tp = summary_type(experiment)
    assert aggregation(tp, "seconds") is BOOKKEEPING and aggregation(tp, "seeds") is BOOKKEEPING


def test_a_sweeps_columns_are_the_measurements_and_the_wall_time():
    from nclab.reproduce.sweep import _numeric_leaves

    summary = {
        **aggregate_summaries([_seed(0, 1.0), _seed(1, 3.0)], summary_type("fc-grammar")),
        "seeds": [0, 1],
        "seed": 0,
        "seconds": 12.5,
        "schema_version": 1,
    }
    cols = _numeric_leaves("fc-grammar", summary)
    assert cols["nc1"] == 2.0 and cols["seconds"] == 12.5
    assert not [c for c in cols if c.split(".")[0] in {"seed", "schema_version", "std", "per_seed"}]
