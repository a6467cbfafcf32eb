"""What keeps the probe from surprising: model modes saved and restored module by module, warnings
when the two passes may see different data, and a memory guard before a D x D scatter."""

from __future__ import annotations

import math
import warnings
from collections.abc import Iterable

import torch
from torch import nn

from ..errors import DataError
from ..validation import F64

#: default ``max_scatter_bytes``: above it a full D x D scatter is refused
MAX_SCATTER_BYTES = 1 << 30
#: relative change of the class means between the passes above which the data differed
PASS_RTOL = 1e-5


class Modes:
    """Context manager: every module's ``training`` flag saved, the model put in eval mode (when
    ``eval_mode``), and every flag restored on exit, module by module."""

    def __init__(self, model: nn.Module, eval_mode: bool = True):
        self.model = model
        self.eval_mode = eval_mode
        self.saved: list[tuple[nn.Module, bool]] = []

    def __enter__(self) -> Modes:
        self.saved = [(m, m.training) for m in self.model.modules()]
        if self.eval_mode:
            self.model.eval()
        return self

    def __exit__(self, *exc) -> None:
        for m, training in self.saved:
            m.training = training


def human_bytes(n: float) -> str:
    for unit in ("bytes", "kB", "MB", "GB", "TB"):
        if n < 1000 or unit == "TB":
            return f"{n:.0f} {unit}" if unit == "bytes" else f"{n:.1f} {unit}"
        n /= 1000
    raise AssertionError  # pragma: no cover


def full_scatter_bytes(dim: int) -> int:
    """Memory of a full scatter: the D x D float64 matrix and one batch's D x D block."""
    return 2 * 8 * dim * dim


def check_scatter_memory(dims: dict[str, int], limit: int | None, why: str) -> None:
    """Refuse full D x D scatters whose estimated memory, over all ``dims`` (tap -> D), exceeds
    ``limit`` bytes; ``why`` says why the scatter is full and what to do instead."""
    if limit is None or not dims:
        return
    total = sum(full_scatter_bytes(d) for d in dims.values())
    if total <= limit:
        return
    big = max(dims, key=dims.get)
    raise DataError(
        f"layer {big!r} has D={dims[big]} features: a full D x D float64 scatter needs about "
        f"{human_bytes(full_scatter_bytes(dims[big]))} ({human_bytes(total)} for all "
        f"{len(dims)} layers, above max_scatter_bytes={human_bytes(limit)}). {why} Otherwise pool "
        "the layer (reduce='avgpool' or 'mean'), use scatter='none' (no nc1), or raise "
        "max_scatter_bytes (None: no limit)."
    )


SCATTER_ADVICE = {
    "observe": "observe() makes one pass, so it keeps the full scatter; the default "
    "scatter='subspace' needs no D x D matrix but two passes over the data: use run().",
    "one-pass": "Without a second pass the probe keeps the full scatter; the default "
    "scatter='subspace' needs no D x D matrix: run(second_pass=True).",
    "full": "scatter='full' was asked for; the default 'subspace' needs no D x D matrix "
    "(two passes, run()).",
}


def warn_if_loader_varies(loader: Iterable) -> None:
    """Warn when a DataLoader shuffles (and drops its last batch): the second pass must see the
    samples of the first."""
    from torch.utils.data import DataLoader, RandomSampler

    if not isinstance(loader, DataLoader):
        return
    sampler = loader.sampler
    shuffles = isinstance(sampler, RandomSampler) or bool(getattr(sampler, "shuffle", False))
    if not shuffles:
        return
    drop = loader.drop_last or bool(getattr(loader.batch_sampler, "drop_last", False))
    dropped = (
        " and drops its last batch (drop_last=True), so the two passes see different samples"
        if drop
        else ""
    )
    warnings.warn(
        f"the probe's loader shuffles (RandomSampler){dropped}: the second pass (nc1 with "
        "scatter='subspace', nc3_cos, nc4, ncc_acc) needs the same samples as the first, and a "
        "training loader usually augments them too; measure on an evaluation loader (shuffle=False, "
        "no augmentation), or read it once: run(second_pass='cache') keeps the pooled features in "
        "memory for the second pass (or second_pass=False: no second pass)",
        UserWarning,
        stacklevel=3,
    )


class PassCheck:
    """Per-class counts and feature sums of one tap in the second pass, compared with the first
    pass: augmentation, shuffling with ``drop_last`` or a nondeterministic model shows here."""

    def __init__(self, name: str):
        self.name = name
        self.sums: torch.Tensor | None = None

    def add(self, stats, features: torch.Tensor, labels: torch.Tensor) -> None:
        k, d = stats.num_classes, stats.dim
        dev = stats.device
        if self.sums is None:
            self.sums = torch.zeros(k, d + 1, dtype=F64, device=dev)
        x = features.detach().to(dev, F64)
        y = labels.to(dev)
        self.sums[:, :d].index_add_(0, y, x)
        self.sums[:, d].index_add_(0, y, torch.ones_like(y, dtype=F64))

    def verify(self, stats) -> None:
        if self.sums is None:
            return
        counts = self.sums[:, -1]
        same_counts = torch.equal(counts.round().to(torch.int64), stats.counts)
        n = counts.clamp(min=1)[:, None]
        change = float((self.sums[:, :-1] / n - stats.means).norm())
        spread = math.sqrt(float(stats.within_trace) / max(stats.num_samples, 1))
        scale = float(stats.means.norm()) + spread
        if same_counts and change <= PASS_RTOL * max(scale, 1e-300):
            return
        what = (
            "different class counts"
            if not same_counts
            else f"class means that moved by {change / scale:.2g} (relative)"
        )
        warnings.warn(
            f"the second pass saw different data from the first (layer {self.name!r}: {what}): "
            "the loader augments, shuffles with drop_last, or the model is not deterministic in "
            "its mode; nc1 (subspace), nc3_cos, nc4 and ncc_acc mix two draws. Measure on a "
            "deterministic evaluation loader, or use run(second_pass='cache') (one read, the "
            "second pass from the features kept in memory) or run(second_pass=False)",
            UserWarning,
            stacklevel=4,
        )


class naming:
    """Context manager: a DataError raised inside names the layer and the batch."""

    def __init__(self, tap, index: int):
        self.tap, self.index = tap, index

    def __enter__(self) -> None:
        return None

    def __exit__(self, kind, exc, tb) -> bool:
        if isinstance(exc, DataError) and not str(exc).startswith("layer "):
            raise DataError(f"layer {self.tap.name!r}, batch {self.index}: {exc}") from exc
        return False


def all_reduce_sum(t: torch.Tensor) -> None:
    import torch.distributed as dist

    if dist.is_available() and dist.is_initialized():
        dist.all_reduce(t)
