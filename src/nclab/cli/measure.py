"""``nclab measure PATH...``: collapse metrics of saved features (one file or a sharded dump)."""

from __future__ import annotations

from contextlib import contextmanager
from pathlib import Path

import typer

from ..errors import DataError
from ._app import JSON_OPT, app, console, emit_json


@app.command()
def measure(
    paths: list[Path] = typer.Argument(
        None,
        help="Feature files: one .npz or .pt with features (N x D), labels (N), optional weights "
        "(K x D) and bias (K); or shards: several files, a directory or a glob of .npz, .pt, "
        ".safetensors, <stem>.features.npy + <stem>.labels.npy (streamed in two passes).",
    ),
    num_classes: int = typer.Option(
        None, "--num-classes", "-k", help="K (default: rows of weights, else max label + 1)."
    ),
    drop_empty: bool = typer.Option(
        False, "--drop-empty", help="Drop classes with no samples instead of failing."
    ),
    global_mean: str = typer.Option(
        "class", help="Global mean: 'class' (mean of class means) or 'sample' (mean of samples)."
    ),
    workers: int = typer.Option(
        1, "--workers", "-w", help="Processes measuring shards in parallel."
    ),
    backend: str = typer.Option("local", help="'local' (processes) or 'ray' (Ray tasks)."),
    address: str = typer.Option(None, help="Ray cluster address (--backend ray)."),
    save_stats: Path = typer.Option(
        None, "--save-stats", help="Write the merged statistics (and classifier) to this file."
    ),
    stats: Path = typer.Option(
        None, "--stats", help="Metrics from statistics saved by --save-stats (no features)."
    ),
    per_class: bool = typer.Option(
        False, "--per-class", help="Also NC4 averaged per class and top-1/top-5 accuracy."
    ),
    memory: float = typer.Option(
        None, "--memory-gb", help="Memory budget of one tile of pairwise / decision values (GB)."
    ),
    json: bool = JSON_OPT,
) -> None:
    """Measure NC1-NC4, CDNV and the other collapse metrics of saved features."""
    if save_stats is not None:  # before any work: a bad path is not found after it
        from ..measure.sharded import check_save_path

        check_save_path(save_stats, "--save-stats")
    show = _Show(json, workers)
    sharding = dict(workers=workers, backend=backend, address=address, save_stats=save_stats)
    with _memory_budget(memory):
        result, where = _measure(
            paths,
            stats,
            per_class,
            sharding,
            show,
            num_classes=num_classes,
            drop_empty=drop_empty,
            global_mean=global_mean,
        )
    if not show.done:
        show(result, where)


@contextmanager
def _memory_budget(memory: float | None):
    """``--memory-gb`` for this command, checked in GB."""
    from .._kernels import memory_budget, set_memory_budget

    if memory is not None and not memory > 0:
        raise DataError(
            f"--memory-gb must be a positive number of GB, e.g. 0.5 or 4; got {memory:g}"
        )
    old = memory_budget()
    if memory is not None:
        try:
            set_memory_budget(int(memory * 2**30))
        except DataError:
            raise DataError(
                f"--memory-gb {memory:g} is too small: at least 0.001 (1 MiB)"
            ) from None
    try:
        yield
    finally:
        set_memory_budget(old)


class _Show:
    """Print a result (JSON or a table), with the reasons for skipped metrics in the command line's
    terms and a note when a small dump ran in this process instead of ``--workers`` processes."""

    def __init__(self, json: bool, workers: int):
        self.json, self.workers, self.done = json, workers, False

    def __call__(self, result: dict, where: str) -> None:
        if "skipped" in result:
            from ..measure._report import cli_terms

            result["skipped"] = cli_terms(result["skipped"])
        if result.get("workers", self.workers) < self.workers:
            size = result["bytes"]
            size = f"{size / 1e6:.1f} MB" if size >= 1e5 else f"{size / 1e3:.1f} kB"
            console(stderr=True).print(
                f"--workers {self.workers}: the dump is small ({size}), so it was measured in "
                "this process (starting worker processes would cost more than they save)"
            )
        if self.json:
            emit_json(result)
        else:
            _print(result, where)
        self.done = True


def _measure(paths, stats, per_class: bool, sharding: dict, show, **common):
    """(result, what was measured): saved statistics, one file in memory, or shards; ``show`` the
    metrics before the statistics are saved (a failed save comes after them)."""
    if stats is not None:
        if paths:
            raise DataError("give either feature files or --stats FILE, not both")
        from ..measure import measure_saved

        return measure_saved(stats, global_mean=common["global_mean"]), str(stats)
    if not paths:
        raise DataError("nclab measure needs feature files (or --stats FILE)")
    from ..measure import measure_file, measure_paths

    where = " ".join(map(str, paths))
    one = len(paths) == 1 and paths[0].is_file() and paths[0].suffix in (".npz", ".pt", ".pth")
    plain = sharding["workers"] == 1 and sharding["backend"] == "local"
    if one and plain and sharding["save_stats"] is None and not per_class:
        return measure_file(paths[0], **common), where
    result = measure_paths(
        paths,
        per_class=per_class,
        before_save=lambda r: show(r, where),
        **sharding,
        **common,
    )
    return result, where


def _print(result: dict, where: str) -> None:
    from ..tables import kv_table

    c = console()
    c.print(
        f"[bold]{where}[/]: N={result['num_samples']}, K={result['num_classes']}, D={result['dim']}"
    )
    if result.get("dropped_classes"):
        c.print(f"dropped empty classes: {result['dropped_classes']}")
    if result.get("empty_shards"):
        c.print(f"empty shards: {', '.join(result['empty_shards'])}")
    c.print(kv_table(result["metrics"], title="collapse metrics"))
    for key, why in result.get("skipped", {}).items():
        c.print(f"[dim]{key}: not computed ({why})[/]")
    for key, why in result.get("notes", {}).items():
        c.print(f"[yellow]note[/] {key}: {why}")
