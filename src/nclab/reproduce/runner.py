"""``nclab reproduce``: run the registered claims and judge them against the papers and the theory.

Finished runs under ``OUT/runs/`` are skipped, so re-running a reproduce is incremental.
``OUT/reproduce.json`` records what was asked; :func:`~nclab.reproduce.judge.judge_dir` rebuilds
every claim's result from it and the run summaries on disk (``nclab report OUT``).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path

from ..report.claims_report import write_reports
from ..runs import dumps
from . import registry
from .backends import execute
from .judge import MANIFEST, ClaimResult, judge_dir
from .plan import plan


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

    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    claims = registry.select(patterns)
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
