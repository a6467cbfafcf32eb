"""Saving and loading :class:`~nclab.ClassStats` (``state_dict``, ``save``, ``load``) and its
restriction to the non-empty classes (``drop_empty``)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import torch

from ..errors import DataError, DegenerateError
from ._second_pass import DecisionStats

if TYPE_CHECKING:
    from ._core import ClassStatsBase

#: the tensor fields of a ClassStats (None when absent), saved as they are
TENSORS = (
    "counts",
    "means",
    "class_ss",
    "scatter",
    "class_scatter",
    "basis",
    "basis_scatter",
    "weights",
    "bias",
)


def state_dict(stats: ClassStatsBase) -> dict:
    """{"meta": sizes, options, eps and decision sums; "tensors": :data:`TENSORS`, on CPU}."""
    dec = stats.decision
    meta = {
        "format": 2,
        "num_classes": stats.num_classes,
        "dim": stats.dim,
        "eps": stats.eps,
        "scatter_mode": stats.scatter_mode,
        "per_class_scatter": stats.per_class_scatter,
        "pass2_count": stats.pass2_count,
        "has_classifier": dec.has_classifier,
        "decision": {f: getattr(dec, f) for f in dec.tensor_fields},
    }
    tensors = {k: getattr(stats, k) for k in TENSORS}
    return {
        "meta": meta,
        "tensors": {k: (v.cpu() if v is not None else None) for k, v in tensors.items()},
    }


def load(
    cls: type[ClassStatsBase], path: str | Path, device: torch.device | str | None = None
) -> ClassStatsBase:
    """A ``cls`` restored exactly from a file written by ``ClassStats.save``."""
    path = Path(path)
    if not path.is_file():
        raise DataError(f"statistics file not found: {path}")
    try:
        state = torch.load(path, map_location="cpu", weights_only=True)
        meta, tensors = state["meta"], state["tensors"]
    except Exception as exc:
        raise DataError(f"{path} is not a saved ClassStats file ({exc})") from None
    stats = cls(
        meta["num_classes"],
        meta["dim"],
        device=device or "cpu",
        scatter=meta["scatter_mode"],
        per_class_scatter=meta["per_class_scatter"],
    )
    for k, v in tensors.items():  # files from before the classifier was recorded have no W, b
        setattr(stats, k, v.to(stats.device) if v is not None else None)
    stats.eps, stats.pass2_count = meta["eps"], meta["pass2_count"]
    stats.decision = DecisionStats(has_classifier=meta["has_classifier"], **meta["decision"])
    return stats


def drop_empty(stats: ClassStatsBase) -> tuple[ClassStatsBase, list[int]]:
    """See :meth:`ClassStats.drop_empty`."""
    keep = stats.nonempty()
    dropped = (~keep).nonzero().flatten().tolist()
    if not bool(keep.any()):
        raise DegenerateError("no class has any sample")
    out = type(stats)(
        int(keep.sum()),
        stats.dim,
        device=stats.device,
        scatter=stats.scatter_mode,
        per_class_scatter=stats.per_class_scatter,
    )
    out.counts, out.means, out.class_ss = (
        stats.counts[keep],
        stats.means[keep],
        stats.class_ss[keep],
    )
    # copies: both objects may go on accumulating in place
    out.scatter = stats.scatter.clone() if stats.scatter is not None else None
    out.class_scatter = stats.class_scatter[keep] if stats.class_scatter is not None else None
    out.basis, out.pass2_count = stats.basis, stats.pass2_count
    out.basis_scatter = stats.basis_scatter.clone() if stats.basis_scatter is not None else None
    if stats.weights is not None:  # the classifier's rows follow their classes
        out.weights = stats.weights[keep.to(stats.weights.device)]
        out.bias = stats.bias[keep.to(stats.bias.device)] if stats.bias is not None else None
    out.eps = stats.eps
    return out, dropped
