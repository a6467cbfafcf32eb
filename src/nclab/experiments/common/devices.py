"""The torch device an experiment's ``device`` setting names (``"auto"``: CUDA when available)."""

from __future__ import annotations

import torch


def resolve_device(name: str, local_rank: int | None = None) -> torch.device:
    """``name`` as a device; ``"auto"`` is ``cuda`` (``cuda:<local_rank>`` when given) if CUDA is
    available, else ``cpu``.

    >>> resolve_device("cpu")
    device(type='cpu')
    """
    if name != "auto":
        return torch.device(name)
    if not torch.cuda.is_available():
        return torch.device("cpu")
    return torch.device("cuda" if local_rank is None else f"cuda:{local_rank}")
