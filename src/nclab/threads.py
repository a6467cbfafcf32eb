"""Torch's CPU thread count (and, for a whole run, BLAS's), set for one run and restored after it
(worker processes and Ray: :mod:`nclab.workers`), and row blocks of the per-sample kernels dealt to threads
(:func:`map_blocks`).

>>> import torch
>>> before = torch.get_num_threads()
>>> with torch_threads(1):
...     torch.get_num_threads()
1
>>> torch.get_num_threads() == before
True
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from typing import Any

import torch


@contextmanager
def torch_threads(threads: int | None) -> Iterator[None]:
    """Run the block with ``threads`` torch CPU threads (None or 0: leave torch's setting)."""
    old = torch.get_num_threads()
    if threads:
        torch.set_num_threads(int(threads))
    try:
        yield
    finally:
        if torch.get_num_threads() != old:
            torch.set_num_threads(old)


@contextmanager
def run_threads(threads: int | None) -> Iterator[None]:
    """:func:`torch_threads` for a whole run, and the same limit on numpy's and scipy's BLAS
    (OpenBLAS / MKL, through threadpoolctl), restored after.

    Why: a run that asks for one thread (``threads = 1``, e.g. one of several workers) and solves
    small dense systems in scipy would otherwise start a BLAS thread per core, which on a busy
    machine spin-wait for each other: an LSODA solve of 252 unknowns took 10 s instead of 0.75 s
    beside two other training processes on two cores.
    """
    if not threads:
        yield
        return
    from threadpoolctl import threadpool_limits

    with torch_threads(threads), threadpool_limits(limits=int(threads), user_api="blas"):
        yield


def limit_blas(threads: int) -> None:
    """Set numpy's and scipy's BLAS thread count for the rest of this process (a worker's)."""
    from threadpoolctl import threadpool_limits

    threadpool_limits(limits=int(threads), user_api="blas")


# --- row blocks dealt to threads ------------------------------------------------------------------
_section = threading.Lock()  # one block-parallel section at a time (it sets the thread count)
_pool: ThreadPoolExecutor | None = None


def map_blocks(
    n: int,
    rows: int,
    body: Callable[[Any, int, int], None],
    make_state: Callable[[int], Any],
    device: torch.device,
    min_rows: int = 0,
) -> list[Any]:
    """Run ``body(state, i, j)`` for every block [i, j) of ``rows`` rows of ``n``: on CPU with
    T = torch's thread count > 1, the blocks are dealt to T threads (block b to thread b % T), each
    running torch single-threaded on its own ``state = make_state(t)`` (t = 0 .. T - 1); returns
    the states in thread order, for the caller to merge in that order.

    Why: a block's work is dozens of torch operations, and run on all threads each would be an
    OpenMP region that waits for the slowest of its threads (on a loaded machine, a scheduler
    slice, every operation); dealt out whole, the blocks need no synchronisation until the end.
    The result depends on T (as a multi-threaded GEMM's does), not on timing. Threads get at least
    ``min_rows`` rows each (so that a per-thread accumulator is worth its merge); elsewhere, in a
    nested call, or with one thread, the blocks run in order in this thread on one state.

    >>> out = map_blocks(10, 3, lambda s, i, j: s.append((i, j)), lambda t: [], torch.device("cpu"))
    >>> sorted(b for s in out for b in s)
    [(0, 3), (3, 6), (6, 9), (9, 10)]
    """
    blocks = [(i, min(i + rows, n)) for i in range(0, n, rows)]
    threads = 1
    if device.type == "cpu" and len(blocks) > 1:
        threads = min(torch.get_num_threads(), len(blocks), max(1, n // max(min_rows, 1)))
    if threads <= 1 or not _section.acquire(blocking=False):
        state = make_state(0)
        for i, j in blocks:
            body(state, i, j)
        return [state]
    try:
        with torch_threads(1):
            states = [make_state(t) for t in range(threads)]
            errors: list[tuple[int, BaseException]] = []

            def run(t: int) -> None:
                torch.set_num_threads(1)  # this thread's OpenMP and MKL settings
                for b in range(t, len(blocks), threads):
                    try:
                        body(states[t], *blocks[b])
                    except BaseException as exc:  # raised below, in block order
                        errors.append((b, exc))
                        return

            pool = _get_pool(threads - 1)
            futures = [pool.submit(run, t) for t in range(1, threads)]
            run(0)
            for f in futures:  # every thread stops before this returns: they share the data
                f.result()
            if errors:  # the error of the first failing block, as one thread would raise it
                raise min(errors, key=lambda e: e[0])[1]
        return states
    finally:
        _section.release()


def _get_pool(workers: int) -> ThreadPoolExecutor:
    global _pool
    if _pool is None or _pool._max_workers < workers:
        if _pool is not None:
            _pool.shutdown(wait=True)
        _pool = ThreadPoolExecutor(workers, thread_name_prefix="nclab-blocks")
    return _pool
