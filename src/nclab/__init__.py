"""nclab: measure, predict and reproduce neural collapse and feature collapse.

>>> import torch, nclab
>>> feats = torch.randn(60, 8); labels = torch.arange(60) % 3
>>> stats = nclab.ClassStats.from_features(feats, labels, num_classes=3)
>>> m = nclab.collapse_metrics(stats)
>>> 0 < m["nc1"] < 100
True
"""

from __future__ import annotations

from ._version import __version__
from .errors import ConfigError, DataError, DegenerateError, NclabError, TheoryError
from .metrics import collapse_metrics
from .probe import CollapseProbe
from .stats import ClassStats

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
