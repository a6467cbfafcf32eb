"""Worker processes beyond this one.

* :func:`run_tasks`, the one process pool of nclab: the runner trains an experiment's units with
  it (``workers``), and ``nclab reproduce`` its runs. Workers are spawned (no fork of a process
  holding torch threads), run ``initializer(*initargs)`` once (e.g. load a data set) and then
  ``fn(*task)`` for each task; results come back in the order of ``tasks``.
* :func:`start_ray`: starting Ray for worker tasks (shared by ``nclab reproduce --backend ray`` and
  ``nclab measure --backend ray``). Ray is an optional extra, imported only when a Ray backend is
  asked for.
"""

from __future__ import annotations

import multiprocessing as mp
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from typing import Any

from .errors import ConfigError
from .progress import track

__all__ = ["run_tasks", "start_ray"]


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


def start_ray(workers: int, address: str | None = None):
    """(the ray module, whether this call started it): joins the cluster at ``address``, else
    starts a local Ray with ``workers`` CPUs; an already running Ray is used as it is. Workers get
    ``NCLAB_PROGRESS=0`` (no progress bars from tasks)."""
    try:
        import ray
    except ImportError:
        raise ConfigError(
            "the ray backend needs Ray: pip install 'nclab[ray]' (or pip install ray)"
        ) from None
    if ray.is_initialized():
        return ray, False
    kwargs = {
        "include_dashboard": False,
        "log_to_driver": False,
        "runtime_env": {"env_vars": {"NCLAB_PROGRESS": "0"}},
    }
    if address:
        ray.init(address=address, **kwargs)
    else:
        ray.init(num_cpus=workers, **kwargs)
    return ray, True
