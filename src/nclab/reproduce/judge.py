"""Judging claims: the verdict of a claim on its run summaries, and every claim's result.

Verdicts: every check passes -> ``"reproduced"``; some pass -> ``"partial"``; none ->
``"not reproduced"``; a run raised -> ``"failed"`` (whatever the checks say). Each result carries
its checks' outcomes (``name``, ``description``, ``value``, ``threshold``, ``passed``, ``detail``) and
the instance it was judged on (:meth:`Claim.instance <nclab.reproduce.registry.Claim.instance>`:
``"paper setting..."``, ``"smaller: <what differs>"`` or ``"our instance: ..."``).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from ..errors import RunError
from ..experiments.protocol import UNITS
from ..experiments.schema import read_summary_versioned
from ..report.claims_report import instance_label
from ..runs import RunDir, to_jsonable
from . import registry
from .instance import PAPER_SETTING
from .registry import FAILED, NEEDS_GPU, NOT_REPRODUCED, PARTIAL, REPRODUCED, Claim
from .summaries import lookup, lookup_std

MANIFEST = "reproduce.json"
JUDGED = (REPRODUCED, PARTIAL, NOT_REPRODUCED)


@dataclass
class ClaimResult:
    id: str
    paper: str
    where: str
    claim: str
    verdict: str
    paper_values: dict[str, Any] = field(default_factory=dict)
    theory: dict[str, Any] = field(default_factory=dict)
    measured: dict[str, dict[str, Any]] = field(default_factory=dict)  # label -> {mean, std}
    checks: list[dict[str, Any]] = field(default_factory=list)
    runs: dict[str, str] = field(default_factory=dict)  # alias -> run dir
    figures: list[str] = field(default_factory=list)
    note: str = ""
    command: str = ""
    instance: str = PAPER_SETTING  # or "smaller: <what differs>", "our instance: <why>"

    def to_dict(self) -> dict[str, Any]:
        return to_jsonable(asdict(self))

    @property
    def verdict_text(self) -> str:
        """The verdict as reports show it: ``"reproduced (smaller instance: ...)"`` when it was
        judged on another instance than the paper's setting."""
        if self.verdict in JUDGED and not self.instance.startswith(PAPER_SETTING):
            return f"{self.verdict} ({instance_label(self.instance)})"
        return self.verdict


def verdict(claim: Claim, summaries: Mapping[str, Mapping[str, Any]]) -> tuple[str, list[dict]]:
    """Judge a claim on its run summaries: (verdict, per-check outcomes).

    A summary marked ``{"failed": True}`` makes the verdict ``"failed"``, whatever the checks say.
    """
    for alias in claim.runs:
        s = summaries.get(alias)
        if s is None or s.get("failed"):
            why = (s or {}).get("error", "no summary")
            what = f"run {alias!r} failed"
            return FAILED, [
                {
                    "name": f"run-{alias}",
                    "description": what,
                    "check": what,
                    "value": None,
                    "threshold": None,
                    "passed": False,
                    "detail": why,
                }
            ]
    results = [chk.evaluate(summaries) for chk in claim.checks]
    n_ok = sum(r["passed"] for r in results)
    if results and n_ok == len(results):
        return REPRODUCED, results
    if n_ok:
        return PARTIAL, results
    return NOT_REPRODUCED, results


def command_for(claim: Claim, mode: str, seeds: int | None = None) -> str:
    """The command that reruns ``claim`` as it was run (``--seeds`` when it was given)."""
    return f"nclab reproduce '{claim.id}' --{mode}" + (f" --seeds {seeds}" if seeds else "")


def _figures(run_dir: str) -> list[str]:
    figs = sorted((Path(run_dir) / "figures").glob("*.png"))
    if not figs:  # figures drawn per unit: show the first unit's
        units = sorted(Path(run_dir).glob(f"{UNITS}/*/figures"))
        figs = sorted(units[0].glob("*.png"))[:4] if units else []
    return [str(f) for f in figs]


def _read(summaries: Mapping[str, Any], path: str, ok: bool, std: bool = False) -> Any:
    if not ok:
        return None
    return lookup_std(summaries, path) if std else lookup(summaries, path)


def judge(
    claim: Claim,
    summaries: dict[str, dict[str, Any]],
    runs: dict[str, str],
    mode: str,
    seeds: int | None = None,
) -> ClaimResult:
    v, checks = verdict(claim, summaries)
    res = ClaimResult(
        claim.id,
        claim.paper,
        claim.where,
        claim.claim,
        v,
        paper_values=dict(claim.paper_values),
        checks=checks,
        runs=runs,
        note=claim.note,
        command=command_for(claim, mode, seeds),
        instance=claim.instance(mode),
    )
    ok = all(not s.get("failed") for s in summaries.values())
    for label, path in claim.theory.items():
        try:
            res.theory[label] = _read(summaries, path, ok)
        except KeyError:
            res.theory[label] = None
    for label, path in claim.measured.items():
        try:
            res.measured[label] = {
                "mean": _read(summaries, path, ok),
                "std": _read(summaries, path, ok, std=True),
            }
        except KeyError:
            res.measured[label] = {"mean": None, "std": None}
    for d in runs.values():
        res.figures.extend(_figures(d))
    return res


def not_run_result(claim: Claim, why: str, mode: str, seeds: int | None = None) -> ClaimResult:
    full = why == NEEDS_GPU
    cmd = command_for(claim, "full" if full else mode, seeds)
    return ClaimResult(
        claim.id,
        claim.paper,
        claim.where,
        claim.claim,
        why,
        paper_values=dict(claim.paper_values),
        note=claim.note,
        command=cmd + (" (on a machine with a GPU)" if full else ""),
        instance=claim.instance("full" if full else mode),
    )


def read_summaries(jobs: Mapping[str, Mapping[str, Any]]) -> tuple[dict, dict[str, str]]:
    """Each alias's summary (``{"failed": True, ...}`` for a run that raised or did not finish,
    or whose summary this nclab does not read: another schema version, or a structure its
    experiment does not declare, :func:`~nclab.experiments.schema.read_summary_versioned`)."""

    summaries, runs = {}, {}
    for alias, job in jobs.items():
        run = RunDir(job["run_dir"])
        runs[alias] = job["run_dir"]
        if run.finished:
            where = str(run.path / "summary.json")
            try:
                summaries[alias] = read_summary_versioned(
                    job["experiment"], run.read_summary(), where
                )
            except RunError as exc:
                summaries[alias] = {"failed": True, "error": str(exc)}
        elif (run.path / "error.txt").is_file():
            err = (run.path / "error.txt").read_text().strip().splitlines()
            summaries[alias] = {"failed": True, "error": err[-1] if err else "error"}
        else:
            summaries[alias] = {"failed": True, "error": "the run did not finish"}
    return summaries, runs


def judge_dir(out: str | Path) -> list[ClaimResult]:
    """Every claim's result, rebuilt from ``reproduce.json`` and the run summaries in ``out``."""
    out = Path(out)
    path = out / MANIFEST
    if not path.is_file():
        raise RunError(f"{out} has no {MANIFEST}: not a reproduce directory")
    manifest = json.loads(path.read_text())
    mode = manifest["mode"]
    seeds = manifest.get("seeds")
    known = {c.id: c for c in registry.all_claims()}
    results = []
    for cid in manifest["claims"]:
        claim = known.get(cid)
        if claim is None:
            continue  # a claim that was removed from the registry since
        if cid in manifest["not_run"]:
            results.append(not_run_result(claim, manifest["not_run"][cid], mode, seeds))
            continue
        summaries, runs = read_summaries(manifest["jobs"][cid])
        results.append(judge(claim, summaries, runs, mode, seeds))
    return results
