"""The torch device an experiment's ``device`` setting names (``"auto"``: CUDA when available).

torch is imported when a function runs: the configs that check their ``device`` load without it
(``--help``, ``--list`` and the summary types stay light)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...errors import ConfigError

if TYPE_CHECKING:
    import torch


def resolve_device(name: str, local_rank: int | None = None) -> torch.device:
    """``name`` as a device; ``"auto"`` is ``cuda`` (``cuda:<local_rank>`` when given) if CUDA is
    available, else ``cpu``.

    >>> resolve_device("cpu")
    device(type='cpu')
    """
    import torch

    if name != "auto":
        return torch.device(name)
    if not torch.cuda.is_available():
        return torch.device("cpu")
    return torch.device("cuda" if local_rank is None else f"cuda:{local_rank}")


def check_device(name: str) -> None:
    """Raise :class:`~nclab.errors.ConfigError` unless ``name`` is ``"auto"`` or a device this
    machine has (``cpu``; ``cuda`` / ``cuda:<i>`` where CUDA is available).

    >>> check_device("cpu")
    >>> check_device("gpu")
    Traceback (most recent call last):
    ...
    nclab.errors.ConfigError: device must be 'auto', 'cpu' or 'cuda[:<index>]', got 'gpu'
    """
    if name in ("auto", "cpu"):
        return
    import torch

    try:
        dev = torch.device(name)
    except (RuntimeError, TypeError):
        dev = None
    if dev is None or dev.type not in ("cpu", "cuda"):
        raise ConfigError(f"device must be 'auto', 'cpu' or 'cuda[:<index>]', got {name!r}")
    if dev.type == "cuda" and not torch.cuda.is_available():
        raise ConfigError(
            f"device {name!r}: this machine has no CUDA device (torch {torch.__version__}); "
            "use device='auto' or 'cpu'"
        )
    if dev.type == "cuda" and (dev.index or 0) >= torch.cuda.device_count():
        raise ConfigError(
            f"device {name!r}: this machine has {torch.cuda.device_count()} CUDA device(s)"
        )
