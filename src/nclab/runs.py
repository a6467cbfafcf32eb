"""Run directories: one folder per run, as DESIGN.md describes.

::

    run_dir/
      config.toml      the fully resolved config (plus experiment and preset names)
      metrics.jsonl    one JSON object per logged step
      summary.json     final numbers, theory predictions beside them, versions, seed, wall time
      figures/*.png
      checkpoint.pt    while running (removed when the run finishes, unless kept)
      error.txt        traceback, when the run raised

>>> import tempfile
>>> run = RunDir(tempfile.mkdtemp())
>>> run.log({"step": 0, "loss": 1.5})
>>> run.log({"step": 10, "loss": 0.5})
>>> [r["loss"] for r in run.read_metrics()]
[1.5, 0.5]
"""

from __future__ import annotations

import json
import math
import os
import platform
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ._version import __version__
from .errors import RunError

SUMMARY = "summary.json"
METRICS = "metrics.jsonl"
CONFIG = "config.toml"
CHECKPOINT = "checkpoint.pt"
ERROR = "error.txt"


def to_jsonable(obj: Any) -> Any:
    """Convert tensors, numpy values and dataclasses to plain JSON types.

    The one JSON encoding of non-finite numbers in nclab: NaN, +inf and -inf become ``None`` (JSON
    null; JSON has no such numbers, and summaries, reports and claims read null as "no value").
    :func:`non_finite` names the values written as null and what they were.

    >>> to_jsonable({"a": float("inf"), "b": (1, 2.5), "c": float("nan")})
    {'a': None, 'b': [1, 2.5], 'c': None}
    """
    return _encode(obj, None, None)


def non_finite(obj: Any) -> dict[str, str]:
    """{dotted path: ``"inf"``, ``"-inf"`` or ``"nan"``} for each non-finite number in ``obj``:
    the values :func:`to_jsonable` writes as null, told apart (``nclab theory --json`` prints them,
    so that an infinite bound is not mistaken for an undefined one).

    >>> non_finite({"a": 1.0, "b": [2.0, float("inf")], "c": {"d": float("nan")}})
    {'b.1': 'inf', 'c.d': 'nan'}
    """
    found: dict[str, str] = {}
    _encode(obj, "", found)
    return found


def _encode(obj: Any, path: str | None, found: dict[str, str] | None) -> Any:
    """:func:`to_jsonable`, noting the non-finite numbers in ``found`` (by ``path``) when given."""
    if hasattr(obj, "to_dict") and callable(obj.to_dict):
        return _encode(obj.to_dict(), path, found)
    if isinstance(obj, Mapping):
        return {str(k): _encode(v, _at(path, k, found), found) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [_encode(v, _at(path, i, found), found) for i, v in enumerate(obj)]
    if isinstance(obj, bool) or obj is None or isinstance(obj, str):
        return obj
    if isinstance(obj, int):
        return obj
    if isinstance(obj, float):
        if math.isfinite(obj):
            return obj
        if found is not None:
            found[path] = "nan" if math.isnan(obj) else ("inf" if obj > 0 else "-inf")
        return None
    if hasattr(obj, "tolist"):  # numpy / torch
        return _encode(obj.tolist(), path, found)
    if isinstance(obj, Path):
        return str(obj)
    try:
        return _encode(float(obj), path, found)
    except (TypeError, ValueError):
        return str(obj)


def _at(path: str | None, key: Any, found: dict | None) -> str | None:
    """The path of ``key`` under ``path`` (None when no path is kept)."""
    return None if found is None else (f"{path}.{key}" if path else str(key))


def drop_none(obj: Any) -> Any:
    """``obj`` without the ``None`` values of its dicts, at every depth (TOML has no null)."""
    if isinstance(obj, dict):
        return {k: drop_none(v) for k, v in obj.items() if v is not None}
    if isinstance(obj, list):
        return [drop_none(v) for v in obj]
    return obj


def dumps(obj: Any, indent: int | None = None) -> str:
    return json.dumps(to_jsonable(obj), indent=indent, allow_nan=False)


def versions() -> dict[str, str]:
    """Versions of the software a result depends on."""
    import numpy
    import torch

    return {
        "nclab": __version__,
        "torch": torch.__version__,
        "numpy": numpy.__version__,
        "python": platform.python_version(),
    }


class RunDir:
    """A run directory. Creating one makes the folder; nothing else is written until asked."""

    def __init__(self, path: str | Path, create: bool = True):
        self.path = Path(path)
        if create:
            self.path.mkdir(parents=True, exist_ok=True)
        elif not self.path.is_dir():
            raise RunError(f"run directory not found: {self.path}")
        self._t0 = time.perf_counter()

    # --- files -------------------------------------------------------------------------------
    @property
    def figures(self) -> Path:
        p = self.path / "figures"
        p.mkdir(exist_ok=True)
        return p

    @property
    def checkpoint_path(self) -> Path:
        return self.path / CHECKPOINT

    def write_config(self, cfg: Any, **meta: Any) -> None:
        """Write ``config.toml``: the resolved config plus ``[nclab]`` metadata (experiment, preset)."""
        import tomli_w

        data = cfg.to_dict() if hasattr(cfg, "to_dict") else dict(cfg)
        body = tomli_w.dumps(drop_none(to_jsonable(data)))
        head = tomli_w.dumps({"nclab": drop_none(to_jsonable(meta))}) if meta else ""
        (self.path / CONFIG).write_text(body + ("\n" + head if head else ""))

    def read_config(self) -> dict[str, Any]:
        import tomllib

        p = self.path / CONFIG
        if not p.is_file():
            raise RunError(f"{self.path} has no {CONFIG}: not a run directory")
        return tomllib.loads(p.read_text())

    def log(self, record: Mapping[str, Any]) -> None:
        """Append one record to ``metrics.jsonl``."""
        with open(self.path / METRICS, "a") as f:
            f.write(dumps(record) + "\n")

    def read_metrics(self) -> list[dict[str, Any]]:
        p = self.path / METRICS
        if not p.is_file():
            return []
        return [json.loads(line) for line in p.read_text().splitlines() if line.strip()]

    def truncate_metrics(self, keep: int) -> None:
        """Keep only the first ``keep`` records (used when resuming from a checkpoint)."""
        rows = self.read_metrics()[:keep]
        (self.path / METRICS).write_text("".join(dumps(r) + "\n" for r in rows))

    def write_summary(self, summary: Mapping[str, Any], seconds: float | None = None) -> dict:
        out = dict(summary)
        out.setdefault("seconds", seconds if seconds is not None else self.elapsed())
        out.setdefault("versions", versions())
        tmp = self.path / f"{SUMMARY}.{os.getpid()}.tmp"  # per process: ranks under torchrun
        tmp.write_text(dumps(out, indent=2) + "\n")
        os.replace(tmp, self.path / SUMMARY)
        return to_jsonable(out)

    def read_summary(self) -> dict[str, Any]:
        p = self.path / SUMMARY
        if not p.is_file():
            raise RunError(f"{self.path} has no {SUMMARY}: the run has not finished")
        return json.loads(p.read_text())

    @property
    def finished(self) -> bool:
        return (self.path / SUMMARY).is_file()

    def write_error(self, text: str) -> None:
        (self.path / ERROR).write_text(text)

    def elapsed(self) -> float:
        return time.perf_counter() - self._t0

    # --- checkpoints ---------------------------------------------------------------------------
    def save_checkpoint(self, state: Mapping[str, Any]) -> None:
        """Atomically write ``checkpoint.pt`` (any picklable state with tensors)."""
        import torch

        tmp = self.path / f"{CHECKPOINT}.{os.getpid()}.tmp"
        torch.save(dict(state), tmp)
        os.replace(tmp, self.checkpoint_path)

    def load_checkpoint(self) -> dict[str, Any] | None:
        import torch

        if not self.checkpoint_path.is_file():
            return None
        return torch.load(self.checkpoint_path, map_location="cpu", weights_only=False)

    def remove_checkpoint(self) -> None:
        self.checkpoint_path.unlink(missing_ok=True)

    def __repr__(self) -> str:
        return f"RunDir({str(self.path)!r})"

    @staticmethod
    def for_rank(path: str | Path, rank: int) -> RunDir:
        """The run directory at ``path`` as the process of rank ``rank`` under
        ``torch.distributed`` uses it: rank 0 writes, every other rank only reads (checkpoints,
        finished units) so that all ranks resume in step."""
        return RunDir(path) if rank == 0 else RankView(path)


class RankView(RunDir):
    """A run directory as seen by a rank other than 0: reads, never writes."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self._t0 = time.perf_counter()

    def log(self, record) -> None:
        pass

    def truncate_metrics(self, keep: int) -> None:
        pass

    def save_checkpoint(self, state) -> None:
        pass

    def remove_checkpoint(self) -> None:
        pass

    def write_summary(self, summary, seconds=None) -> dict:
        return to_jsonable(dict(summary))

    def write_config(self, cfg, **meta) -> None:
        pass

    def write_error(self, text: str) -> None:
        pass
