"""A claim's variants (another setting of its runs, e.g. the paper's weight decay): run with
``--variants``, judged by the claim's checks at their scales, from the runs just made or the
ledger, shown in the headline and the ladder after the claim's own outcome, never changing it."""

import json
from pathlib import Path

import pytest

from nclab.errors import ConfigError
from nclab.experiments import get_experiment
from nclab.reproduce import Check, Claim, RunSpec
from nclab.reproduce.registry import Variant, all_claims, paper_overrides, select

LABEL = "one epoch"


def _claim(variants=()):
    return Claim(
        id="demo/accuracy",
        paper="nclab",
        where="demo",
        claim="The demo MLP learns digits.",
        runs={"main": RunSpec("demo", "tiny", "tiny-full", set={"model.width": 16}, seeds=2)},
        measured={"test accuracy": "test_acc"},
        checks=[Check("test accuracy above 50 %", "test_acc", ">=", 0.5)],
        variants=variants,
    )


@pytest.fixture
def demo_claims(monkeypatch):
    from nclab.reproduce import registry

    demo = get_experiment("demo")
    monkeypatch.setitem(demo.presets, "tiny", {"train.epochs": 4})
    monkeypatch.setitem(demo.presets, "tiny-full", {"train.epochs": 8})
    variant = Variant(LABEL, {"main": {"train.epochs": 1}}, scales=("quick",))
    claim = _claim([variant])
    monkeypatch.setattr(registry, "all_claims", lambda: [claim])
    return claim


def test_variants_are_checked_when_declared():
    with pytest.raises(ConfigError, match="scales must be among"):
        Variant("x", {"main": {}}, scales=("huge",))
    with pytest.raises(ConfigError, match="variant 'x': no run \\['other'\\]"):
        _claim([Variant("x", {"other": {"train.epochs": 1}})])
    # the overrides add to the run's own
    v = Variant("x", {"main": {"train.epochs": 1}})
    assert v.overrides("main", _claim().runs["main"]) == {"model.width": 16, "train.epochs": 1}


def test_registered_variants_read_the_papers_values_from_the_presets():
    found = {c.id: c.variants for c in all_claims() if c.variants}
    resnet = found["tirer-bruna/resnet18-mse-nobias"][0]
    assert resnet.set == {"main": {"train.weight_decay": 5e-4}} and resnet.scales == ("medium",)
    a3 = found["feature-collapse/a3-transformer-uniform"][0]
    assert a3.set["main"] == paper_overrides(
        "fc-transformer", "a3-uniform", ("train.lr", "train.weight_decay")
    )
    assert a3.set["main"] == {"train.lr": 1e-4, "train.weight_decay": 0.1}
    # the variant's instance text says what it runs: the paper's weight decay is no difference
    from nclab.reproduce.judge import as_variant

    (claim,) = select(["tirer-bruna/resnet18-mse-nobias"])
    assert "train.weight_decay 0.05 (paper: 0.0005)" in claim.instance("medium")
    assert "train.weight_decay" not in as_variant(claim, resnet).instance("medium")


def test_a_variant_is_run_judged_reported_and_recorded(demo_claims, tmp_path, monkeypatch):
    from nclab.reproduce import runner

    monkeypatch.setenv("NCLAB_EVIDENCE", str(tmp_path / "ledger"))
    out = tmp_path / "out"
    res = runner.reproduce(
        [],
        mode="quick",
        out=out,
        workers=1,
        progress=False,
        ledger=tmp_path / "ledger",
        record=True,
        allow_dirty=True,
        variants=True,
    )[0]
    plain = runner.reproduce(
        [], mode="quick", out=tmp_path / "plain", workers=1, progress=False, ledger=None
    )[0]
    # the claim's own outcome and checks are those of the run without the variant
    assert (res.outcome, res.checks) == (plain.outcome, plain.checks)
    quick = res.variants[LABEL]["quick"]
    assert quick["source"] == "this run" and quick["seeds"] == 2
    # judged on the variant's own run: its overrides applied, its value checked
    (run_dir,) = quick["runs"].values()
    summary = json.loads((Path(run_dir) / "summary.json").read_text())
    assert quick["checks"][0]["value"] == summary["test_acc"]
    (main_dir,) = res.runs.values()
    assert run_dir != main_dir
    assert f"; with {LABEL}: {quick['outcome']} at quick size" in res.headline
    md = (out / "report.md").read_text()
    assert f"| quick, with {LABEL} | demo tiny |" in md
    assert f"quick, with {LABEL}" in (out / "report.html").read_text()
    assert json.loads((out / "report.json").read_text())["claims"][0]["variants"][LABEL]
    # recorded: judged again from the ledger alone, the variant from its own record
    again = runner.from_ledger([], out=tmp_path / "again", ledger=tmp_path / "ledger")[0]
    assert again.variants[LABEL]["quick"]["source"] == "ledger"
    assert again.variants[LABEL]["quick"]["checks"][0]["value"] == summary["test_acc"]
    assert again.scales["quick"]["checks"][0]["value"] == res.checks[0].value


def test_a_variant_not_run_is_said_in_the_headline(demo_claims, tmp_path):
    from nclab.reproduce import runner

    res = runner.reproduce([], mode="quick", out=tmp_path, workers=1, progress=False, ledger=None)[
        0
    ]
    assert res.variants[LABEL]["quick"]["outcome"] == "not run"
    assert res.headline.endswith(f"; with {LABEL}: not run at quick size")
    assert res.variants[LABEL]["quick"]["command"].endswith("--variants")


def test_a_running_variant_says_how_far_it_got(demo_claims, tmp_path):
    """A variant whose run is going (a running entry in the ledger) is "running at quick size
    (...)" in the headline, not "not run"."""
    from nclab.evidence.ledger import Ledger
    from nclab.reproduce.judge import judge_claim

    entry = {
        "experiment": "demo",
        "preset": "tiny",
        "overrides": {"model.width": 16, "train.epochs": 1},
        "seeds": [0, 1],
        "units": 2,
        "finished": ["seed-0"],
        "at": {"seed-1": "epoch 1 of 1"},
        "epochs": 1,
        "updated": "2026-12-03 15:18 UTC",
        "run_dir": str(tmp_path / "run"),
        "resume": f"nclab run --resume {tmp_path / 'run'}",
        "provenance": {},
    }
    folder = tmp_path / "ledger" / "running" / "demo"
    folder.mkdir(parents=True)
    (folder / "tiny-s2.json").write_text(json.dumps(entry))
    res = judge_claim(demo_claims, Ledger(tmp_path / "ledger"))
    assert res.variants[LABEL]["quick"]["outcome"] == "not run"
    assert f"; with {LABEL}: running at quick size (1/2 units finished" in res.headline
