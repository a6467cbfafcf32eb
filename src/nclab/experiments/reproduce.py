"""``nclab reproduce``: run the registered claims and judge them against the papers and the theory.

Runs are shared between claims that need the same experiment, preset, overrides and seeds; they
live under ``OUT/runs/`` and finished ones are skipped, so re-running a reproduce is incremental.
``OUT/reproduce.json`` records what was asked; :func:`judge_dir` rebuilds every claim's result from
it and the run summaries on disk (``nclab report OUT``).
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from ..errors import RunError
from ..runs import dumps, to_jsonable
from .execute import Job, execute
from .registry import NEEDS_GPU, Claim, all_claims, lookup, lookup_std, select, verdict

MANIFEST = "reproduce.json"


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

    def to_dict(self) -> dict[str, Any]:
        return to_jsonable(asdict(self))


def run_dir_for(out: Path, experiment: str, preset: str, overrides: dict, seeds: int) -> Path:
    tag = ""
    if overrides:
        digest = hashlib.sha1(json.dumps(overrides, sort_keys=True, default=str).encode())
        tag = "-" + digest.hexdigest()[:8]
    return out / "runs" / experiment / f"{preset}{tag}-s{seeds}"


def command_for(claim: Claim, mode: str) -> str:
    return f"nclab reproduce '{claim.id}' --{mode}"


def plan(
    claims: Sequence[Claim], mode: str, out: Path, seeds: int | None, gpu: bool
) -> tuple[list[Job], dict[str, dict[str, Job]], dict[str, str]]:
    """Jobs to run (deduplicated), each claim's alias -> job, and claims not run (id -> verdict)."""
    jobs: dict[Job, None] = {}
    by_claim: dict[str, dict[str, Job]] = {}
    not_run: dict[str, str] = {}
    for claim in claims:
        if claim.needs_gpu(mode) and not gpu:
            not_run[claim.id] = NEEDS_GPU
            continue
        if not claim.runnable(mode):
            needs_gpu = any(r.full_needs_gpu for r in claim.runs.values())
            not_run[claim.id] = NEEDS_GPU if needs_gpu else f"not run: no {mode} preset"
            continue
        by_claim[claim.id] = {}
        for alias, spec in claim.runs.items():
            preset = spec.preset(mode)
            s = seeds or spec.seeds
            overrides = dict(spec.set)
            job = Job.make(
                spec.experiment,
                preset,
                run_dir_for(out, spec.experiment, preset, overrides, s),
                overrides,
                s,
            )
            jobs[job] = None
            by_claim[claim.id][alias] = job
    return list(jobs), by_claim, not_run


def _figures(run_dir: str) -> list[str]:
    figs = sorted((Path(run_dir) / "figures").glob("*.png"))
    if not figs:  # seeds in subdirectories: show the first seed's figures
        figs = sorted(Path(run_dir).glob("seed-*/figures/*.png"))[:4]
    return [str(f) for f in figs]


def judge(
    claim: Claim, summaries: dict[str, dict[str, Any]], runs: dict[str, str], mode: str
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
        command=command_for(claim, mode),
    )
    ok = all(not s.get("failed") for s in summaries.values())
    for label, path in claim.theory.items():
        try:
            res.theory[label] = lookup(summaries, path) if ok else None
        except KeyError:
            res.theory[label] = None
    for label, path in claim.measured.items():
        try:
            res.measured[label] = {
                "mean": lookup(summaries, path) if ok else None,
                "std": lookup_std(summaries, path) if ok else None,
            }
        except KeyError:
            res.measured[label] = {"mean": None, "std": None}
    for d in runs.values():
        res.figures.extend(_figures(d))
    return res


def not_run_result(claim: Claim, why: str, mode: str) -> ClaimResult:
    cmd = f"nclab reproduce '{claim.id}' --full" if why == NEEDS_GPU else command_for(claim, mode)
    return ClaimResult(
        claim.id,
        claim.paper,
        claim.where,
        claim.claim,
        why,
        paper_values=dict(claim.paper_values),
        note=claim.note,
        command=cmd + (" (on a machine with a GPU)" if why == NEEDS_GPU else ""),
    )


def reproduce(
    patterns: Sequence[str] = (),
    mode: str = "quick",
    out: str | Path = "runs/reproduce-quick",
    seeds: int | None = None,
    backend: str = "local",
    workers: int | None = None,
    address: str | None = None,
    progress: bool = True,
) -> list[ClaimResult]:
    """Run the claims matching ``patterns`` (all when empty) and write the reports into ``out``."""
    import torch

    from ..report.reproduce import write_reports

    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    claims = select(patterns)
    gpu = torch.cuda.is_available()
    jobs, by_claim, not_run = plan(claims, mode, out, seeds, gpu)
    manifest = {
        "mode": mode,
        "seeds": seeds,
        "claims": [c.id for c in claims],
        "gpu": gpu,
        "started": time.strftime("%Y-%m-%d %H:%M:%S"),
        "jobs": {cid: {a: asdict(j) for a, j in aj.items()} for cid, aj in by_claim.items()},
        "not_run": not_run,
    }
    (out / MANIFEST).write_text(dumps(manifest, indent=2))
    t0 = time.perf_counter()
    execute(
        jobs,
        backend=backend,
        workers=workers,
        address=address,
        progress=progress,
        description="reproduce",
    )
    results = judge_dir(out)
    write_reports(
        out, results, {"mode": mode, "backend": backend, "seconds": time.perf_counter() - t0}
    )
    return results


def judge_dir(out: str | Path) -> list[ClaimResult]:
    """Every claim's result, rebuilt from ``reproduce.json`` and the run summaries in ``out``."""
    from ..runs import RunDir

    out = Path(out)
    path = out / MANIFEST
    if not path.is_file():
        raise RunError(f"{out} has no {MANIFEST}: not a reproduce directory")
    manifest = json.loads(path.read_text())
    mode = manifest["mode"]
    known = {c.id: c for c in all_claims()}
    results = []
    for cid in manifest["claims"]:
        claim = known.get(cid)
        if claim is None:
            continue  # a claim that was removed from the registry since
        if cid in manifest["not_run"]:
            results.append(not_run_result(claim, manifest["not_run"][cid], mode))
            continue
        summaries, runs = {}, {}
        for alias, job in manifest["jobs"][cid].items():
            run = RunDir(job["run_dir"])
            runs[alias] = job["run_dir"]
            if run.finished:
                summaries[alias] = run.read_summary()
            elif (run.path / "error.txt").is_file():
                err = (run.path / "error.txt").read_text().strip().splitlines()
                summaries[alias] = {"failed": True, "error": err[-1] if err else "error"}
            else:
                summaries[alias] = {"failed": True, "error": "the run did not finish"}
        results.append(judge(claim, summaries, runs, mode))
    return results
