"""nclab: measure, predict and reproduce neural collapse and feature collapse.

``ClassStats``, ``collapse_metrics`` and ``CollapseProbe`` are loaded on first use (PEP 562), so
``import nclab`` — and the ``nclab`` command, whose verbs import what they need — does not pay
for torch until a tensor is needed.

>>> import torch, nclab
>>> feats = torch.randn(60, 8); labels = torch.arange(60) % 3
>>> stats = nclab.ClassStats.from_features(feats, labels, num_classes=3)
>>> m = nclab.collapse_metrics(stats)
>>> 0 < m["nc1"] < 100
True
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from ._version import __version__
from .errors import ConfigError, DataError, DegenerateError, NclabError, TheoryError

if TYPE_CHECKING:
    from .collapse import ClassStats
    from .metrics import collapse_metrics
    from .probe import CollapseProbe

#: public name -> the module that defines it (imported on first access)
_LAZY = {"ClassStats": ".collapse", "collapse_metrics": ".metrics", "CollapseProbe": ".probe"}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        value = getattr(importlib.import_module(_LAZY[name], __name__), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'nclab' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))


__all__ = [
    "ClassStats",
    "CollapseProbe",
    "ConfigError",
    "DataError",
    "DegenerateError",
    "NclabError",
    "TheoryError",
    "__version__",
    "collapse_metrics",
]
