"""Measuring saved features: loading and validating ``.npz`` / ``.pt`` files (``nclab measure``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import torch

from .errors import DataError
from .metrics import collapse_metrics
from .stats import ClassStats

KEYS = ("features", "labels", "weights", "bias")


def load_arrays(path: str | Path) -> dict[str, torch.Tensor]:
    """Read ``features``, ``labels`` and optional ``weights``, ``bias`` from a .npz or .pt file."""
    path = Path(path)
    if not path.is_file():
        raise DataError(f"file not found: {path}")
    if path.suffix == ".npz":
        import numpy as np

        try:
            with np.load(path, allow_pickle=False) as f:
                raw = {k: f[k] for k in f.files}
        except Exception as exc:
            raise DataError(f"cannot read {path} as .npz: {exc}") from None
        data = {}
        for k, v in raw.items():
            if v.dtype.kind not in "biuf":
                raise DataError(f"array {k!r} in {path} has unsupported dtype {v.dtype}")
            data[k] = torch.from_numpy(np.ascontiguousarray(v))
    elif path.suffix in (".pt", ".pth"):
        try:
            obj = torch.load(path, map_location="cpu", weights_only=True)
        except Exception as exc:
            raise DataError(f"cannot read {path} as a torch file: {exc}") from None
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


def check_labels_integral(labels: torch.Tensor) -> torch.Tensor:
    if labels.is_floating_point():
        raise DataError(f"labels must be integers, got dtype {labels.dtype}")
    if labels.dtype == torch.bool:
        raise DataError("labels must be integers, got booleans")
    return labels.to(torch.int64)


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
    if features.ndim != 2:
        raise DataError(f"features must be 2D (N x D), got shape {tuple(features.shape)}")
    if not features.is_floating_point():
        features = features.to(torch.float64)
    labels = check_labels_integral(labels)
    n, d = features.shape
    if labels.ndim != 1 or labels.shape[0] != n:
        raise DataError(
            f"labels must have shape ({n},) to match features {tuple(features.shape)}, "
            f"got {tuple(labels.shape)}"
        )
    if n == 0:
        raise DataError("features have no rows")
    if not torch.isfinite(features).all():
        bad = int((~torch.isfinite(features)).any(1).sum())
        raise DataError(f"features contain NaN or Inf values ({bad} rows affected)")
    if weights is not None and weights.ndim != 2:
        raise DataError(f"weights must be 2D (K x D), got shape {tuple(weights.shape)}")
    if num_classes is None:
        num_classes = weights.shape[0] if weights is not None else int(labels.max()) + 1
    lo, hi = int(labels.min()), int(labels.max())
    if lo < 0 or hi >= num_classes:
        raise DataError(f"labels must lie in [0, {num_classes}), got values in [{lo}, {hi}]")
    if weights is not None and tuple(weights.shape) != (num_classes, d):
        raise DataError(
            f"weights must have shape (K, D) = ({num_classes}, {d}), got {tuple(weights.shape)}"
        )
    if bias is not None and tuple(bias.shape) != (num_classes,):
        raise DataError(f"bias must have shape ({num_classes},), got {tuple(bias.shape)}")
    stats = ClassStats.from_features(features, labels, num_classes=num_classes, decisions=False)
    dropped: list[int] = []
    if drop_empty:
        stats, dropped = stats.drop_empty()
        if dropped:
            keep = torch.ones(num_classes, dtype=torch.bool)
            keep[dropped] = False
            remap = torch.cumsum(keep.long(), 0) - 1
            labels = remap[labels]
            weights = weights[keep] if weights is not None else None
            bias = bias[keep] if bias is not None else None
    if stats.num_classes < 2:
        raise DataError(
            f"collapse metrics need at least 2 classes with samples, got {stats.num_classes}"
        )
    stats.check_nonempty()
    stats.decision_pass(features, labels, weights, bias)
    m = collapse_metrics(stats, weights, bias, global_mean=global_mean)
    out: dict[str, Any] = {
        "metrics": dict(m),
        "num_samples": n,
        "num_classes": stats.num_classes,
        "dim": d,
    }
    if m.skipped:
        out["skipped"] = m.skipped
    if drop_empty:
        out["dropped_classes"] = dropped
    return out


def measure_file(path: str | Path, **kwargs: Any) -> dict[str, Any]:
    data = load_arrays(path)
    return measure_arrays(
        data["features"], data["labels"], data.get("weights"), data.get("bias"), **kwargs
    )
