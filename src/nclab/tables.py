"""Rich tables of metrics (rich only: the probe, the CLI and the reports all print with them)."""

from __future__ import annotations

from collections.abc import Mapping

from rich.table import Table


def fmt_secs(s: float) -> str:
    """A duration as the reports print it.

    >>> fmt_secs(42), fmt_secs(600), fmt_secs(7200)
    ('42 s', '10 min', '2.0 h')
    """
    if s < 90:
        return f"{s:.0f} s"
    if s < 5400:
        return f"{s / 60:.0f} min"
    return f"{s / 3600:.1f} h"


def fmt(v) -> str:
    if isinstance(v, bool):
        return str(v)
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        if v == 0:
            return "0"
        return f"{v:.4g}" if 1e-3 <= abs(v) < 1e5 else f"{v:.3e}"
    return str(v)


def metrics_table(
    rows: Mapping[str, Mapping[str, float]],
    title: str = "",
    row_label: str = "layer",
    transpose: bool | None = None,
):
    """A table of ``{row: {metric: value}}``; with many metrics (``transpose`` None or True) the
    metrics become the rows and the entries the columns, so it fits a terminal."""
    keys: list[str] = []
    for m in rows.values():
        keys.extend(k for k in m if k not in keys)
    if transpose is None:
        transpose = len(keys) > len(rows)
    table = Table(title=title or None)
    if transpose:
        table.add_column("metric", style="bold")
        for name in rows:
            table.add_column(str(name), justify="right")
        for k in keys:
            table.add_row(k, *(fmt(m[k]) if k in m else "—" for m in rows.values()))
        return table
    table.add_column(row_label, style="bold")
    for k in keys:
        table.add_column(k, justify="right")
    for name, m in rows.items():
        table.add_row(str(name), *(fmt(m[k]) if k in m else "—" for k in keys))
    return table


def kv_table(
    values: Mapping[str, object], title: str = "", key: str = "metric", value: str = "value"
):
    """A two-column table key | value."""
    table = Table(title=title or None)
    table.add_column(key, style="bold")
    table.add_column(value, justify="right")
    for k, v in values.items():
        table.add_row(str(k), fmt(v))
    return table
