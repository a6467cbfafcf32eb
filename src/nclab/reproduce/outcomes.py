"""A claim's checks at one scale, per valid seed and on the mean, and the outcome they give.

The vocabulary and the rules are :mod:`nclab.verdicts`'; this module applies them to run
summaries. At a scale (:class:`Scene`: the scale, each run's deviations from the paper's setting
and what makes one of its seeds valid):

1. **Validity, per seed** (:func:`validity`): each seed's summary is held against its run's
   :class:`~nclab.experiments.protocol.Validity` conditions; an invalid seed is reported with its
   reason and never judged.
2. **Each check** (:func:`evaluate`) on the mean (:func:`seed_views`: ``per_seed`` of a run over
   seeds, ``by_seed`` of a grid) and on each valid seed: it *holds* when it passes on the mean and
   on every valid seed; it *fails* when it fails on the mean and on most valid seeds (on every
   valid seed where some are invalid, the mean then mixing in invalid runs); else it is *mixed*.
   A check that does not hold is *untestable* when the scale is below its ``min_scale``, or a
   run it reads deviates from the paper in a setting it ``depends_on``
   (:func:`~.instance.deviations`).
3. **The outcome** (:func:`verdict`): a run that raised, or a sanity check that does not hold,
   makes it inconclusive; else the statement checks, grouped into statements (readings sharing
   ``of``), decide it (:func:`nclab.verdicts.decide`). Ours-beyond checks are reported, never
   decisive.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..experiments.protocol import Validity
from ..verdicts import (
    CheckResult,
    Judged,
    Outcome,
    Reason,
    Role,
    Status,
    Why,
    combine_readings,
    decide,
)
from .checks import SCALES, AnyCheck, Check
from .instance import Deviation
from .registry import Claim
from .summaries import lookup, split

Summaries = Mapping[str, Mapping[str, Any]]


@dataclass(frozen=True)
class Scene:
    """What the judge knows of a scale besides the summaries: its name, each run's deviations
    from the paper's setting, each run's validity conditions (by alias), and the paths its ledger
    records were made before (a check reading one is untestable there, not failed)."""

    scale: str = "full"
    deviations: Mapping[str, Sequence[Deviation]] = field(default_factory=dict)
    validity: Mapping[str, Sequence[Validity]] = field(default_factory=dict)
    missing: frozenset[str] = frozenset()  # paths a ledger record predates (never "this run")


def seed_views(summaries: Summaries) -> list[dict[str, Mapping[str, Any]]]:
    """One ``{alias: summary}`` per seed: each run's ``by_seed`` (a grid's per-seed summaries),
    else its ``per_seed``, else the run itself if it ran one seed. Runs of different seed counts,
    or a run of several seeds whose summary keeps only their mean (a sweep that averages each
    point), give none: no seed can be judged alone, and the checks are judged on the mean."""
    per: dict[str, list] = {}
    for alias, s in summaries.items():
        entries = s.get("by_seed") or s.get("per_seed")
        ok = isinstance(entries, list) and all(isinstance(e, Mapping) for e in entries)
        if ok and len(entries) > 1:
            per[alias] = entries
        elif _seed_count(s) > 1:
            return []
        else:
            per[alias] = [s]
    counts = {len(v) for v in per.values()}
    if len(counts) != 1:
        return []
    n = counts.pop()
    return [{a: per[a][i] for a in per} for i in range(n)]


def _seed_count(summary: Mapping[str, Any]) -> int:
    """How many seeds a run's summary stands for (its ``seeds`` list; one if it has none)."""
    seeds = summary.get("seeds")
    return len(seeds) if isinstance(seeds, list | tuple) else 1


def _resolves(summaries: Summaries, path: str) -> bool:
    try:
        lookup(summaries, path)
    except KeyError:
        return False
    return True


def _as_check(alias: str, v: Validity) -> Check:
    return Check(v.describe(), path=f"{alias}:{v.path}", op=v.op, value=v.value, name="valid")


def validity(view: Summaries, scene: Scene) -> dict[str, list[tuple[Validity, str]]]:
    """The validity conditions one seed's summaries (``{alias: summary}``) miss, by run alias:
    each condition with the value read; an alias whose run is valid is absent. A condition whose
    path the summary lacks or holds None (a record made before it was written; a summary of
    another mode, a language model's without a train accuracy) is not held against the seed."""
    out: dict[str, list[tuple[Validity, str]]] = {}
    for alias, conditions in scene.validity.items():
        if alias not in view:
            continue
        for v in conditions:
            chk = _as_check(alias, v)
            if not _resolves(view, chk.path) or lookup(view, chk.path) is None:
                continue  # a summary without the value (another mode, an older record)
            got = chk.evaluate(view)
            if not got["passed"]:
                value = got["value"]
                shown = f"{value:.4g}" if isinstance(value, float) else str(value)
                out.setdefault(alias, []).append((v, shown))
    return out


def invalid_texts(labels: Sequence[str], missed: Sequence[Mapping[str, list]]) -> list[str]:
    """Each condition missed, once, with the seeds that miss it and their values:
    ``"main: train_acc_min >= 0.99 on seed 1 (0.1), seed 2 (0.2): <why>"``."""
    by: dict[tuple[str, Validity], list[str]] = {}
    for lab, m in zip(labels, missed, strict=True):
        for alias, conds in m.items():
            for v, shown in conds:
                by.setdefault((alias, v), []).append(f"{lab} ({shown})")
    return [f"{a}: {v.describe()} fails on {', '.join(s)}: {v.why}" for (a, v), s in by.items()]


def seed_labels(summaries: Summaries, n: int) -> list[str]:
    """``"seed 3"`` for each of ``n`` seed views (the first run's ``seeds``, else positions)."""
    for s in summaries.values():
        seeds = s.get("seeds")
        if isinstance(seeds, list | tuple) and len(seeds) == n:
            return [f"seed {x}" for x in seeds]
    return ["the run"] if n == 1 else [f"seed #{i}" for i in range(n)]


def _blocked(chk: AnyCheck, scene: Scene) -> Reason | None:
    """Why a failure of ``chk`` at ``scene`` cannot be evidence: the scale is below its
    ``min_scale``, or a run it reads deviates in a setting it depends on."""
    if chk.min_scale and SCALES.index(scene.scale) < SCALES.index(chk.min_scale):
        return Reason(Why.TOO_SMALL, (chk.name,), chk.scale_why)
    aliases = dict.fromkeys(split(p)[0] for p in chk.paths())
    hits: list[str] = []
    for alias in aliases:
        for d in scene.deviations.get(alias, ()):
            if _depends(chk.depends_on, d.key):
                hits.append((f"{alias}: " if len(scene.deviations) > 1 else "") + d.text())
    if hits:
        return Reason(Why.DEVIATION, (chk.name,), ", ".join(hits))
    return None


def _depends(patterns: Sequence[str] | None, key: str) -> bool:
    """Whether a check with ``depends_on=patterns`` depends on the setting ``key`` (None: on
    every setting; ``"instance"`` only where named, or with None)."""
    if patterns is None:
        return True
    return any(fnmatch.fnmatchcase(key, p) for p in patterns)


def evaluate(
    chk: AnyCheck,
    summaries: Summaries,
    views: Sequence[Summaries],
    valid: Sequence[bool] | None = None,
    scene: Scene | None = None,
    invalid: str = "every seed",
) -> CheckResult:
    """The check on the mean and on each valid seed (module docstring); ``valid[i]``: whether
    seed ``i`` is valid evidence (all are by default); ``invalid``: why the seeds are invalid,
    for a check none of whose seeds is."""
    scene = scene or Scene()
    valid = list(valid) if valid is not None else [True] * len(views)
    mean = chk.evaluate(summaries)
    stale = [p for p in chk.paths() if p in scene.missing]
    if stale:
        why = Reason(Why.PREDATES, (chk.name,), f"{stale[0]} (re-run it to judge)")
        return _result(chk, mean, Status.UNTESTABLE, why, [None] * len(views), [None] * len(views))
    per: list[bool | None] = []
    values: list[float | None] = []
    for v, ok_seed in zip(views, valid, strict=True):
        ok = ok_seed and all(_resolves(v, p) for p in chk.paths())
        one = chk.evaluate(v) if ok else {}
        per.append(bool(one["passed"]) if ok else None)
        values.append(_number(one.get("value")))
    known = [p for p in per if p is not None]
    all_valid = all(valid)
    if views and not any(valid):
        status, blocked = Status.UNTESTABLE, Reason(Why.INVALID, (chk.name,), invalid)
    elif not all_valid and not known:  # only the mean, which mixes in the invalid seeds
        status = Status.UNTESTABLE
        blocked = Reason(
            Why.INVALID, (chk.name,), "read on the mean only, which mixes in invalid seeds"
        )
    else:
        several = max((_seed_count(x) for x in summaries.values()), default=1) > 1
        status, blocked = _status(mean["passed"], known, all_valid, several), None
        if status is not Status.HOLDS and chk.kind != Role.SANITY:  # a bug is a bug anywhere
            blocked = _blocked(chk, scene)
            if blocked is not None:
                status = Status.UNTESTABLE
    return _result(chk, mean, status, blocked, per, values)


def _result(
    chk: AnyCheck,
    mean: Mapping[str, Any],
    status: Status,
    blocked: Reason | None,
    per: list[bool | None],
    values: list[float | None],
) -> CheckResult:
    known = [p for p in per if p is not None]
    return CheckResult(
        name=mean["name"],
        description=mean["description"],
        kind=Role(chk.kind),
        status=status,
        passed=mean["passed"],
        value=mean["value"],
        threshold=mean["threshold"],
        op=mean["op"],
        detail=mean["detail"],
        ours=chk.ours,
        principle=getattr(chk.ours, "principle", "") or "",
        source=chk.source,
        statement=chk.statement,
        reading=chk.reading,
        per_seed=per,
        seed_values=values,
        seeds_passed=sum(known),
        seeds_judged=len(known),
        blocked=blocked,
    )


def _status(mean: bool, known: Sequence[bool], all_valid: bool, several: bool = False) -> Status:
    """Holds: the mean (where every seed is valid) and every valid seed pass. Fails: the mean
    fails and most valid seeds fail (every valid seed where some are invalid); a run of one seed
    fails with its mean, a run of ``several`` seeds judged on the mean only (no seed's value) is
    mixed at worst: its seeds could not be held to it one by one. Else mixed."""
    failing = len(known) - sum(known)
    if all_valid:
        if mean and not failing:
            return Status.HOLDS
        if not mean and not known:
            return Status.MIXED if several else Status.FAILS
        if not mean and 2 * failing > len(known):
            return Status.FAILS
        return Status.MIXED
    if not failing:
        return Status.HOLDS
    return Status.FAILS if failing == len(known) else Status.MIXED


def _number(value: Any) -> float | None:
    """A check's value as a float where it is a number (not a bool, a string or a list)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value)


@dataclass
class Verdict:
    """A claim judged at one scale: the outcome, its reasons, the checks and the invalid seeds
    (each with why)."""

    outcome: Outcome
    reasons: tuple[Reason, ...]
    checks: list[CheckResult]
    invalid: list[str] = field(default_factory=list)


def verdict(claim: Claim, summaries: Summaries, scene: Scene | None = None) -> Verdict:
    """Judge a claim on one scale's run summaries (module docstring). A summary marked
    ``{"failed": True}`` makes the outcome inconclusive (the run failed)."""
    scene = scene or Scene()
    for alias in claim.runs:
        s = summaries.get(alias)
        if s is None or s.get("failed"):
            why = (s or {}).get("error", "no summary")
            return verdict_of_failed_run(alias, why)
    views = seed_views(summaries)
    why_invalid = [validity(v, scene) for v in views] or [validity(summaries, scene)]
    labels = seed_labels(summaries, len(views)) if views else ["the run"]
    invalid = invalid_texts(labels, why_invalid)
    n_invalid = sum(bool(w) for w in why_invalid)
    if not views and why_invalid[0]:  # the mean is all there is, and it is invalid
        views = [summaries]
    results = []
    for chk in claim.checks:
        aliases = {split(p)[0] for p in chk.paths()}
        valid = [chk.on_invalid or not (aliases & set(w)) for w in why_invalid] if views else None
        results.append(evaluate(chk, summaries, views, valid, scene, "; ".join(invalid)))
    sanity = [
        r.name
        for r in results
        if r.kind is Role.SANITY and r.status in (Status.FAILS, Status.MIXED)
    ]
    groups: dict[str, list[Judged]] = {}
    for r in results:
        if r.kind is Role.STATEMENT:
            groups.setdefault(r.statement, []).append(r.judged())
    statements = [combine_readings(name, rs) for name, rs in groups.items()]
    beyond = [r.judged() for r in results if r.kind is Role.BEYOND]
    outcome, reasons = decide(statements, sanity=sanity, beyond=beyond)
    if invalid and not any(r.why is Why.INVALID for r in reasons):
        n = f"{n_invalid}/{len(views)} seeds" if views else "the run"
        reasons += (Reason(Why.INVALID, (), f"{n}: " + "; ".join(invalid)),)
    return Verdict(outcome, reasons, results, invalid)


def verdict_of_failed_run(alias: str, error: str) -> Verdict:
    """A run that raised or did not finish: inconclusive, with the error."""
    return Verdict(Outcome.INCONCLUSIVE, (Reason(Why.RUN_FAILED, (alias,), error),), [])
