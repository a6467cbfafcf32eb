"""What the integrations share: the optional-import guard, the exact shard of a loader a rank
measures (:func:`shard_loader`, for a measurement of its own) and the rows of a padded shard that are
real samples (:func:`real_rows`, for a measurement on the framework's own passes). The measurement
both callbacks make is :mod:`._measure`."""

from __future__ import annotations

import importlib
from collections.abc import Iterable
from types import ModuleType
from typing import Any

from .. import distributed
from ..errors import DataError


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


def real_rows(loader: Any) -> int | None:
    """How many of the rows this rank's ``loader`` yields are samples of the data set, under
    ``torch.distributed``: a ``DistributedSampler`` and accelerate's even batches pad the ranks'
    shards to equal length by repeating samples at the end of each rank's sequence. ``None``: every
    row counts (one process, or a sampler that does not pad); raises :class:`LookupError` for a
    loader whose padding is unknown.

    >>> import torch
    >>> from torch.utils.data import DataLoader, DistributedSampler, TensorDataset
    >>> ds = TensorDataset(torch.zeros(5, 1))
    >>> [real_rows(DataLoader(ds, sampler=DistributedSampler(ds, 2, r))) for r in (0, 1)]
    [3, 2]
    """
    from torch.utils.data import DistributedSampler

    _, world = rank_and_world()
    sampler = getattr(loader, "sampler", None)
    batch_sampler = getattr(loader, "batch_sampler", None)
    if isinstance(sampler, DistributedSampler) or isinstance(
        getattr(batch_sampler, "sampler", None), DistributedSampler
    ):
        s = sampler if isinstance(sampler, DistributedSampler) else batch_sampler.sampler
        return s.num_samples if s.drop_last else len(range(s.rank, len(s.dataset), s.num_replicas))
    if type(batch_sampler).__name__ == "BatchSamplerShard":
        return _accelerate_rows(batch_sampler)
    if world == 1:
        return None
    raise LookupError(f"a {type(loader).__name__} whose sampler is {type(sampler).__name__}")


def _accelerate_rows(shard: Any) -> int | None:
    """The rows of accelerate's ``BatchSamplerShard`` that are not padding: batches ``rank, rank +
    W, ...`` of the inner batch sampler (round robin; even batches pad at the end)."""
    inner = shard.batch_sampler
    if shard.split_batches or getattr(inner, "batch_size", None) is None:
        raise LookupError("an accelerate loader that splits its batches")
    if not shard.even_batches or shard.drop_last:
        return None
    n, size = len(inner.sampler), inner.batch_size
    sizes = [min(size, n - i) for i in range(0, n, size)]
    return sum(sizes[shard.process_index :: shard.num_processes])
