"""Rich tables of metrics."""

from __future__ import annotations

from collections.abc import Mapping

from rich.table import Table


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


def metrics_table(rows: Mapping[str, Mapping[str, float]], title: str = "", row_label: str = "layer"):
    """A table with one row per entry of ``rows`` and one column per metric key."""
    keys: list[str] = []
    for m in rows.values():
        keys.extend(k for k in m if k not in keys)
    table = Table(title=title or None)
    table.add_column(row_label, style="bold")
    for k in keys:
        table.add_column(k, justify="right")
    for name, m in rows.items():
        table.add_row(name, *(fmt(m[k]) if k in m else "—" for k in keys))
    return table


def kv_table(values: Mapping[str, object], title: str = "", key: str = "metric", value: str = "value"):
    """A two-column table key | value."""
    table = Table(title=title or None)
    table.add_column(key, style="bold")
    table.add_column(value, justify="right")
    for k, v in values.items():
        table.add_row(str(k), fmt(v))
    return table
