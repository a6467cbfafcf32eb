"""Torch's CPU thread count, set for one run and restored after it; starting Ray for worker tasks
(:func:`start_ray`, shared by ``nclab reproduce --backend ray`` and ``nclab measure --backend ray``).

>>> import torch
>>> before = torch.get_num_threads()
>>> with torch_threads(1):
...     torch.get_num_threads()
1
>>> torch.get_num_threads() == before
True
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import torch

from .errors import ConfigError


@contextmanager
def torch_threads(threads: int | None) -> Iterator[None]:
    """Run the block with ``threads`` torch CPU threads (None or 0: leave torch's setting)."""
    old = torch.get_num_threads()
    if threads:
        torch.set_num_threads(int(threads))
    try:
        yield
    finally:
        if torch.get_num_threads() != old:
            torch.set_num_threads(old)


def start_ray(workers: int, address: str | None = None):
    """(the ray module, whether this call started it): joins the cluster at ``address``, else
    starts a local Ray with ``workers`` CPUs; an already running Ray is used as it is. Workers get
    ``NCLAB_PROGRESS=0`` (no progress bars from tasks)."""
    try:
        import ray
    except ImportError:
        raise ConfigError(
            "the ray backend needs Ray: pip install 'nclab[ray]' (or pip install ray)"
        ) from None
    if ray.is_initialized():
        return ray, False
    kwargs = {
        "include_dashboard": False,
        "log_to_driver": False,
        "runtime_env": {"env_vars": {"NCLAB_PROGRESS": "0"}},
    }
    if address:
        ray.init(address=address, **kwargs)
    else:
        ray.init(num_cpus=workers, **kwargs)
    return ray, True
