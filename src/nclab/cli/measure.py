"""``nclab measure PATH``: collapse metrics of saved features."""

from __future__ import annotations

from pathlib import Path

import typer

from ._app import JSON_OPT, app, console, emit_json


@app.command()
def measure(
    path: Path = typer.Argument(
        ...,
        help=".npz or .pt file with features (N x D), labels (N), "
        "optional weights (K x D) and bias (K).",
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
    json: bool = JSON_OPT,
) -> None:
    """Measure NC1-NC4, CDNV and the other collapse metrics of saved features."""
    from ..measure import measure_file

    result = measure_file(
        path, num_classes=num_classes, drop_empty=drop_empty, global_mean=global_mean
    )
    if json:
        emit_json(result)
        return
    from ..tables import kv_table

    c = console()
    c.print(
        f"[bold]{path}[/]: N={result['num_samples']}, K={result['num_classes']}, D={result['dim']}"
    )
    if result.get("dropped_classes"):
        c.print(f"dropped empty classes: {result['dropped_classes']}")
    c.print(kv_table(result["metrics"], title="collapse metrics"))
    for key, why in result.get("skipped", {}).items():
        c.print(f"[dim]{key}: not computed ({why})[/]")
