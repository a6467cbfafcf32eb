"""Collapse measured: the statistics of :mod:`nclab.stats` joined with the metrics of
:mod:`nclab.metrics`, one layer above both.

* :class:`ClassStats` (``nclab.ClassStats``): the statistics with ``compute()``;
* :mod:`.latent`: :class:`~.latent.LatentCollapse`, collapse of representations grouped by a latent
  symbol (streamed: one ``ClassStats`` of the vectors, one of their directions);
* :mod:`.embedding`: the feature-collapse measures of the word networks' weights grouped by concept
  (Laurent et al., Definitions 1-3) and their type-I/II/III verdict.

``stats`` never imports ``metrics``, and ``metrics`` never builds statistics: what builds
statistics in order to measure them lives here.
"""

from __future__ import annotations

from ._class_stats import ClassStats
from .embedding import feature_collapse_measures, group_collapse
from .latent import LatentCollapse, latent_collapse

__all__ = [
    "ClassStats",
    "LatentCollapse",
    "feature_collapse_measures",
    "group_collapse",
    "latent_collapse",
]
