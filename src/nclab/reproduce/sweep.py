"""``nclab sweep GRID.toml``: the product of a few config axes, one run directory each.

A grid file names a base experiment and preset, optional fixed overrides, and axes::

    experiment = "demo"
    preset = "default"          # optional
    seeds = 1                   # optional: seeds per point (mean/std in each run's summary)
    [set]                       # optional fixed overrides
    epochs = 20
    [axes]                      # each axis: a list, {logspace = [a, b, n]} (10^a..10^b),
    lr = [1e-3, 3e-3]           # {linspace = [a, b, n]} or {values = [...]}
    seed = [0, 1]
    weight_decay = {logspace = [-4, -2, 3]}

Nested keys may be written as TOML tables (``[axes.model] lambda_w = ...``) or dotted strings
(``"model.lambda_w" = ...``). Unknown keys and empty axes are errors naming what is valid.

Results: ``OUT/runs/<i>-<axis=value,...>/`` per point, ``OUT/sweep.csv`` (axes + every numeric
summary value + ``failed``/``error``), ``OUT/figures/<metric>.png`` (the metric against each axis,
mean ± std over the other axes), and ``OUT/sweep.json`` (what was asked; ``nclab report OUT``).
"""

from __future__ import annotations

import csv
import itertools
import json
import math
import re
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ..config import flatten, read_toml, valid_keys
from ..errors import ConfigError, RunError
from ..experiments import get_experiment
from ..experiments.schema import metric_items
from ..report.figures import Panel, save_panels
from ..runs import RunDir, dumps
from .backends import Job, execute

MANIFEST = "sweep.json"
RESERVED = {"experiment", "preset", "seeds", "set", "axes"}
AXIS_FORMS = ("logspace", "linspace", "values")


@dataclass
class Grid:
    experiment: str
    preset: str | None
    axes: dict[str, list[Any]]
    fixed: dict[str, Any] = field(default_factory=dict)
    seeds: int = 1

    def points(self) -> list[dict[str, Any]]:
        """The product of the axes, as override dicts (first axis varies slowest)."""
        names = list(self.axes)
        return [
            dict(zip(names, combo, strict=True))
            for combo in itertools.product(*(self.axes[n] for n in names))
        ]


def _axis_values(name: str, spec: Any) -> list[Any]:
    if isinstance(spec, list):
        values = spec
    elif isinstance(spec, Mapping) and len(spec) == 1 and next(iter(spec)) in AXIS_FORMS:
        form, arg = next(iter(spec.items()))
        if form == "values":
            values = list(arg)
        else:
            if not (isinstance(arg, list) and len(arg) == 3):
                raise ConfigError(f"axis {name!r}: {form} takes [start, stop, count], got {arg!r}")
            a, b, n = arg
            if not isinstance(n, int) or n < 1:
                raise ConfigError(f"axis {name!r}: the count of {form} must be a positive integer")
            pts = np.linspace(float(a), float(b), n)
            values = [float(10**p) if form == "logspace" else float(p) for p in pts]
    else:
        raise ConfigError(
            f"axis {name!r} must be a list or one of "
            f"{{logspace|linspace|values = [...]}}, got {spec!r}"
        )
    if not values:
        raise ConfigError(f"axis {name!r} is empty: give it at least one value")
    return values


def _split_axes(data: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    """Flatten nested axis tables, stopping at axis specs ({logspace = ...} etc.) and lists."""
    out: dict[str, Any] = {}
    for k, v in data.items():
        key = prefix + k
        if isinstance(v, Mapping) and not (len(v) == 1 and next(iter(v)) in AXIS_FORMS):
            out.update(_split_axes(v, key + "."))
        else:
            out[key] = v
    return out


def parse_grid(data: Mapping[str, Any]) -> Grid:
    """Validate a grid mapping (as read from TOML) against the experiment's config."""

    if "experiment" not in data:
        raise ConfigError("a grid needs 'experiment = \"NAME\"'")
    exp = get_experiment(str(data["experiment"]))
    preset = data.get("preset")
    preset = None if preset in (None, "default") else str(preset)
    seeds = data.get("seeds", 1)
    if not isinstance(seeds, int) or seeds < 1:
        raise ConfigError(f"seeds must be a positive integer, got {seeds!r}")
    fixed = flatten(data.get("set", {}))
    raw_axes = dict(data.get("axes", {}))
    raw_axes.update({k: v for k, v in data.items() if k not in RESERVED})
    axes = {k: _axis_values(k, v) for k, v in _split_axes(raw_axes).items()}
    if not axes:
        raise ConfigError("a grid needs at least one axis ([axes] name = [values])")
    keys = valid_keys(exp.config_cls)
    for key in list(axes) + list(fixed):
        if key not in keys:
            raise ConfigError(
                f"unknown key {key!r} for experiment {exp.name!r}; valid keys: " + ", ".join(keys)
            )
    grid = Grid(exp.name, preset, axes, fixed, seeds)
    for point in grid.points()[:1] + grid.points()[-1:]:  # type-check values early
        exp.config(preset, {**fixed, **point})
    return grid


def load_grid(path: str | Path) -> Grid:
    return parse_grid(read_toml(path, "grid file"))


def _slug(point: Mapping[str, Any]) -> str:
    text = ",".join(
        f"{k.split('.')[-1]}={v:.4g}" if isinstance(v, float) else f"{k.split('.')[-1]}={v}"
        for k, v in point.items()
    )
    return re.sub(r"[^A-Za-z0-9_.,=+-]", "_", text)[:120]


def jobs_for(grid: Grid, out: Path) -> list[Job]:
    return [
        Job.make(
            grid.experiment,
            grid.preset,
            out / "runs" / f"{i:04d}-{_slug(p)}",
            {**grid.fixed, **p},
            grid.seeds,
        )
        for i, p in enumerate(grid.points())
    ]


def run_sweep(
    grid: Grid,
    out: str | Path,
    backend: str = "local",
    workers: int | None = None,
    address: str | None = None,
    progress: bool = True,
) -> list[dict[str, Any]]:
    """Run every point of the grid (skipping finished ones) and aggregate; returns the CSV rows."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    (out / MANIFEST).write_text(dumps({"grid": asdict(grid)}, indent=2))
    execute(
        jobs_for(grid, out),
        backend=backend,
        workers=workers,
        address=address,
        progress=progress,
        description="sweep",
    )
    return aggregate(out)


def _numeric_leaves(experiment: str, summary: Mapping[str, Any]) -> dict[str, float]:
    """A point's columns: every number of its summary's measurements (its experiment's summary
    type says which fields are bookkeeping: :func:`~nclab.experiments.schema.metric_items`),
    and its wall time ``seconds``."""
    kept = {**metric_items(experiment, summary), "seconds": summary.get("seconds")}
    out = {}
    for k, v in flatten(kept).items():
        if isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v):
            out[k] = float(v)
    return out


def aggregate(out: str | Path) -> list[dict[str, Any]]:
    """Write ``sweep.csv`` and one figure per numeric summary value against each axis."""
    out = Path(out)
    path = out / MANIFEST
    if not path.is_file():
        raise RunError(f"{out} has no {MANIFEST}: not a sweep directory")
    grid = Grid(**json.loads(path.read_text())["grid"])
    rows, metrics = [], []
    for job, point in zip(jobs_for(grid, out), grid.points(), strict=True):
        run = RunDir(job.run_dir)
        row: dict[str, Any] = dict(point)
        if run.finished:
            vals = _numeric_leaves(grid.experiment, run.read_summary())
            row.update(vals)
            row["failed"] = False
            metrics.extend(k for k in vals if k not in metrics and k not in point)
        else:
            err = run.path / "error.txt"
            row["failed"] = True
            row["error"] = err.read_text().strip().splitlines()[-1] if err.is_file() else "not run"
        row["run_dir"] = str(run.path)
        rows.append(row)
    cols = list(grid.axes) + metrics + ["failed", "error", "run_dir"]
    with open(out / "sweep.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=cols, extrasaction="ignore")
        w.writeheader()
        for r in rows:
            w.writerow(r)
    _figures(out, grid, rows, metrics)
    return rows


def _figures(out: Path, grid: Grid, rows: list[dict], metrics: list[str]) -> None:

    done = [r for r in rows if not r["failed"]]
    numeric_axes = [a for a in grid.axes if all(isinstance(v, int | float) for v in grid.axes[a])]
    if not done or not numeric_axes:
        return
    skip = {"seconds"}
    for m in metrics:
        if m in skip:
            continue
        panels = []
        for a in numeric_axes:
            xs = sorted(set(grid.axes[a]))
            mean, std = [], []
            for x in xs:
                vals = [r[m] for r in done if r.get(a) == x and m in r]
                mean.append(float(np.mean(vals)) if vals else None)
                std.append(float(np.std(vals)) if vals else 0.0)
            keep = [i for i, v in enumerate(mean) if v is not None]
            xs, mean, std = ([xs[i] for i in keep], [mean[i] for i in keep], [std[i] for i in keep])
            logx = bool(xs) and all(x > 0 for x in xs) and max(xs) / min(xs) > 50
            panels.append(Panel(f"{m} vs {a}", {m: (xs, mean, std)}, xlabel=a, logx=logx))
        name = re.sub(r"[^A-Za-z0-9_.-]", "_", m)
        save_panels(out / "figures" / f"{name}.png", panels, ncols=min(3, len(panels)))
