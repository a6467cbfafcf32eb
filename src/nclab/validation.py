"""Every tensor check of nclab's public boundary, in one place.

Messages follow sklearn: they name the argument, say what came and what is accepted. The statistics
(:mod:`nclab.stats`), the metrics (:mod:`nclab.metrics`) and ``nclab measure`` (:mod:`nclab.measure`)
all validate through these functions; none raises its own shape, dtype or NaN/Inf error.

>>> import torch
>>> check_labels(torch.tensor([0, 3]), 2, 3)
Traceback (most recent call last):
    ...
nclab.errors.DataError: labels must lie in [0, 3), got values in [0, 3]
"""

from __future__ import annotations

import torch

from .errors import DataError, DegenerateError

F64 = torch.float64


def _shape_of(obj) -> object:
    """The shape of a tensor, else the type name (for messages)."""
    return tuple(obj.shape) if isinstance(obj, torch.Tensor) else type(obj).__name__


# --- generic tensors ----------------------------------------------------------------------------
def check_tensor(obj, name: str) -> None:
    if not isinstance(obj, torch.Tensor):
        raise DataError(f"{name} must be a torch.Tensor, got {type(obj).__name__}")


def check_finite(t: torch.Tensor, name: str, count_rows: bool = False) -> None:
    """Raise if ``t`` has a NaN or Inf entry. ``t`` may be derived from the argument ``name`` (a sum,
    a product): one non-finite input entry makes it non-finite. ``count_rows`` counts the rows hit.

    A finite sum of the entries proves them all finite (a NaN or an infinity in a sum makes it NaN
    or infinite), and summing is one fast read where ``isfinite`` writes a mask: only when the sum
    is not finite (a bad entry, or finite entries whose sum overflows) are the entries looked at."""
    if t.is_floating_point() and bool(torch.isfinite(t.sum())):
        return
    if not torch.isfinite(t).all():
        where = ""
        if count_rows:
            where = f" ({int((~torch.isfinite(t)).any(1).sum())} rows affected)"
        raise DataError(f"{name} must be finite, got NaN or Inf values{where}")


def check_2d(
    a, name: str, rows: int | None = None, cols: int | None = None, min_rows: int = 0
) -> None:
    """``a`` is a 2D tensor, with ``rows`` rows (one per class), ``cols`` columns (the feature
    dimension) and at least ``min_rows`` rows when given (any dtype)."""
    check_tensor(a, name)
    if a.ndim != 2:
        raise DataError(f"{name} must be a 2D tensor, got shape {tuple(a.shape)}")
    if rows is not None and a.shape[0] != rows:
        raise DataError(f"{name} must have {rows} rows (one per class), got shape {tuple(a.shape)}")
    if cols is not None and a.shape[1] != cols:
        raise DataError(
            f"{name} must have {cols} columns (the feature dimension), got shape {tuple(a.shape)}"
        )
    if a.shape[0] < min_rows:
        raise DataError(f"{name} must have at least {min_rows} rows, got shape {tuple(a.shape)}")


def check_matrix(a, name: str, rows: int | None = None, cols: int | None = None) -> torch.Tensor:
    """A finite float64 copy of the 2D tensor ``a`` (see :func:`check_2d` for ``rows``, ``cols``)."""
    check_2d(a, name, rows, cols)
    a = a.detach().to(F64)
    check_finite(a, name)
    return a


# --- features, labels, classifiers ----------------------------------------------------------------
def check_features(features: torch.Tensor, dim: int | None = None, name: str = "features") -> None:
    """A floating (N, D) matrix, with D = ``dim`` when given (finiteness is checked by the kernels,
    on the sums they form anyway)."""
    check_tensor(features, name)
    if features.ndim != 2:
        raise DataError(
            f"{name} must be 2D of shape (N, D), got {features.ndim}D shape "
            f"{tuple(features.shape)}; flatten or pool feature maps first "
            "(CollapseProbe(reduce=...))"
        )
    if not features.is_floating_point():
        raise DataError(f"{name} must be floating point, got dtype {features.dtype}")
    if dim is not None and features.shape[1] != dim:
        raise DataError(f"{name} have dimension {features.shape[1]}, expected {dim}")


def check_label_dtype(labels: torch.Tensor) -> None:
    check_tensor(labels, "labels")
    if labels.is_floating_point() or labels.is_complex() or labels.dtype == torch.bool:
        raise DataError(f"labels must be integers, got dtype {labels.dtype}")


def check_label_range(labels: torch.Tensor, num_classes: int) -> None:
    if labels.numel():
        lo, hi = int(labels.min()), int(labels.max())
        if lo < 0 or hi >= num_classes:
            raise DataError(f"labels must lie in [0, {num_classes}), got values in [{lo}, {hi}]")


def check_labels(labels: torch.Tensor, n: int, num_classes: int | None) -> None:
    """Integer labels of shape (n,), in [0, ``num_classes``) when given."""
    check_tensor(labels, "labels")
    if labels.ndim != 1 or labels.shape[0] != n:
        raise DataError(
            f"labels must have shape ({n},) (one per row of features), got {tuple(labels.shape)}"
        )
    check_label_dtype(labels)
    if num_classes is not None:
        check_label_range(labels, num_classes)


def check_batch(features: torch.Tensor, labels: torch.Tensor, dim: int, num_classes: int) -> None:
    """A batch for :class:`~nclab.ClassStats`: (N, ``dim``) features and their labels."""
    check_features(features, dim)
    check_labels(labels, features.shape[0], num_classes)


def infer_num_classes(labels: torch.Tensor) -> int:
    """K = max label + 1, for labels already checked by :func:`check_labels`."""
    if labels.numel() == 0:
        raise DataError("labels must not be empty when num_classes is not given, got 0 samples")
    return int(labels.max()) + 1


def check_classifier_shapes(weights, bias, k: int, d: int) -> None:
    """(K, D) ``weights`` and (K,) ``bias``; either may be None (not given)."""
    if weights is not None and (
        not isinstance(weights, torch.Tensor) or tuple(weights.shape) != (k, d)
    ):
        raise DataError(f"weights must have shape (K, D) = ({k}, {d}), got {_shape_of(weights)}")
    if bias is not None and (not isinstance(bias, torch.Tensor) or tuple(bias.shape) != (k,)):
        raise DataError(f"bias must have shape (K,) = ({k},), got {_shape_of(bias)}")


def check_classifier(
    weights, bias, k: int, d: int, device, nonzero_rows: bool = True
) -> tuple[torch.Tensor, torch.Tensor | None]:
    """Validated float64 copies of a (K, D) classifier and its optional (K,) bias; ``nonzero_rows``:
    refuse a zero row (cosines with it are undefined)."""
    check_classifier_shapes(weights, bias, k, d)
    w = weights.detach().to(device, F64)
    b = bias.detach().to(device, F64) if bias is not None else None
    check_finite(w, "weights")
    if b is not None:
        check_finite(b, "bias")
    if nonzero_rows:
        check_nonzero_rows(w)
    return w, b


def check_nonzero_rows(w: torch.Tensor) -> None:
    """Refuse a classifier with a zero row: cosines with it are undefined."""
    if bool((w.norm(dim=1) == 0).any()):
        raise DegenerateError("a classifier row is zero: cosines with it are undefined")


def input_eps(dtype: torch.dtype) -> float:
    """Unit roundoff of the precision features arrived in (float64 stats can't beat their input)."""
    return torch.finfo(dtype).eps if dtype.is_floating_point else torch.finfo(F64).eps


# --- whole data sets (nclab measure) --------------------------------------------------------------
def check_labelled_features(
    features,
    labels,
    weights: torch.Tensor | None = None,
    bias: torch.Tensor | None = None,
    num_classes: int | None = None,
) -> tuple[torch.Tensor, torch.Tensor, int]:
    """Validate a saved data set: (N, D) features (integer ones become float64), N integer labels,
    optional (K, D) ``weights`` and (K,) ``bias``; K = ``num_classes``, else the rows of
    ``weights``, else max label + 1. Returns (features, int64 labels, K)."""
    check_tensor(features, "features")
    if features.ndim == 2 and not features.is_floating_point():
        features = features.to(F64)
    check_features(features)
    check_label_dtype(labels)
    labels = labels.to(torch.int64)
    n, d = features.shape
    check_labels(labels, n, None)
    if n == 0:
        raise DataError(f"features must have at least one row, got shape {tuple(features.shape)}")
    check_finite(features, "features", count_rows=True)
    if weights is not None:
        check_2d(weights, "weights")
    if num_classes is None:
        num_classes = weights.shape[0] if weights is not None else infer_num_classes(labels)
    check_label_range(labels, num_classes)
    check_classifier_shapes(weights, bias, num_classes, d)
    return features, labels, num_classes


# --- grouped vectors and weight matrices (metrics) ------------------------------------------------
def check_grouped(vectors, groups: torch.Tensor, num_groups: int, name: str) -> torch.Tensor:
    """A finite float64 copy of (n, d) ``vectors`` whose (n,) ``groups`` lie in [0, num_groups),
    every group non-empty."""
    if not isinstance(vectors, torch.Tensor) or vectors.ndim != 2:
        raise DataError(
            f"{name} must be a 2D tensor (n, d), got {getattr(vectors, 'shape', type(vectors).__name__)}"
        )
    if groups.shape != (vectors.shape[0],):
        raise DataError(
            f"{name}: groups must have shape ({vectors.shape[0]},), got {tuple(groups.shape)}"
        )
    if groups.numel() and (int(groups.min()) < 0 or int(groups.max()) >= num_groups):
        raise DataError(f"{name}: groups must lie in [0, {num_groups})")
    v = vectors.detach().to(F64)
    check_finite(v, name)
    counts = torch.bincount(groups, minlength=num_groups)
    if (counts == 0).any():
        raise DegenerateError(
            f"{name}: group(s) {torch.nonzero(counts == 0).flatten().tolist()} are empty"
        )
    return v


def check_blocks(u_blocks: torch.Tensor, latents: torch.Tensor) -> None:
    """(K, L, d) blocks and the (K, L) concepts they read."""
    if u_blocks.ndim != 3 or latents.shape != u_blocks.shape[:2]:
        raise DataError(
            f"u_blocks must be (K, L, d) and latents (K, L); got {tuple(u_blocks.shape)} and "
            f"{tuple(latents.shape)}"
        )


def check_paired(a: torch.Tensor, b: torch.Tensor, what: str, min_len: int = 2) -> None:
    """Two vectors of the same length, at least ``min_len``."""
    if a.shape != b.shape or a.numel() < min_len:
        raise DataError(
            f"{what} needs two vectors of the same length >= {min_len}, got shapes "
            f"{tuple(a.shape)} and {tuple(b.shape)}"
        )


def check_chain(w_next: torch.Tensor, w_prev: torch.Tensor) -> None:
    """Consecutive ``nn.Linear`` weights: w_next (n_{l+1}, n_l) after w_prev (n_l, n_{l-1})."""
    if w_next.shape[1] != w_prev.shape[0]:
        raise DataError(
            f"w_next {tuple(w_next.shape)} does not follow w_prev {tuple(w_prev.shape)}: "
            f"w_next.shape[1] must equal w_prev.shape[0]"
        )
