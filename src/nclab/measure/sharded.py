"""``nclab measure PATH...`` over a sharded dump, and saved statistics (``--save-stats``/``--stats``).

:func:`measure_paths` finds and checks the shards (:mod:`.shards`), runs pass 1 and pass 2
(:mod:`.passes`) in this process, in ``workers`` processes or as Ray tasks, and reports the same
metrics as :func:`nclab.measure.measure_arrays`. Memory: one chunk of rows per task, the K x D
statistics, and the decisions in blocks of the memory budget; the dump is never loaded whole
(``.npy``, ``.pt`` and ``.safetensors`` shards are memory-mapped or read by row slices).
"""

from __future__ import annotations

import os
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch

from .. import progress
from ..collapse import ClassStats
from ..errors import DataError
from ..validation import check_classifier
from . import passes
from ._report import kept_classes, per_class_views, report
from .shards import find_shards, release_buffers, scan, short_reason

SAVED = "nclab-measure-stats"
#: a local dump smaller than this is measured in this process whatever ``workers`` says: starting
#: worker processes (each imports torch) costs more than they save on it
POOL_MIN_BYTES = 256 << 20


def measure_paths(
    paths: list[str | Path],
    num_classes: int | None = None,
    drop_empty: bool = False,
    global_mean: str = "class",
    workers: int = 1,
    backend: str = "local",
    address: str | None = None,
    save_stats: str | Path | None = None,
    per_class: bool = False,
    show_progress: bool = True,
    before_save: Callable[[dict[str, Any]], None] | None = None,
) -> dict[str, Any]:
    """Collapse metrics of the features in the shards named by ``paths`` (files, directories, glob
    patterns), streamed in two passes; the result does not depend on ``workers`` or ``backend``.

    ``per_class=True`` adds the per-class decision views (NC4 per class, top-k accuracy) to the
    metrics and ``"per_class"``: K values each of ``mean_norm``, ``cdnv`` (one class against all),
    ``duality_cos``, ``count``, ``ncc_acc``, ``agreement``, ``acc``, for plots.
    ``save_stats`` writes the merged statistics and the classifier (see :func:`measure_saved`); the
    path is checked before any work, and ``before_save(result)`` (e.g. printing it) runs before the
    statistics are written. ``"workers"`` in the result is the number of processes that
    measured: 1 for a local dump below :data:`POOL_MIN_BYTES` (a pool would only cost time).

    Length: the two passes, the pool decision and the save, in the order a reader follows them.
    """
    if save_stats is not None:
        check_save_path(save_stats)
    shards = find_shards(paths)
    k, dim, weights, bias = _classes(shards, num_classes)
    total = sum(sh.nbytes for sh in shards)
    if backend == "local" and isinstance(workers, int) and workers > 1 and total < POOL_MIN_BYTES:
        workers = 1
    stats = ClassStats(k, dim, scatter="subspace")
    views: list = [None]

    def add_first(i: int, part: ClassStats) -> None:
        stats.merge(part)
        _advance(bar, shards, 1, i)

    def add_second(i: int, part) -> None:
        views[0] = passes.add_second(merged, part, views[0])
        _advance(bar, shards, 2, i)

    with passes.Executor(workers, backend, address) as ex:
        with progress.bar("measure: 2 passes over shards", 2 * total, enabled=show_progress) as bar:
            try:
                args = [(sh,) for sh in shards]
                ex.map(passes.first_pass, args, (k, dim, None), add_first)
                merged, dropped, remap, weights, bias = _drop(stats, drop_empty, weights, bias)
                merged.check_nonempty()
                passes.fix_basis(merged)
                shared = (passes.pass2_snapshot(merged), weights, bias, remap, per_class)
                ex.map(passes.second_pass, args, shared, add_second)
            finally:
                release_buffers()
    out = _report(merged, views[0], shards, weights, bias, global_mean)
    out["workers"] = workers
    if drop_empty:
        out["dropped_classes"] = dropped
    if before_save is not None:
        before_save(out)
    if save_stats is not None:
        save(save_stats, merged, weights, bias, dropped)
    return out


def _report(stats, views, shards, weights, bias, global_mean: str) -> dict[str, Any]:
    """The report of the merged statistics, with the dump's sizes and the per-class views."""
    out = report(stats, weights, bias, global_mean)
    total = sum(sh.nbytes for sh in shards)
    out.update(num_samples=stats.num_samples, shards=len(shards), bytes=total)
    empty = [sh.name for sh in shards if sh.rows == 0]
    if empty:
        out["empty_shards"] = empty
    if views is not None:
        out["metrics"].update(views.metrics())
        out["per_class"] = per_class_views(stats, weights, views)
    return out


def _classes(shards, num_classes: int | None):
    """(K, D, W, b) of the dump: K from ``num_classes``, else the classifier's rows, else the
    labels; the classifier checked against them."""
    dim, weights, bias, top = scan(shards)
    k = num_classes or (weights.shape[0] if weights is not None else top)
    if k < 1 or top > k:
        where = next(sh for sh in shards if sh.top == top)
        source = "--num-classes / num_classes" if num_classes else "the rows of weights"
        raise DataError(
            f"labels in shard {where.name} go up to {top - 1}, but K = {k} ({source}): the labels "
            f"must lie in [0, {k})"
        )
    if weights is not None:
        weights, bias = check_classifier(weights, bias, k, dim, torch.device("cpu"))
    return k, dim, weights, bias


def _drop(stats: ClassStats, drop_empty: bool, weights, bias):
    """The merged pass-1 statistics with empty classes dropped if asked: (stats, dropped classes,
    label remap or None, classifier rows kept)."""
    dropped: list[int] = []
    remap = None
    if drop_empty:
        k = stats.num_classes
        stats, dropped = stats.drop_empty()
        if dropped:
            keep, remap = kept_classes(dropped, k)
            weights = weights[keep] if weights is not None else None
            bias = bias[keep] if bias is not None else None
    if stats.num_classes < 2:
        raise DataError(
            f"collapse metrics need at least 2 classes with samples, got {stats.num_classes}"
        )
    return stats, dropped, remap, weights, bias


def _advance(bar, shards, which: int, i: int) -> None:
    bar.update(shards[i].nbytes, info=f"pass {which}: {i + 1}/{len(shards)} {shards[i].path.name}")


def check_save_path(path: str | Path, option: str = "save_stats") -> None:
    """Refuse, before any work, a path the statistics cannot be written to: a folder, a missing
    folder, a place without write permission."""
    path = Path(path)
    parent = path.parent if str(path.parent) else Path(".")
    if path.is_dir():
        raise DataError(f"{option} {path} is a folder: give a file name, e.g. {path / 'stats.pt'}")
    if not parent.is_dir():
        raise DataError(f"{option} {path}: the folder {parent} does not exist")
    if (path.exists() and not _writable(path)) or not _writable(parent):
        raise DataError(f"{option} {path}: not writable (no write permission)")


def _writable(path: Path) -> bool:
    return os.access(path, os.W_OK)


def save(path, stats: ClassStats, weights, bias, dropped: list[int]) -> None:
    """Write the statistics (readable by ``ClassStats.load``) with the classifier they were
    measured with; a failed write is a :class:`DataError` and leaves no partial file."""
    state = stats.state_dict()
    state[SAVED] = {"weights": weights, "bias": bias, "dropped_classes": dropped}
    path = Path(path)
    tmp = path.with_name(f".{path.name}.tmp")
    try:
        with open(tmp, "wb") as f:
            torch.save(state, f)
        os.replace(tmp, path)
    except (OSError, RuntimeError) as exc:
        tmp.unlink(missing_ok=True)
        why = exc.strerror if isinstance(exc, OSError) and exc.strerror else short_reason(exc)
        raise DataError(f"cannot write the statistics to {path}: {why}") from None


def read_saved(path: str | Path) -> dict:
    """The state of a statistics file, or a :class:`DataError` saying what the file is instead."""
    path = Path(path)
    if not path.is_file():
        raise DataError(f"statistics file not found: {path}")
    what = (
        f"{path} is not a statistics file (as nclab measure --save-stats and ClassStats.save write)"
    )
    if not zipfile.is_zipfile(path):
        raise DataError(f"{what}: it is not a torch file")
    try:
        state = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as exc:
        with zipfile.ZipFile(path) as z:
            if any(n.endswith(".npy") for n in z.namelist()):
                raise DataError(
                    f"{what}: it is a .npz archive of arrays (features are measured with "
                    "nclab measure FILE, without --stats)"
                ) from None
        raise DataError(f"{what}: {short_reason(exc)}") from None
    if not isinstance(state, dict) or not {"meta", "tensors"} <= set(state):
        held = (
            f"a dict with keys {', '.join(map(repr, list(state)[:6]))}"
            if isinstance(state, dict)
            else f"a {type(state).__name__}"
        )
        raise DataError(f"{what}: it is a torch file holding {held}")
    return state


def measure_saved(path: str | Path, global_mean: str = "class") -> dict[str, Any]:
    """The metrics of statistics written by ``measure_paths(save_stats=...)`` (``nclab measure
    --stats FILE``): no features needed."""
    extra = read_saved(path).get(SAVED)
    stats = ClassStats.load(path)
    if extra is None:
        weights = bias = None
    else:
        weights, bias = extra["weights"], extra["bias"]
    out = report(stats, weights, bias, global_mean)
    out["num_samples"] = stats.num_samples
    return out
