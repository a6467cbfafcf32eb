"""Running many runs: inline, on a local process pool, or as Ray tasks.

A :class:`Job` names an experiment, a preset, ``--set`` overrides, a number of seeds and a run
directory. :func:`execute` runs the jobs whose directory has no ``summary.json`` yet (so re-running
a reproduce or a sweep is incremental) and returns one summary per job; a directory holding a run
of another config (a preset changed since) is moved aside first (:func:`set_aside_stale`). A run that raises is
recorded in its directory (``error.txt`` with the traceback) and returned as
``{"failed": True, "error": ...}``; the other runs go on.

Backends:

* ``local`` (default): a process pool of ``workers`` processes (default: the number of cores), each
  running torch single-threaded (``threads``), with a progress bar over runs. ``workers=1`` runs
  inline in this process, with ``threads`` too; one run left with spare workers trains its units
  on them side by side.
* ``ray``: the same function as Ray tasks (``pip install ray``); ``address`` joins a cluster,
  otherwise a local Ray with ``workers`` CPUs is started. Results are identical to ``local``.
"""

from __future__ import annotations

import os
import sys
import time
import traceback
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import ConfigError, RunError
from ..experiments import get_experiment, run_experiment
from ..experiments.runner import config_changes, hold_run
from ..progress import bar
from ..runs import RunDir
from ..threads import run_threads
from ..workers import run_tasks, start_ray


@dataclass(frozen=True)
class Job:
    experiment: str
    preset: str | None
    run_dir: str
    overrides: tuple[tuple[str, Any], ...] = ()
    seeds: int = 1

    @staticmethod
    def make(
        experiment: str,
        preset: str | None,
        run_dir,
        overrides: Mapping[str, Any] | None = None,
        seeds: int = 1,
    ) -> Job:
        items = tuple(sorted((str(k), _freeze(v)) for k, v in (overrides or {}).items()))
        return Job(experiment, preset, str(run_dir), items, seeds)


def _freeze(v: Any) -> Any:
    return tuple(_freeze(x) for x in v) if isinstance(v, list | tuple) else v


def _thaw(v: Any) -> Any:
    return [_thaw(x) for x in v] if isinstance(v, tuple) else v


def run_job(job: Job, threads: int | None = 1, unit_workers: int = 1) -> dict[str, Any]:
    """Run one job (in whatever process calls it, with ``threads`` torch threads, restored after;
    its units, e.g. seeds, ``unit_workers`` at a time unless its config says otherwise); never
    raises for a failing run."""
    with run_threads(threads):
        return _run_job(job, unit_workers)


def _run_job(job: Job, unit_workers: int = 1) -> dict[str, Any]:
    run = RunDir(job.run_dir)
    if run.finished:
        return run.read_summary()
    try:
        exp = get_experiment(job.experiment)
        cfg = exp.config(job.preset, {k: _thaw(v) for k, v in job.overrides})
        if unit_workers > 1 and cfg.workers == 1:  # bookkeeping: the numbers do not change
            cfg = cfg.replace(workers=unit_workers)
    except Exception as exc:
        run.write_error(traceback.format_exc())
        return {"failed": True, "error": f"{type(exc).__name__}: {exc}", "run_dir": job.run_dir}
    return run_experiment(
        exp, cfg, run.path, seeds=job.seeds, preset=job.preset, record_errors=True
    )


def set_aside_stale(job: Job) -> Path | None:
    """Move ``job``'s directory aside (to ``<name>.stale-<UTC time>``, beside it) when it holds a
    run of another config than the job's: a preset changed since that run, whose finished units
    and checkpoints must not be taken for the job's. Returns where it went (None: nothing moved;
    a job whose config does not resolve, or whose directory another process is training, is left
    to fail in its run)."""
    path = Path(job.run_dir)
    if not (path / "config.toml").is_file():
        return None
    try:
        exp = get_experiment(job.experiment)
        cfg = exp.config(job.preset, {k: _thaw(v) for k, v in job.overrides})
        cfg = cfg.replace(seeds=job.seeds)
    except Exception:
        return None
    run = RunDir(path, create=False)
    changed = config_changes(exp, cfg, run, finished=run.finished)
    if not changed:
        return None
    dest = path.with_name(f"{path.name}.stale-{time.strftime('%Y%m%dT%H%M%SZ', time.gmtime())}")
    try:
        with hold_run(run):  # not from under a process still training it
            path.rename(dest)
    except RunError:
        return None  # its run then fails, naming the other process
    shown = ", ".join(changed[:4]) + (" ..." if len(changed) > 4 else "")
    print(
        f"{path} held a run of another config ({shown} differ: its preset changed since): "
        f"moved to {dest.name}; running afresh",
        file=sys.stderr,
    )
    return dest


def _worker_init() -> None:
    os.environ["NCLAB_PROGRESS"] = "0"


def default_workers() -> int:
    return max(
        1, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    )


def execute(
    jobs: Sequence[Job],
    backend: str = "local",
    workers: int | None = None,
    threads: int = 1,
    address: str | None = None,
    progress: bool = True,
    description: str = "runs",
) -> list[dict[str, Any]]:
    """Run ``jobs`` (skipping finished ones) and return their summaries, in order."""
    if backend not in ("local", "ray"):
        raise ConfigError(f"backend must be 'local' or 'ray', got {backend!r}")
    workers = workers or default_workers()
    if workers < 1:
        raise ConfigError(f"workers must be >= 1, got {workers}")
    if threads < 0:
        raise ConfigError(f"threads must be >= 0 (0: torch's default), got {threads}")
    results: list[dict[str, Any] | None] = [None] * len(jobs)
    todo = []
    for i, job in enumerate(jobs):
        set_aside_stale(job)
        run = RunDir(job.run_dir)
        if run.finished:
            results[i] = run.read_summary()
        else:
            todo.append(i)
    label = f"{description} ({backend}, {workers} workers)"
    if todo and backend == "local" and workers > 1 and len(todo) > 1:
        crashed = lambda k, exc: {  # noqa: E731
            "failed": True,
            "error": f"worker crashed: {exc!r}",
            "run_dir": jobs[todo[k]].run_dir,
        }
        out = run_tasks(
            run_job,
            [(jobs[i], threads) for i in todo],
            workers,
            initializer=_worker_init,
            description=label,
            on_error=crashed,
        )
        for i, r in zip(todo, out, strict=True):
            results[i] = r
    elif todo:
        with bar(label, total=len(jobs), enabled=progress) as pbar:
            pbar.update(len(jobs) - len(todo))
            if backend == "ray":
                _run_ray(jobs, todo, results, workers, threads, address, pbar)
            else:
                # one run left and spare workers: they train its units (seeds) side by side, the
                # run's own threads as its config says; one worker: the run gets ``threads``
                # (left at torch's default, two such runs side by side on two cores spin-wait in
                # each other's OpenMP regions: a fill stream ran 6x slower)
                spare = workers if backend == "local" and len(todo) == 1 else 1
                for i in todo:
                    own = None if spare > 1 else threads
                    results[i] = run_job(jobs[i], threads=own, unit_workers=spare)
                    pbar.update(1, info=jobs[i].run_dir)
    return [r if r is not None else {"failed": True, "error": "no result"} for r in results]


def _run_ray(jobs, todo, results, workers, threads, address, pbar) -> None:
    ray, started = start_ray(workers, address)
    try:
        remote = ray.remote(num_cpus=1)(run_job)
        refs = {remote.remote(jobs[i], threads): i for i in todo}
        pending = list(refs)
        while pending:
            done, pending = ray.wait(pending, num_returns=1)
            for ref in done:
                i = refs[ref]
                try:
                    results[i] = ray.get(ref)
                except Exception as exc:
                    results[i] = {
                        "failed": True,
                        "error": f"ray task failed: {exc!r}",
                        "run_dir": jobs[i].run_dir,
                    }
                pbar.update(1, info=jobs[i].run_dir)
    finally:
        if started:
            ray.shutdown()
