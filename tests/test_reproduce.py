"""The claims registry, verdict logic, reproduce reports, sweeps (local and Ray) and resume."""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from nclab.cli import main
from nclab.errors import ConfigError
from nclab.experiments import get_experiment, run_experiment
from nclab.reproduce import (
    Check,
    Claim,
    Equals,
    Ratio,
    RunSpec,
    all_claims,
    lookup,
    select,
    verdict,
)
from nclab.reproduce.sweep import load_grid, parse_grid
from nclab.verdicts import Outcome, Why

# --- registry integrity --------------------------------------------------------------------------


def test_every_claim_names_existing_experiments_and_presets():
    claims = all_claims()
    assert claims, "no claims registered"
    for c in claims:
        assert c.id.count("/") == 1 and c.paper and c.claim and c.checks, c.id
        for spec in c.runs.values():
            exp = get_experiment(spec.experiment)
            for preset in (spec.quick, spec.medium, spec.full):
                if preset is not None:
                    assert preset in exp.presets, f"{c.id}: preset {preset!r} of {spec.experiment}"
                    exp.config(preset, dict(spec.set))  # overrides are valid keys and values
        for path in list(c.measured.values()) + list(c.theory.values()):
            alias = path.rpartition(":")[0] or "main"
            assert alias in c.runs, f"{c.id}: {path} names an unknown run"


def test_a_claim_whose_full_run_takes_hours_on_a_cpu_has_a_medium_scale():
    """The evidence ladder's rule: a claim whose CPU full run is more than about an hour on this
    2-core machine (its estimate, one core, over 2 core-hours) has a medium preset, the largest
    that runs in about an hour, and a medium estimate within that."""
    for c in all_claims():
        if not c.runnable("full") or c.needs_gpu("full") or c.full_seconds <= 7200:
            continue
        assert c.runnable("medium"), f"{c.id}: {c.full_seconds:.0f} s at full size, no medium"
        assert c.medium_seconds < c.full_seconds, c.id
        assert c.medium_seconds <= 4 * 7200, f"{c.id}: medium {c.medium_seconds:.0f} s"


def test_check_names_are_unique_ids_within_a_claim():
    for c in all_claims():
        names = [chk.name for chk in c.checks]
        assert len(set(names)) == len(names), (c.id, names)
        assert all(n and " " not in n for n in names), (c.id, names)


def test_a_smaller_quick_preset_says_what_differs():
    """Every claim whose quick preset differs from its full one says what its quick run changes
    (against the paper's setting, or against the full preset where no preset runs the paper's);
    one whose quick preset is the full one runs the same instance (a GPU-only claim has no quick
    run: nothing to say)."""
    for c in all_claims():
        quick = c.instance("quick")
        if any(r.quick is not None and r.quick != r.full for r in c.runs.values()):
            assert quick.startswith("smaller: ") or "; quick: " in quick, (c.id, quick)
        elif c.runnable("quick"):
            assert quick == c.instance("full"), f"{c.id}: quick is the full preset"
    assert all_claims()[0].instance("full").startswith("paper setting")


def test_list_json_names_each_claims_checks(capsys):
    assert run_cli(["reproduce", "--list", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    by_id = {c.id: c for c in all_claims()}
    assert [r["id"] for r in rows] == list(by_id)
    for r in rows:
        claim = by_id[r["id"]]
        assert r["checks"] == [
            {"name": chk.name, "description": chk.describe} for chk in claim.checks
        ]
        assert r["quick"]["instance"] == claim.instance("quick")
    assert run_cli(["reproduce", "--list", "--markdown"]) == 0
    assert "smaller instance: data.name mnist1d (paper: mnist)" in capsys.readouterr().out


def test_select_by_glob():
    ids = [c.id for c in all_claims()]
    some = select([ids[0]])
    assert [c.id for c in some] == [ids[0]]
    prefix = ids[0].split("/")[0]
    assert all(c.id.startswith(prefix) for c in select([prefix + "/*"]))
    with pytest.raises(ConfigError, match="no claim matches"):
        select(["nope/*"])


# --- verdict logic on fabricated summaries ----------------------------------------------------------

CLAIM = Claim(
    id="test/claim",
    paper="P",
    where="Fig. 1",
    claim="c",
    runs={"main": RunSpec("demo", "q", "f"), "other": RunSpec("demo", "q2", "f2")},
    measured={"acc": "test_acc", "gap": "other:gap"},
    theory={"norm": "theory.norm"},
    checks=[
        Check("accuracy is high", "test_acc", ">=", 0.99),
        Check("norm matches theory", "norm", "~", ref="theory.norm", rtol=0.05),
        Check("other beats main by 30 points", "other:test_acc", ">=", ref="test_acc", margin=0.3),
    ],
    check_paths=False,  # fabricated summaries, not demo's
)


def test_claims_share_one_run_with_the_most_seeds_any_asks(tmp_path):
    """Two claims needing the same run at 3 and 8 seeds share the 8-seed run (the ledger's find
    reads it for both too); other overrides keep their own run."""
    from dataclasses import replace

    from nclab.reproduce.plan import plan

    three = replace(CLAIM, id="t/three", runs={"main": RunSpec("demo", "q", "f", seeds=3)})
    eight = replace(CLAIM, id="t/eight", runs={"main": RunSpec("demo", "q", "f", seeds=8)})
    other = replace(
        CLAIM, id="t/other", runs={"main": RunSpec("demo", "q", "f", seeds=3, set={"lr": 1})}
    )
    jobs, by_claim, _ = plan([three, eight, other], "quick", tmp_path, None, gpu=False)
    assert sorted(j.seeds for j in jobs) == [3, 8]
    assert by_claim["t/three"]["main"] is by_claim["t/eight"]["main"]
    assert by_claim["t/three"]["main"].seeds == 8
    assert by_claim["t/other"]["main"].seeds == 3
    jobs, by_claim, _ = plan([three, eight], "quick", tmp_path, 2, gpu=False)  # --seeds 2
    assert [j.seeds for j in jobs] == [2]


def test_seed_views_pair_seeds_or_say_none():
    """Per-seed views come from by_seed / per_seed; a one-seed run is its own view; a run of
    several seeds that keeps only their mean (a sweep averaging each point) gives no view, so its
    checks are judged on the mean and never shown as "1/1 seeds"."""
    from nclab.reproduce.outcomes import seed_views

    two = {"nc1": 0.5, "seeds": [0, 1], "per_seed": [{"nc1": 0.4}, {"nc1": 0.6}]}
    assert seed_views({"main": two}) == [{"main": {"nc1": 0.4}}, {"main": {"nc1": 0.6}}]
    one = {"nc1": 0.5, "seeds": [0]}
    assert seed_views({"main": one}) == [{"main": one}]
    assert seed_views({"main": {"nc1": 0.5}}) == [{"main": {"nc1": 0.5}}]
    mean_only = {"nc1": 0.5, "seeds": [0, 1, 2]}
    assert seed_views({"main": mean_only}) == []
    assert seed_views({"main": two, "other": mean_only}) == []
    three = {"seeds": [0, 1, 2], "by_seed": [{"a": i} for i in range(3)]}
    assert seed_views({"main": two, "other": three}) == []  # 2 and 3 seeds: no pairing


def test_verdicts():
    """The outcomes on fabricated one-seed summaries of a run faithful to the paper (no scene:
    nothing deviates): some checks fail -> partial; all hold -> reproduced; all fail ->
    contradicted; a failed run -> inconclusive, with its error."""
    good = {
        "main": {"test_acc": 0.5, "norm": 1.40, "theory": {"norm": 1.42}},
        "other": {"test_acc": 0.9, "gap": 1.0},
    }
    assert verdict(CLAIM, good).outcome is Outcome.PARTIAL  # accuracy fails, the others pass
    good["main"]["test_acc"] = 0.995
    good["other"]["test_acc"] = 1.0
    v = verdict(CLAIM, good)
    assert v.outcome is Outcome.PARTIAL and [c.passed for c in v.checks] == [True, True, False]
    good["other"]["test_acc"] = 1.3
    assert verdict(CLAIM, good).outcome is Outcome.REPRODUCED
    bad = {
        "main": {"test_acc": 0.1, "norm": 3.0, "theory": {"norm": 1.42}},
        "other": {"test_acc": 0.1},
    }
    assert verdict(CLAIM, bad).outcome is Outcome.CONTRADICTED
    # a failed run is never reported as reproduced, whatever the other numbers say
    failed = dict(good, other={"failed": True, "error": "boom"})
    v = verdict(CLAIM, failed)
    assert v.outcome is Outcome.INCONCLUSIVE and v.reasons[0].why is Why.RUN_FAILED
    assert "boom" in v.reasons[0].detail
    # a missing key fails its check and says which
    missing = {"main": {"test_acc": 1.0, "theory": {"norm": 1.0}}, "other": {"test_acc": 2.0}}
    v = verdict(CLAIM, missing)
    assert v.outcome is Outcome.PARTIAL and "missing 'norm'" in v.checks[1].detail
    # NaN-like values never pass
    nan = {
        "main": {"test_acc": None, "norm": 1.42, "theory": {"norm": 1.42}},
        "other": {"test_acc": 2.0},
    }
    assert [c.passed for c in verdict(CLAIM, nan).checks] == [False, True, False]


def test_checks_report_value_and_threshold():
    s = {
        "main": {"test_acc": 0.995, "norm": 1.40, "theory": {"norm": 1.42}},
        "other": {"test_acc": 1.3},
    }
    acc, norm, beat = verdict(CLAIM, s).checks
    assert acc.name == "accuracy-is-high" and acc.description == "accuracy is high"
    assert (acc.value, acc.threshold, acc.passed) == (0.995, 0.99, True)
    assert norm.value == pytest.approx(0.02 / 1.42) and norm.threshold == 0.05
    assert beat.value == 1.3 and beat.threshold == pytest.approx(0.995 + 0.3)
    ratio = Ratio("falls 5x", "a", "b", 0.2, name="falls")
    out = ratio.evaluate({"main": {"a": 1.0, "b": 10.0}})
    assert (out["name"], out["value"], out["threshold"], out["passed"]) == ("falls", 0.1, 0.2, True)
    assert not ratio.evaluate({"main": {"a": 3.0, "b": 10.0}})["passed"]
    assert not ratio.evaluate({"main": {"a": -1.0, "b": -10.0}})["passed"]  # both must be > 0
    assert "missing 'b'" in ratio.evaluate({"main": {"a": 1.0}})["detail"]
    kind = Equals("collapse type is type-I", "collapse_type", "type-I")
    assert kind.evaluate({"main": {"collapse_type": "type-I"}})["passed"]
    out = kind.evaluate({"main": {"collapse_type": "none"}})
    assert (out["value"], out["threshold"], out["passed"]) == ("none", "type-I", False)
    cert = Equals("bound holds", ("c.applies", "c.holds.nc1"), True)
    assert cert.evaluate({"main": {"c": {"applies": True, "holds": {"nc1": True}}}})["passed"]
    assert not cert.evaluate({"main": {"c": {"applies": True, "holds": {"nc1": None}}}})["passed"]
    assert not cert.evaluate({"main": {"c": {"applies": False}}})["passed"]
    with pytest.raises(ConfigError, match="unknown check operator"):
        Check("x", "a", "=>", 1.0)


def test_lookup_paths():
    s = {"main": {"a": {"b": [1, 2, 3]}}, "x": {"v": 5}}
    assert lookup(s, "a.b.1") == 2 and lookup(s, "x:v") == 5
    with pytest.raises(KeyError):
        lookup(s, "a.c")


# --- sweeps ---------------------------------------------------------------------------------------


def test_grid_expansion_and_errors(tmp_path):
    g = parse_grid(
        {
            "experiment": "demo",
            "set": {"train.epochs": 1},
            "axes": {"train.lr": [1e-3, 2e-3], "train.weight_decay": {"logspace": [-4, -2, 3]}},
            "seed": [0, 1],
        }
    )
    assert len(g.points()) == 2 * 3 * 2
    assert g.axes["train.weight_decay"] == pytest.approx([1e-4, 1e-3, 1e-2])
    with pytest.raises(ConfigError, match="unknown key 'lrr'.*valid keys: seed, seeds"):
        parse_grid({"experiment": "demo", "axes": {"lrr": [1]}})
    with pytest.raises(ConfigError, match="axis 'train.lr' is empty"):
        parse_grid({"experiment": "demo", "axes": {"train.lr": []}})
    with pytest.raises(ConfigError, match="at least one axis"):
        parse_grid({"experiment": "demo"})
    with pytest.raises(ConfigError, match="invalid value for 'model.width'"):
        parse_grid({"experiment": "demo", "axes": {"model.width": ["wide"]}})
    with pytest.raises(ConfigError, match="unknown experiment"):
        parse_grid({"experiment": "nope", "axes": {"train.lr": [1]}})
    (tmp_path / "g.toml").write_text('experiment = "demo"\n[axes.model]\nx = [1]\n')
    with pytest.raises(ConfigError, match="unknown key 'model.x'"):
        load_grid(tmp_path / "g.toml")


TINY = """
experiment = "demo"
[set]
"train.epochs" = 2
"model.width" = 16
"model.depth" = 1
log_every = 1
[axes]
"train.lr" = [1e-3, 1e-2]
seed = [0, 1]
"""


def _csv(path):
    import csv

    with open(path) as f:
        return [
            {k: v for k, v in r.items() if k not in ("run_dir", "seconds")}
            for r in csv.DictReader(f)
        ]


def run_cli(args, capsys=None):
    try:
        main(args)
        code = 0
    except SystemExit as exc:
        code = exc.code or 0
    return code


def test_nclab_figures_0_skips_the_figures_and_nothing_else(tmp_path, monkeypatch):
    """``NCLAB_FIGURES=0``: the run's summary is the same, without figures."""
    from nclab.reproduce.backends import Job, execute

    over = {"train.epochs": 2, "model.width": 16, "model.depth": 1, "log_every": 1}
    (drawn,) = execute([Job.make("demo", None, tmp_path / "a", over)], workers=1, progress=False)
    monkeypatch.setenv("NCLAB_FIGURES", "0")
    (bare,) = execute([Job.make("demo", None, tmp_path / "b", over)], workers=1, progress=False)
    assert drawn["figures"] and all(Path(f).is_file() for f in drawn["figures"])
    assert "figures" not in bare and not list((tmp_path / "b").rglob("*.png"))
    same = ("seconds", "figures", "versions")
    assert {k: v for k, v in bare.items() if k not in same} == {
        k: v for k, v in drawn.items() if k not in same
    }


def test_ray_runs_one_job_like_local(tmp_path):
    """The short Ray check of the default run: one tiny job, the same summary as inline."""
    pytest.importorskip("ray")
    from nclab.reproduce.backends import Job, execute

    over = {"train.epochs": 2, "model.width": 16, "model.depth": 1, "log_every": 1}
    local, ray = (
        execute(
            [Job.make("demo", None, tmp_path / name, over)], backend=b, workers=1, progress=False
        )[0]
        for name, b in (("local", "local"), ("ray", "ray"))
    )
    assert not local.get("failed") and not ray.get("failed"), (local, ray)
    assert ray["test_acc"] == local["test_acc"] and ray["layers"] == local["layers"]


def test_one_run_left_trains_its_seeds_on_the_spare_workers(tmp_path):
    """A reproduce with one run to make and 2 workers trains that run's seeds side by side (its
    config's ``workers``, bookkeeping), with the numbers of one worker."""
    from nclab.reproduce.backends import Job, execute

    over = {"train.epochs": 2, "model.width": 16, "model.depth": 1, "log_every": 1}
    runs = {
        w: execute([Job.make("demo", None, tmp_path / f"w{w}", over, 2)], workers=w, progress=False)
        for w in (1, 2)
    }
    assert not runs[1][0].get("failed") and not runs[2][0].get("failed"), runs
    config = {w: (tmp_path / f"w{w}" / "config.toml").read_text() for w in (1, 2)}
    assert "workers = 1" in config[1] and "workers = 2" in config[2]
    seeds = {w: [s["test_acc"] for s in runs[w][0]["per_seed"]] for w in (1, 2)}
    assert seeds[1] == seeds[2] and len(seeds[1]) == 2


def test_one_worker_runs_its_jobs_with_the_threads_asked(tmp_path, monkeypatch):
    """workers=1 runs inline with ``threads`` torch threads (left at torch's default, two fills
    side by side on two cores spin-waited in each other's OpenMP regions); one run left with a
    spare worker keeps its own setting, its units on the workers."""
    import torch

    from nclab.reproduce import backends

    seen = []

    def fake(job, threads=1, unit_workers=1):
        with backends.run_threads(threads):
            seen.append((torch.get_num_threads(), threads, unit_workers))
        return {"ok": True}

    monkeypatch.setattr(backends, "run_job", fake)
    job = backends.Job.make("demo", None, tmp_path / "a", {}, 2)
    backends.execute([job], workers=1, threads=1, progress=False)
    backends.execute([job], workers=2, threads=1, progress=False)
    backends.execute([job], workers=1, threads=2, progress=False)  # one long run alone
    assert seen[0] == (1, 1, 1)
    assert seen[1][1:] == (None, 2)
    assert seen[2] == (2, 2, 1)
    with pytest.raises(ConfigError, match="threads must be >= 0"):
        backends.execute([job], workers=1, threads=-1, progress=False)
    # nclab reproduce --threads reaches the runs
    args = ["reproduce", "tirer-bruna/fig2-*", "--workers", "1", "--threads", "2", "--no-ledger"]
    assert run_cli([*args, "--out", str(tmp_path / "r")]) == 0
    assert {t for t, _, _ in seen[3:]} == {2} and len(seen) > 3


@pytest.mark.slow
def test_sweep_local_equals_ray(tmp_path, capsys):
    pytest.importorskip("ray")
    (tmp_path / "g.toml").write_text(TINY)
    assert (
        run_cli(
            ["sweep", str(tmp_path / "g.toml"), "--out", str(tmp_path / "local"), "--workers", "2"]
        )
        == 0
    )
    assert (
        run_cli(
            [
                "sweep",
                str(tmp_path / "g.toml"),
                "--out",
                str(tmp_path / "ray"),
                "--backend",
                "ray",
                "--workers",
                "2",
            ]
        )
        == 0
    )
    local, ray = _csv(tmp_path / "local" / "sweep.csv"), _csv(tmp_path / "ray" / "sweep.csv")
    assert len(local) == 4 and local == ray
    assert all(r["failed"] == "False" for r in local)
    assert any((tmp_path / "local" / "figures").glob("test_acc.png"))
    # re-running is incremental: nothing is recomputed, the same table comes out
    stamp = (tmp_path / "local" / "runs").stat().st_mtime
    assert run_cli(["sweep", str(tmp_path / "g.toml"), "--out", str(tmp_path / "local")]) == 0
    assert _csv(tmp_path / "local" / "sweep.csv") == local
    del stamp


def test_failed_run_is_recorded_and_sweep_goes_on(tmp_path, monkeypatch):
    import nclab.experiments.demo.train as demo_train

    real = demo_train.train

    def train(cfg, unit, run_dir, context):  # the second grid point fails while training
        if cfg.train.lr > 5e-3:
            raise RuntimeError("Invalid learning rate for this run")
        return real(cfg, unit, run_dir, context)

    monkeypatch.setattr(demo_train, "train", train)
    (tmp_path / "g.toml").write_text(TINY.replace("seed = [0, 1]", "seed = [0]"))
    assert (
        run_cli(["sweep", str(tmp_path / "g.toml"), "--out", str(tmp_path / "s"), "--workers", "1"])
        == 0
    )
    rows = _csv(tmp_path / "s" / "sweep.csv")
    assert [r["failed"] for r in rows] == ["False", "True"]
    assert "Invalid learning rate" in rows[1]["error"]
    err = next((tmp_path / "s" / "runs").glob("0001-*/error.txt")).read_text()
    assert "Traceback" in err


def test_a_grid_point_no_run_can_use_fails_before_any_work(tmp_path, capsys):
    (tmp_path / "g.toml").write_text(TINY.replace('lr" = [1e-3, 1e-2]', 'lr" = [1e-3, -1.0]'))
    args = ["sweep", str(tmp_path / "g.toml"), "--out", str(tmp_path / "s"), "--workers", "1"]
    assert run_cli(args) == 2
    assert "train.lr > 0" in capsys.readouterr().err
    assert not (tmp_path / "s" / "runs").exists()


# --- reproduce end to end on a fabricated claim ------------------------------------------------------


def test_reproduce_report_on_a_demo_claim(tmp_path, monkeypatch, capsys):
    from nclab.experiments.protocol import PaperSetting
    from nclab.reproduce import judge, registry, runner

    claim = Claim(
        id="demo/accuracy",
        paper="nclab",
        where="demo",
        claim="The demo MLP learns digits.",
        runs={
            "main": RunSpec(
                "demo",
                "tiny",
                "tiny",
                set={"train.epochs": 15, "model.width": 32},
                paper="paper-tiny",
            )
        },
        measured={"test accuracy": "test_acc"},
        paper_values={"test accuracy": "≥ 0.5"},
        checks=[
            Check("test accuracy above 50 %", "test_acc", ">=", 0.5),
            Check("impossible", "test_acc", ">", 2.0),
        ],
    )
    gpu_claim = Claim(
        id="demo/gpu",
        paper="nclab",
        where="demo",
        claim="needs a GPU",
        runs={"main": RunSpec("demo", None, "paper-tiny", full_needs_gpu=True)},
        measured={},
        checks=[Check("x", "test_acc", ">=", 0)],
    )
    demo = get_experiment("demo")
    monkeypatch.setitem(demo.presets, "tiny", {"train.epochs": 3})
    monkeypatch.setitem(demo.presets, "paper-tiny", {"train.epochs": 30})
    monkeypatch.setattr(demo, "paper", {"paper-tiny": PaperSetting(unstated=("model.width",))})
    smaller = "model.width 32 (paper preset: 128), train.epochs 15 (paper: 30)"
    monkeypatch.setattr(registry, "all_claims", lambda: [claim, gpu_claim])
    res = runner.reproduce([], mode="quick", out=tmp_path, workers=1, progress=False)
    by_id = {r.id: r for r in res}
    # the quick preset deviates from the paper's in every setting the check depends on (all, by
    # default): its failure is inconclusive, never evidence against the paper
    assert by_id["demo/accuracy"].outcome is Outcome.INCONCLUSIVE
    assert by_id["demo/gpu"].outcome is Outcome.NOT_RUN
    assert by_id["demo/gpu"].scales["full"]["reasons"][0]["why"] == Why.NEEDS_GPU
    html = (tmp_path / "report.html").read_text()
    assert "data:image/png;base64," in html and "http" not in html.replace("http-equiv", "")
    md = (tmp_path / "report.md").read_text()
    assert "demo/accuracy" in md and "inconclusive" in md
    # the ladder says the quick run was a smaller instance (the verdict no longer repeats it:
    # the headline names the scale); each check shows its seeds, value and threshold per scale
    assert by_id["demo/accuracy"].instance == f"smaller: {smaller}"
    assert f"| quick | demo tiny | smaller instance: {smaller} | 3 | this run (" in md
    assert "**inconclusive at quick size (impossible: deviation)**" in md
    assert "| `impossible` — impossible | statement | ? untestable 0/3 seeds: " in md
    assert "(threshold 2) [deviation: model.width 32 (paper preset: 128)" in md
    assert f"<small>smaller instance: {smaller}</small>" in html and "(threshold 2)" in html
    # re-rendering from the directory gives the same verdicts
    again = judge.judge_dir(tmp_path)
    assert [r.outcome for r in again] == [r.outcome for r in res]
    # the command repeats --seeds when the reproduce was given it
    assert by_id["demo/accuracy"].command == "nclab reproduce 'demo/accuracy' --quick"
    manifest = json.loads((tmp_path / judge.MANIFEST).read_text())
    (tmp_path / judge.MANIFEST).write_text(json.dumps({**manifest, "seeds": 3}))
    cmds = {r.id: r.command for r in judge.judge_dir(tmp_path)}
    assert cmds["demo/accuracy"] == "nclab reproduce 'demo/accuracy' --quick --seeds 3"
    assert cmds["demo/gpu"].startswith("nclab reproduce 'demo/gpu' --full --seeds 3")
    # nclab report --json: each claim's checks carry name, value, threshold and passed
    capsys.readouterr()
    assert run_cli(["report", str(tmp_path), "--json"]) == 0
    rows = {r["id"]: r for r in json.loads(capsys.readouterr().out)}
    checks = rows["demo/accuracy"]["checks"]
    assert [c["name"] for c in checks] == ["test-accuracy-above-50", "impossible"]
    assert {"name", "value", "threshold", "passed"} <= set(checks[0])
    assert checks[1]["threshold"] == 2.0 and checks[1]["passed"] is False
    assert checks[0]["value"] == by_id["demo/accuracy"].measured["test accuracy"]["mean"]
    assert rows["demo/gpu"]["instance"] == (
        "paper setting; not stated in the paper: model.width 128, seeds 3"
    )


# --- resume -----------------------------------------------------------------------------------------


def test_resume_after_kill_matches_uninterrupted(tmp_path):
    """Kill a real `nclab run` mid-way, resume it, and compare with an uninterrupted run."""
    args = [
        "--set",
        "train.epochs=100",
        "--set",
        "checkpoint_every=10",
        "--set",
        "log_every=10",
        "--set",
        "model.width=32",
    ]
    env = dict(os.environ, NCLAB_PROGRESS="0", OMP_NUM_THREADS="1")
    ref_dir, cut_dir = tmp_path / "ref", tmp_path / "cut"
    subprocess.run(
        [sys.executable, "-m", "nclab", "run", "demo", *args, "--out", str(ref_dir)],
        check=True,
        env=env,
        capture_output=True,
    )
    proc = subprocess.Popen(
        [sys.executable, "-m", "nclab", "run", "demo", *args, "--out", str(cut_dir)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.time() + 120
    while not (cut_dir / "checkpoint.pt").exists() and time.time() < deadline:
        time.sleep(0.01)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert not (cut_dir / "summary.json").exists(), "the run finished before it was killed"
    subprocess.run(
        [sys.executable, "-m", "nclab", "run", "--resume", str(cut_dir)],
        check=True,
        env=env,
        capture_output=True,
    )
    ref = json.loads((ref_dir / "summary.json").read_text())
    cut = json.loads((cut_dir / "summary.json").read_text())
    assert cut["layers"] == ref["layers"] and cut["test_acc"] == ref["test_acc"]
    logged = [json.loads(x)["epoch"] for x in (cut_dir / "metrics.jsonl").read_text().splitlines()]
    assert logged == list(range(10, 101, 10))


def test_finished_run_directory_is_not_overwritten(tmp_path):
    demo = get_experiment("demo")
    cfg = demo.config(None, {"train.epochs": 1, "model.width": 8})
    first = run_experiment(demo, cfg, tmp_path)
    assert run_experiment(demo, cfg, tmp_path)["test_acc"] == first["test_acc"]
    from nclab.errors import RunError

    with pytest.raises(RunError, match="another config"):
        run_experiment(demo, cfg.replace(model={"width": 9}), tmp_path)


def test_unfinished_run_of_another_config_is_refused(tmp_path):
    """A run directory with finished units of one config (its run summary not written yet) must
    not lend them to another config: a preset changed between sessions resolves to a new config in
    the same directory."""
    from nclab.errors import RunError

    demo = get_experiment("demo")
    cfg = demo.config(None, {"train.epochs": 1, "model.width": 8})
    run_experiment(demo, cfg, tmp_path, seeds=2)
    (tmp_path / "summary.json").unlink()  # as if stopped before the run's summary
    assert all((tmp_path / "units" / u / "summary.json").is_file() for u in ("seed-0", "seed-1"))
    with pytest.raises(RunError, match=r"unfinished run of another config \(model.width differ"):
        run_experiment(demo, cfg.replace(model={"width": 9}), tmp_path, seeds=2)
    # the same config resumes, its finished units kept (how it is carried out may change:
    # threads, the number of seeds)
    kept = (tmp_path / "units" / "seed-0" / "summary.json").stat().st_mtime_ns
    run_experiment(demo, cfg.replace(threads=2), tmp_path, seeds=3)
    assert (tmp_path / "units" / "seed-0" / "summary.json").stat().st_mtime_ns == kept
    assert (tmp_path / "units" / "seed-2" / "summary.json").is_file()


def test_execute_sets_a_stale_run_directory_aside(tmp_path, capsys):
    """`nclab reproduce` / `sweep` re-run into their own directories: one holding a run of
    another config (the preset changed since) is moved aside and the job runs afresh."""
    from nclab.reproduce import backends
    from nclab.reproduce.backends import Job

    out = tmp_path / "run"
    old = {"train.epochs": 1, "model.width": 8}
    (first,) = backends.execute([Job.make("demo", None, out, old)], workers=1, progress=False)
    assert backends.set_aside_stale(Job.make("demo", None, out, old)) is None  # same config
    new = {"train.epochs": 1, "model.width": 9}
    (second,) = backends.execute([Job.make("demo", None, out, new)], workers=1, progress=False)
    assert "moved to run.stale-" in capsys.readouterr().err
    (stale,) = tmp_path.glob("run.stale-*")
    assert json.loads((stale / "summary.json").read_text())["test_acc"] == first["test_acc"]
    assert "width = 9" in (out / "config.toml").read_text()
    assert not second.get("failed")
    # a directory another process is still training is not moved from under it: its job fails
    import fcntl

    from nclab.experiments.runner import LOCK

    wide = {"train.epochs": 1, "model.width": 10}
    (out / "summary.json").unlink()  # as if the width-9 run were still going
    with open(out / LOCK, "a+") as other:
        fcntl.flock(other, fcntl.LOCK_EX | fcntl.LOCK_NB)
        assert backends.set_aside_stale(Job.make("demo", None, out, wide)) is None
        (third,) = backends.execute([Job.make("demo", None, out, wide)], workers=1, progress=False)
    assert third["failed"] and "another config" in third["error"]
    assert "width = 9" in (out / "config.toml").read_text()


def test_a_reproduce_judges_what_it_asked_when_another_call_shares_its_out(tmp_path, monkeypatch):
    """Two `nclab reproduce` calls with the same --out (the ledger's fill streams share their
    runs that way): the second rewrites reproduce.json while the first trains; the first must
    still judge and print its own claims, not the second's."""
    from nclab.reproduce import registry, runner

    def another_call_starts(*args, **kwargs):
        other = registry.select(["jacot/fig1-mlp"])
        runner._write_manifest(tmp_path, "medium", None, other, None, False, {}, {})
        return []

    monkeypatch.setattr(runner, "execute", another_call_starts)
    results = runner.reproduce(["tirer-bruna/fig2-bias"], out=tmp_path, progress=False)
    assert [r.id for r in results] == ["tirer-bruna/fig2-bias"]
    assert "jacot/fig1-mlp" in (tmp_path / "reproduce.json").read_text()  # the other call's


def test_a_run_directory_another_process_is_training_is_not_trained_twice(tmp_path):
    """Two processes training one run directory (two reproduce calls sharing --out) would write
    each other's checkpoints: the second is refused while the first holds the directory."""
    import fcntl

    from nclab.errors import RunError
    from nclab.experiments.runner import LOCK

    demo = get_experiment("demo")
    cfg = demo.config(None, {"train.epochs": 1, "model.width": 8})
    tmp_path.mkdir(exist_ok=True)
    with open(tmp_path / LOCK, "a+") as other:  # another process's hold (flock is per open file)
        fcntl.flock(other, fcntl.LOCK_EX | fcntl.LOCK_NB)
        with pytest.raises(RunError, match="being run by another process"):
            run_experiment(demo, cfg, tmp_path)
        failed = run_experiment(demo, cfg, tmp_path, record_errors=True)
        assert failed["failed"] and "another process" in failed["error"]
        assert not (tmp_path / "summary.json").exists()
    assert run_experiment(demo, cfg, tmp_path)["test_acc"] is not None  # released: it runs
