"""``update`` at vocabulary size: a batch that holds few of K classes updates only their rows.

Each batch of tokens touches a few thousand of 50,257 next-token classes; the dense update of
:meth:`~nclab.stats.ClassStatsBase.update` makes several K x D float64 temporaries per batch (300 MB
each for GPT-2 small), O(K D) work per batch. Here the batch's statistics are computed over its
classes only and merged into their rows in place, with the arithmetic of the dense update (Chan's
merge, per class), so the result is the dense one bit for bit.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import torch

from .._kernels import batch_stats
from ..validation import F64

if TYPE_CHECKING:
    from ._core import ClassStatsBase

#: from this many classes on, a batch that holds at most a quarter of them updates only their rows
COMPACT_MIN_CLASSES = 1024


def update_rows(stats: ClassStatsBase, x: torch.Tensor, y: torch.Tensor) -> bool:
    """Add the batch (``x``, ``y``, checked) to ``stats`` through the rows of its classes when
    K >= :data:`COMPACT_MIN_CLASSES` and the batch holds at most K / 4 classes (no per-class
    scatter); returns whether it did (else the caller runs the dense update)."""
    k = stats.num_classes
    if k < COMPACT_MIN_CLASSES or stats.class_scatter is not None:
        return False
    rows, inverse = torch.unique(y, return_inverse=True)
    if 4 * rows.numel() > k:
        return False
    nb, mb, ssb, sb, _ = batch_stats(x, inverse, rows.numel(), stats.scatter is not None, False)
    na, nbf = stats.counts[rows].to(F64), nb.to(F64)
    n = na + nbf
    old = stats.means[rows]
    delta = mb - old
    w = na * nbf / n
    stats.means.index_copy_(0, rows, old + delta * (nbf / n)[:, None])
    stats.class_ss.index_copy_(0, rows, stats.class_ss[rows] + ssb + w * (delta * delta).sum(1))
    if stats.scatter is not None:
        stats.scatter.add_(sb).addmm_((delta * w[:, None]).T, delta)
    stats.counts.index_add_(0, rows, nb)
    stats._clear_second_pass()
    return True
