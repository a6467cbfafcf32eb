"""Every registered check can fail, every summary path a claim reads exists, and every summary
validates against its experiment's declared type (:mod:`nclab.experiments.schema`).

The summaries come from the quick runs of every claim: each check is evaluated on them (no missing
key) and on perturbed copies of them, changing only the values the check declares it reads, until
it fails. The default run uses the quick presets at each experiment's smoke rung, declared beside
its presets (``Experiment(smoke=Smoke(...))``: training cut short, the same code paths and the same
summary structure, two seeds at most; about two minutes on 2 cores); ``-m slow`` repeats both tests
on a full quick ``reproduce`` (about 15 minutes on 2 cores). ``NCLAB_TEST_CLAIMS`` (claim id globs,
comma-separated) narrows every test here to those claims: what a new experiment's author runs, and
what ``tests/test_adding_an_experiment.py`` runs on the tree with its toy experiment.
"""

from __future__ import annotations

import copy
import json
import math
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from nclab.experiments import get_experiment
from nclab.experiments.resnet_ufm.schema import UfmRun
from nclab.experiments.runner import FIGURES_ENV
from nclab.experiments.schema import read_summary_versioned, validate_summary
from nclab.reproduce import Equals, lookup
from nclab.reproduce.backends import Job, execute
from nclab.reproduce.judge import MANIFEST, read_summaries
from nclab.reproduce.plan import plan
from nclab.reproduce.registry import select
from nclab.reproduce.runner import reproduce
from nclab.reproduce.summaries import every, resolve_every
from nclab.verdicts import Why

#: the claims tested here: every registered one, or those ``NCLAB_TEST_CLAIMS`` names
CLAIMS = select(
    [p.strip() for p in os.environ.get("NCLAB_TEST_CLAIMS", "").split(",") if p.strip()]
)
#: the checks of claims with a quick run (a GPU-only claim's are tested through the claim it
#: reuses them from: test_gpu_only_claims_reuse_tested_checks)
CHECKS = [(c, chk) for c in CLAIMS if c.runnable("quick") for chk in c.checks]


def smoke_job(job: Job) -> Job:
    """``job`` at its experiment's smoke rung (:class:`~nclab.experiments.protocol.Smoke`,
    declared beside its presets): its overrides for the job's preset on top of the job's own, and
    at most the rung's seeds (two keep the structure of a summary over seeds: mean, std)."""
    smoke = get_experiment(job.experiment).smoke
    overrides = dict(job.overrides) | smoke.overrides_for(job.preset)
    return Job.make(job.experiment, job.preset, job.run_dir, overrides, min(job.seeds, smoke.seeds))


@pytest.fixture(scope="session")
def short_dir(tmp_path_factory) -> Path:
    """Where :func:`short_summaries` runs (``runs/<experiment>/<preset>-s<seeds>/``)."""
    return tmp_path_factory.mktemp("reproduce-short")


@pytest.fixture(scope="session")
def short_summaries(short_dir) -> dict[str, dict[str, dict[str, Any]]]:
    """claim id -> alias -> the summary of its quick run at its experiment's smoke rung."""
    out = short_dir
    jobs, by_claim, _ = plan(CLAIMS, "quick", out, None, gpu=False)
    short = {job: smoke_job(job) for job in jobs}
    runs = list(short.values())
    # the first run of each experiment draws its figures; the others skip them (NCLAB_FIGURES=0:
    # a third of this fixture's time), as the summaries are what these tests read
    first = {j.experiment: j for j in reversed(runs)}
    drawn = [j for j in runs if first[j.experiment] is j]
    results = dict(zip(drawn, execute(drawn, workers=2, progress=False), strict=True))
    rest = [j for j in runs if j not in results]
    os.environ[FIGURES_ENV] = "0"
    try:
        results |= dict(zip(rest, execute(rest, workers=2, progress=False), strict=True))
    finally:
        del os.environ[FIGURES_ENV]
    assert not any(results[j].get("figures") for j in rest)
    failed = [j.run_dir for j, r in results.items() if r.get("failed")]
    assert not failed, f"shortened quick runs failed: {failed}"
    return {
        cid: {alias: results[short[job]] for alias, job in aliases.items()}
        for cid, aliases in by_claim.items()
    }


@pytest.fixture(scope="session")
def quick_dir(tmp_path_factory) -> Path:
    """Where :func:`quick_summaries` runs."""
    return tmp_path_factory.mktemp("reproduce-quick")


@pytest.fixture(scope="session")
def quick_summaries(quick_dir) -> dict[str, dict[str, dict[str, Any]]]:
    """claim id -> alias -> the summary its quick run wrote (each claim's runs, run once)."""
    out = quick_dir
    results = reproduce([c.id for c in CLAIMS], mode="quick", out=out, workers=2, progress=False)
    failed = [
        r.id for r in results if any(x.why in (Why.RUN_FAILED, Why.SANITY) for x in r.reasons)
    ]
    assert not failed, f"quick runs failed: {failed}"
    manifest = json.loads((out / MANIFEST).read_text())
    return {cid: read_summaries(jobs)[0] for cid, jobs in manifest["jobs"].items()}


#: where the summaries come from: shortened quick runs by default, the real ones with -m slow
SOURCES = [
    pytest.param("short_summaries", id="short"),
    pytest.param("quick_summaries", id="quick", marks=pytest.mark.slow),
]
#: the same, with the directory they were run in
DIRS = [
    pytest.param(("short_summaries", "short_dir"), id="short"),
    pytest.param(("quick_summaries", "quick_dir"), id="quick", marks=pytest.mark.slow),
]


def assign(summaries: dict, path: str, value: Any) -> None:
    """Set the value at ``alias:dotted.path`` (which must exist; keyed entries as lookup finds
    them); over every entry (``name[*]``), a list sets one value per entry, anything else sets
    every entry's."""
    alias, places = resolve_every(summaries, path)
    values = value if every(path) and isinstance(value, list) else [value] * len(places)
    for keys, v in zip(places, values, strict=True):
        node: Any = summaries[alias]
        *parents, last = keys
        for k in parents:
            node = node[k]
        if not isinstance(node, list):
            assert last in node, path
        node[last] = v


def perturbations(v: Any) -> Iterator[Any]:
    """Finite values of the same type as ``v``, from small changes to large ones."""
    if isinstance(v, bool):
        yield not v
    elif isinstance(v, int | float):
        x = float(v)
        for c in (2 * x, x / 2, -x, x + 1, x - 1, 0.0, 1.0, -1.0, 1e9, -1e9, 1e-9):
            if math.isfinite(c):
                yield type(v)(c) if isinstance(v, int) and c.is_integer() else c
    elif isinstance(v, str):
        yield from (v + "-perturbed", "none", "type-I", "type-II", "type-III")
    elif isinstance(v, list):  # a list value: perturb its first element
        for p in perturbations(v[0]) if v else ():
            yield [p, *v[1:]]


def failing_summary(chk, summaries: dict) -> tuple[str, Any, dict] | None:
    """A copy of ``summaries`` with one value ``chk`` reads changed so that ``chk`` fails."""
    for path in chk.paths():
        for v in perturbations(lookup(summaries, path)):
            trial = copy.deepcopy(summaries)
            assign(trial, path, v)
            if not chk.evaluate(trial)["passed"]:
                return path, v, trial
    return None


def passing_summary(chk, summaries: dict) -> dict | None:
    """A copy of ``summaries`` changed so that ``chk`` passes: an ``Equals`` with every path at
    its expected value, else one value it reads perturbed or set to the check's own target (its
    fixed value, or the value at its ``ref``: a tolerance window no perturbation hits)."""
    if isinstance(chk, Equals):
        trial = copy.deepcopy(summaries)
        for path in chk.paths():
            assign(trial, path, chk.expected)
        return trial if chk.evaluate(trial)["passed"] else None
    targets = [getattr(chk, "value", None)]
    if getattr(chk, "ref", None) is not None:
        targets.append(lookup(summaries, chk.ref))
    for path in chk.paths():
        current = lookup(summaries, path)
        candidates = [*perturbations(current), *(t for t in targets if t is not None)]
        for v in candidates:
            trial = copy.deepcopy(summaries)
            assign(trial, path, v)
            if chk.evaluate(trial)["passed"]:
                return trial
    return None


def _ids(pairs):
    return [f"{c.id}:{chk.name}" for c, chk in pairs]


@pytest.mark.parametrize("source", SOURCES)
def test_every_path_a_claim_reads_exists_in_its_quick_summaries(request, source):
    quick_summaries = request.getfixturevalue(source)
    missing = []
    for c in CLAIMS:
        if c.id not in quick_summaries:  # not run in quick mode (no quick preset)
            assert not c.runnable("quick"), c.id
            continue
        for path in c.paths():
            try:
                lookup(quick_summaries[c.id], path)
            except KeyError:
                missing.append(f"{c.id}: {path}")
    assert missing == []


@pytest.mark.parametrize("source", SOURCES)
@pytest.mark.parametrize(("claim", "chk"), CHECKS, ids=_ids(CHECKS))
def test_every_check_can_fail(request, source, claim, chk):
    summaries = request.getfixturevalue(source)[claim.id]
    real = chk.evaluate(summaries)
    assert "missing" not in real["detail"] and "not a number" not in real["detail"], real
    assert {"name", "value", "threshold", "passed"} <= set(real)
    if not real["passed"]:  # fails on the run already (a flag the short run leaves False):
        # it must be able to pass too, else it tests nothing
        assert passing_summary(chk, summaries) is not None, f"{claim.id}: {chk.name} never passes"
        return
    found = failing_summary(chk, summaries)
    assert found is not None, f"{claim.id}: no perturbation of {chk.paths()} makes {chk.name} fail"
    path, value, trial = found
    out = chk.evaluate(trial)
    assert out["passed"] is False and out["name"] == chk.name, (path, value, out)


def test_gpu_only_claims_reuse_tested_checks():
    """A claim without a quick run (its runs need a GPU) has no summary here to perturb: each of
    its checks must be one a claim with a quick run uses, which the tests above make fail."""
    tested = [chk for _, chk in CHECKS]
    for c in CLAIMS:
        if not c.runnable("quick"):
            assert all(chk in tested for chk in c.checks), c.id


@pytest.mark.parametrize("source", DIRS)
def test_every_quick_summary_validates_against_its_experiments_schema(request, source):
    """Each run's summary (as judged: its experiment's declared type, or aggregated over seeds),
    each seed's (``seed-<s>/``) and each unit's (``units/<unit>/``) validate; a run's summary
    carries no key its experiment does not declare."""
    summaries, where = (request.getfixturevalue(name) for name in source)
    checked = set()
    for cid, runs in summaries.items():
        claim = next(c for c in CLAIMS if c.id == cid)
        for alias, summary in runs.items():
            experiment = claim.runs[alias].experiment
            assert read_summary_versioned(experiment, summary) == summary, (cid, alias)
            checked.add(experiment)
    assert checked == {s.experiment for c in CLAIMS if c.runnable("quick") for s in c.runs.values()}
    inner = 0
    for pattern, unit in (("seed-*", False), ("units/*", True)):
        for path in sorted(where.glob(f"runs/*/*/{pattern}/summary.json")):
            experiment = path.relative_to(where).parts[1]
            validate_summary(experiment, json.loads(path.read_text()), unit=unit)
            inner += 1
    assert inner > 0  # deep-ln's and linear-head's units at least
    for path in where.glob("runs/resnet-ufm/*/ufm/finished.json"):  # the UFM's own marker
        UfmRun.model_validate(json.loads(path.read_text()))
