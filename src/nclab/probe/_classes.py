"""Which classes the probe measures: all K (default), or those with samples (``empty_classes="drop"``,
e.g. the next-token classes of a vocabulary, most of which never occur in a measured batch)."""

from __future__ import annotations

from typing import Literal

import torch

from ..errors import DataError, DegenerateError

EmptyClasses = Literal["error", "drop"]


class ClassSet:
    """The classes kept after the first pass, the renumbering of labels and classifier rows."""

    def __init__(self, num_classes: int, empty_classes: EmptyClasses):
        if empty_classes not in ("error", "drop"):
            raise DataError(f"empty_classes must be 'error' or 'drop', got {empty_classes!r}")
        self.num_classes = num_classes
        self.mode = empty_classes
        self.reset()

    def reset(self) -> None:
        self.kept: torch.Tensor | None = None  # original index of each class kept (drop mode)
        self.remap: torch.Tensor | None = None  # original class -> kept index, -1 if dropped

    @property
    def dropped(self) -> bool:
        return self.kept is not None

    def check_open(self, started: bool) -> None:
        """observe() cannot add to statistics whose empty classes result() has dropped."""
        if self.dropped and started:
            raise DataError(
                "result() has dropped the empty classes from these statistics; observe() cannot "
                "add to them: start a new probe (or call run(), which starts afresh)"
            )

    def settle(self, taps) -> None:
        """After the first pass: in drop mode, leave out the classes without samples (the same at
        every tap: the taps share the labels); else every class must have samples."""
        stats = taps[0].stats
        if self.mode == "drop" and self.kept is None and not bool((stats.counts > 0).all()):
            kept = (stats.counts > 0).nonzero().flatten().cpu()
            remap = torch.full((self.num_classes,), -1, dtype=torch.long)
            remap[kept] = torch.arange(len(kept))
            for tap in taps:
                tap.stats, _ = tap.stats.drop_empty()
            self.kept, self.remap = kept, remap
            return
        empty = (stats.counts == 0).nonzero().flatten().tolist()
        if empty:
            shown = ", ".join(map(str, empty[:10])) + (" ..." if len(empty) > 10 else "")
            raise DegenerateError(
                f"num_classes={self.num_classes} but classes {shown} have no samples among the "
                f"{stats.num_samples} the probe saw; collapse metrics need every class: pass "
                "the number of classes the labels use, a loader that covers every class, or "
                "CollapseProbe(..., empty_classes='drop') to measure the classes that occur"
            )

    def rows(self, w: torch.Tensor | None, b: torch.Tensor | None):
        """The classifier's rows of the classes kept."""
        if self.kept is None or w is None:
            return w, b
        return w[self.kept.to(w.device)], (b[self.kept.to(b.device)] if b is not None else None)

    def renumber(self, y: torch.Tensor, index: int) -> torch.Tensor:
        """Labels of the second pass in the numbering of the classes kept."""
        if self.remap is None:
            return y
        new = self.remap.to(y.device)[y]
        if bool((new < 0).any()):
            lost = sorted(set(y[new < 0].tolist()))[:10]
            raise DataError(
                f"the second pass (batch {index}) has samples of classes {lost} that the first "
                "pass never saw: the loader changes between reads; use "
                "run(second_pass='cache') or a deterministic loader"
            )
        return new
