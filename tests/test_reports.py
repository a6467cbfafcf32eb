"""The reports of ``nclab reproduce`` on a fabricated ledger: the summary line, the overview (a
badge per scale with the seeds passing), the sections (ladder, checks per scale, values, figures),
report.json's counts and the console; ``--from-ledger`` re-judges it without training."""

from __future__ import annotations

import hashlib
import json

import pytest

from nclab.experiments import get_experiment
from nclab.experiments.protocol import PaperSetting
from nclab.reproduce import Check, Claim, RunSpec, registry, runner
from nclab.reproduce.checks import sanity
from test_reproduce import run_cli

COMMIT = "c0ffee" * 6 + "abcd"


def _record(root, preset, accs, started="2025-01-02T10:00:00Z", commit=COMMIT):
    """A ledger record of a demo run of ``preset`` whose seeds reached the test accuracies
    ``accs`` (the record's summary holds their mean and each seed's)."""
    demo = get_experiment("demo")
    seeds = list(range(len(accs)))
    summary = {
        "test_acc": sum(accs) / len(accs),
        "seeds": seeds,
        "per_seed": [{"test_acc": a, "seed": s} for s, a in zip(seeds, accs, strict=True)],
        "std": {"test_acc": 0.01},
    }
    rec = {
        "ledger_version": 1,
        "experiment": "demo",
        "preset": preset,
        "overrides": {},
        "seeds": seeds,
        "config": demo.config(preset).to_dict(),
        "summary": summary,
        "provenance": {
            "commit": commit,
            "dirty": False,
            "started": started,
            "device": {"cpu": "test CPU", "threads": 1},
            "seconds": 42.0,
        },
    }
    digest = hashlib.sha1(json.dumps(summary).encode()).hexdigest()[:10]
    folder = root / "runs" / "demo" / f"{preset}-s{len(seeds)}"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"20250102T100000Z-{digest}.json").write_text(json.dumps(rec))


LADDER = Claim(
    id="demo/ladder",
    paper="nclab tests",
    where="Fig. 0",
    claim="The demo MLP learns digits at every scale.",
    runs={"main": RunSpec("demo", "rq", "rf", medium="rm")},
    measured={"test accuracy": "test_acc"},
    paper_values={"test accuracy": 0.9},
    checks=[
        # depends on the data only: the medium preset's fewer epochs can test it
        Check(
            "test accuracy at least 0.5", "test_acc", ">=", 0.5, name="acc", depends_on=("data.*",)
        ),
        sanity(Check("test accuracy at most 1", "test_acc", "<=", 1.0, name="acc-at-most-1")),
    ],
    full_seconds=7200,
)
QUICK_ONLY = Claim(
    id="demo/quick-only",
    paper="nclab tests",
    where="Fig. 1",
    claim="The demo MLP learns digits quickly; its full run needs a GPU.",
    runs={"main": RunSpec("demo", "rq", "rg", full_needs_gpu=True)},
    measured={"test accuracy": "test_acc"},
    checks=[Check("test accuracy at least 0.5", "test_acc", ">=", 0.5, name="acc")],
)
UNRECORDED = Claim(
    id="demo/unrecorded",
    paper="nclab tests",
    where="Fig. 2",
    claim="Nothing recorded.",
    runs={"main": RunSpec("demo", "rq", "rf", set={"model.width": 16})},
    measured={"test accuracy": "test_acc"},
    checks=[Check("test accuracy at least 0.5", "test_acc", ">=", 0.5, name="acc")],
)


@pytest.fixture
def ledger(tmp_path, monkeypatch):
    """A ledger with the quick (3/3 seeds pass) and medium (1/3 seeds pass) runs of demo/ladder;
    demo/quick-only shares its quick run, demo/unrecorded has nothing."""
    demo = get_experiment("demo")
    for name, epochs in (("rq", 1), ("rm", 2), ("rf", 3), ("rg", 4)):
        monkeypatch.setitem(demo.presets, name, {"train.epochs": epochs})
    monkeypatch.setattr(demo, "paper", {"rf": PaperSetting(), "rg": PaperSetting()})
    monkeypatch.setattr(registry, "all_claims", lambda: [LADDER, QUICK_ONLY, UNRECORDED])
    root = tmp_path / "ledger"
    _record(root, "rq", [0.9, 0.95, 0.92])
    _record(root, "rm", [0.6, 0.4, 0.3], started="2025-02-03T08:00:00Z", commit="ab" * 20)
    return root


HEADLINE = (
    "contradicted at medium size (acc fails 2/3 seeds); reproduced at quick size; "
    "not run at full size (about 2.0 h a run on CPU)"
)


def test_from_ledger_rejudges_without_training(ledger, tmp_path, capsys, monkeypatch):
    import nclab.experiments.runner as runner

    def no_training(*args, **kwargs):
        raise AssertionError("--from-ledger trained a unit")

    monkeypatch.setattr(runner, "train_units", no_training)
    out = tmp_path / "rep"
    code = run_cli(["reproduce", "--from-ledger", "--ledger", str(ledger), "--out", str(out)])
    assert code == 0  # judged from the records alone: no unit trained
    console = capsys.readouterr().out
    assert not (out / "runs").exists()  # nothing ran
    # the console: per claim the id and headline, then the failing checks with their seeds
    flat = " ".join(console.split())
    assert f"demo/ladder — {HEADLINE}" in flat
    assert "✗ medium acc: fails 2/3 seeds, and on the mean · mean 0.4333 (threshold 0.5)" in flat
    assert "states: The demo MLP" in flat  # each claim's sentence under its id
    assert "3 claims: 1 reproduced, 0 partial, 1 contradicted, 0 inconclusive, 1 not run" in flat
    assert "nclab tests: 1 reproduced, 0 partial, 1 contradicted, 0 inconclusive, 1 not run" in flat
    assert "demo/quick-only — reproduced at quick size; not run at full size (needs a GPU)" in flat
    assert "run it with: nclab reproduce 'demo/unrecorded' --quick" in flat
    assert (
        "medium: 1 from the ledger, 2 without a preset; full: 1 need a GPU, 2 not in the ledger"
        in flat
    )
    assert str(out / "report.html") in flat

    data = json.loads((out / "report.json").read_text())
    counts = {"reproduced": 1, "partial": 0, "contradicted": 1, "inconclusive": 0, "not run": 1}
    assert data["summary"]["counts"] == counts
    assert data["summary"]["papers"] == {"nclab tests": counts}
    assert data["summary"]["scales"]["quick"] == {"ledger": 2, "not in the ledger": 1}
    assert data["summary"]["scales"]["full"] == {"needs a GPU": 1, "not in the ledger": 2}
    by_id = {c["id"]: c for c in data["claims"]}
    ladder = by_id["demo/ladder"]
    assert ladder["headline"] == HEADLINE and ladder["scale"] == "medium"
    medium = ladder["scales"]["medium"]
    assert medium["presets"] == {"main": "demo rm"} and medium["source"] == "ledger"
    (acc, _) = medium["checks"]
    assert (acc["status"], acc["seeds_passed"], acc["seeds_judged"]) == ("fails", 1, 3)
    assert acc["per_seed"] == [True, False, False]
    assert ladder["outcome"] == "contradicted" and ladder["reasons"][0]["why"] == "fails"
    assert by_id["demo/quick-only"]["outcome"] == "reproduced"

    md = (out / "report.md").read_text()
    # the summary line, then the overview: a badge per scale, the numbers beside the paper's
    assert "**3 claims: 1 reproduced, 0 partial, 1 contradicted, 0 inconclusive, 1 not run**" in md
    assert "Scales judged — quick: 2 from the ledger, 1 not in the ledger; medium: 1 from" in md
    row = next(x for x in md.splitlines() if x.startswith("| [`demo/ladder`]"))
    assert "❌ **contradicted at medium size (acc fails 2/3 seeds)**" in row
    assert "<br>The demo MLP" in row  # the claim's sentence beside its headline
    assert "| ✅ reproduced · 3/3 seeds |" in row
    assert "| ❌ contradicted · 1/3 seeds (acc fails 2/3 seeds) |" in row
    assert "| ⚪ not in the ledger |" in row
    assert "test accuracy **0.4333 ± 0.01** (paper: 0.9)" in row
    gpu_row = next(x for x in md.splitlines() if x.startswith("| [`demo/quick-only`]"))
    assert "| ⚪ no preset | ⚪ needs a GPU |" in gpu_row
    assert md.index("| [`demo/unrecorded`]") < md.index("## demo/ladder")  # overview first
    # the section: the ladder with provenance, the checks per scale, values and figures
    assert "| medium | demo rm | smaller instance: train.epochs 2 (paper: 3) | 3 |" in md
    assert "ledger (abababa, 2025-02-03, 42 s)" in md
    assert "ledger (c0ffeec, 2025-01-02, 42 s)" in md
    assert "| check | kind | quick | medium |" in md
    assert (
        "| `acc` — test accuracy at least 0.5 | statement | ✓ holds 3/3 seeds: 0.9233 "
        "(threshold 0.5) | ✗ fails 1/3 seeds: 0.4333 (threshold 0.5) |"
    ) in md
    assert "| `acc-at-most-1` — test accuracy at most 1 | sanity | ✓ holds 3/3 seeds" in md
    # the values of the largest judged scale beside the paper's (no theory column: none given)
    assert "| quantity | paper | measured (medium size) |\n|---|---|---|\n" in md
    assert "| test accuracy | 0.9 | 0.4333 ± 0.01 |" in md
    assert "No figures: the medium evidence is ledger records, which keep no figures" in md
    assert "`nclab reproduce 'demo/ladder' --scale medium`" in md

    html = (out / "report.html").read_text()
    assert "http" not in html.replace("http-equiv", "") and "<script" not in html
    assert "<b>3 claims:</b>" in html and "1 contradicted</span>" in html
    overview = html[html.index("<table class='overview'>") : html.index("</table>")]
    ladder_row = overview[overview.index("demo/ladder") : overview.index("demo/quick-only")]
    assert "<span class='v contra'>contradicted at medium size (acc fails 2/3 seeds)</span>" in (
        ladder_row
    )
    assert "<span class='b ok'" in ladder_row and "<small>3/3 seeds</small>" in ladder_row
    assert "<span class='b contra'" in ladder_row and "<small>1/3 seeds</small>" in ladder_row
    assert "<span class='b none'" in ladder_row and "<b>not in the ledger</b>" in ladder_row
    assert "test accuracy <b>0.4333 ± 0.01</b> <span class='ref'>(paper: 0.9)</span>" in ladder_row
    gpu_row = overview[overview.index("demo/quick-only") : overview.index("demo/unrecorded")]
    assert "<span class='b gpu'" in gpu_row and "<b>needs a GPU</b>" in gpu_row
    section = html[html.index("<section id='demo/ladder'>") :]
    section = section[: section.index("</section>")]
    assert "<td><b>medium</b></td><td><code>demo rm</code></td>" in section
    assert "ababab" in section and "2025-02-03" in section
    assert "<tr class='sanity'><td><code>acc-at-most-1</code>" in section
    assert "<b>✗ fails</b><small>1/3 seeds</small>" in section
    # the evidence figure: the statement check's value per seed at each scale (green passes,
    # red fails), the mean and the threshold; sanity checks have no panel
    svg = section[section.index("<svg") : section.index("</svg>")]
    assert svg.count('fill="#2e7d32"') == 4 and svg.count('fill="#c62828"') == 2
    assert "acc (≥)" in svg and svg.count("stroke-dasharray") == 2 and "acc-at-most-1" not in svg
    assert "<title>0.3</title>" in svg and "<title>mean 0.4333</title>" in svg
    figure = out / "evidence-figures" / "demo__ladder.svg"
    assert figure.read_text().startswith('<svg xmlns="http://www.w3.org/2000/svg"')
    assert "![evidence](evidence-figures/demo__ladder.svg)" in md
    assert not (out / "evidence-figures" / "demo__unrecorded.svg").exists()  # nothing judged


def test_this_run_beside_the_ledger(ledger, tmp_path, capsys):
    """A quick reproduce judges quick on its runs (figures, provenance of the run directory) and
    medium on the ledger; the report says which came from where."""
    out = tmp_path / "rep"
    res = runner.reproduce(
        ["demo/ladder"], mode="quick", out=out, workers=1, progress=False, ledger=ledger
    )
    (r,) = res
    assert r.scales["quick"]["source"] == "this run" and r.scales["medium"]["source"] == "ledger"
    prov = r.scales["quick"]["provenance"]["main"]
    assert set(prov) == {"commit", "dirty", "started", "device", "seconds"}
    md = (out / "report.md").read_text()
    assert "Scales judged — quick: 1 from this run; medium: 1 from the ledger" in md
    assert "Figures of the quick runs (made by this reproduce); the medium evidence is" in md
    assert "Runs at quick size: `runs/demo/rq-s3`" in md
    assert "Runs at medium size: `ledger/runs/demo/rm-s3/" in md
    html = (out / "report.html").read_text()
    assert "data:image/png;base64," in html


def test_the_reports_meta_has_one_builder(tmp_path):
    """reproduce, from_ledger and `nclab report OUT` write the reports' meta through
    runner.report_meta: re-rendering a directory judged on the ledger writes the same meta."""
    from pathlib import Path

    root = Path(__file__).resolve().parents[1] / "evidence"
    results = runner.from_ledger(["jacot/thm44-time"], out=tmp_path, ledger=root)
    first = json.loads((tmp_path / "report.json").read_text())["meta"]
    assert first == runner.report_meta(results, None, str(root))
    assert first["mode"] == "ledger" and list(first) == ["mode", "ledger", "statements"]
    again = runner.report_dir(tmp_path)
    assert [r.outcome for r in again] == [r.outcome for r in results]
    assert json.loads((tmp_path / "report.json").read_text())["meta"] == first
    ran = runner.report_meta(results, "quick", None, "local", 3.5)
    assert list(ran) == ["mode", "backend", "seconds", "ledger", "statements"]
    assert ran["statements"] == first["statements"]
