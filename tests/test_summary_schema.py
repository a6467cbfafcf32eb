"""Typed summaries: each experiment's declared structure, schema versions, keyed paths, and claims
whose paths are checked against the declarations when they are built.

Real summaries are validated in tests/test_claim_checks.py (every quick run's, from its session
fixture) and here (a demo run over two seeds: the runner's aggregation and each seed's summary).
"""

from __future__ import annotations

import copy
import dataclasses
import importlib.util
import json
import typing
from pathlib import Path

import pytest
from pydantic import create_model

from nclab.errors import ConfigError, RunError
from nclab.experiments import aggregate_summaries, experiment_names, get_experiment
from nclab.experiments.schema import (
    SCHEMA_VERSION,
    Summary,
    check_path,
    models_of,
    parse_key,
    read_summary_versioned,
    schema_version,
    stamp,
    summary_type,
    unit_type,
    validate_summary,
)
from nclab.reproduce import Check, Claim, RunSpec, all_claims, lookup, lookup_std, registry
from nclab.reproduce.checks import Ratio, interpolates
from nclab.reproduce.judge import read_summaries
from nclab.reproduce.summaries import resolve

# --- every experiment declares its summary ---------------------------------------------------------


@pytest.mark.parametrize("experiment", experiment_names())
def test_every_experiment_declares_a_summary_type(experiment):
    models = models_of(summary_type(experiment))
    assert models and all(issubclass(m, Summary) for m in models), experiment
    assert schema_version(experiment) == SCHEMA_VERSION
    # every key is declared: nothing is accepted without a declaration
    for m in models:
        assert m.model_config.get("extra") == "forbid", m
    assert models_of(unit_type(experiment))


def test_summary_types_load_without_torch():
    import subprocess
    import sys

    code = (
        "import sys; from nclab.experiments.schema import summary_type; "
        "from nclab.experiments import experiment_names; "
        "[summary_type(e) for e in experiment_names()]; print('torch' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


# --- claims name declared fields -----------------------------------------------------------------


def _claim(path: str, experiment: str = "feature-collapse", **kw) -> Claim:
    return Claim(
        id="test/typed",
        paper="P",
        where="W",
        claim="c",
        runs={"main": RunSpec(experiment, "q", "f"), "h": RunSpec(experiment, "q", "f")},
        measured={"x": path},
        checks=[Check("x is small", path, "<=", 1.0)],
        **kw,
    )


def test_a_misspelled_path_fails_when_the_claim_is_built():
    _claim("embedding_metrics.words.dir_nc1")  # declared
    with pytest.raises(ConfigError) as err:
        _claim("h:embedding_metrics.words.dir_nc_1")
    msg = str(err.value)
    assert "claim 'test/typed'" in msg and "run 'h'" in msg and "feature-collapse" in msg
    assert "'embedding_metrics.words.dir_nc_1'" in msg and "at embedding_metrics.words" in msg
    assert "valid: nc1_trace, nc1, dir_nc1" in msg
    with pytest.raises(ConfigError, match="no field 'test_accuracy'; valid: .*test_acc"):
        _claim("test_accuracy")
    with pytest.raises(ConfigError, match="names run 'other'; runs: main, h"):
        _claim("other:test_acc")
    # a check's paths are checked too, not only measured and theory
    with pytest.raises(ConfigError, match="no field 'tets_acc'"):
        Claim(
            id="test/typed",
            paper="P",
            where="W",
            claim="c",
            runs={"main": RunSpec("demo", "q", "f")},
            measured={},
            checks=[Check("acc", "test_acc", ">=", ref="tets_acc")],
        )
    _claim("anything.at_all", check_paths=False)  # fabricated summaries in tests only


def test_no_registered_claim_skips_the_path_check():
    assert all(c.check_paths for c in all_claims())


def _without(model: type, field: str) -> type:
    """``model`` as if ``field`` had been removed from its declaration."""
    fields = {
        name: (f.annotation, f)
        for name, f in model.model_fields.items()
        if name != field and name not in Summary.model_fields
    }
    return create_model(model.__name__, __base__=Summary, **fields)


def test_a_removed_field_fails_the_import_of_the_claims(monkeypatch):
    grammar = summary_type("fc-grammar")
    removed = _without(grammar, "max_nc1_vs_untrained")
    real = registry.summary_type
    monkeypatch.setattr(
        registry, "summary_type", lambda e: removed if e == "fc-grammar" else real(e)
    )
    claim = next(c for c in all_claims() if c.id == "feature-collapse/a5-cfg-depth4")
    with pytest.raises(ConfigError, match="'max_nc1_vs_untrained': at the summary: no field"):
        dataclasses.replace(claim)
    # importing the claims module (a fresh copy of it) fails the same way
    name = "nclab.reproduce.claims.laurent_appendix"
    spec = importlib.util.spec_from_file_location(
        name + "_copy", importlib.util.find_spec(name).origin
    )
    module = importlib.util.module_from_spec(spec)
    with pytest.raises(ConfigError, match="a5-cfg-depth4.*max_nc1_vs_untrained"):
        spec.loader.exec_module(module)


# --- the path language ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("experiment", "path", "error"),
    [
        ("fc-grammar", "levels[level=1].nc1_trace", None),
        ("fc-grammar", "std.levels[level=1].nc1_trace", None),
        ("fc-grammar", "per_seed[seed=0].levels[level=2].dir_nc1", None),
        ("fc-grammar", "seconds", None),
        ("fc-grammar", "versions.torch", None),
        ("fc-grammar", "levels.0.nc1_trace", "'0' indexes a list: select an entry by a field"),
        ("fc-grammar", "levels[depth=1].nc1_trace", "entries have no field 'depth' to select"),
        ("fc-grammar", "test_acc.value", "no field 'value'"),
        ("linear-head", "by_lr[lr0=12].eos_ratio_late", None),
        ("linear-head", "std.by_lr[lr0=12].eos_ratio_late", None),
        ("linear-head", "by_depth.5.nc2_last", None),
        ("linear-head", "sweep[L2=5][weight_decay=0.001].derived.nc2_last", None),
        ("linear-head", "sweep[L2=5][wd=0.001].test_acc", "entries have no field 'wd'"),
        ("linear-head", "sweep[*].train_acc", None),
        ("linear-head", "sweep[*].train_ac", "no field 'train_ac'"),
        ("linear-head", "train_acc[*].x", "is not a list or mapping of records"),
        ("linear-head", "by_depth.L5.nc2_last", "'L5' is not a depth"),
        ("linear-head", "certificate.holds.nc1", None),
        ("linear-head", "derived.nc2_lst", "no field 'nc2_lst'; valid: imbalance_rate_predicted"),
        ("deep-ln", "by_depth.L13.nc1", None),
        ("deep-ln", "by_depth.13.nc1", "'13' is not a depth (L<depth>)"),
        ("deep-ln", "slopes.nc1.mean", None),
        ("deep-ln", "start_rel_diff_max", None),  # the monotone mode's
        ("ufm", "metrics.A1.nc1", None),
        ("ufm", "metrics.X1.nc1", "'X1' is not a layer"),
        ("ufm", "grid[lambda=0.01].objective_gap", None),
        ("ufm", "theory.w_hat_scale", None),  # the fixed-features mode's prediction
        ("ufm", "theory.w_hat_scal", "no field 'w_hat_scal'"),
        ("demo", "layers.relu1.nc1", None),
        ("demo", "layers.conv1.nc1", "not a probed layer"),
    ],
)
def test_check_path(experiment, path, error):
    tp = summary_type(experiment)
    if error is None:
        check_path(tp, path)
    else:
        with pytest.raises(ConfigError, match=error.replace("(", r"\(").replace(")", r"\)")):
            check_path(tp, path)


def _grammar_seed(seed: int, shift: float) -> dict:
    levels = [{"level": k, "nc1_trace": 0.1 * k + shift, "symbol": f"s{k}"} for k in (3, 1, 2)]
    return {"levels": levels, "test_acc": 0.9 + shift, "seed": seed}


def test_keyed_lookup_on_a_summary_aggregated_over_seeds():
    agg = aggregate_summaries([_grammar_seed(0, 0.0), _grammar_seed(1, 0.02)])
    assert [r["level"] for r in agg["levels"]] == [3.0, 1.0, 2.0]  # the key is a mean now
    assert [r["level"] for r in agg["std"]["levels"]] == [0.0, 0.0, 0.0]
    s = {"main": agg}
    assert lookup(s, "levels[level=1].nc1_trace") == pytest.approx(0.11)
    assert lookup(s, "levels[level=3].nc1_trace") == pytest.approx(0.31)
    assert lookup(s, "levels[symbol=s2].nc1_trace") == pytest.approx(0.21)
    # the std tree holds the key's std (0.0): the entry is found at the mean's position
    assert lookup_std(s, "levels[level=1].nc1_trace") == pytest.approx(0.01)
    assert lookup_std(s, "levels[level=3].level") == 0.0
    assert resolve(s, "levels[level=2].nc1_trace") == ("main", ["levels", 2, "nc1_trace"])
    with pytest.raises(KeyError):
        lookup(s, "levels[level=4].nc1_trace")  # no entry
    dup = copy.deepcopy(s)
    dup["main"]["levels"][0]["level"] = 1.0
    with pytest.raises(KeyError):
        lookup(dup, "levels[level=1].nc1_trace")  # two entries: ambiguous
    assert lookup_std({"main": _grammar_seed(0, 0.0)}, "levels[level=1].nc1_trace") is None


def test_several_selections_select_the_entry_matching_all():
    sweep = [{"L2": d, "weight_decay": wd, "acc": d + wd} for d in (1, 5) for wd in (0.1, 0.2)]
    s = {"main": {"sweep": sweep}}
    assert lookup(s, "sweep[L2=5][weight_decay=0.1].acc") == pytest.approx(5.1)
    assert resolve(s, "sweep[weight_decay=0.2][L2=1].acc") == ("main", ["sweep", 1, "acc"])
    with pytest.raises(KeyError):
        lookup(s, "sweep[L2=5].acc")  # two entries have L2 = 5


def test_every_entry_selection_reads_one_value_per_entry():
    sweep = [{"L2": d, "weight_decay": wd, "acc": d + wd} for d in (1, 5) for wd in (0.1, 0.2)]
    s = {"main": {"sweep": sweep, "by": {"a": {"x": 1}, "b": {"x": 2}}}}
    assert lookup(s, "sweep[*].acc") == pytest.approx([1.1, 1.2, 5.1, 5.2])
    assert lookup(s, "by[*].x") == [1, 2]  # a mapping's values
    with pytest.raises(KeyError):
        resolve(s, "sweep[*].acc")  # several places: resolve names one
    with pytest.raises(KeyError):
        lookup(s, "sweep[*].test_acc")  # an entry lacks the rest of the path
    with pytest.raises(KeyError):
        lookup({"main": {"sweep": []}}, "sweep[*].acc")  # no entry
    with pytest.raises(ConfigError, match="alone"):
        parse_key("sweep[*][L2=1].acc")


def test_a_check_over_every_entry_judges_the_worst():
    chk = interpolates("sweep[*].train_acc")
    s = {"main": {"sweep": [{"train_acc": 1.0}, {"train_acc": 0.995}, {"train_acc": 1.0}]}}
    out = chk.evaluate(s)
    assert out["passed"] and out["value"] == 0.995 and "worst of 3 entries" in out["detail"]
    assert chk.describe.startswith("every network of the sweep fits")
    s["main"]["sweep"][2]["train_acc"] = 0.59
    out = chk.evaluate(s)
    assert not out["passed"] and out["value"] == 0.59
    s["main"]["sweep"][1]["train_acc"] = None  # not a number: fails, says so
    assert "not a number" in chk.evaluate(s)["detail"]
    s["main"]["sweep"][1]["train_acc"] = float("nan")
    assert not chk.evaluate(s)["passed"]
    at_most = Check("every loss small", "sweep[*].loss", "<=", value=0.1)
    assert at_most.evaluate({"main": {"sweep": [{"loss": 0.05}, {"loss": 0.2}]}})["value"] == 0.2
    with pytest.raises(ConfigError, match="fixed value"):
        Check("x", "sweep[*].loss", "~", value=1.0, rtol=0.1)
    with pytest.raises(ConfigError, match="fixed value"):
        Check("x", "sweep[*].loss", "<=", ref="loss")
    with pytest.raises(ConfigError, match="one value per path"):
        Ratio("x", "sweep[*].loss", "loss", 0.5)


def test_keyed_lookup_selects_among_a_mappings_values():
    """linear-head's ``by_lr`` is keyed by rank ("0" the smallest step): select by the step."""
    rows = {str(i): {"lr0": lr, "x": float(i)} for i, lr in enumerate((1.5, 6.0, 12.0))}
    s = {"main": {"by_lr": rows, "std": {"by_lr": {"0": {"x": 0.5}, "2": {"x": 0.25}}}}}
    assert lookup(s, "by_lr[lr0=12].x") == 2.0 and lookup(s, "by_lr[lr0=1.5].x") == 0.0
    assert lookup_std(s, "by_lr[lr0=12].x") == 0.25 and lookup_std(s, "by_lr[lr0=6].x") is None


def test_claim_checks_read_keyed_entries():
    claim = next(c for c in all_claims() if c.id == "feature-collapse/a5-cfg-depth4")
    assert "levels[level=1].nc1_trace" in claim.paths()
    claim = next(c for c in all_claims() if c.id == "jacot/edge-of-stability")
    rows = {str(i): {"lr0": lr, "eos_ratio_late": 1.0} for i, lr in enumerate((1.5, 6.0, 12.0))}
    rows["2"]["eos_ratio_late"] = 2.0  # eta_0 = 12 far from the edge of stability
    out = next(c for c in claim.checks if c.name == "eos-largest-step").evaluate(
        {"main": {"by_lr": rows}}
    )
    assert out["passed"] is False and out["value"] == pytest.approx(1.0)


# --- versions ------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def demo_run(tmp_path_factory):
    """A demo run over two seeds (the runner aggregates them), one epoch."""
    from nclab.experiments import run_experiment

    demo = get_experiment("demo")
    out = tmp_path_factory.mktemp("demo-2-seeds")
    cfg = demo.config(
        None, {"train.epochs": 1, "model.width": 16, "model.depth": 2, "log_every": 1}
    )
    return out, run_experiment(demo, cfg, out, seeds=2)


def test_real_demo_summaries_validate(demo_run):
    out, summary = demo_run
    assert read_summary_versioned("demo", summary) == summary  # aggregated over seeds
    for seed in (0, 1):
        per_seed = json.loads((out / "units" / f"seed-{seed}" / "summary.json").read_text())
        assert validate_summary("demo", per_seed) == per_seed
    assert len(summary["per_seed"]) == 2


def test_old_summaries_without_a_version_validate_or_say_which_version(demo_run):
    _, summary = demo_run
    one = copy.deepcopy(summary["per_seed"][0])
    assert one["schema_version"] == SCHEMA_VERSION  # the runner stamps what it writes
    del one["schema_version"]  # as written before summaries were typed: version 0
    assert read_summary_versioned("demo", one) == one
    assert stamp("demo", one)["schema_version"] == SCHEMA_VERSION
    assert read_summary_versioned("demo", stamp("demo", one))["schema_version"] == SCHEMA_VERSION
    old = dict(one, test_accuracy=one.pop("test_acc"))  # an old name of a field
    with pytest.raises(RunError) as err:
        read_summary_versioned("demo", old, "old/summary.json")
    msg = str(err.value)
    assert "old/summary.json" in msg and "schema version 0" in msg
    assert f"this nclab (schema version {SCHEMA_VERSION}) no longer reads" in msg
    assert "test_accuracy" in msg
    newer = dict(stamp("demo", one), schema_version=SCHEMA_VERSION + 1)
    with pytest.raises(RunError, match=f"schema version {SCHEMA_VERSION + 1}; this nclab reads"):
        read_summary_versioned("demo", newer)


def test_validation_names_the_bad_field(demo_run):
    _, summary = demo_run
    one = copy.deepcopy(summary["per_seed"][0])
    one["layers"]["relu1"]["nc1"] = "large"
    with pytest.raises(RunError, match="field 'layers.relu1.nc1': Input should be a valid number"):
        validate_summary("demo", one)
    del one["layers"]
    with pytest.raises(RunError, match="field 'layers': Field required"):
        validate_summary("demo", one)
    assert validate_summary("demo", {"failed": True, "error": "boom"})["failed"]


def test_judging_a_summary_this_nclab_does_not_read_says_why(demo_run, tmp_path):
    out, summary = demo_run
    bad = dict(summary["per_seed"][0], schema_version=SCHEMA_VERSION + 1)
    (tmp_path / "summary.json").write_text(json.dumps(bad))
    jobs = {"main": {"run_dir": str(tmp_path), "experiment": "demo"}}
    summaries, _ = read_summaries(jobs)
    assert summaries["main"]["failed"] and "this nclab reads" in summaries["main"]["error"]
    good, _ = read_summaries({"main": {"run_dir": str(out), "experiment": "demo"}})
    assert good["main"] == json.loads((out / "summary.json").read_text())


def test_summary_fields_are_typed_where_claims_read_them():
    """Collapse types are literals, the numbers claims compare are numbers."""
    fc = summary_type("feature-collapse")
    assert set(typing.get_args(fc.model_fields["collapse_type"].annotation)) == {
        "none",
        "type-I",
        "type-II",
        "type-III",
    }
    one = {"test_acc": 1.0}
    with pytest.raises(RunError, match="collapse_type"):
        validate_summary("feature-collapse", dict(one, collapse_type="type-IV"))


# --- one writer: the runner ------------------------------------------------------------------------

TINY_DEMO = {"train.epochs": 1, "model.width": 8, "model.depth": 1, "log_every": 1}


def test_a_summary_that_does_not_validate_is_never_written_nor_drawn(tmp_path, monkeypatch):
    """The runner checks the run's summary before it draws a figure: a summary off its declared
    structure stops the run with the bad field named, with no summary.json and no figure."""
    from nclab.experiments import run_experiment

    demo = get_experiment("demo")
    drawn = []
    monkeypatch.setattr(demo, "summarize", lambda cfg, units: {"undeclared_key": 1.0})
    monkeypatch.setattr(demo, "figures", lambda *a: drawn.append(a) or [])
    with pytest.raises(RunError, match="undeclared_key"):
        run_experiment(demo, demo.config(None, TINY_DEMO), tmp_path / "run")
    assert drawn == [] and not (tmp_path / "run" / "summary.json").exists()


def test_redraw_rewrites_only_the_figures_of_a_summary_it_reads(tmp_path):
    from nclab.experiments import run_experiment
    from nclab.experiments.runner import redraw, remeasure

    demo = get_experiment("demo")
    run = tmp_path / "run"
    summary = run_experiment(demo, demo.config(None, TINY_DEMO), run)
    path = run / "summary.json"
    (run / "figures" / "collapse.png").unlink()
    assert redraw(run) == summary["figures"] and (run / "figures" / "collapse.png").is_file()
    assert json.loads(path.read_text()) == summary
    path.write_text(json.dumps(dict(summary, undeclared_key=1.0)))
    with pytest.raises(RunError, match="undeclared_key"):
        redraw(run)
    with pytest.raises(RunError, match="'demo' cannot re-measure"):
        remeasure(run)


def test_only_the_runner_writes_summaries():
    """No experiment package writes a summary.json or imports the runner: the runner stamps and
    validates each summary (``write_summary`` is called in runner.py only)."""
    root = Path(importlib.util.find_spec("nclab.experiments").submodule_search_locations[0])
    sources = {str(p.relative_to(root)): p.read_text() for p in root.rglob("*.py")}
    writers = sorted(name for name, text in sources.items() if "write_summary(" in text)
    assert writers == ["runner.py"]
    # nor does a package reach into the runner (a re-measurement is the runner's, through a hook)
    packages = {n: t for n, t in sources.items() if "/" in n and not n.startswith("common/")}
    assert packages and not [n for n, t in packages.items() if "..runner import" in t]
