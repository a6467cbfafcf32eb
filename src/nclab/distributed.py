"""Exact ``torch.distributed`` reductions of per-class moments (behind ``ClassStats.all_reduce*``).

These functions take and return plain tensors and know nothing of :class:`~nclab.ClassStats`,
which reads its fields into them and stores what they return: the dependency runs one way, from
:mod:`nclab.stats` to here.

Moments are merged exactly: ranks first agree on the global counts and means, then each rank moves
its sums of squares and scatter to the global means (a Chan correction) before the sums are reduced.
Never E[xx^T] - mu mu^T.
"""

from __future__ import annotations

from typing import NamedTuple

import torch

from .validation import F64


def is_initialized() -> bool:
    """Whether a ``torch.distributed`` process group is running (else every reduction is a no-op)."""
    import torch.distributed as dist

    return dist.is_available() and dist.is_initialized()


def sum_over_ranks(t: torch.Tensor, group=None) -> torch.Tensor:
    """Sum ``t`` element-wise over the ranks of ``group`` (``None``: every rank of the default
    group), in place, and return ``t``: afterwards every rank holds the same sum.

    A collective ``all_reduce(SUM)``: every rank of the group calls it, in the same order, with a
    tensor of the same shape and dtype on a device its backend reduces (CPU for gloo, CUDA for
    nccl). The sum is taken in ``t``'s dtype (float64 or int64 for exact accumulations). It needs
    a running process group and reduces whenever there is one, a group of one rank included (``t``
    is then unchanged); without a process group ``torch.distributed`` raises, so callers that also
    run in a single process write ``if is_initialized(): sum_over_ranks(t)``.
    """
    import torch.distributed as dist

    dist.all_reduce(t, group=group)
    return t


class FirstPass(NamedTuple):
    """Global first-pass moments: what every rank holds after :func:`reduce_first_pass`."""

    counts: torch.Tensor  # (K,) int64
    means: torch.Tensor  # (K, D)
    class_ss: torch.Tensor  # (K,)
    scatter: torch.Tensor | None  # (D, D)
    class_scatter: torch.Tensor | None  # (K, D, D)
    eps: float


def reduce_first_pass(
    counts: torch.Tensor,
    means: torch.Tensor,
    class_ss: torch.Tensor,
    scatter: torch.Tensor | None,
    class_scatter: torch.Tensor | None,
    eps: float,
    group=None,
) -> FirstPass:
    """Merge each rank's (counts, means, sums of squares, scatters, input eps) into the global ones.

    Exact: ranks agree on the global counts and means, then each rank moves its sums of squares and
    scatters to the global means with a Chan correction before they are summed. The inputs are not
    modified. Needs a running process group (:func:`is_initialized`).
    """
    import torch.distributed as dist

    n_local = counts.to(F64)
    total = n_local.clone()
    sums = means * n_local[:, None]
    dist.all_reduce(total, group=group)
    dist.all_reduce(sums, group=group)
    global_means = sums / total.clamp_min(1)[:, None]
    delta = means - global_means
    ss = class_ss + n_local * (delta * delta).sum(1)
    dist.all_reduce(ss, group=group)
    sc = cs = None
    if scatter is not None:
        sc = scatter + (delta * n_local[:, None]).T @ delta
        dist.all_reduce(sc, group=group)
    if class_scatter is not None:
        cs = class_scatter + n_local[:, None, None] * (delta[:, :, None] * delta[:, None, :])
        dist.all_reduce(cs, group=group)
    eps_t = torch.tensor([eps], dtype=F64, device=means.device)
    dist.all_reduce(eps_t, op=dist.ReduceOp.MAX, group=group)
    return FirstPass(total.round().to(torch.int64), global_means, ss, sc, cs, float(eps_t.item()))
