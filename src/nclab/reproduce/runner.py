"""``nclab reproduce``: run the registered claims and judge them at every scale the evidence covers.

Finished runs under ``OUT/runs/`` are skipped, so re-running a reproduce is incremental.
``OUT/reproduce.json`` records what was asked (and the ledger judged against); two calls may
share ``OUT`` (and so its runs: the fill streams do), each judging what it asked, and the reports
there are the last call's;
:func:`~nclab.reproduce.judge.judge_dir` rebuilds every claim's result from it, the run summaries
and the ledger (``nclab report OUT``). ``record=True`` adds the finished runs to the ledger;
:func:`from_ledger` judges every claim on the ledger alone, without running anything.
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

import torch

from ..evidence import Ledger, default_root
from ..runs import RunDir, dumps
from . import registry
from .backends import execute
from .judge import MANIFEST, judge_dir
from .plan import plan, variant_jobs
from .reports.claims_report import write_reports
from .results import ClaimResult
from .statements import counts_line, statement_counts


def reproduce(
    patterns: Sequence[str] = (),
    mode: str = "quick",
    out: str | Path = "runs/reproduce-quick",
    seeds: int | None = None,
    backend: str = "local",
    workers: int | None = None,
    address: str | None = None,
    progress: bool = True,
    ledger: str | Path | None = None,
    threads: int = 1,
    record: bool = False,
    allow_dirty: bool = False,
    variants: bool = False,
) -> list[ClaimResult]:
    """Run the ``mode`` runs of the claims matching ``patterns`` (all when empty), judge every
    scale (``mode`` on these runs, the others on the ``ledger``'s records; None: no ledger) and
    write the reports into ``out``. ``record`` adds the finished runs to the ledger first.
    ``variants`` also runs the claims' variants at ``mode`` (:class:`~.registry.Variant`);
    ``threads``: each run's torch threads (0: torch's default)."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    if record and ledger is None:
        ledger = default_root()
    claims = registry.select(patterns)
    gpu = torch.cuda.is_available()
    jobs, by_claim, not_run = plan(claims, mode, out, seeds, gpu)
    by_variant = variant_jobs(claims, mode, out, seeds) if variants else {}
    jobs = list(
        dict.fromkeys(
            [*jobs, *(j for v in by_variant.values() for a in v.values() for j in a.values())]
        )
    )
    asked = _write_manifest(out, mode, seeds, claims, ledger, gpu, by_claim, not_run, by_variant)
    t0 = time.perf_counter()
    execute(
        jobs,
        backend=backend,
        workers=workers,
        threads=threads,
        address=address,
        progress=progress,
        description="reproduce",
    )
    if record:
        book = Ledger(ledger)
        for job in jobs:
            if RunDir(job.run_dir).finished:
                book.add(job.run_dir, allow_dirty=allow_dirty)
    results = judge_dir(out, asked)  # not the file: another call sharing ``out`` may rewrite it
    seconds = time.perf_counter() - t0
    write_reports(out, results, report_meta(results, mode, asked["ledger"], backend, seconds))
    return results


def from_ledger(
    patterns: Sequence[str] = (), out: str | Path = "runs/reproduce-ledger", ledger=None
) -> list[ClaimResult]:
    """Judge every claim matching ``patterns`` at every scale on the ledger alone (no training:
    seconds), and write the reports into ``out``."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    claims = registry.select(patterns)
    root = Ledger(ledger).root
    asked = _write_manifest(out, None, None, claims, root, False, {}, {})
    results = judge_dir(out, asked)
    write_reports(out, results, report_meta(results, None, asked["ledger"]))
    return results


def report_dir(out: str | Path) -> list[ClaimResult]:
    """Judge the reproduce directory ``out`` again (its ``reproduce.json``, its runs and the
    ledger: :func:`~.judge.judge_dir`) and write its reports anew (``nclab report OUT``)."""
    out = Path(out)
    results = judge_dir(out)
    asked = json.loads((out / MANIFEST).read_text())
    write_reports(out, results, report_meta(results, asked["mode"], asked.get("ledger")))
    return results


def report_meta(
    results: Sequence[ClaimResult],
    mode: str | None,
    ledger: str | None,
    backend: str | None = None,
    seconds: float | None = None,
) -> dict[str, Any]:
    """The reports' ``meta``, built here alone: the scale run (``mode``; None: judged on the
    ledger only, ``"ledger"``), the backend and wall time of the runs made, the ledger judged
    against and the papers' statements counted on ``results``."""
    meta: dict[str, Any] = {"mode": mode or "ledger"}
    if backend is not None:
        meta |= {"backend": backend, "seconds": seconds}
    return meta | {"ledger": ledger, "statements": statements_line(results)}


def statements_line(results: Sequence[ClaimResult]) -> str:
    """The papers' statements counted on ``results``: covered, reproduced, partial, not
    reproduced, not run, not covered (:func:`~nclab.reproduce.statements.statement_counts`)."""
    return counts_line(statement_counts(results)["all"])


def _write_manifest(
    out, mode, seeds, claims, ledger, gpu, by_claim, not_run, by_variant=None
) -> dict[str, Any]:
    """Write ``OUT/reproduce.json`` (what this call asks) and return it as read back."""
    manifest = {
        "mode": mode,
        "seeds": seeds,
        "claims": [c.id for c in claims],
        "gpu": gpu,
        "ledger": str(Ledger(ledger).root) if ledger is not None else None,
        "started": time.strftime("%Y-%m-%d %H:%M:%S"),
        "jobs": {cid: {a: asdict(j) for a, j in aj.items()} for cid, aj in by_claim.items()},
        "not_run": not_run,
        "variant_jobs": {
            cid: {label: {a: asdict(j) for a, j in aj.items()} for label, aj in v.items()}
            for cid, v in (by_variant or {}).items()
        },
    }
    text = dumps(manifest, indent=2)
    (out / MANIFEST).write_text(text)
    return json.loads(text)  # as judge_dir reads the file
