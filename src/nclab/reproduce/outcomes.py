"""A claim's checks at one scale, per seed and on the mean, and the verdict they give.

Each check is evaluated on the summary (the mean over seeds) and on each seed's summary
(:func:`seed_views`: ``per_seed`` of a run over seeds, ``by_seed`` of a grid); it *holds* when it
passes on the mean and on every seed, *fails* when it fails on the mean and on every seed, and is
*mixed* otherwise (:func:`evaluate`). :func:`verdict`: a run that raised -> ``"failed"``; a
sanity check that does not hold -> ``"failed (sanity: <name>)"``; else on the statement checks,
every one holds -> ``"reproduced"``, every one fails -> ``"not reproduced"``, otherwise
``"partial"``; :func:`reason` says why.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from .checks import SANITY, STATEMENT, AnyCheck
from .registry import FAILED, NOT_REPRODUCED, PARTIAL, REPRODUCED, Claim
from .summaries import lookup

HOLDS, FAILS, MIXED = "holds", "fails", "mixed"

Summaries = Mapping[str, Mapping[str, Any]]


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


def evaluate(chk: AnyCheck, summaries: Summaries, views: Sequence[Summaries]) -> dict[str, Any]:
    """The check's outcome on the mean, and on each seed where its paths exist: ``per_seed``
    (True, False or None), ``seed_values`` (each seed's value where it is a number, else None),
    ``seeds_passed`` / ``seeds_judged`` and ``status`` (``holds``,
    ``fails`` or ``mixed``)."""
    mean = chk.evaluate(summaries)
    per: list[bool | None] = []
    values: list[float | None] = []
    for v in views:
        ok = all(_resolves(v, p) for p in chk.paths())
        one = chk.evaluate(v) if ok else {}
        per.append(bool(one["passed"]) if ok else None)
        values.append(_number(one.get("value")))
    known = [p for p in per if p is not None]
    if mean["passed"] and all(known):
        status = HOLDS
    elif not mean["passed"] and not any(known):
        status = FAILS
    else:
        status = MIXED
    return {
        **mean,
        "per_seed": per,
        "seed_values": values,
        "seeds_passed": sum(known),
        "seeds_judged": len(known),
        "status": status,
    }


def _number(value: Any) -> float | None:
    """A check's value as a float where it is a number (not a bool, a string or a list)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value)


def _fails(c: Mapping[str, Any]) -> str:
    """``"name fails 2/3 seeds"`` (or ``"name fails on the mean"``)."""
    n, ok = c["seeds_judged"], c["seeds_passed"]
    if n > 1 and ok < n:
        return f"{c['name']} fails {n - ok}/{n} seeds"
    return f"{c['name']} fails"


def verdict(claim: Claim, summaries: Summaries) -> tuple[str, list[dict]]:
    """Judge a claim on one scale's run summaries: (verdict, check outcomes).

    A summary marked ``{"failed": True}`` makes the verdict ``"failed"``, whatever the checks say.
    """
    for alias in claim.runs:
        s = summaries.get(alias)
        if s is None or s.get("failed"):
            why = (s or {}).get("error", "no summary")
            what = f"run {alias!r} failed"
            failed = {
                "name": f"run-{alias}",
                "description": what,
                "check": what,
                "value": None,
                "threshold": None,
                "passed": False,
                "detail": why,
                "kind": SANITY,
                "status": FAILS,
            }
            return FAILED, [failed]
    views = seed_views(summaries)
    results = [evaluate(chk, summaries, views) for chk in claim.checks]
    bad = [r for r in results if r["kind"] == SANITY and r["status"] != HOLDS]
    if bad:
        return f"{FAILED} (sanity: {', '.join(r['name'] for r in bad)})", results
    stmt = [r for r in results if r["kind"] == STATEMENT]
    if all(r["status"] == HOLDS for r in stmt):
        return REPRODUCED, results
    if all(r["status"] == FAILS for r in stmt):
        return NOT_REPRODUCED, results
    return PARTIAL, results


def reason(v: str, results: Sequence[Mapping[str, Any]]) -> str:
    """Why the verdict ``v`` is not "reproduced": the checks that do not hold, with the seeds
    they fail on (``"embedding-nc1 fails 2/3 seeds"``); a failed run's error."""
    if v == FAILED:
        return str(results[0]["detail"]) if results else ""
    kind = SANITY if v.startswith(FAILED) else STATEMENT
    return "; ".join(_fails(r) for r in results if r["kind"] == kind and r["status"] != HOLDS)
