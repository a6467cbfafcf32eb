"""Collapse metrics: pure functions of :class:`nclab.ClassStats` (and classifier weights).

One module per family — :mod:`.variability` (NC1), :mod:`.geometry` (NC2), :mod:`.duality` (NC3),
:mod:`.decision` (NC4 and the second pass), :mod:`.weights` (balancedness, negativity) — and
:func:`collapse_metrics`, which computes every canonical key that applies. See ``docs/metrics.md``.
Beside them: :mod:`.uniformity` (GNC2), :mod:`.views` (per-class views, UNC3, NC5,
||W mu_G + b||), :mod:`.decision_views` (per-class NCC agreement, NC4 per class, top-k) and
:mod:`.large_k` (the D x D forms and tiles used beyond the memory budget).
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import TYPE_CHECKING

import torch

from ..errors import DegenerateError
from ._common import GlobalMean
from .decision import accuracy, nc3_cos, nc4, ncc_acc
from .decision_views import DecisionViews
from .duality import nc3, nc3_of, nc3_wh
from .geometry import (
    etf_distance,
    frame_floor,
    frame_note,
    nc2_equiangle,
    nc2_equinorm,
    nc2_etf,
    nc2_kappa,
    nc2_of,
    nc2_w_etf,
    nc2_w_of,
    of_distance,
)
from .uniformity import gnc2, hyperspherical_uniformity
from .variability import (
    NC1Parts,
    cdnv,
    cdnv_per_class,
    nc1,
    nc1_note,
    nc1_parts,
    nc1_rank,
    nc1_rank_norm,
    nc1_trace,
)
from .views import classifier_global_mean, duality_cosines, mean_norms, nc5, unc3
from .weights import NegativityStats, balancedness, negativity

if TYPE_CHECKING:
    from ..stats import ClassStatsBase

__all__ = [
    "CANONICAL_KEYS",
    "DecisionViews",
    "Metrics",
    "NC1Parts",
    "NegativityStats",
    "accuracy",
    "add_notes",
    "balancedness",
    "cdnv",
    "cdnv_per_class",
    "classifier_global_mean",
    "collapse_metrics",
    "duality_cosines",
    "etf_distance",
    "frame_floor",
    "frame_note",
    "gnc2",
    "hyperspherical_uniformity",
    "mean_norms",
    "nc1",
    "nc1_note",
    "nc1_parts",
    "nc1_rank",
    "nc1_rank_norm",
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
    "nc5",
    "ncc_acc",
    "negativity",
    "of_distance",
    "unc3",
]

#: The keys of DESIGN.md's canonical table that collapse_metrics can return (plus ``acc``, and
#: ``nc1_rank_norm``, NC1 over the rank of Sigma_B instead of K: the one to compare when K > D + 1).
CANONICAL_KEYS = (
    "nc1",
    "nc1_trace",
    "cdnv",
    "nc1_rank_norm",
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
    """A dict of metric values; ``skipped`` maps the keys that did not apply to the reason, and
    ``notes`` the keys that were computed but mean less than they seem to the caveat (e.g. ``nc1``
    when rank(Sigma_B) < K - 1: more classes than dimensions).

    ``skipped`` and ``notes`` survive ``m.copy()``, ``copy.copy``, ``copy.deepcopy`` and pickling
    (each copy gets its own). ``dict(m)`` is, by definition, a plain dict of the values only:
    keep the reasons with ``m.to_dict()`` (``{"metrics": ..., "skipped": ..., "notes": ...}``,
    JSON-ready) and rebuild with :meth:`from_dict`.

    >>> m = Metrics({"nc1": 0.5}, skipped={"nc3": "needs the classifier"})
    >>> m.copy().skipped, m.to_dict()
    ({'nc3': 'needs the classifier'}, {'metrics': {'nc1': 0.5}, 'skipped': {'nc3': 'needs the classifier'}, 'notes': {}})
    >>> Metrics.from_dict(m.to_dict()) == m, Metrics.from_dict(m.to_dict()).skipped == m.skipped
    (True, True)
    """

    def __init__(
        self,
        *args,
        skipped: dict[str, str] | None = None,
        notes: dict[str, str] | None = None,
        **kwargs,
    ):
        super().__init__(*args, **kwargs)
        self.skipped: dict[str, str] = dict(skipped or {})
        self.notes: dict[str, str] = dict(notes or {})

    def copy(self) -> Metrics:
        return type(self)(self, skipped=self.skipped, notes=self.notes)

    __copy__ = copy

    def __deepcopy__(self, memo) -> Metrics:
        return type(self)(
            copy.deepcopy(dict(self), memo),
            skipped=copy.deepcopy(self.skipped),
            notes=copy.deepcopy(self.notes),
        )

    def __reduce__(self):
        return (
            type(self),
            (dict(self),),
            {"skipped": dict(self.skipped), "notes": dict(self.notes)},
        )

    def __setstate__(self, state: dict) -> None:
        self.skipped = dict(state.get("skipped", {}))
        self.notes = dict(state.get("notes", {}))

    def to_dict(self) -> dict[str, dict]:
        """``{"metrics": {key: value}, "skipped": {key: reason}, "notes": {key: caveat}}`` (plain
        dicts)."""
        return {"metrics": dict(self), "skipped": dict(self.skipped), "notes": dict(self.notes)}

    @classmethod
    def from_dict(cls, d: dict) -> Metrics:
        """The inverse of :meth:`to_dict`."""
        return cls(d.get("metrics", {}), skipped=d.get("skipped", {}), notes=d.get("notes", {}))


#: the keys computed from the classifier W (with the class means); the second-pass ones
#: (nc3_cos, nc4, acc) need W given to the decision pass as well
_NEEDS_W = ("nc2_w_etf", "nc2_w_of", "nc3", "nc3_of")
_NO_W = (
    "{key} needs the classifier: record it with ClassStats.from_features(..., weights=W, bias=b), "
    "decision_pass(..., W, b) or stats.set_classifier(W, b), or pass weights=W here"
)


def _table(
    stats: ClassStatsBase, weights, global_mean: GlobalMean, parts: list[NC1Parts]
) -> dict[str, Callable[[], float]]:
    """key -> how to compute it; the keys of the classifier only when there is one. ``nc1`` and
    ``nc1_rank_norm`` share one SVD and projected scatter, kept in ``parts``."""

    def nc1_of(key: str) -> float:
        if not parts:
            parts.append(nc1_parts(stats, global_mean))
        return parts[0].nc1 if key == "nc1" else parts[0].rank_norm

    table: dict[str, Callable[[], float]] = {
        "nc1": lambda: nc1_of("nc1"),
        "nc1_rank_norm": lambda: nc1_of("nc1_rank_norm"),
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
    return table


def collapse_metrics(
    stats: ClassStatsBase,
    weights: torch.Tensor | None = None,
    bias: torch.Tensor | None = None,
    global_mean: GlobalMean = "class",
    keys: tuple[str, ...] | None = None,
) -> Metrics:
    """Every canonical metric that applies to these statistics (and classifier).

    The classifier is the one the statistics recorded (``from_features(weights=W)``,
    ``decision_pass(x, y, W, b)``, ``set_classifier``); ``weights``/``bias`` are only needed when
    none is recorded, and must equal the recorded ones otherwise (a different W raises
    :class:`~nclab.errors.DataError` instead of mixing two classifiers). Keys needing it
    (``nc2_w_*``, ``nc3``, ``nc3_of``) are computed when there is one; ``nc3_cos``, ``nc4``,
    ``ncc_acc`` and ``acc`` after :meth:`ClassStats.decision_pass`. A key that cannot be computed
    (no classifier, no second pass, or undefined, e.g. ``nc2_kappa`` with D < K) is left out and
    its reason recorded in ``result.skipped``; no value is ever NaN. A key computed where it means
    little (``nc1`` when rank(Sigma_B) < K - 1; a frame distance that cannot reach 0 for K vectors
    in D dimensions) gets its caveat in ``result.notes`` (:func:`add_notes`). An empty class is an error
    (:class:`~nclab.errors.DegenerateError`); drop such classes with ``stats.drop_empty()``.
    ``bias`` is only used by the decision pass (NC4). ``stats.compute(**kw)`` is the same call.

    >>> import torch
    >>> from nclab import ClassStats
    >>> x = torch.randn(200, 8); y = torch.arange(200) % 4
    >>> w = torch.randn(4, 8)
    >>> m = collapse_metrics(ClassStats.from_features(x, y, weights=w))  # W recorded
    >>> len(m), m.skipped, m.notes
    (17, {}, {})
    >>> s = ClassStats(4, 8); s.update(x, y)  # one streaming pass, no second pass, no W
    >>> sorted(collapse_metrics(s).skipped)  # doctest: +NORMALIZE_WHITESPACE
    ['acc', 'nc1', 'nc1_rank_norm', 'nc2_w_etf', 'nc2_w_of', 'nc3', 'nc3_cos', 'nc3_of', 'nc4',
     'ncc_acc']

    Values that are computed but mean less than they seem get a caveat in ``result.notes``: with
    more classes than dimensions (K > D + 1) ``nc1`` divides by K a trace of at most D terms
    (compare ``nc1_rank_norm`` and ``cdnv`` instead), and the frame distances cannot reach 0.

    >>> y = torch.arange(400) % 20  # K = 20 classes of 8-dimensional features
    >>> sorted(collapse_metrics(ClassStats.from_features(torch.randn(400, 8), y)).notes)
    ['nc1', 'nc2_etf', 'nc2_of']
    """
    stats.check_nonempty()
    weights, _ = stats.resolve_classifier(weights, bias)
    parts: list[NC1Parts] = []
    table = _table(stats, weights, global_mean, parts)
    out = Metrics()
    for key in CANONICAL_KEYS:
        if keys is not None and key not in keys:
            continue
        if key not in table:
            out.skipped[key] = _NO_W.format(key=key)
            continue
        try:
            out[key] = table[key]()
        except DegenerateError as exc:
            out.skipped[key] = str(exc)
    add_notes(out, stats, global_mean, parts[0] if parts else None)
    return out


_FRAME_KEYS = ("nc2_etf", "nc2_w_etf", "nc2_of", "nc2_w_of")


def add_notes(
    m: Metrics,
    stats: ClassStatsBase,
    global_mean: GlobalMean = "class",
    parts: NC1Parts | None = None,
) -> None:
    """Add to ``m.notes`` the caveats of the values ``m`` holds for these statistics: ``nc1`` when
    rank(Sigma_B) < K - 1 (``parts``: its :class:`NC1Parts` when already computed), the frame
    distances when K vectors in D dimensions cannot form the frame (K > D + 1, or K > D for the
    OF ones)."""
    k, d = stats.num_classes, stats.dim
    if "nc1" in m:
        note = nc1_note(parts if parts is not None else nc1_parts(stats, global_mean))
        if note is not None:
            m.notes["nc1"] = note
    for key in _FRAME_KEYS:
        note = frame_note(key, k, d) if key in m else None
        if note is not None:
            m.notes[key] = note
