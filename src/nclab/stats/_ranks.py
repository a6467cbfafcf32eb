"""``ClassStats.all_reduce`` and ``all_reduce_second_pass``: the statistics of every
``torch.distributed`` rank combined exactly (the arithmetic is in :mod:`nclab.distributed`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import torch

from .. import distributed
from ..errors import DataError
from ..validation import F64

if TYPE_CHECKING:
    from ._core import ClassStatsBase


def all_reduce(stats: ClassStatsBase, group=None) -> ClassStatsBase:
    """See :meth:`ClassStats.all_reduce`."""
    if not distributed.is_initialized():
        return stats
    if stats.decision.n or stats.pass2_count:
        raise DataError(
            "all_reduce() merges the first pass: call it before decision_pass, "
            "then all_reduce_second_pass() after it"
        )
    if stats.device is None:
        stats._alloc(torch.device("cpu"))
    # FirstPass's fields are the names of the attributes it reduces
    state = [getattr(stats, field) for field in distributed.FirstPass._fields]
    for field, value in distributed.reduce_first_pass(*state, group=group)._asdict().items():
        setattr(stats, field, value)
    return stats


def all_reduce_second_pass(stats: ClassStatsBase, group=None) -> ClassStatsBase:
    """See :meth:`ClassStats.all_reduce_second_pass`."""
    if not distributed.is_initialized():
        return stats
    dev = stats.device or torch.device("cpu")
    dec = stats.decision
    flags = torch.tensor(
        [float(dec.has_classifier), float(stats.pass2_count)], dtype=F64, device=dev
    )
    vec = distributed.sum_over_ranks(torch.cat([dec.as_tensor(dev), flags]), group)
    dec.load_tensor(vec[: len(dec.tensor_fields)])
    dec.has_classifier = bool(vec[-2].item() > 0)
    stats.pass2_count = int(round(vec[-1].item()))
    if stats.basis_scatter is not None:
        distributed.sum_over_ranks(stats.basis_scatter, group)
    return stats
