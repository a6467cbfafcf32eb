"""Collapse metrics: pure functions of :class:`nclab.ClassStats` (and classifier weights).

One module per family — :mod:`.variability` (NC1), :mod:`.geometry` (NC2), :mod:`.duality` (NC3),
:mod:`.decision` (NC4 and the second pass), :mod:`.weights` (balancedness, negativity) — and
:func:`collapse_metrics`, which computes every canonical key that applies. See ``docs/metrics.md``.
"""

from __future__ import annotations

from collections.abc import Callable

import torch

from ..errors import DegenerateError
from ..stats import ClassStats
from ._common import GlobalMean
from .decision import accuracy, nc3_cos, nc4, ncc_acc
from .duality import nc3, nc3_of, nc3_wh
from .geometry import (
    etf_distance,
    nc2_equiangle,
    nc2_equinorm,
    nc2_etf,
    nc2_kappa,
    nc2_of,
    nc2_w_etf,
    nc2_w_of,
    of_distance,
)
from .variability import cdnv, nc1, nc1_rank, nc1_trace
from .weights import NegativityStats, balancedness, negativity

__all__ = [
    "CANONICAL_KEYS",
    "Metrics",
    "NegativityStats",
    "accuracy",
    "balancedness",
    "cdnv",
    "collapse_metrics",
    "etf_distance",
    "nc1",
    "nc1_rank",
    "nc1_trace",
    "nc2_equiangle",
    "nc2_equinorm",
    "nc2_etf",
    "nc2_kappa",
    "nc2_of",
    "nc2_w_etf",
    "nc2_w_of",
    "nc3",
    "nc3_cos",
    "nc3_of",
    "nc3_wh",
    "nc4",
    "ncc_acc",
    "negativity",
    "of_distance",
]

#: The keys of DESIGN.md's canonical table that collapse_metrics can return (plus ``acc``).
CANONICAL_KEYS = (
    "nc1",
    "nc1_trace",
    "cdnv",
    "nc2_etf",
    "nc2_of",
    "nc2_w_etf",
    "nc2_w_of",
    "nc2_kappa",
    "nc2_equinorm",
    "nc2_equiangle",
    "nc3",
    "nc3_of",
    "nc3_cos",
    "nc4",
    "ncc_acc",
    "acc",
)


class Metrics(dict):
    """A dict of metric values; ``skipped`` maps the keys that did not apply to the reason."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.skipped: dict[str, str] = {}


def collapse_metrics(
    stats: ClassStats,
    weights: torch.Tensor | None = None,
    bias: torch.Tensor | None = None,
    global_mean: GlobalMean = "class",
    keys: tuple[str, ...] | None = None,
) -> Metrics:
    """Every canonical metric that applies to these statistics (and classifier).

    Keys needing the classifier (``nc2_w_*``, ``nc3``, ``nc3_of``) appear when ``weights`` is given;
    ``nc3_cos``, ``nc4``, ``ncc_acc`` and ``acc`` appear after :meth:`ClassStats.decision_pass`.
    A key that is undefined for these statistics (e.g. ``nc2_kappa`` with D < K) is left out and its
    reason recorded in ``result.skipped``; no value is ever NaN. An empty class is an error
    (:class:`~nclab.errors.DegenerateError`); drop such classes with ``stats.drop_empty()``.
    ``bias`` is only used by the decision pass (NC4) and is accepted here for symmetry.

    >>> import torch
    >>> from nclab import ClassStats
    >>> x = torch.randn(200, 8); y = torch.arange(200) % 4
    >>> w = torch.randn(4, 8)
    >>> m = collapse_metrics(ClassStats.from_features(x, y, weights=w), weights=w)
    >>> len(m), m.skipped
    (16, {})
    >>> s = ClassStats(4, 8); s.update(x, y)  # one streaming pass, no second pass
    >>> sorted(collapse_metrics(s, weights=w).skipped)
    ['acc', 'nc3_cos', 'nc4', 'ncc_acc']
    """
    stats.check_nonempty()
    table: dict[str, Callable[[], float]] = {
        "nc1": lambda: nc1(stats, global_mean),
        "nc1_trace": lambda: nc1_trace(stats, global_mean),
        "cdnv": lambda: cdnv(stats),
        "nc2_etf": lambda: nc2_etf(stats, global_mean),
        "nc2_of": lambda: nc2_of(stats),
        "nc2_kappa": lambda: nc2_kappa(stats),
        "nc2_equinorm": lambda: nc2_equinorm(stats, global_mean),
        "nc2_equiangle": lambda: nc2_equiangle(stats, global_mean),
        "ncc_acc": lambda: ncc_acc(stats),
        "nc3_cos": lambda: nc3_cos(stats),
        "nc4": lambda: nc4(stats),
        "acc": lambda: accuracy(stats),
    }
    if weights is not None:
        table.update(
            {
                "nc2_w_etf": lambda: nc2_w_etf(weights),
                "nc2_w_of": lambda: nc2_w_of(weights),
                "nc3": lambda: nc3(stats, weights, global_mean),
                "nc3_of": lambda: nc3_of(stats, weights),
            }
        )
    out = Metrics()
    for key in CANONICAL_KEYS:
        if key not in table or (keys is not None and key not in keys):
            continue
        try:
            out[key] = table[key]()
        except DegenerateError as exc:
            out.skipped[key] = str(exc)
    return out
