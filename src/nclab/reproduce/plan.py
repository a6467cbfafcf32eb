"""Planning a reproduce: which runs the claims need, deduplicated, and which claims cannot run.

Runs are shared between claims that need the same experiment, preset and overrides (the most seeds
any of them asks for); each has a run directory under ``OUT/runs/<experiment>/<preset>[-<overrides hash>]-s<seeds>/``.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from pathlib import Path

from ..verdicts import Why
from .backends import Job
from .registry import Claim


def job_dir(out: Path, experiment: str, preset: str, overrides: dict, seeds: int) -> Path:
    tag = ""
    if overrides:
        digest = hashlib.sha1(json.dumps(overrides, sort_keys=True, default=str).encode())
        tag = "-" + digest.hexdigest()[:8]
    return out / "runs" / experiment / f"{preset}{tag}-s{seeds}"


def variant_jobs(
    claims: Sequence[Claim], mode: str, out: Path, seeds: int | None
) -> dict[str, dict[str, dict[str, Job]]]:
    """The jobs of the claims' variants at ``mode``: claim id -> variant label -> alias -> job."""
    found: dict[str, dict[str, dict[str, Job]]] = {}
    for claim in claims:
        for v in claim.variants:
            if mode not in v.scales or not claim.runnable(mode) or claim.needs_gpu(mode):
                continue
            found.setdefault(claim.id, {})[v.label] = {
                alias: _job(out, spec, mode, seeds, v.overrides(alias, spec))
                for alias, spec in claim.runs.items()
            }
    return found


def _job(out: Path, spec, mode: str, seeds: int | None, overrides: dict) -> Job:
    preset = spec.preset(mode)
    s = seeds or spec.seeds_at(mode)
    return Job.make(
        spec.experiment, preset, job_dir(out, spec.experiment, preset, overrides, s), overrides, s
    )


def plan(
    claims: Sequence[Claim], mode: str, out: Path, seeds: int | None, gpu: bool
) -> tuple[list[Job], dict[str, dict[str, Job]], dict[str, str]]:
    """Jobs to run (deduplicated), each claim's alias -> job, and claims not run (id -> why, a :class:`~nclab.verdicts.Why` value)."""
    jobs: dict[Job, None] = {}
    by_claim: dict[str, dict[str, Job]] = {}
    not_run: dict[str, str] = {}
    for claim in claims:
        if claim.needs_gpu(mode) and not gpu:
            not_run[claim.id] = Why.NEEDS_GPU.value
            continue
        if not claim.runnable(mode):
            needs_gpu = any(r.full_needs_gpu for r in claim.runs.values())
            not_run[claim.id] = (Why.NEEDS_GPU if needs_gpu else Why.NO_PRESET).value
            continue
        by_claim[claim.id] = {}
        for alias, spec in claim.runs.items():
            job = _job(out, spec, mode, seeds, dict(spec.set))
            jobs[job] = None
            by_claim[claim.id][alias] = job
    widest = _most_seeds(jobs)
    by_claim = {c: {a: widest[j] for a, j in aliases.items()} for c, aliases in by_claim.items()}
    return list(dict.fromkeys(widest.values())), by_claim, not_run


def _most_seeds(jobs) -> dict[Job, Job]:
    """Each job -> the job of the same run with the most seeds: a claim that asks for 3 seeds of
    a run another claim needs 8 of reads the 8 (seeds 0-7 include 0-2), as the ledger's
    ``find`` does, and the 3-seed run is not made."""
    top: dict[tuple, Job] = {}
    for job in jobs:
        key = (job.experiment, job.preset, job.overrides)
        if key not in top or job.seeds > top[key].seeds:
            top[key] = job
    return {job: top[(job.experiment, job.preset, job.overrides)] for job in jobs}
