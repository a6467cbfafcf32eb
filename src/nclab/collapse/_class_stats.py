""":class:`ClassStats`, the public statistics: :class:`nclab.stats.ClassStatsBase` with
:meth:`~ClassStats.compute`.

The statistics live in :mod:`nclab.stats`, the metrics (pure functions of them) in
:mod:`nclab.metrics`; ``compute()`` joins the two here, one layer above both, so that neither
imports the other.
"""

from __future__ import annotations

from ..metrics import Metrics, collapse_metrics
from ..stats import ClassStatsBase


class ClassStats(ClassStatsBase):
    """Per-class counts, means and within-class scatter, streamed in float64, and their collapse
    metrics (:meth:`compute`).

    Everything but ``compute()`` is :class:`nclab.stats.ClassStatsBase`'s (the passes, ``merge``,
    ``from_features``, ``all_reduce``, ``save`` / ``load``, ``drop_empty``; :mod:`nclab.stats`
    describes the statistics). The probe, ``nclab measure`` and the integrations build this class.
    """

    def compute(self, **kwargs) -> Metrics:
        """The collapse metrics of these statistics: ``collapse_metrics(self, **kwargs)``.

        Uses the recorded classifier; keys that need one (or the second pass) and cannot be
        computed are in ``result.skipped`` with the reason.

        >>> import torch
        >>> x = torch.randn(90, 6); y = torch.arange(90) % 3
        >>> m = ClassStats.from_features(x, y, weights=torch.randn(3, 6)).compute()
        >>> "nc3" in m and "nc4" in m, m.skipped
        (True, {})
        """
        return collapse_metrics(self, **kwargs)
