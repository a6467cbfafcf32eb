"""``run(loader, second_pass="cache")``: one read of the loader, the second pass from memory.

A training loader that augments or shuffles with ``drop_last`` gives the second pass other samples
than the first, so ``nc1`` (subspace), ``nc3_cos``, ``nc4`` and ``ncc_acc`` would mix two draws.
Here the loader is read once: every tap's pooled features of each batch are kept (as they came,
same dtype and device) next to their labels, and the second pass runs over them. Both passes then
see the same draw, and on a deterministic loader the numbers are those of two reads, bit for bit
(the same tensors reach ``update`` and ``decision_pass`` in the same order).

The features are kept whole, not projected: the projection the second pass needs (on the span of
the *final* class means) is known only after the last batch. The cache is refused, with the
alternatives, as soon as it would exceed its memory budget.
"""

from __future__ import annotations

import re

import torch

from ..errors import DataError
from ._guards import human_bytes

#: default ``cache_budget`` of ``run(second_pass="cache")``
CACHE_BUDGET = "2GB"
_UNITS = {"": 1, "b": 1, "kb": 10**3, "mb": 10**6, "gb": 10**9, "tb": 10**12}
_UNITS.update(kib=2**10, mib=2**20, gib=2**30, tib=2**40)


def parse_bytes(value: int | float | str, name: str = "cache_budget") -> int:
    """A number of bytes from ``1_000_000``, ``"500MB"``, ``"2GB"`` or ``"1.5GiB"``.

    >>> parse_bytes("2GB"), parse_bytes("1.5 KiB"), parse_bytes(10)
    (2000000000, 1536, 10)
    """
    if isinstance(value, int | float) and not isinstance(value, bool) and value >= 0:
        return int(value)
    m = (
        re.fullmatch(r"\s*([0-9]*\.?[0-9]+)\s*([a-zA-Z]*)\s*", value)
        if isinstance(value, str)
        else None
    )
    if m is None or m.group(2).lower() not in _UNITS:
        raise DataError(
            f"{name} must be a number of bytes or a size such as '500MB', '2GB', '1.5GiB'; "
            f"got {value!r}"
        )
    return int(float(m.group(1)) * _UNITS[m.group(2).lower()])


class FeatureCache:
    """The (features, labels) of every tap and batch of one read of the loader, within ``budget``
    bytes (features and labels counted)."""

    def __init__(self, budget: int | float | str):
        self.budget = parse_bytes(budget)
        self.nbytes = 0
        self.batches: list[list[tuple]] = []  # per batch: [(tap, features, labels)]

    def fits(self, feats: list[tuple]) -> bool:
        """Whether one more batch of features stays within the budget."""
        return self.nbytes + _size(feats) <= self.budget

    def add(self, feats: list[tuple], index: int) -> None:
        size = _size(feats)
        if self.nbytes + size > self.budget:
            self._refuse(feats, size, index)
        self.nbytes += size
        self.batches.append([(tap, _own(x), _own(y)) for tap, x, y in feats])

    def _refuse(self, feats: list[tuple], size: int, index: int) -> None:
        widest = max(feats, key=lambda f: f[1].shape[1])
        raise DataError(
            f"second_pass='cache': the features of the first {index + 1} batches need "
            f"{human_bytes(self.nbytes + size)} (this batch {human_bytes(size)}; layer "
            f"{widest[0].name!r} has D={widest[1].shape[1]}), above cache_budget="
            f"{human_bytes(self.budget)}. Raise cache_budget, pool the layers (reduce='avgpool' or "
            "'mean') or measure fewer, or read the loader twice with a deterministic evaluation "
            "loader (second_pass=True, shuffle=False, no augmentation), or skip the second pass "
            "(second_pass=False: full D x D scatter, no nc4/ncc_acc)"
        )

    def clear(self) -> None:
        self.batches.clear()
        self.nbytes = 0


def _size(feats: list[tuple]) -> int:
    return sum(_nbytes(x) + _nbytes(y) for _, x, y in feats)


def _nbytes(t: torch.Tensor) -> int:
    return t.numel() * t.element_size()


def _own(t: torch.Tensor) -> torch.Tensor:
    """``t`` detached, copied when it is a view into a larger tensor (a CLS token of the (B, T, H)
    output would keep all of it alive)."""
    t = t.detach()
    return t.clone() if t.untyped_storage().nbytes() > _nbytes(t) else t


def second_pass_mode(second_pass) -> str | None:
    """``run(second_pass=...)`` as "reread", "cache" or None (no second pass)."""
    if second_pass is True or second_pass == "reread":
        return "reread"
    if second_pass == "cache":
        return "cache"
    if second_pass is False:
        return None
    raise DataError(f"second_pass must be True, False, 'reread' or 'cache'; got {second_pass!r}")
