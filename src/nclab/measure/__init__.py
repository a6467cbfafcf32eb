"""Measuring saved features (``nclab measure``): load a ``.npz`` / ``.pt`` file, validate its arrays
(:func:`nclab.validation.check_labelled_features`), build :class:`~nclab.ClassStats` and
compute the collapse metrics; or stream a sharded dump (:func:`measure_paths`: :mod:`.shards`
reads the shards, :mod:`.passes` runs the two passes in one process, a process pool or Ray).

Modules: :mod:`.shards` (finding, checking and reading shards), :mod:`.passes` (the passes and
their executors), :mod:`.sharded` (:func:`measure_paths`, saved statistics)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import torch

from ..collapse import ClassStats
from ..errors import DataError
from ..validation import check_labelled_features
from ._report import renumber, report
from .sharded import measure_paths, measure_saved
from .shards import not_npz, short_reason

__all__ = [
    "load_arrays",
    "measure_arrays",
    "measure_file",
    "measure_paths",
    "measure_saved",
    "report",
]

KEYS = ("features", "labels", "weights", "bias")


def load_arrays(path: str | Path) -> dict[str, torch.Tensor]:
    """Read ``features``, ``labels`` and optional ``weights``, ``bias`` from a .npz or .pt file."""
    path = Path(path)
    if not path.is_file():
        raise DataError(f"file not found: {path}")
    if path.suffix == ".npz":
        import numpy as np

        if (why := not_npz(path)) is not None:
            raise DataError(why)
        try:
            with np.load(path, allow_pickle=False) as f:
                raw = {k: f[k] for k in f.files}
        except Exception as exc:
            raise DataError(f"cannot read {path} as .npz: {short_reason(exc)}") from None
        data = {}
        for k, v in raw.items():
            if v.dtype.kind not in "biuf":
                raise DataError(f"array {k!r} in {path} has unsupported dtype {v.dtype}")
            data[k] = torch.from_numpy(np.ascontiguousarray(v))
    elif path.suffix in (".pt", ".pth"):
        try:
            obj = torch.load(path, map_location="cpu", weights_only=True)
        except Exception as exc:
            raise DataError(
                f"cannot read {path} as a torch file (torch.save): {short_reason(exc)}"
            ) from None
        if not isinstance(obj, dict):
            raise DataError(
                f"{path} must hold a dict of tensors with keys {KEYS}, got {type(obj).__name__}"
            )
        data = {k: torch.as_tensor(v) for k, v in obj.items() if k in KEYS}
    else:
        raise DataError(f"unsupported file type {path.suffix!r}: use .npz or .pt")
    for key in ("features", "labels"):
        if key not in data:
            raise DataError(
                f"{path} has no array {key!r} (found: {', '.join(data) or 'nothing'}); "
                f"expected features (N x D), labels (N), optional weights (K x D), bias (K)"
            )
    return data


def measure_arrays(
    features: torch.Tensor,
    labels: torch.Tensor,
    weights: torch.Tensor | None = None,
    bias: torch.Tensor | None = None,
    num_classes: int | None = None,
    drop_empty: bool = False,
    global_mean: str = "class",
) -> dict[str, Any]:
    """All collapse metrics of in-memory features (validated), as ``nclab measure --json`` prints."""
    features, labels, num_classes = check_labelled_features(
        features, labels, weights, bias, num_classes
    )
    stats = ClassStats.from_features(features, labels, num_classes=num_classes, decisions=False)
    dropped: list[int] = []
    if drop_empty:
        stats, dropped = stats.drop_empty()
        labels, weights, bias = renumber(dropped, num_classes, labels, weights, bias)
    if stats.num_classes < 2:
        raise DataError(
            f"collapse metrics need at least 2 classes with samples, got {stats.num_classes}"
        )
    stats.check_nonempty()
    stats.decision_pass(features, labels, weights, bias)
    out = report(stats, weights, bias, global_mean)
    out["num_samples"] = features.shape[0]
    if drop_empty:
        out["dropped_classes"] = dropped
    return out


def measure_file(path: str | Path, **kwargs: Any) -> dict[str, Any]:
    """:func:`measure_arrays` of the arrays in a file (see :func:`load_arrays`)."""
    data = load_arrays(path)
    return measure_arrays(
        data["features"], data["labels"], data.get("weights"), data.get("bias"), **kwargs
    )
