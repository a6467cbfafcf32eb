"""The ledger of recorded runs: provenance written by the runner, records added from run
directories (dirty trees refused unless asked), listed, and read back."""

from __future__ import annotations

import json
import re
import subprocess

import pytest

from nclab import provenance as provenance_module
from nclab.errors import RunError
from nclab.evidence import Ledger, compact, record_of
from nclab.experiments import get_experiment
from nclab.experiments.runner import run_experiment
from nclab.provenance import code_source, command_line, git_state
from test_cli_theory import run as cli

TINY = {"train.epochs": 2, "model.width": 8, "model.depth": 1, "log_every": 1}
#: what the run computes differently from the preset (log_every is bookkeeping)
SET = {k: v for k, v in TINY.items() if k != "log_every"}


@pytest.fixture(scope="module")
def demo_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("demo") / "run"
    demo = get_experiment("demo")
    run_experiment(demo, demo.config(None, TINY), out, seeds=2)
    return out


def _clean(run_dir, dirty=False):
    """Mark the run's provenance clean (or dirty): the test tree itself may have changes."""
    p = run_dir / "provenance.json"
    prov = json.loads(p.read_text())
    p.write_text(json.dumps(prov | {"dirty": dirty, "commit": "c0ffee" * 6 + "abcd"}))


def _tiny_run(tmp_path, monkeypatch):
    """A finished 2-seed demo run of a preset ``tiny`` (its full-size twin ``tiny-full``), clean."""
    demo = get_experiment("demo")
    monkeypatch.setitem(demo.presets, "tiny", dict(TINY))
    monkeypatch.setitem(demo.presets, "tiny-full", {**TINY, "train.epochs": 4})
    done = tmp_path / "done"
    run_experiment(demo, demo.config("tiny"), done, seeds=2, preset="tiny")
    _clean(done)
    return done


def _interrupted_run(tmp_path, monkeypatch):
    """(the finished 2-seed run, a copy of it interrupted after seed-0 finished)."""
    import shutil

    done = _tiny_run(tmp_path, monkeypatch)
    going = tmp_path / "going"
    shutil.copytree(done, going)
    (going / "summary.json").unlink()
    (going / "units" / "seed-1" / "summary.json").unlink()
    return done, going


def test_the_runner_writes_provenance(demo_run):
    prov = json.loads((demo_run / "provenance.json").read_text())
    assert {"command", "commit", "dirty", "versions", "device", "started"} <= set(prov)
    assert prov["device"]["threads"] >= 1 and prov["device"]["cpu"]
    assert prov["versions"]["torch"]
    commit, dirty = git_state()
    assert (prov["commit"], prov["dirty"]) == (commit, dirty)


def test_outside_a_checkout_the_commit_is_the_one_the_environment_names(tmp_path, monkeypatch):
    """A copy of the tree without its .git (sent to a GPU host) names its commit by
    $NCLAB_SOURCE_COMMIT; whether it is dirty stays unknown (None), never 'clean'."""
    monkeypatch.delenv("NCLAB_SOURCE_COMMIT", raising=False)
    assert git_state(tmp_path) == (None, None)
    monkeypatch.setenv("NCLAB_SOURCE_COMMIT", "8de2ff4")
    assert git_state(tmp_path) == ("8de2ff4", None)


def _git(root, *args):
    out = subprocess.run(
        ["git", "-C", str(root), "-c", "user.name=t", "-c", "user.email=t@t", *args],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    return out.stdout.strip()


def test_a_new_untracked_file_makes_the_run_dirty_and_its_record_refused(
    tmp_path, monkeypatch, capsys
):
    """A run made from a tree whose new experiment is not committed yet is not a run of the
    commit: an untracked file under src/ makes it dirty, and ``nclab evidence add`` refuses it
    unless --allow-dirty. Ignored files and the ledger's own folder do not count."""
    tree = tmp_path / "tree"
    (tree / "src").mkdir(parents=True)
    (tree / "src" / "old.py").write_text("x = 1\n")
    (tree / ".gitignore").write_text("*.log\n")
    _git(tree, "init", "-q")
    _git(tree, "add", ".")
    _git(tree, "commit", "-qm", "first")
    commit = _git(tree, "rev-parse", "HEAD")
    monkeypatch.setattr(provenance_module, "SOURCE", tree)
    (tree / "src" / "scratch.log").write_text("ignored\n")
    (tree / "evidence").mkdir()
    (tree / "evidence" / "record.json").write_text("{}\n")
    (tree / ".whl").mkdir()  # dependency wheels carried to a GPU host (scripts/gpu_check.sh)
    (tree / ".whl" / "pydantic.whl").write_text("wheel\n")
    assert git_state() == (commit, False)
    (tree / "src" / "new_experiment.py").write_text("EXPERIMENT = None\n")
    assert git_state() == (commit, True)

    demo = get_experiment("demo")
    run = tmp_path / "run"
    run_experiment(demo, demo.config(None, TINY), run, seeds=1)
    prov = json.loads((run / "provenance.json").read_text())
    assert (prov["commit"], prov["dirty"]) == (commit, True)
    # nclab itself lies outside this stand-in tree: its experiment is named by path and digest
    assert prov["source"] == code_source("nclab.experiments.demo")
    assert prov["source"]["module"] == "nclab.experiments.demo"
    led = tmp_path / "ledger"
    code, _, err = cli(["evidence", "add", str(run), "--ledger", str(led)], capsys)
    assert code == 2 and "uncommitted changes" in err and "--allow-dirty" in err
    assert not (led / "runs").exists()
    args = ["evidence", "add", str(run), "--ledger", str(led), "--allow-dirty", "--json"]
    code, out, err = cli(args, capsys)
    assert code == 0, err
    (recorded,) = json.loads(out)["recorded"]
    assert json.loads(open(recorded).read())["provenance"]["dirty"] is True


def test_an_experiment_outside_the_tree_is_recorded_by_path_and_content(tmp_path, monkeypatch):
    pkg = tmp_path / "plugins" / "mine"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text('"""Mine."""\n')
    (pkg / "train.py").write_text("def train():\n    return 1\n")
    monkeypatch.syspath_prepend(str(tmp_path / "plugins"))
    first = code_source("mine")
    assert first["module"] == "mine" and first["path"] == str(pkg.resolve())
    assert re.fullmatch(r"[0-9a-f]{64}", first["sha256"])
    assert code_source("mine") == first  # the same code, the same digest
    (pkg / "train.py").write_text("def train():\n    return 2\n")
    assert code_source("mine")["sha256"] != first["sha256"]
    assert code_source("mine", root=tmp_path) is None  # inside the tree: the commit covers it
    assert code_source("nclab.experiments.demo") is None
    assert code_source("no_such_package_here") is None


def test_a_record_holds_summary_config_and_provenance(demo_run):
    _clean(demo_run)
    rec = record_of(demo_run)
    assert rec["experiment"] == "demo" and rec["preset"] is None
    assert rec["overrides"] == SET and rec["seeds"] == [0, 1]
    assert rec["config"]["train"]["epochs"] == 2
    assert "figures" not in rec["summary"] and len(rec["summary"]["per_seed"]) == 2
    prov = rec["provenance"]
    assert set(prov["unit_seconds"]) == {"seed-0", "seed-1"} and prov["seconds"] > 0
    assert prov["dirty"] is False and prov["recorded"]


def test_dirty_runs_are_refused_unless_asked(demo_run, tmp_path):
    _clean(demo_run, dirty=True)
    book = Ledger(tmp_path / "ledger")
    with pytest.raises(RunError, match="uncommitted changes.*--allow-dirty"):
        book.add(demo_run)
    path = book.add(demo_run, allow_dirty=True)
    assert json.loads(path.read_text())["provenance"]["dirty"] is True
    _clean(demo_run)


def test_adding_twice_records_once_and_lists(demo_run, tmp_path, capsys, monkeypatch):
    _clean(demo_run)
    led = tmp_path / "ledger"
    code, out, err = cli(["evidence", "add", str(demo_run), "--ledger", str(led), "--json"], capsys)
    assert code == 0, err
    (first,) = json.loads(out)["recorded"]
    code, out, _ = cli(["evidence", "add", str(demo_run), "--ledger", str(led), "--json"], capsys)
    assert json.loads(out)["recorded"] == [first]
    code, out, _ = cli(["evidence", "list", "--ledger", str(led), "--json"], capsys)
    (row,) = json.loads(out)
    assert row["experiment"] == "demo" and row["seeds"] == 2 and row["path"] == first
    (rec,) = Ledger(led).find("demo", None, SET)
    assert rec.current()
    assert (
        rec.summary["per_seed"][1]["test_acc"]
        == json.loads((demo_run / "summary.json").read_text())["per_seed"][1]["test_acc"]
    )
    assert Ledger(led).find("demo", None, {}) == []
    # a claim asking for a bookkeeping key (how often to log) finds the run all the same
    assert Ledger(led).find("demo", None, TINY) == [rec]
    demo = get_experiment("demo")  # the defaults changed since: the record is stale
    monkeypatch.setattr(demo, "presets", {"new": {"train.lr": 0.5}})
    monkeypatch.setattr(demo, "default_preset", "new")
    assert Ledger(led).find("demo", None, SET) == []
    assert len(Ledger(led).find("demo", None, SET, current=False)) == 1


def test_prune_removes_the_records_whose_preset_changed_and_keeps_the_rest(
    tmp_path, capsys, monkeypatch
):
    done = _tiny_run(tmp_path, monkeypatch)
    led = tmp_path / "ledger"
    book = Ledger(led)
    kept = book.add(done)
    demo = get_experiment("demo")
    other = tmp_path / "other"
    run_experiment(demo, demo.config("tiny-full"), other, seeds=2, preset="tiny-full")
    _clean(other)
    gone = book.add(other)
    monkeypatch.setitem(demo.presets, "tiny-full", {**TINY, "train.epochs": 5})  # changed since
    code, out, _ = cli(["evidence", "prune", "--dry-run", "--ledger", str(led), "--json"], capsys)
    assert code == 0 and json.loads(out) == [str(gone)] and gone.exists()
    code, out, _ = cli(["evidence", "prune", "--ledger", str(led)], capsys)
    assert code == 0 and "1 stale records removed" in out
    assert not gone.exists() and not gone.parent.exists() and kept.exists()
    assert [r.path for r in Ledger(led).records()] == [kept]
    code, out, _ = cli(["evidence", "prune", "--ledger", str(led)], capsys)
    assert "0 stale records removed" in out


def test_unfinished_or_foreign_directories_are_refused(tmp_path, capsys):
    (tmp_path / "x").mkdir()
    code, _, err = cli(["evidence", "add", str(tmp_path / "x"), "--ledger", str(tmp_path)], capsys)
    assert code == 2 and "has not finished" in err


def test_a_ledger_that_is_read_must_exist(tmp_path, capsys, monkeypatch):
    """A mistyped --ledger (or $NCLAB_EVIDENCE) is an error where the ledger is read, not an
    empty ledger judged or listed without a word; recording creates it."""
    gone = tmp_path / "no-such-ledger"
    for args in (
        ["reproduce", "--from-ledger", "--ledger", str(gone), "--out", str(tmp_path / "o")],
        ["reproduce", "sukenik/ufm-ce", "--ledger", str(gone), "--out", str(tmp_path / "o")],
        ["evidence", "list", "--ledger", str(gone)],
        ["evidence", "list", "--benchmarks", "--ledger", str(gone)],
        ["evidence", "compact", "--ledger", str(gone)],
        ["evidence", "prune", "--ledger", str(gone)],
    ):
        code, _, err = cli(args, capsys)
        assert code == 2 and f"no ledger at {gone}" in " ".join(err.split()), args
    monkeypatch.setenv("NCLAB_EVIDENCE", str(gone))
    code, _, err = cli(["reproduce", "--from-ledger", "--out", str(tmp_path / "o")], capsys)
    assert code == 2 and "no ledger at" in err
    code, _, err = cli(["reproduce", "--from-ledger", "--no-ledger"], capsys)
    assert code == 2 and "cannot go with --no-ledger" in err
    assert not gone.exists() and not (tmp_path / "o").exists()  # nothing written, nothing run


def test_recompact_rewrites_old_records_under_the_name_a_new_add_gives(demo_run, tmp_path):
    """A record written before compact dropped a seed's zero spread is rewritten under the name a
    fresh add gives; adding the run again then writes nothing new, and the rest is unchanged."""
    _clean(demo_run)
    book = Ledger(tmp_path / "ledger")
    path = book.add(demo_run)
    rec = json.loads(path.read_text())
    old = dict(rec, summary=dict(rec["summary"], by_seed=[{"nc1": 1.0, "std": {"nc1": 0.0}}]))
    stale = path.with_name(path.stem.rsplit("-", 1)[0] + "-0123456789.json")
    path.unlink()
    stale.write_text(json.dumps(old, indent=1))
    ((was, now),) = book.recompact()
    assert was == stale and not stale.exists() and now.exists()
    back = json.loads(now.read_text())
    assert back["summary"]["by_seed"] == [{"nc1": 1.0}]
    assert {k: v for k, v in back["summary"].items() if k != "by_seed"} == {
        k: v for k, v in rec["summary"].items() if k != "by_seed"
    }
    assert back["provenance"] == rec["provenance"] and book.recompact() == []
    again = dict(back, summary=dict(back["summary"], by_seed=[{"nc1": 1.0, "std": {"nc1": 0.0}}]))
    now.write_text(json.dumps(again, indent=1))  # as if recorded by an older nclab
    ((_, renamed),) = book.recompact()
    assert renamed == now


def test_compact_drops_figures_and_matrices():
    s = {"nc1": 0.1, "figures": ["a.png"], "grams": {"L3": [[1.0, 2.0], [2.0, 1.0]]}, "v": [1, 2]}
    assert compact(s) == {"nc1": 0.1, "grams": {}, "v": [1, 2]}


def test_compact_drops_a_seeds_zero_spread_only():
    """Inside by_seed an all-zero std tree says nothing and goes; a seed's non-zero std (several
    networks per point) and the run's std over seeds stay."""
    zero = {"nc1": 0.0, "layers": [{"a": 0.0, "b": None}]}
    some = {"nc1": 0.2, "layers": [{"a": 0.0}]}
    s = {
        "std": zero,
        "by_seed": [{"nc1": 1.0, "std": zero, "sweep": [{"x": 1, "std": zero}, {"std": some}]}],
    }
    assert compact(s) == {
        "std": zero,
        "by_seed": [{"nc1": 1.0, "sweep": [{"x": 1}, {"std": some}]}],
    }


def test_command_line_reads_as_typed():
    assert command_line(["/venv/bin/nclab", "run", "demo", "--set", "a=b c"]) == (
        "nclab run demo --set 'a=b c'"
    )


def test_a_run_still_going_is_shown_where_it_stands_until_recorded(
    demo_run, tmp_path, capsys, monkeypatch
):
    """An interrupted run (one seed unit finished, the other not): ``evidence add --running``
    writes where it stands, the judge shows the scale as running with it, and recording the
    finished run removes it."""
    from nclab.evidence import progress_words, running
    from nclab.reproduce import Check, Claim, RunSpec, registry, runner

    done, going = _interrupted_run(tmp_path, monkeypatch)
    led = tmp_path / "ledger"
    code, out, err = cli(["evidence", "add", "--running", str(going), "--ledger", str(led)], capsys)
    assert code == 0, err
    entry = running(Ledger(led), "demo", "tiny", {})
    assert entry["units"] == 2 and entry["finished"] == ["seed-0"]
    assert entry["at"] == {"seed-1": "epoch 2"}  # the last line its metrics.jsonl logged
    resolved = going.resolve()
    assert entry["resume"] == f"nclab run --resume {resolved} && nclab evidence add {resolved}"
    assert entry["epochs"] == 2  # of the preset's train.epochs
    words = "1/2 units finished, seed-1 at epoch 2 of 2"
    assert progress_words(entry).startswith(f"running: {words}, as")
    claim = Claim(
        id="demo/learns",
        paper="nclab",
        where="demo",
        claim="The demo MLP learns.",
        runs={"main": RunSpec("demo", "tiny", "tiny-full", seeds=2)},
        measured={"test accuracy": "test_acc"},
        checks=[Check("test accuracy above 10 %", "test_acc", ">=", 0.1)],
    )
    monkeypatch.setattr(registry, "all_claims", lambda: [claim])
    (res,) = runner.from_ledger([], out=tmp_path / "judged", ledger=led)
    quick = res.scales["quick"]
    assert quick["outcome"] == "not run" and quick["reasons"][0]["why"] == "running"
    assert quick["reason"].startswith("running: 1/2 units")
    assert quick["command"] == entry["resume"]
    assert res.headline.startswith(f"running at quick size ({words}")
    md = (tmp_path / "judged" / "report.md").read_text()
    # the overview's badge for that scale says running and how far, not "not run"; the ladder
    # says where each unit stands and how to resume
    row = next(x for x in md.splitlines() if x.startswith("| [`demo/learns`]"))
    assert "| ⏳ **running at quick size" in row and "| ⏳ running · 1/2 units finished |" in row
    assert f"| ⏳ running ({words}, as of " in md and f": `{entry['resume']}` |" in md
    assert "quick: 1 running" in md  # the summary line's sources
    html = (tmp_path / "judged" / "report.html").read_text()
    overview = html[html.index("<table class='overview'>") :]
    overview = overview[: overview.index("</table>")]
    assert "<span class='b run'" in overview and "<b>running</b>" in overview
    assert "<span class='v run'>running at quick size" in overview
    # the run finishes and is recorded: the entry goes, the record is judged
    Ledger(led).add(done)
    assert running(Ledger(led), "demo", "tiny", {}) is None
    (res,) = runner.from_ledger([], out=tmp_path / "judged2", ledger=led)
    assert res.scales["quick"]["source"] == "ledger"
    # a finished run is not "running"
    code, _, err = cli(["evidence", "add", "--running", str(done), "--ledger", str(led)], capsys)
    assert code == 2 and "has finished" in err


def test_a_step_based_run_says_of_how_many_steps(tmp_path):
    """A unit that logs steps and its fractional epoch (fc-transformer: 10 000 steps in one
    epoch) stands at "step 500 of 10000"; without the fraction, or the run's epochs, at "step 500"."""
    from nclab.evidence.progress import _last_logged

    log = tmp_path / "metrics.jsonl"
    log.write_text('{"step": 250, "epoch": 0.025}\n{"step": 500, "epoch": 0.05}\n\n')
    assert _last_logged(tmp_path, 1) == "step 500 of 10000"
    assert _last_logged(tmp_path, 3) == "step 500 of 30000"
    assert _last_logged(tmp_path, None) == "step 500"
    log.write_text('{"step": 500}\n')
    assert _last_logged(tmp_path, 1) == "step 500"
    log.write_text('{"epoch": 7, "loss": 0.1}\n')
    assert _last_logged(tmp_path, 10) == "epoch 7"
    log.write_text("")
    assert _last_logged(tmp_path, 10) == ""


def test_a_record_without_what_a_check_reads_judges_nothing_of_it(tmp_path, monkeypatch):
    """A record made before its experiment's summary held a key a check reads never fails that
    check from the missing key: the check is untestable there (the others are judged, so the
    scale is inconclusive and says to re-run it); with no statement check readable at all, the
    scale is not run."""
    from dataclasses import replace

    from nclab.reproduce import Check, Claim, RunSpec, registry, runner

    done = _tiny_run(tmp_path, monkeypatch)
    led = tmp_path / "ledger"
    Ledger(led).add(done)
    lacking = Check("a key this record lacks", "derived.new_key", ">=", 0.0, depends_on=())
    claim = Claim(
        id="demo/learns",
        paper="nclab",
        where="demo",
        claim="x",
        runs={"main": RunSpec("demo", "tiny", "tiny-full", seeds=2)},
        measured={},
        checks=[Check("test accuracy above 10 %", "test_acc", ">=", 0.1, depends_on=()), lacking],
        check_paths=False,
    )
    monkeypatch.setattr(registry, "all_claims", lambda: [claim])
    (res,) = runner.from_ledger([], out=tmp_path / "j", ledger=led)
    quick = res.scales["quick"]
    assert quick["outcome"] == "inconclusive" and "derived.new_key (re-run it" in quick["reason"]
    (stale,) = [c for c in quick["checks"] if c["name"] == lacking.name]
    assert (
        stale["status"] == "untestable" and stale["blocked"]["why"] == "the record predates a check"
    )
    assert quick["diagnosis"]["kind"] == "the recorded run predates the check"
    only = replace(claim, checks=[lacking])
    monkeypatch.setattr(registry, "all_claims", lambda: [only])
    (res,) = runner.from_ledger([], out=tmp_path / "k", ledger=led)
    quick = res.scales["quick"]
    assert quick["outcome"] == "not run" and "predates derived.new_key" in quick["reason"]
    assert quick["reasons"][0]["why"] == "the record predates a check"
    assert res.outcome == "not run" and "re-run it" in res.headline


def test_a_lost_run_directory_comes_back_with_its_finished_units(tmp_path, capsys, monkeypatch):
    """The running entry keeps the finished units (config, summary, metrics): a machine that
    lost the run directory restores it (``evidence restore``), the resume trains only the unit
    that had not finished, and the finished run is the one an uninterrupted run records."""
    import shutil

    done, going = _interrupted_run(tmp_path, monkeypatch)
    led = tmp_path / "ledger"
    assert cli(["evidence", "add", "--running", str(going), "--ledger", str(led)], capsys)[0] == 0
    kept = (going / "units" / "seed-0" / "summary.json").read_text()
    shutil.rmtree(going)  # the machine is gone
    code, out, err = cli(["evidence", "restore", "demo/tiny-s2", "--ledger", str(led)], capsys)
    assert code == 0, err
    assert "1/2 units restored (seed-0)" in " ".join(out.split())
    assert json.loads((going / "units" / "seed-0" / "summary.json").read_text()) == json.loads(kept)
    assert (going / "units" / "seed-0" / "metrics.jsonl").read_text() == (
        done / "units" / "seed-0" / "metrics.jsonl"
    ).read_text()
    assert not (going / "units" / "seed-1").exists()
    assert (going / "config.toml").read_text() == (done / "config.toml").read_text()
    # a second restore would overwrite the run: refused; an unknown entry names those there
    code, _, err = cli(["evidence", "restore", "demo/tiny-s2", "--ledger", str(led)], capsys)
    assert code == 2 and "is not empty" in err
    code, _, err = cli(["evidence", "restore", "demo/other-s2", "--ledger", str(led)], capsys)
    assert code == 2 and "there are: demo/tiny-s2" in err
    # the resume trains seed-1 only (seed-0's restored summary is read, not retrained)
    stamp = (going / "units" / "seed-0" / "summary.json").stat().st_mtime_ns
    code, _, err = cli(["run", "--resume", str(going)], capsys)
    assert code == 0, err
    assert (going / "units" / "seed-0" / "summary.json").stat().st_mtime_ns == stamp
    ours, ref = (json.loads((d / "summary.json").read_text()) for d in (going, done))
    assert ours["seeds"] == [0, 1] and ours["per_seed"][0] == ref["per_seed"][0]
    # seed-1 trained afresh (in a process of its own threads: equal up to CPU kernels)
    assert ours["per_seed"][1]["test_acc"] == pytest.approx(ref["per_seed"][1]["test_acc"], abs=0.1)
    Ledger(led).add(going)
    assert not list((led / "running").glob("*/*.json"))
