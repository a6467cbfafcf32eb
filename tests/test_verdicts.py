"""The verdict rules (nclab.verdicts, nclab.reproduce.outcomes) on small fixtures, one per rule:
an invalid seed, a deviation a check depends on, a run too short for a check, two readings that
split, a check beyond the paper, the same record at two rungs; and "contradicted" only on most
valid seeds and the mean."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from nclab.experiments.protocol import Validity
from nclab.reproduce.checks import Check, beyond, sanity
from nclab.reproduce.instance import Deviation
from nclab.reproduce.outcomes import Scene, verdict
from nclab.reproduce.registry import Claim, RunSpec
from nclab.verdicts import (
    Diagnosis,
    DiagnosisKind,
    Judged,
    Outcome,
    Reason,
    Status,
    Why,
    combine_readings,
    decide,
    derived_diagnosis,
)

FITS = Validity("train_acc", ">=", 0.99, "a network that does not fit says nothing of collapse")


def claim(*checks, validity=None, **kw) -> Claim:
    return Claim(
        id="t/c",
        paper="P",
        where="Thm 1",
        claim="NC1 falls. More words.",
        runs={"main": RunSpec("demo", "q", "f", validity=validity)},
        measured={},
        checks=list(checks),
        check_paths=False,
        **kw,
    )


def seeds(*rows) -> dict:
    """A run of len(rows) seeds, each row a seed's summary; the mean of every number."""
    keys = rows[0].keys()
    mean = {k: sum(r[k] for r in rows) / len(rows) for k in keys}
    return {"main": {**mean, "seeds": list(range(len(rows))), "per_seed": list(rows)}}


NC1 = Check("NC1 below 0.1", "nc1", "<=", 0.1, name="nc1", depends_on=())


def test_holds_fails_mixed_on_faithful_valid_runs():
    c = claim(NC1)
    assert (
        verdict(c, seeds({"nc1": 0.01}, {"nc1": 0.02}, {"nc1": 0.03})).outcome is Outcome.REPRODUCED
    )
    # fails on the mean and on 2 of 3 seeds: contradicted (most seeds and the mean)
    v = verdict(c, seeds({"nc1": 0.01}, {"nc1": 0.5}, {"nc1": 0.6}))
    assert v.outcome is Outcome.CONTRADICTED and v.checks[0].status is Status.FAILS
    assert v.reasons[0].why is Why.FAILS and v.reasons[0].text() == "nc1 fails 2/3 seeds"
    # fails on 1 of 3 seeds only: the seeds split -> partial, never contradicted
    v = verdict(c, seeds({"nc1": 0.01}, {"nc1": 0.02}, {"nc1": 0.6}))
    assert v.outcome is Outcome.PARTIAL and v.checks[0].status is Status.MIXED
    assert v.reasons[0].why is Why.SEEDS_SPLIT


def test_an_invalid_seed_is_never_judged():
    """A seed that misses its run's validity (it does not fit its training set) is reported with
    why and left out: the check is judged on the valid seeds; all invalid -> inconclusive."""
    c = claim(NC1, validity=(FITS,))
    rows = [
        {"nc1": 0.01, "train_acc": 1.0},
        {"nc1": 0.02, "train_acc": 1.0},
        {"nc1": 0.9, "train_acc": 0.47},  # did not train: its NC1 says nothing
    ]
    scene = Scene("full", {}, {"main": (FITS,)})
    v = verdict(c, seeds(*rows), scene)
    assert v.outcome is Outcome.REPRODUCED, v.reasons  # the mean (0.31) mixes in seed 2
    assert v.invalid == ["main: train_acc >= 0.99 fails on seed 2 (0.47): " + FITS.why]
    assert v.checks[0].per_seed == [True, True, None]
    assert any(r.why is Why.INVALID for r in v.reasons)
    bad = [{"nc1": x, "train_acc": 0.5} for x in (0.5, 0.6, 0.02)]  # none fits
    v = verdict(c, seeds(*bad), scene)
    assert v.outcome is Outcome.INCONCLUSIVE
    assert v.checks[0].status is Status.UNTESTABLE and v.checks[0].blocked.why is Why.INVALID
    assert derived_diagnosis(v.reasons).kind is DiagnosisKind.INVALID
    # without the validity condition the same numbers would contradict the paper
    assert verdict(c, seeds(*bad)).outcome is Outcome.CONTRADICTED


def test_a_deviation_the_check_depends_on_makes_a_failure_inconclusive():
    deviates = {"main": (Deviation("train.epochs", 4800, 100000),)}
    bad = seeds({"nc1": 0.5}, {"nc1": 0.6}, {"nc1": 0.7})
    on_epochs = Check("NC1 below 0.1", "nc1", "<=", 0.1, name="nc1", depends_on=("train.*",))
    v = verdict(claim(on_epochs), bad, Scene("medium", deviates))
    assert v.outcome is Outcome.INCONCLUSIVE
    (r,) = v.reasons
    assert r.why is Why.DEVIATION and r.detail == "train.epochs 4800 (paper: 100000)"
    assert derived_diagnosis(v.reasons).kind is DiagnosisKind.DEVIATES
    # a check that does not depend on the length is evidence at that scale
    on_data = Check("NC1 below 0.1", "nc1", "<=", 0.1, name="nc1", depends_on=("data.*",))
    assert verdict(claim(on_data), bad, Scene("medium", deviates)).outcome is Outcome.CONTRADICTED
    # by default a check depends on every setting, and "instance" (no preset runs the paper's
    # setting) blocks it unless it says it depends on nothing
    default = Check("NC1 below 0.1", "nc1", "<=", 0.1, name="nc1")
    ours = {"main": (Deviation("instance", "the paper runs none", "—", ""),)}
    assert verdict(claim(default), bad, Scene("full", ours)).outcome is Outcome.INCONCLUSIVE
    assert verdict(claim(on_data), bad, Scene("full", ours)).outcome is Outcome.CONTRADICTED
    assert verdict(claim(NC1), bad, Scene("full", ours)).outcome is Outcome.CONTRADICTED


def test_a_run_too_short_for_a_check_is_inconclusive_below_its_scale():
    long = Check(
        "loss below 1e-3",
        "loss",
        "<=",
        1e-3,
        name="loss",
        depends_on=(),
        min_scale="full",
        scale_why="needs the paper's 5 million steps",
    )
    bad = seeds({"loss": 0.1}, {"loss": 0.2}, {"loss": 0.3})
    v = verdict(claim(long), bad, Scene("medium"))
    assert v.outcome is Outcome.INCONCLUSIVE
    assert v.reasons[0] == Reason(Why.TOO_SMALL, ("loss",), "needs the paper's 5 million steps")
    assert derived_diagnosis(v.reasons).kind is DiagnosisKind.TOO_SHORT
    assert verdict(claim(long), bad, Scene("full")).outcome is Outcome.CONTRADICTED
    with pytest.raises(Exception, match="scale_why"):
        Check("x", "x", "<=", 1.0, min_scale="full")


def test_two_readings_that_split_are_inconclusive_and_both_failing_contradict():
    k_run = Check(
        "λ below the bound with the run's K",
        "ratio_k",
        "<",
        1.0,
        name="bound-run-k",
        of="lambda-bound",
        reading="the experiment's K",
        depends_on=(),
    )
    k_lit = Check(
        "λ below the bound with K = nc^L",
        "ratio_lit",
        "<",
        1.0,
        name="bound-literal",
        of="lambda-bound",
        reading="the theorem's K = nc^L",
        depends_on=(),
    )
    c = claim(k_run, k_lit)
    split = {"main": {"ratio_k": 0.07, "ratio_lit": 3.5}}
    v = verdict(c, split)
    assert v.outcome is Outcome.INCONCLUSIVE
    assert v.reasons[0].why is Why.READINGS and v.reasons[0].checks == ("lambda-bound",)
    assert derived_diagnosis(v.reasons).kind is DiagnosisKind.READINGS_SPLIT
    assert [r.statement for r in v.checks] == ["lambda-bound", "lambda-bound"]
    both = {"main": {"ratio_k": 2.0, "ratio_lit": 3.5}}
    assert verdict(c, both).outcome is Outcome.CONTRADICTED
    held = {"main": {"ratio_k": 0.5, "ratio_lit": 0.5}}
    assert verdict(c, held).outcome is Outcome.REPRODUCED


def test_a_check_beyond_the_paper_never_decides():
    tight = beyond(Check("the bound within a decade", "slack", "<=", 10.0, name="tight"))
    c = claim(NC1, tight)
    v = verdict(c, {"main": {"nc1": 0.01, "slack": 1e4}})
    assert v.outcome is Outcome.REPRODUCED
    assert v.reasons == (Reason(Why.BEYOND, ("tight",), ""),)
    assert v.checks[1].kind == "ours-beyond"
    v = verdict(c, {"main": {"nc1": 0.5, "slack": 1.0}})
    assert v.outcome is Outcome.CONTRADICTED  # the statement decides, the beyond check holds


def test_a_sanity_failure_is_a_bug_not_evidence():
    c = claim(NC1, sanity(Check("identity", "err", "<=", 1e-9, name="identity")))
    v = verdict(c, {"main": {"nc1": 0.01, "err": 0.5}})
    assert v.outcome is Outcome.INCONCLUSIVE and v.reasons[0].why is Why.SANITY
    assert derived_diagnosis(v.reasons).kind is DiagnosisKind.BUG


def test_decide_and_readings_rules():
    ok, bad = Judged("a", Status.HOLDS), Judged("b", Status.FAILS)
    mixed = Judged("c", Status.MIXED)
    blocked = Judged("d", Status.UNTESTABLE, Reason(Why.TOO_SMALL, ("d",)))
    assert decide([ok, mixed])[0] is Outcome.PARTIAL
    assert decide([bad, blocked])[0] is Outcome.CONTRADICTED  # one fails on valid runs
    assert decide([ok, blocked])[0] is Outcome.INCONCLUSIVE
    assert decide([mixed, blocked])[0] is Outcome.PARTIAL
    assert decide([ok], run_failed="boom")[0] is Outcome.INCONCLUSIVE
    assert combine_readings("s", [ok, bad]).status is Status.UNTESTABLE
    assert combine_readings("s", [bad, bad]).status is Status.FAILS
    assert combine_readings("s", [bad, mixed]).status is Status.MIXED
    assert combine_readings("s", [bad, blocked]).status is Status.UNTESTABLE


def test_a_declared_diagnosis_by_scale_and_outcome():
    d = Diagnosis(DiagnosisKind.TOO_SHORT, "needs 5 M steps", ("feature-collapse no-wd-fig3",))
    p = Diagnosis(DiagnosisKind.PAPER_FAILS, "σ3 = 0.18 as in the authors' notebook")
    c = claim(NC1, diagnosis={"medium": d, "*:contradicted": p})
    assert c.diagnosis_at("medium", "inconclusive") is d
    assert c.diagnosis_at("full", "contradicted") is p
    assert c.diagnosis_at("full", "partial") is None
    assert c.sentence == "NC1 falls."
    with pytest.raises(Exception, match="diagnosis keys"):
        claim(NC1, diagnosis={"paper": d})


def test_the_same_record_at_two_rungs_is_one_scale(tmp_path, monkeypatch):
    """A quick rung judged on the very record of its full rung is "not run: same run as full":
    one record is one scale."""
    from nclab.evidence import Ledger
    from nclab.experiments.catalog import get_experiment
    from nclab.reproduce.judge import judge_claim

    demo = get_experiment("demo")
    monkeypatch.setitem(demo.presets, "same", {"train.epochs": 2})
    c = Claim(
        id="t/same",
        paper="P",
        where="x",
        claim="y",
        runs={"main": RunSpec("demo", "same", "same")},
        measured={},
        checks=[Check("acc", "test_acc", ">=", 0.0, name="acc", depends_on=())],
        check_paths=False,
    )
    root = tmp_path / "ledger"
    folder = root / "runs" / "demo" / "same-s1"
    folder.mkdir(parents=True)
    record = {
        "experiment": "demo",
        "preset": "same",
        "overrides": {},
        "seeds": [0],
        "config": demo.config("same").to_dict(),
        "summary": {"test_acc": 0.9},
        "provenance": {"commit": "ab" * 20, "dirty": False, "started": "2026-12-01T00:00:00Z"},
    }
    (folder / "20261201T000000Z-1.json").write_text(json.dumps(record))
    res = judge_claim(c, Ledger(root))
    assert res.scales["full"]["outcome"] == "reproduced"
    quick = res.scales["quick"]
    assert quick["outcome"] == "not run" and quick["same_as"] == "full"
    assert quick["reasons"][0]["why"] == Why.SAME_RUN
    assert "quick size: same run as full size" not in res.headline  # said in the ladder only
    assert res.headline == "reproduced at full size"
    assert Path(quick["runs"]["main"]) == Path(res.scales["full"]["runs"]["main"])
