"""The two passes over a sharded dump, in one process, a process pool or Ray tasks.

Pass 1 (:func:`first_pass`, one task per shard): counts, means and within-class sums of squares of
the shard (``ClassStats.update`` over row chunks), merged in shard order with Chan's exact pairwise
update (``ClassStats.merge``). The merged statistics and the basis of the span of their class means
are then sent to every task of pass 2 (:func:`second_pass`, one per shard): the nearest-centre and
classifier decisions and the within-class scatter projected on that basis
(``ClassStats.decision_pass``), whose sums are added in shard order. The order of every merge is the
shard order whatever the executor, so one process, ``workers=N`` and Ray give the same numbers.
"""

from __future__ import annotations

import copy
import os
from collections.abc import Callable, Sequence
from contextlib import contextmanager
from typing import Any

import torch

from .._kernels import memory_budget, span_basis
from ..collapse import ClassStats
from ..errors import ConfigError, NclabError
from ..metrics.decision_views import DecisionViews
from ..stats._second_pass import frame
from ..workers import start_ray
from .shards import Reader, Shard, prefetch


def chunk_rows(dim: int, num_classes: int, itemsize: int = 8) -> int:
    """Rows per chunk read from a shard: the two chunk buffers (the one worked on, the next being
    read) within half the memory budget (the kernels' float64 copies are cache-sized blocks), and
    at least K / 4 rows so that the per-chunk K x D work (update's merge) stays amortised."""
    rows = memory_budget() // (4 * itemsize * max(dim, 1))
    return int(max(256, min(max(rows, num_classes // 4), 1 << 20)))


def first_pass(shard: Shard, num_classes: int, dim: int, remap: torch.Tensor | None) -> ClassStats:
    """Counts, means and sums of squares of one shard (scatter projected later, in pass 2)."""
    stats = ClassStats(num_classes, dim, scatter="subspace")
    with _naming(shard):
        reader = Reader(shard)
        for x, y in reader.chunks(chunk_rows(dim, num_classes, reader.itemsize)):
            stats.update(x, remap[y.long()] if remap is not None else y)
    return stats


def first_ahead(shard: Shard, num_classes: int, dim: int, remap) -> None:
    """Start reading the first chunk of ``shard`` for :func:`first_pass` (see ``Executor.map``)."""
    _ahead(shard, dim, num_classes)


def second_ahead(shard: Shard, merged: ClassStats, *_) -> None:
    """Start reading the first chunk of ``shard`` for :func:`second_pass`."""
    _ahead(shard, merged.dim, merged.num_classes)


def _ahead(shard: Shard, dim: int, num_classes: int) -> None:
    try:
        itemsize = Reader(shard).itemsize
    except NclabError:
        return  # the pass itself reports it
    prefetch(shard, chunk_rows(dim, num_classes, itemsize))


@contextmanager
def _naming(shard: Shard):
    """Errors raised while reading a shard name it."""
    try:
        yield
    except NclabError as exc:
        if shard.name in str(exc):
            raise
        raise type(exc)(f"shard {shard.name}: {exc}") from None


def second_pass(
    shard: Shard,
    merged: ClassStats,
    weights: torch.Tensor | None,
    bias: torch.Tensor | None,
    remap: torch.Tensor | None,
    views: bool,
) -> dict[str, Any]:
    """The second-pass sums of one shard against the merged statistics (their basis fixed)."""
    stats = copy.copy(merged)  # shares the statistics and the basis; its own second-pass sums
    stats.decision = type(merged.decision)()
    stats.basis_scatter, stats.pass2_count = None, 0
    dv = DecisionViews(stats, weights, bias) if views else None
    with _naming(shard):
        reader = Reader(shard)
        for x, y in reader.chunks(chunk_rows(stats.dim, stats.num_classes, reader.itemsize)):
            y = remap[y.long()] if remap is not None else y
            stats.decision_pass(x, y, weights, bias)
            if dv is not None:
                dv.update(x, y)
    return {
        "decision": stats.decision,
        "basis_scatter": stats.basis_scatter,
        "pass2_count": stats.pass2_count,
        "views": dv,
    }


first_pass.ahead = first_ahead  # see Executor.map
second_pass.ahead = second_ahead


def pass2_snapshot(merged: ClassStats) -> ClassStats:
    """What pass-2 tasks receive: the merged statistics without their pass-2 sums.

    The tasks must not be sent ``merged`` itself: a process pool pickles a task's arguments in a
    feeder thread, later than ``submit``, and torch's pickler moves each tensor into shared memory
    (``share_memory_``, a copy) while the main thread may be adding an earlier shard's sums into
    ``merged.basis_scatter`` in place; that addition was then lost (seen once in CI: NC1 with
    ``workers=2`` 0.80 of the one-process value, one shard of five missing)."""
    snap = copy.copy(merged)
    snap.decision = type(merged.decision)()
    snap.basis_scatter, snap.pass2_count = None, 0
    return snap


def add_second(stats: ClassStats, part: dict[str, Any], views: DecisionViews | None):
    """Add one shard's second-pass sums to ``stats`` (and its views to ``views``)."""
    dec, add = stats.decision, part["decision"]
    if add.n:
        for f in dec.tensor_fields:
            setattr(dec, f, getattr(dec, f) + getattr(add, f))
        dec.has_classifier = dec.has_classifier or add.has_classifier
    if part["basis_scatter"] is not None:
        if stats.basis_scatter is None:
            stats.basis_scatter = part["basis_scatter"].clone()
        else:
            stats.basis_scatter += part["basis_scatter"]
    stats.pass2_count += part["pass2_count"]
    if part["views"] is not None:
        views = part["views"] if views is None else views.merge(part["views"])
    return views


def fix_basis(stats: ClassStats) -> None:
    """Fix the orthonormal basis of the span of the centred class means that every pass-2 task uses
    (computed once, here, so that all tasks project on the same basis)."""
    if stats.basis is None:
        _, mc, u, sv = stats.centred_svd()
        stats.basis = span_basis(mc, (u, sv))
    frame(stats)  # the projected means, cached on the statistics every task receives


# --- executors ---------------------------------------------------------------------------------
class Executor:
    """Runs a function over argument tuples, returning results in order: in this process, in a
    process pool (``workers``) or as Ray tasks (``backend="ray"``, optional cluster ``address``)."""

    def __init__(
        self,
        workers: int = 1,
        backend: str = "local",
        address: str | None = None,
        threads: int | None = None,
    ):
        if backend not in ("local", "ray"):
            raise ConfigError(f"backend must be 'local' or 'ray', got {backend!r}")
        if not isinstance(workers, int) or workers < 1:
            raise ConfigError(f"workers must be a positive integer, got {workers!r}")
        self.workers, self.backend, self.address = workers, backend, address
        self.threads = threads or max(1, torch.get_num_threads() // workers)
        self._pool = self._ray = None

    def __enter__(self) -> Executor:
        if self.backend == "ray":
            self._ray = start_ray(self.workers, self.address)
        elif self.workers > 1:
            import multiprocessing as mp
            from concurrent.futures import ProcessPoolExecutor

            self._pool = ProcessPoolExecutor(
                self.workers,
                mp_context=mp.get_context("spawn"),
                initializer=_worker_init,
                initargs=(self.threads,),
            )
        return self

    def __exit__(self, *exc) -> None:
        if self._pool is not None:
            self._pool.shutdown()
        if self._ray is not None and self._ray[1]:
            self._ray[0].shutdown()

    def map(
        self,
        fn: Callable,
        args: Sequence[tuple],
        shared: tuple,
        consume: Callable[[int, Any], None],
    ) -> None:
        """consume(i, fn(*args[i], *shared)) for every i, in the order of ``args``, with at most
        2 x workers tasks in flight (so results do not pile up in memory); ``shared`` is sent once
        per task (Ray: ``ray.put`` once). In this process, when ``fn`` has an ``ahead`` attribute,
        ``fn.ahead(*args[i + 1], *shared)`` is called before task i runs (the passes start reading
        the next shard meanwhile)."""
        ahead = getattr(fn, "ahead", None)
        if self._ray is None and self._pool is None:
            for i, a in enumerate(args):
                if ahead is not None and i + 1 < len(args):
                    ahead(*args[i + 1], *shared)
                consume(i, fn(*a, *shared))
            return
        if self._ray is not None:
            ray = self._ray[0]
            refs = [ray.put(x) for x in shared]
            remote = ray.remote(num_cpus=1)(_call)

            def submit(a):
                return remote.remote(fn, self.threads, *a, *refs)

            def result(f):
                return ray.get(f)
        else:

            def submit(a):
                return self._pool.submit(_call, fn, self.threads, *a, *shared)

            def result(f):
                return f.result()

        window = 2 * self.workers
        flight: dict[int, Any] = {}
        for i in range(len(args)):
            while len(flight) >= window:  # wait for the oldest: results are consumed in order
                first = min(flight)
                consume(first, result(flight.pop(first)))
            flight[i] = submit(args[i])
        for i in sorted(flight):
            consume(i, result(flight.pop(i)))


def _worker_init(threads: int) -> None:
    os.environ["NCLAB_PROGRESS"] = "0"
    torch.set_num_threads(threads)


def _call(fn: Callable, threads: int, *args):
    torch.set_num_threads(threads)
    return fn(*args)
