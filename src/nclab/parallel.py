"""Running independent tasks in spawned worker processes, with one progress bar.

:func:`run_tasks` is the one process pool of nclab: the runner trains an experiment's units with
it (``workers``), and ``nclab reproduce`` its runs. Workers are spawned (no fork of a process
holding torch threads), run ``initializer(*initargs)`` once (e.g. load a data set) and then
``fn(*task)`` for each task; results come back in the order of ``tasks``.
"""

from __future__ import annotations

import multiprocessing as mp
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from typing import Any

from .progress import track


def run_tasks(
    fn: Callable[..., Any],
    tasks: Sequence[tuple],
    workers: int,
    initializer: Callable[..., None] | None = None,
    initargs: tuple = (),
    description: str = "tasks",
    on_error: Callable[[int, BaseException], Any] | None = None,
) -> list[Any]:
    """``[fn(*t) for t in tasks]`` computed in ``workers`` spawned processes.

    A task that raises re-raises here (the others are cancelled) unless ``on_error(i, exc)`` is
    given, whose value then stands for task ``i``'s result."""
    results: list[Any] = [None] * len(tasks)
    ctx = mp.get_context("spawn")
    pool = ProcessPoolExecutor(
        max(1, min(workers, len(tasks))),
        mp_context=ctx,
        initializer=initializer,
        initargs=initargs,
    )
    try:
        futures = {pool.submit(fn, *t): i for i, t in enumerate(tasks)}
        for fut in track(as_completed(futures), description, total=len(futures)):
            i = futures[fut]
            try:
                results[i] = fut.result()
            except Exception as exc:
                if on_error is None:
                    raise
                results[i] = on_error(i, exc)
    finally:
        pool.shutdown(cancel_futures=True)
    return results
