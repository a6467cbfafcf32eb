"""``torch.distributed`` reductions of :class:`~nclab.stats.ClassStats` (its ``all_reduce*`` methods).

Moments are merged exactly: ranks first agree on the global counts and means, then each rank moves
its sums of squares and scatter to the global means (a Chan correction) before the sums are reduced.
Never E[xx^T] - mu mu^T.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import torch

from .errors import DataError
from .validation import F64

if TYPE_CHECKING:
    from .stats import ClassStats


def all_reduce_first_pass(stats: ClassStats, group=None) -> ClassStats:
    """Merge the first-pass statistics of every ``torch.distributed`` rank, in place.

    Exact: ranks agree on the global counts and means, then each rank moves its sums of squares
    and scatter to the global means with a Chan correction before they are summed. Call it
    after the last ``update`` and before the second pass; reduce the second pass with
    :meth:`all_reduce_second_pass`. A no-op when ``torch.distributed`` is not initialised.
    """
    import torch.distributed as dist

    if not (dist.is_available() and dist.is_initialized()):
        return stats
    if stats.decision.n or stats.pass2_count:
        raise DataError(
            "all_reduce() merges the first pass: call it before decision_pass, "
            "then all_reduce_second_pass() after it"
        )
    if stats.device is None:
        stats._alloc(torch.device("cpu"))
    n_local = stats.counts.to(F64)
    counts = n_local.clone()
    sums = stats.means * n_local[:, None]
    dist.all_reduce(counts, group=group)
    dist.all_reduce(sums, group=group)
    means = sums / counts.clamp_min(1)[:, None]
    delta = stats.means - means
    ss = stats.class_ss + n_local * (delta * delta).sum(1)
    dist.all_reduce(ss, group=group)
    if stats.scatter is not None:
        sc = stats.scatter + (delta * n_local[:, None]).T @ delta
        dist.all_reduce(sc, group=group)
        stats.scatter = sc
    if stats.class_scatter is not None:
        cs = stats.class_scatter + n_local[:, None, None] * (delta[:, :, None] * delta[:, None, :])
        dist.all_reduce(cs, group=group)
        stats.class_scatter = cs
    eps = torch.tensor([stats.eps], dtype=F64, device=stats.device)
    dist.all_reduce(eps, op=dist.ReduceOp.MAX, group=group)
    stats.counts = counts.round().to(torch.int64)
    stats.means, stats.class_ss, stats.eps = means, ss, float(eps.item())
    return stats


def all_reduce_second_pass(stats: ClassStats, group=None) -> ClassStats:
    """Sum the second-pass accumulators (decisions, projected scatter) over ranks.

    Every rank must have run :meth:`all_reduce` before its second pass, so that all ranks used
    the same means (and hence the same basis). A no-op without ``torch.distributed``.
    """
    import torch.distributed as dist

    if not (dist.is_available() and dist.is_initialized()):
        return stats
    dev = stats.device or torch.device("cpu")
    dec = stats.decision
    vec = torch.cat(
        [
            dec.as_tensor(dev),
            torch.tensor(
                [float(dec.has_classifier), float(stats.pass2_count)], dtype=F64, device=dev
            ),
        ]
    )
    dist.all_reduce(vec, group=group)
    dec.load_tensor(vec[: len(dec.tensor_fields)])
    dec.has_classifier = bool(vec[-2].item() > 0)
    stats.pass2_count = int(round(vec[-1].item()))
    if stats.basis_scatter is not None:
        dist.all_reduce(stats.basis_scatter, group=group)
    return stats
