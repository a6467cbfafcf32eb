"""Pooling: one (N, D) feature matrix from whatever a tap recorded.

``reduce`` is one of :data:`REDUCTIONS` or a callable:

* ``"flatten"`` (default): (B, ...) -> (B, prod(...));
* ``"avgpool"``: the mean over the spatial dimensions of (B, C, H, W) maps (any ndim >= 4); a
  (B, T, H) token sequence is an error that names ``"mean"`` and ``"cls"``;
* ``"cls"``: the first token of (B, T, H); ``"last"``: the last non-padding token (by the attention
  mask; left or right padding); ``"mean"``: the mean over the non-padding tokens;
* a callable ``f(t)`` or ``f(t, mask)`` returning (B, D) (``mask`` is the batch's attention mask or
  None).

A (B, D) tensor is already a feature matrix and passes through every named reduction. In token mode
(``CollapseProbe(tokens=True)``) every kept token of a (B, T, H) tensor is a sample.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

import torch

from ..errors import DataError

REDUCTIONS = ("flatten", "avgpool", "cls", "last", "mean")
TOKEN_REDUCTIONS = ("cls", "last", "mean")


def check_reduce(reduce: Any, where: str = "reduce") -> None:
    if callable(reduce) or reduce in REDUCTIONS:
        return
    names = ", ".join(repr(r) for r in REDUCTIONS)
    raise DataError(f"{where} must be one of {names} or a callable, got {reduce!r}")


def pool(t: torch.Tensor, reduce: Any, mask: torch.Tensor | None, where: str) -> torch.Tensor:
    """The (B, D) features of ``t`` (``where`` names the tap in messages)."""
    if callable(reduce):
        return _call(reduce, t, mask, where)
    if t.ndim == 0:
        raise DataError(f"{where} is a scalar; a layer must give one value or vector per sample")
    if t.ndim <= 2:
        return t.reshape(t.shape[0], -1)
    if reduce == "flatten":
        return t.flatten(1)
    if reduce == "avgpool":
        if t.ndim == 3:
            raise DataError(
                f"{where} has shape {tuple(t.shape)}: reduce='avgpool' averages the spatial "
                "dimensions of (N, C, H, W) feature maps; for a (B, T, H) token sequence use "
                "reduce='mean' (masked mean over tokens), 'cls' (first token) or 'last' "
                "(last non-padding token); for (N, C, L) maps pass reduce=lambda t: t.mean(2)"
            )
        return t.flatten(2).mean(2)
    if t.ndim != 3:
        raise DataError(
            f"{where} has shape {tuple(t.shape)}: reduce={reduce!r} pools (B, T, H) token "
            "sequences; for (N, C, H, W) feature maps use reduce='avgpool' or 'flatten'"
        )
    if reduce == "cls":
        return t[:, 0]
    m = _mask(mask, t, where)
    if reduce == "last":
        if m is None:
            return t[:, -1]
        last = t.shape[1] - 1 - m.flip(1).to(torch.int8).argmax(1)
        return t[torch.arange(t.shape[0], device=t.device), last]
    if m is None:
        return t.mean(1)
    w = m.to(t.dtype)
    return (t * w[..., None]).sum(1) / w.sum(1, keepdim=True)


def _call(fn: Callable, t: torch.Tensor, mask: torch.Tensor | None, where: str) -> torch.Tensor:
    try:
        inspect.signature(fn).bind(t, mask)
        two = True
    except (TypeError, ValueError):  # takes one argument, or has no signature
        two = False
    out = fn(t, mask) if two else fn(t)
    if not isinstance(out, torch.Tensor) or out.ndim not in (1, 2) or out.shape[0] != t.shape[0]:
        got = tuple(out.shape) if isinstance(out, torch.Tensor) else type(out).__name__
        raise DataError(
            f"{where}: the reduce callable must return ({t.shape[0]}, D) features, got {got}"
        )
    return out.reshape(out.shape[0], -1)


def _mask(mask: torch.Tensor | None, t: torch.Tensor, where: str) -> torch.Tensor | None:
    """The attention mask as a bool (B, T) tensor on ``t``'s device; every row keeps a token."""
    if mask is None:
        return None
    if tuple(mask.shape) != tuple(t.shape[:2]):
        raise DataError(
            f"{where} has shape {tuple(t.shape)} but the attention mask has shape "
            f"{tuple(mask.shape)}; it must be (B, T) = {tuple(t.shape[:2])}"
        )
    m = mask.to(t.device) != 0
    if not bool(m.any(1).all()):
        raise DataError(f"{where}: a sequence has no token in the attention mask")
    return m


def token_rows(t: torch.Tensor, keep: torch.Tensor, where: str) -> torch.Tensor:
    """Token mode: the rows of (B, T, ...) ``t`` where the (B, T) ``keep`` is true, as (n, D)."""
    if t.ndim < 3 or tuple(t.shape[:2]) != tuple(keep.shape):
        raise DataError(
            f"{where} has shape {tuple(t.shape)}: tokens=True measures (B, T, H) outputs with "
            f"one label per token, labels of shape {tuple(keep.shape)}"
        )
    return t[keep.to(t.device)].flatten(1)


def token_keep(labels: torch.Tensor, mask: torch.Tensor | None, ignore_index: int) -> torch.Tensor:
    """Token mode: the (B, T) tokens that count (label not ``ignore_index``, inside the mask)."""
    if labels.ndim != 2:
        raise DataError(
            "tokens=True needs labels of shape (B, T) (one per token; "
            f"{ignore_index} for tokens to ignore), got shape {tuple(labels.shape)}"
        )
    keep = labels != ignore_index
    if mask is not None:
        if tuple(mask.shape) != tuple(labels.shape):
            raise DataError(
                f"the attention mask has shape {tuple(mask.shape)}, the labels "
                f"{tuple(labels.shape)}; tokens=True needs both (B, T)"
            )
        keep &= mask.to(labels.device) != 0
    return keep
