"""``run(loader, second_pass="cache")``: one read of the loader, the second pass from memory.

A training loader that augments or shuffles with ``drop_last`` gives the second pass other samples
than the first, so ``nc1`` (subspace), ``nc3_cos``, ``nc4`` and ``ncc_acc`` would mix two draws.
Here the loader is read once: every tap's pooled features of each batch are kept (as they came,
same dtype and device) next to their labels, and the second pass runs over them. Both passes then
see the same draw, and on a deterministic loader the numbers are those of two reads, bit for bit
(the same tensors reach ``update`` and ``decision_pass`` in the same order).

The features are kept whole, not projected: the projection the second pass needs (on the span of
the *final* class means) is known only after the last batch. The cache is refused, with the
alternatives, as soon as it would exceed its memory budget, unless it may spill: with
``spill=True`` (the system's temporary folder) or ``spill=DIR`` the batches beyond the budget are
written, as they came, to an unnamed temporary file in that folder (removed when the pass ends or
the process exits) and read back in order by the second pass: the same tensors, so the same
numbers, and still one read of the loader (one forward pass of the model per batch).
"""

from __future__ import annotations

import os
import re
import tempfile
from collections.abc import Iterator
from pathlib import Path

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


def spill_folder(spill: bool | str | os.PathLike | None) -> Path | None:
    """``spill=`` as the folder of the spill file (None: no spilling); the folder must exist and
    be writable."""
    if spill is None or spill is False:
        return None
    if spill is True:
        return Path(tempfile.gettempdir())
    if not isinstance(spill, str | os.PathLike):
        raise DataError(f"spill must be True, False or a folder, got {spill!r}")
    folder = Path(spill)
    if not folder.is_dir():
        raise DataError(f"spill={str(spill)!r}: no such folder (the spill file goes there)")
    if not os.access(folder, os.W_OK):
        raise DataError(f"spill={str(spill)!r}: the folder is not writable")
    return folder


class FeatureCache:
    """The (features, labels) of every tap and batch of one read of the loader, within ``budget``
    bytes in memory (features and labels counted); beyond it, written to a spill file in the
    folder ``spill`` (see the module docstring) or refused when there is none."""

    def __init__(self, budget: int | float | str, spill: bool | str | os.PathLike | None = None):
        self.budget = parse_bytes(budget)
        self.folder = spill_folder(spill)
        self.nbytes = 0  # in memory
        self.spilled = 0  # in the spill file
        self.batches: list = []  # per batch: [(tap, features, labels)], or a _Spilled record
        self._file = None

    def fits(self, feats: list[tuple]) -> bool:
        """Whether one more batch of features stays within the budget in memory."""
        return self.nbytes + _size(feats) <= self.budget

    def add(self, feats: list[tuple], index: int) -> None:
        size = _size(feats)
        if self.nbytes + size > self.budget:
            if self.folder is None:
                self._refuse(feats, size, index)
            self.batches.append(self._write(feats))
            return
        self.nbytes += size
        self.batches.append([(tap, _own(x), _own(y)) for tap, x, y in feats])

    def read(self) -> Iterator[list[tuple]]:
        """Every batch in order, [(tap, features, labels)], the spilled ones read back."""
        for batch in self.batches:
            yield batch.load(self._file) if isinstance(batch, _Spilled) else batch

    def _write(self, feats: list[tuple]) -> _Spilled:
        if self._file is None:
            self._file = tempfile.TemporaryFile(prefix="nclab-cache-", dir=self.folder)
        record = _Spilled()
        try:
            for tap, x, y in feats:
                record.parts.append((tap, _put(self._file, x), _put(self._file, y)))
        except OSError as exc:
            raise DataError(
                f"second_pass='cache': writing the spill file in {self.folder} failed ({exc}); "
                "free disk space or pass spill=another folder"
            ) from exc
        self.spilled += _size(feats)
        return record

    def _refuse(self, feats: list[tuple], size: int, index: int) -> None:
        widest = max(feats, key=lambda f: f[1].shape[1])
        raise DataError(
            f"second_pass='cache': the features of the first {index + 1} batches need "
            f"{human_bytes(self.nbytes + size)} (this batch {human_bytes(size)}; layer "
            f"{widest[0].name!r} has D={widest[1].shape[1]}), above cache_budget="
            f"{human_bytes(self.budget)}. Raise cache_budget, pool the layers (reduce='avgpool' or "
            "'mean') or measure fewer, or read the loader twice with a deterministic evaluation "
            "loader (second_pass=True, shuffle=False, no augmentation), or skip the second pass "
            "(second_pass=False: full D x D scatter, no nc4/ncc_acc), or let the batches beyond "
            "the budget go to a temporary file (spill=True, or spill='folder')"
        )

    def clear(self) -> None:
        self.batches.clear()
        self.nbytes = self.spilled = 0
        if self._file is not None:
            self._file.close()
            self._file = None


class _Spilled:
    """Where one batch's tensors lie in the spill file: [(tap, features, labels)], each tensor as
    (offset, bytes, dtype, shape, device)."""

    def __init__(self) -> None:
        self.parts: list[tuple] = []

    def load(self, file) -> list[tuple]:
        return [(tap, _get(file, x), _get(file, y)) for tap, x, y in self.parts]


def _put(file, t: torch.Tensor) -> tuple:
    """Append the bytes of ``t`` (any dtype, any device) to ``file``; where to find them."""
    flat = t.detach().reshape(-1).contiguous().cpu()
    data = flat.view(torch.uint8).numpy() if flat.numel() else b""
    file.seek(0, os.SEEK_END)
    offset = file.tell()
    file.write(memoryview(data) if flat.numel() else data)
    return offset, flat.numel() * flat.element_size(), t.dtype, tuple(t.shape), t.device


def _get(file, where: tuple) -> torch.Tensor:
    offset, nbytes, dtype, shape, device = where
    file.seek(offset)
    raw = bytearray(file.read(nbytes))
    if len(raw) != nbytes:
        raise DataError(f"the spill file of second_pass='cache' is truncated at byte {offset}")
    flat = torch.frombuffer(raw, dtype=torch.uint8) if nbytes else torch.empty(0, dtype=torch.uint8)
    return flat.view(dtype).reshape(shape).to(device)


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
