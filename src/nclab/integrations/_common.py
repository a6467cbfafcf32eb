"""What the integrations share: the optional-import guard, the exact shard of a loader a rank
measures, the flat ``collapse/<layer>/<metric>`` keys, and the measurement both callbacks make."""

from __future__ import annotations

import importlib
import math
from collections.abc import Iterable, Sequence
from types import ModuleType
from typing import Any

import torch
from torch import nn

from .. import distributed
from ..errors import DataError
from ..probe import CollapseProbe, ProbeResult, Tap


def require(module: str, extra: str) -> ModuleType:
    """Import ``module`` or raise an ``ImportError`` that names ``pip install nclab[extra]``."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise ImportError(
            f"nclab.integrations.{extra} needs the {module.split('.')[0]!r} package, which is not "
            f"installed: pip install nclab[{extra}]  ({exc})"
        ) from exc


def rank_and_world() -> tuple[int, int]:
    """(rank, world size) of the running ``torch.distributed`` group, (0, 1) without one."""
    if not distributed.is_initialized():
        return 0, 1
    import torch.distributed as dist

    return dist.get_rank(), dist.get_world_size()


def _whole_sampler(loader: Any) -> bool:
    """Whether the loader's sampler visits every sample of its dataset once (in order, shuffled or
    split over ranks): then the dataset itself is what the loader measures."""
    from torch.utils.data import DistributedSampler, RandomSampler, SequentialSampler

    whole = (SequentialSampler, DistributedSampler)
    batch_sampler = getattr(loader, "batch_sampler", None)
    inner = getattr(batch_sampler, "batch_sampler", batch_sampler)  # accelerate wraps it
    for sampler in (getattr(inner, "sampler", None), getattr(loader, "sampler", None)):
        if isinstance(sampler, RandomSampler):
            return not sampler.replacement and sampler.num_samples == len(sampler.data_source)
        if isinstance(sampler, whole):
            return True
    return False


def shard_loader(loader: Iterable) -> Iterable:
    """The loader this rank measures: every sample once, in order, split over the ranks.

    A DataLoader over a map-style dataset whose sampler visits the whole dataset (sequential,
    shuffled without replacement, or a ``DistributedSampler``) is rebuilt over samples ``rank,
    rank + W, rank + 2W, ...`` of the dataset with the same batch size, ``collate_fn`` and workers:
    no shuffling (the probe's two passes see the same samples) and no padding (a
    ``DistributedSampler`` repeats samples to even out the shards, which would count them twice).
    Anything else is returned as it is, and taken to be this rank's shard. One process (rank 0 of
    1) measures the whole dataset in order.

    >>> import torch
    >>> from torch.utils.data import DataLoader, TensorDataset
    >>> ds = TensorDataset(torch.arange(10.0)[:, None], torch.arange(10) % 2)
    >>> [b[1].tolist() for b in shard_loader(DataLoader(ds, batch_size=4, shuffle=True))]
    [[0, 1, 0, 1], [0, 1, 0, 1], [0, 1]]
    """
    from torch.utils.data import DataLoader, IterableDataset, SequentialSampler, Subset

    rank, world = rank_and_world()
    dataset = getattr(loader, "dataset", None)
    batch_size = getattr(loader, "batch_size", None) or getattr(
        getattr(loader, "batch_sampler", None), "batch_size", None
    )
    if (
        dataset is None
        or isinstance(dataset, IterableDataset)
        or not hasattr(dataset, "__len__")
        or batch_size is None
        or not _whole_sampler(loader)
    ):
        return loader
    if world == 1 and isinstance(getattr(loader, "sampler", None), SequentialSampler):
        return loader
    n = len(dataset)
    if n < world:
        raise DataError(
            f"the measured dataset has {n} samples for {world} ranks: every rank needs one"
        )
    workers = getattr(loader, "num_workers", 0)
    return DataLoader(
        Subset(dataset, range(rank, n, world)),
        batch_size=batch_size,
        shuffle=False,
        collate_fn=getattr(loader, "collate_fn", None),
        num_workers=workers,
        pin_memory=getattr(loader, "pin_memory", False),
    )


def flat_metrics(
    result: ProbeResult, prefix: str = "collapse", metrics: Sequence[str] | None = None
) -> dict[str, float]:
    """``{"<prefix>/<layer>/<metric>": value}`` for every finite metric of ``result`` (only those
    named in ``metrics`` when given), the keys a logger plots one curve each."""
    out = {}
    for layer, values in result.to_dict().items():
        for name, value in values.items():
            if metrics is not None and name not in metrics:
                continue
            if isinstance(value, int | float) and math.isfinite(value):
                out[f"{prefix}/{layer}/{name}"] = float(value)
    return out


class Measurement:
    """The probe a callback runs: its options, checked at construction (and against the model
    with :meth:`check`), and one measurement of a model over a loader, exact across ranks."""

    def __init__(
        self,
        layers: Iterable[str | Tap] | str | Tap,
        num_classes: int,
        prefix: str,
        metrics: Sequence[str] | None,
        second_pass: bool | str,
        max_batches: int | None,
        probe_options: dict[str, Any],
    ):
        if not isinstance(num_classes, int) or num_classes < 2:
            raise DataError(f"num_classes must be an integer >= 2, got {num_classes!r}")
        if max_batches is not None and (not isinstance(max_batches, int) or max_batches < 1):
            raise DataError(f"max_batches must be a positive integer or None, got {max_batches!r}")
        self.layers = [layers] if isinstance(layers, str | Tap) else list(layers)
        self.num_classes = num_classes
        self.prefix = prefix
        self.metrics = None if metrics is None else list(metrics)
        self.second_pass = second_pass
        self.max_batches = max_batches
        self.probe_options = probe_options

    def probe(self, model: nn.Module) -> CollapseProbe:
        """The probe on ``model`` (raises on unknown layers, a wrong classifier or options)."""
        return CollapseProbe(model, self.layers, self.num_classes, **self.probe_options)

    def __call__(
        self, model: nn.Module, loader: Iterable, device: torch.device | str | None
    ) -> tuple[ProbeResult, dict[str, float]]:
        """Measure ``model`` on this rank's shard of ``loader``; every rank returns the same
        (result, flat metrics), those of one process over all the data."""
        result = self.probe(model).run(
            shard_loader(loader),
            device=device,
            second_pass=self.second_pass,
            max_batches=self.max_batches,
            progress=False,
        )
        return result, flat_metrics(result, self.prefix, self.metrics)
