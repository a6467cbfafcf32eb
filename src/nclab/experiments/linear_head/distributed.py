"""The linear-head experiment under ``torchrun``: process group set-up and the check that every
rank reports the same numbers (sums over ranks: :func:`nclab.distributed.sum_over_ranks`).

``torchrun --nproc_per_node P -m nclab run linear-head ...`` starts P processes that each go through
the runner (:func:`nclab.experiments.run_experiment`, which sets their torch threads from
``threads`` and lets rank 0 alone write files: :meth:`nclab.runs.RunDir.for_rank`);
:func:`setup_distributed` joins them into one process group (gloo on CPU, nccl on GPU).
"""

from __future__ import annotations

import math
import os
from typing import Any

import torch

from ..common.devices import resolve_device


def setup_distributed(device: str) -> tuple[int, int, torch.device]:
    """(rank, world size, device): initialises torch.distributed under torchrun (WORLD_SIZE > 1)."""
    import torch.distributed as dist

    world = int(os.environ.get("WORLD_SIZE", "1"))
    local = int(os.environ.get("LOCAL_RANK", "0"))
    dev = resolve_device(device, local_rank=local)
    if world > 1 and not dist.is_initialized():
        if dev.type == "cuda":
            torch.cuda.set_device(dev)
        dist.init_process_group("nccl" if dev.type == "cuda" else "gloo")
    if dist.is_available() and dist.is_initialized():
        return dist.get_rank(), dist.get_world_size(), dev
    return 0, 1, dev


def ranks_agree(summary: dict[str, Any]) -> bool:
    """All-gather a digest of the summary's numbers and check every rank has the same."""
    import torch.distributed as dist

    vals: list[float] = []
    _numbers(summary, vals)
    t = torch.tensor(vals, dtype=torch.float64)
    digest = torch.stack(
        [
            t.sum(),
            (t * torch.arange(1, len(t) + 1, dtype=torch.float64)).sum(),
            torch.tensor(float(len(t)), dtype=torch.float64),
        ]
    )
    gathered = [torch.zeros_like(digest) for _ in range(dist.get_world_size())]
    dist.all_gather(gathered, digest)
    return all(bool(torch.equal(g, gathered[0])) for g in gathered)


def _numbers(v: Any, out: list[float]) -> None:
    """Append the finite numbers of ``v`` (nested dicts in key order, lists), leaving out the
    ``seconds`` and ``ddp`` entries, to ``out``."""
    if isinstance(v, dict):
        for k in sorted(v):
            if k not in ("seconds", "ddp"):
                _numbers(v[k], out)
    elif isinstance(v, list):
        for x in v:
            _numbers(x, out)
    elif isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v):
        out.append(float(v))
