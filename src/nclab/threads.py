"""Torch's CPU thread count, set for one run and restored after it (worker processes and Ray:
:mod:`nclab.workers`).

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
