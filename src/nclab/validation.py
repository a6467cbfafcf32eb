"""Input checks at the public boundary (sklearn style: name the argument, what came, what is accepted)."""

from __future__ import annotations

import torch

from .errors import DataError, DegenerateError

F64 = torch.float64


def check_features(features: torch.Tensor, dim: int | None = None, name: str = "features") -> None:
    if not isinstance(features, torch.Tensor):
        raise DataError(f"{name} must be a torch.Tensor, got {type(features).__name__}")
    if features.ndim != 2:
        raise DataError(
            f"expected 2D {name} of shape (N, D), got {features.ndim}D shape {tuple(features.shape)}; "
            "flatten or pool feature maps first (CollapseProbe(reduce=...))"
        )
    if not features.is_floating_point():
        raise DataError(f"{name} must be floating point, got dtype {features.dtype}")
    if dim is not None and features.shape[1] != dim:
        raise DataError(f"{name} have dimension {features.shape[1]}, expected {dim}")


def check_labels(labels: torch.Tensor, n: int, num_classes: int | None) -> None:
    if not isinstance(labels, torch.Tensor):
        raise DataError(f"labels must be a torch.Tensor, got {type(labels).__name__}")
    if labels.ndim != 1 or labels.shape[0] != n:
        raise DataError(f"labels must have shape ({n},), got {tuple(labels.shape)}")
    if labels.is_floating_point() or labels.is_complex() or labels.dtype == torch.bool:
        raise DataError(f"labels must be an integer tensor, got dtype {labels.dtype}")
    if n and num_classes is not None:
        lo, hi = int(labels.min()), int(labels.max())
        if lo < 0 or hi >= num_classes:
            raise DataError(f"labels must lie in [0, {num_classes}), got values in [{lo}, {hi}]")


def check_classifier(
    weights, bias, k: int, d: int, device
) -> tuple[torch.Tensor, torch.Tensor | None]:
    """Validated float64 copies of a (K, D) classifier and its optional (K,) bias."""
    if not isinstance(weights, torch.Tensor) or tuple(weights.shape) != (k, d):
        shape = (
            tuple(weights.shape) if isinstance(weights, torch.Tensor) else type(weights).__name__
        )
        raise DataError(f"weights must have shape (K, D) = ({k}, {d}), got {shape}")
    if bias is not None and (not isinstance(bias, torch.Tensor) or tuple(bias.shape) != (k,)):
        shape = tuple(bias.shape) if isinstance(bias, torch.Tensor) else type(bias).__name__
        raise DataError(f"bias must have shape (K,) = ({k},), got {shape}")
    w = weights.detach().to(device, F64)
    b = bias.detach().to(device, F64) if bias is not None else None
    if not torch.isfinite(w).all() or (b is not None and not torch.isfinite(b).all()):
        raise DataError("classifier weights or bias contain NaN or Inf values")
    if bool((w.norm(dim=1) == 0).any()):
        raise DegenerateError("a classifier row is zero: cosines with it are undefined")
    return w, b


def input_eps(dtype: torch.dtype) -> float:
    """Unit roundoff of the precision features arrived in (float64 stats can't beat their input)."""
    return torch.finfo(dtype).eps if dtype.is_floating_point else torch.finfo(F64).eps
