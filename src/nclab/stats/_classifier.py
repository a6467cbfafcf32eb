"""The classifier (W, b) a :class:`~nclab.ClassStats` was measured with.

The statistics record W (K x D) and b (K) when they are first given — to the constructor,
``from_features``, ``decision_pass`` or ``set_classifier`` — as float64 copies on the statistics'
device, and from then on every use is checked against them: a second, different classifier raises
instead of silently mixing two (``nc3`` of one W with the ``nc4`` decisions of another). The
metrics read the recorded pair through :func:`resolve`, so W is given once.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import torch

from ..errors import DataError
from ..validation import check_classifier, check_nonzero_rows

if TYPE_CHECKING:
    from ._core import ClassStatsBase


def _same(a: torch.Tensor | None, b: torch.Tensor | None) -> bool:
    if a is None or b is None:
        return a is None and b is None
    return a.shape == b.shape and torch.equal(a, b.to(a.device))


def _is_recorded(recorded: torch.Tensor | None, t) -> bool:
    """``t`` is the recorded tensor ``recorded`` itself: the same memory, dtype, shape and strides
    (so the same values, already checked when recorded)."""
    return (
        recorded is not None
        and isinstance(t, torch.Tensor)
        and t.dtype == recorded.dtype
        and t.device == recorded.device
        and t.shape == recorded.shape
        and t.stride() == recorded.stride()
        and t.data_ptr() == recorded.data_ptr()
    )


def _differs(
    stats: ClassStatsBase, w: torch.Tensor, b: torch.Tensor | None, where: str
) -> DataError:
    what = "weights" if not _same(stats.weights, w) else "bias"
    if what == "bias" and (stats.bias is None) != (b is None):
        detail = "with a bias" if stats.bias is not None else "without a bias"
        detail = f"the statistics were measured {detail}"
    else:
        ref = stats.weights if what == "weights" else stats.bias
        new = w if what == "weights" else b
        gap = float((new.to(ref.device) - ref).abs().max())
        detail = f"largest difference {gap:.3g}"
    return DataError(
        f"{where}: these {what} differ from the classifier the statistics were measured with "
        f"({detail}); a ClassStats holds one classifier. Leave weights out to use the recorded "
        "one, or build new statistics (ClassStats(...) / from_features) for another classifier"
    )


def _validated(stats: ClassStatsBase, weights, bias, cosines: bool):
    """Float64 copies of (W, b) on the statistics' device; ``cosines``: also refuse a zero row
    (the second pass takes cosines with every row)."""
    dev = stats.device or torch.device("cpu")
    return check_classifier(weights, bias, stats.num_classes, stats.dim, dev, nonzero_rows=cosines)


def record(
    stats: ClassStatsBase, weights, bias, where: str = "set_classifier", cosines: bool = False
) -> tuple[torch.Tensor, torch.Tensor | None]:
    """Validate (W, b), record them on ``stats`` if it has none, else check they are the same;
    returns the recorded float64 pair. ``where`` names the caller in the error.

    The recorded pair itself (what ``decision_pass`` is given batch after batch, e.g. by
    ``nclab measure``) is accepted without copying or comparing it again."""
    if _is_recorded(stats.weights, weights) and (
        _is_recorded(stats.bias, bias) or (bias is None and stats.bias is None)
    ):
        if cosines:  # it may have been recorded by set_classifier, which allows a zero row
            check_nonzero_rows(stats.weights)
        return stats.weights, stats.bias
    w, b = _validated(stats, weights, bias, cosines)
    if stats.weights is None:
        stats.weights, stats.bias = w, b
    elif not (_same(stats.weights, w) and _same(stats.bias, b)):
        raise _differs(stats, w, b, where)
    return stats.weights, stats.bias


def resolve(
    stats: ClassStatsBase, weights, bias, where: str = "collapse_metrics"
) -> tuple[torch.Tensor | None, torch.Tensor | None]:
    """The classifier to measure with: the recorded one, or the given one when none is recorded
    (not recorded by this call). Given and recorded must be the same."""
    if weights is None:
        if bias is not None and stats.weights is None:
            raise DataError(f"{where}: bias given without weights")
        if bias is not None and not _same(stats.bias, _as_f64(bias, stats)):
            raise _differs(stats, stats.weights, _as_f64(bias, stats), where)
        return stats.weights, stats.bias
    w, b = _validated(stats, weights, bias, cosines=False)
    if stats.weights is None:
        return w, b
    if not _same(stats.weights, w) or (bias is not None and not _same(stats.bias, b)):
        raise _differs(stats, w, b if bias is not None else stats.bias, where)
    return stats.weights, stats.bias


def _as_f64(t: torch.Tensor, stats: ClassStatsBase) -> torch.Tensor:
    return t.detach().to(stats.device or torch.device("cpu"), torch.float64)


def merge(stats: ClassStatsBase, other: ClassStatsBase) -> None:
    """Merging statistics keeps one classifier: the one either side recorded (both: the same)."""
    if other.weights is None:
        return
    if stats.weights is None:
        dev = stats.device or other.weights.device
        stats.weights = other.weights.to(dev)
        stats.bias = other.bias.to(dev) if other.bias is not None else None
    elif not (_same(stats.weights, other.weights) and _same(stats.bias, other.bias)):
        raise _differs(stats, other.weights, other.bias, "merge")
