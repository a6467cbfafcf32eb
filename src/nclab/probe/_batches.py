"""Batches as users have them: how the probe runs the model on a batch and finds its labels and
attention mask.

* ``(x, y)`` and ``(x, y, *rest)``: ``model(x)`` (``model(**x)`` when ``x`` is a dict), labels ``y``;
* a dict (a Hugging Face ``BatchEncoding`` included): ``model(**batch)`` without the label key,
  labels ``batch["labels"]`` (``labels=`` names another key);
* anything else: ``forward=lambda model, batch: ...`` runs the model and ``labels=`` (a key, an
  index or a callable of the batch) finds the labels.

The attention mask (for ``reduce="mean"``/``"last"`` and token mode) is ``batch["attention_mask"]``
of a dict batch or of a dict ``x``; ``mask=`` names another key, an index or a callable, ``None``
turns it off.

Nothing is left out silently: a tuple batch with elements beyond ``(x, y)`` that the probe does not
use, and a dict batch without the mask key pooled with ``reduce="mean"`` or ``"last"`` (padding
counted), warn once per probe, naming the option that says otherwise (``forward=``, ``labels=``,
``mask=``).
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Mapping
from typing import Any

import torch
from torch import nn

from ..errors import DataError

Getter = str | int | Callable[[Any], Any] | None


class BatchReader:
    """Runs ``model`` on a batch and reads its labels and mask (see the module docstring)."""

    def __init__(
        self,
        forward: Callable[[nn.Module, Any], Any] | None = None,
        labels: Getter = None,
        mask: Getter = "attention_mask",
    ):
        for name, g in (("labels", labels), ("mask", mask)):
            if not (g is None or isinstance(g, str | int) or callable(g)):
                raise DataError(f"{name}= must be a key, an index or a callable, got {g!r}")
        if forward is not None and not callable(forward):
            raise DataError(f"forward= must be a callable forward(model, batch), got {forward!r}")
        self.forward = forward
        self.labels = labels
        self.mask = mask
        #: the last batch was a dict (or had dict inputs) without the mask key
        self.dict_batch = False
        self._warned: set[str] = set()

    def warn_once(self, key: str, message: str) -> None:
        """Warn ``message`` the first time ``key`` comes up for this reader (one per probe)."""
        if key not in self._warned:
            self._warned.add(key)
            warnings.warn(message, UserWarning, stacklevel=4)

    @property
    def label_key(self) -> str:
        return self.labels if isinstance(self.labels, str) else "labels"

    # --- the forward pass ------------------------------------------------------------------------
    def run(self, model: nn.Module, batch: Any) -> None:
        if self.forward is not None:
            self.forward(model, batch)
        elif isinstance(batch, Mapping):
            model(**{k: v for k, v in batch.items() if k != self.label_key})
        elif isinstance(batch, tuple | list) and len(batch) >= 2:
            if len(batch) > 2 and not callable(self.labels):
                self._warn_extra(len(batch))
            self.run_inputs(model, batch[0])
        else:
            raise DataError(self._unreadable(batch, "run the model on"))

    def _warn_extra(self, n: int) -> None:
        label = self.labels if isinstance(self.labels, int) else 1
        unused = [i for i in range(1, n) if i != label]
        self.warn_once(
            "extra",
            f"the batches are tuples of {n} elements: the probe runs model(batch[0]) and reads the "
            f"labels from batch[{label}]; batch[{', '.join(map(str, unused))}] are not used. If "
            "the model needs them pass forward=lambda model, batch: model(*batch[:-1]) (any "
            "callable), if the labels are elsewhere pass labels=INDEX",
        )

    def run_inputs(self, model: nn.Module, x: Any) -> None:
        """``model(**x)`` for a dict of inputs, else ``model(x)`` (``forward(model, x)`` if given)."""
        if self.forward is not None:
            self.forward(model, x)
        elif isinstance(x, Mapping):
            model(**x)
        else:
            model(x)

    # --- labels and mask -------------------------------------------------------------------------
    def labels_of(self, batch: Any) -> torch.Tensor:
        g = self.labels
        if callable(g):
            y = g(batch)
        elif isinstance(batch, Mapping):
            if self.label_key not in batch:
                keys = ", ".join(repr(k) for k in batch)
                raise DataError(
                    f"the batch is a dict without a {self.label_key!r} key (its keys: {keys}): "
                    "name the label key with labels='key' (or labels=callable(batch))"
                )
            y = batch[self.label_key]
        elif isinstance(batch, tuple | list) and len(batch) >= 2:
            y = batch[g if isinstance(g, int) else 1]
        elif isinstance(g, str) and hasattr(batch, g):
            y = getattr(batch, g)
        else:
            raise DataError(self._unreadable(batch, "find the labels of"))
        if not isinstance(y, torch.Tensor):
            try:
                y = torch.as_tensor(y)
            except (TypeError, ValueError, RuntimeError) as exc:
                raise DataError(f"labels must be a tensor, got {type(y).__name__}") from exc
        return y

    def mask_of(self, batch: Any) -> torch.Tensor | None:
        g = self.mask
        self.dict_batch = False
        if g is None:
            return None
        if callable(g):
            return g(batch)
        if isinstance(g, int):
            return batch[g]
        holders = (batch, batch[0] if isinstance(batch, tuple | list) and batch else None)
        for holder in holders:
            if isinstance(holder, Mapping) and g in holder:
                return holder[g]
        self.dict_batch = any(isinstance(h, Mapping) for h in holders)
        return None

    def _unreadable(self, batch: Any, what: str) -> str:
        return (
            f"cannot {what} a batch of type {type(batch).__name__}: the probe reads (inputs, "
            "labels[, ...]) tuples and dicts with a 'labels' key; for anything else pass "
            "CollapseProbe(forward=lambda model, batch: ..., labels=key, index or callable)"
        )


def to_device(obj: Any, device) -> Any:
    """``obj`` with every tensor inside tuples, lists and dicts moved to ``device``."""
    if device is None:
        return obj
    if isinstance(obj, torch.Tensor):
        return obj.to(device)
    if isinstance(obj, Mapping):
        return {k: to_device(v, device) for k, v in obj.items()}
    if isinstance(obj, tuple) and hasattr(obj, "_fields"):  # namedtuple
        return type(obj)(*(to_device(v, device) for v in obj))
    if isinstance(obj, tuple | list):
        return type(obj)(to_device(v, device) for v in obj)
    return obj
