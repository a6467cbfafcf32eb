"""Every registered check can fail, every summary path a claim reads exists, and every summary
validates against its experiment's declared type (:mod:`nclab.experiments.schema`).

The summaries come from the quick runs of every claim: each check is evaluated on them (no missing
key) and on perturbed copies of them, changing only the values the check declares it reads, until
it fails. The default run uses the quick presets with their training cut short (``SHORTEN``: the
same code paths and the same summary structure, two seeds at most, in about two minutes on 2 cores);
``-m slow`` repeats both tests on a full quick ``reproduce`` (about 15 minutes on 2 cores).
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

from nclab.experiments.resnet_ufm.schema import UfmRun
from nclab.experiments.runner import FIGURES_ENV
from nclab.experiments.schema import read_summary_versioned, validate_summary
from nclab.reproduce import Equals, all_claims, lookup
from nclab.reproduce.backends import Job, execute
from nclab.reproduce.judge import MANIFEST, read_summaries
from nclab.reproduce.plan import plan
from nclab.reproduce.runner import reproduce
from nclab.reproduce.summaries import every, resolve_every
from nclab.verdicts import Why

CLAIMS = all_claims()
#: the checks of claims with a quick run (a GPU-only claim's are tested through the claim it
#: reuses them from: test_gpu_only_claims_reuse_tested_checks)
CHECKS = [(c, chk) for c in CLAIMS if c.runnable("quick") for chk in c.checks]


#: overrides that cut each experiment's training short, keeping its summary's structure
SHORTEN: dict[str, dict[str, Any]] = {
    "ufm": {"train.steps": 400, "log_every": 200, "checkpoint_every": 0},
    "feature-collapse": {"train.epochs": 4, "log_every": 2},
    "linear-head": {"train.epochs": 4, "measure_every": 2},
    "deep-ln": {"train.epochs": 4, "log_every": 2, "monotone.epochs_after": 4},
    "fc-transformer": {
        "data.nspl": 2,
        "data.n_test": 2,
        "train.epochs": 1,
        "log_every": 1,
        "measure_sentences": 20,
    },
    "fc-landscape": {"search.starts": 2, "search.contrast_starts": 2},
    "fc-lemmas": {
        "points.samples": 4,
        "system.starts": 6,
        "latents.presets": ["k50"],
        "latents.small_k": [4, 6, 10],
        "latents.draws": 2,
        "minimise.starts": 1,
    },
    # two larger eps1 (shorter flows) at looser tolerances: the same summary
    "pyramid-flow": {
        "sweep.eps1": [0.5, 0.35],
        "solve.rtol": 1e-6,
        "solve.atol": 1e-8,
        "solve.gd_steps": 50,
    },
    "fc-grammar": {"data.n_train": 50, "data.n_test": 20, "train.epochs": 1, "log_every": 1},
    "resnet-ufm": {
        "train.epochs": 2,
        "measure_every": 1,
        "data.samples_per_class": 20,
        "ufm.steps": 200,
        "ufm.log_every": 100,
        "checkpoint_every": 0,
    },
}
#: quick presets cut short less than ``SHORTEN`` says: Section 5's bounds (minimiser.py) exist only
#: once eps1 < s_K(Y), the edge-of-stability scalars need a few sharpness records per step size
SHORTEN_PRESET: dict[tuple[str, str], dict[str, Any]] = {
    ("linear-head", "conditioning-minimiser-quick"): {
        "train.epochs": 400,
        "measure_every": 200,
        "ntk_iterations": 40,
    },
    ("linear-head", "ntk-bound-quick"): {
        "train.epochs": 400,
        "measure_every": 200,
        "ntk_iterations": 40,
    },
    ("linear-head", "edge-of-stability-quick"): {"train.epochs": 40, "measure_every": 10},
    # Theorem 4.1's structure is judged at the points that reached the theorem's objective: a
    # few thousand steps bring the points far below the threshold there (none at 2000)
    ("ufm", "tb-phase-diagram-linear-quick"): {"train.steps": 5000, "log_every": 2500},
    # Prop. 5.3's cap on the step needs a network that ends eps1-interpolating (eps1 < s_K(Y)),
    # one larger step that diverges and one above every bound
    ("linear-head", "lr-bound-quick"): {
        "train.epochs": 200,
        "measure_every": 100,
        "data.samples_per_class": 20,
        "sweep_lrs": [12.0, 1e3, 1e7],
    },
    ("linear-head", "thm31-bounds-quick"): {"train.epochs": 40, "measure_every": 20},
    # Theorem 3.1's certificate (its bounds and whether they hold) is written only for a network
    # that interpolates: the preset's 300 epochs, on 20 samples per class instead of 100; a record
    # every 20 epochs, as the preset's, puts records in each window of the balancedness's
    # log-rates (plateau.py: before the plateau, on it, after the drop)
    ("linear-head", "fig1-mlp-quick"): {
        "data.samples_per_class": 20,
        "data.test_samples_per_class": 10,
        "measure_every": 20,
    },
    # the ResNet20 quick run whole (60 epochs, ~40 s a seed): fewer epochs leave it short of
    # fitting the digits, and Theorem 3.1's certificate (certificate.holds) then does not apply
    ("linear-head", "fig1-resnet20-digits-quick"): {"train.epochs": 60, "measure_every": 6},
    # Theorem 4.4's time: weight decays 20x the preset's and levels eps2 the shorter run reaches,
    # so that every time and exponent is a number
    ("linear-head", "thm44-time-quick"): {
        "train.epochs": 600,
        "measure_every": 20,
        "sweep_weight_decays": [0.02, 0.04, 0.08],
        "imbalance_eps2": [1.0, 0.3, 0.1],
    },
    # the GUFM-MSE sublevel sets: a shorter search (the same samplers and summary)
    ("ufm", "gufm-mse-rates-quick"): {
        "rates.steps_per_decade": 1,
        "rates.iters": 40,
        "rates.descent_steps": 100,
    },
    # the Zipf problem at K = 1000: the summary's structure is the same at K = 300
    ("feature-collapse", "fig4b-quick"): {"train.epochs": 4, "log_every": 2, "data.K": 300},
    ("feature-collapse", "fig4b-steep-quick"): {"train.epochs": 4, "log_every": 2, "data.K": 300},
}


@pytest.fixture(scope="session")
def short_dir(tmp_path_factory) -> Path:
    """Where :func:`short_summaries` runs (``runs/<experiment>/<preset>-s<seeds>/``)."""
    return tmp_path_factory.mktemp("reproduce-short")


@pytest.fixture(scope="session")
def short_summaries(short_dir) -> dict[str, dict[str, dict[str, Any]]]:
    """claim id -> alias -> the summary of its quick run with training cut short (``SHORTEN``)."""
    out = short_dir
    jobs, by_claim, _ = plan(CLAIMS, "quick", out, None, gpu=False)
    short = {}
    for job in jobs:
        key = (job.experiment, job.preset)
        cut = SHORTEN_PRESET.get(key, SHORTEN[job.experiment])
        overrides = dict(job.overrides) | cut
        # two seeds keep the structure of a summary over seeds (mean, std) at two thirds the cost
        seeds = min(job.seeds, 2)
        short[job] = Job.make(job.experiment, job.preset, job.run_dir, overrides, seeds)
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
    results = reproduce(mode="quick", out=out, workers=2, progress=False)
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
