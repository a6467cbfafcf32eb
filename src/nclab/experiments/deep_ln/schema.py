"""The structure of a ``deep-ln`` summary: a depth sweep (:class:`DeepLnSweepSummary`, from
:mod:`.summary`) or the monotone-in-depth comparison (:class:`DeepLnMonotoneSummary`, from
:mod:`.monotone`). ``SUMMARY`` is their union, told apart by ``mode``.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import create_model

from ...theory.gufm import GUFMPrediction
from ..schema import (
    BOOKKEEPING,
    Agg,
    Num,
    Record,
    StdTree,
    Summary,
    UnitRecord,
    keyed,
    modes,
    prediction_record,
)

#: the metrics whose trend from the shallowest to the deepest network is summarised
#: (:func:`.summary.trend`)
TREND_KEYS = ("nc1", "nc2", "nc2_w", "nc3_match", "nc3_cos_dist", "objective_gap", "w_norm_gap")
#: the metrics whose power law in depth is fitted (the paper's Figure 1: NC1, NC2 of W_L, NC3;
#: :func:`.summary.slopes`)
SLOPE_KEYS = ("nc1", "nc2", "nc2_w", "nc3_match", "nc3_cos_dist", "objective_gap")

GUFM = prediction_record(GUFMPrediction)


class Unit(UnitRecord):
    """One trained network (:func:`.train.train_network`), or the networks of one depth over seeds
    (:func:`.summary.by_depth`): each measurement's mean, with its std in ``std``; the depth, its
    λ and its GUFM optimum, which every seed shares; ``seed``, the list of the seeds."""

    depth: Annotated[int, Agg.SAME]
    #: the network's seed; over seeds, the list of them (a record written before summaries declared
    #: their aggregation holds the mean seed, a float: read, never written)
    seed: Annotated[int | list[int] | float, Agg.PER_SEED]
    weight_decay: Annotated[float, Agg.SAME]  # λ of this depth (λ/L with wd_over_depth)
    theory: Annotated[GUFM, Agg.SAME]  # the GUFM optimum at this network's λ
    nc1: Num
    nc1_trace: Num
    nc2_etf: Num
    nc2_of: Num
    nc2_w_etf: Num
    nc2_w_of: Num
    nc3: Num
    nc3_of: Num
    nc3_cos: Num
    nc4: Num
    cdnv: Num
    nc2: Num  # the loss's NC2 of X_L: nc2_etf (CE) or nc2_of (MSE)
    nc3_match: Num  # the loss's NC3: nc3 (CE) or nc3_of (MSE)
    nc2_w: Num  # the paper's NC2: W_L against the GUFM's frame
    nc3_cos_dist: Num  # the paper's NC3: 1 - mean cos(x_i, w_{y_i})
    objective: Num
    gufm_objective: Num  # L_GUFM(W_L, X_L) <= objective
    objective_gap: Num  # objective - L*_GUFM
    fit: Num
    w_norm: Num
    w_norm_gap: Num
    sphere_error: Num
    train_acc: Num
    test_acc: Num = None  # None without a test set
    #: a monotone comparison's embedded unit: the objective (float64) of the shallow network and
    #: of the deeper one it was embedded into, at the embedding, before training on
    objective_shallow_at_embedding: Num = None
    objective_embedded_at_embedding: Num = None
    std: Annotated[StdTree, BOOKKEEPING] = None


#: each metric of :data:`TREND_KEYS` at the shallowest and the deepest network, their
#: ratio and its Spearman correlation with depth (:func:`.summary.trend`)
Trend = create_model(
    "Trend",
    __base__=Record,
    first_depth=(int, ...),
    last_depth=(int, ...),
    objective_gap_ratio_per_seed=(list[float], ...),
    objective_gap_ratio_median=(Num, ...),
    **{f"{k}_{s}": (Num, ...) for k in TREND_KEYS for s in ("first", "last", "ratio", "spearman")},
)


class Slope(Record):
    """A metric's log-log slope against depth: fitted per seed, its mean and std over seeds."""

    mean: Num
    std: Num
    per_seed: list[Num]


#: the slope of each metric of :data:`SLOPE_KEYS` (:func:`.summary.slopes`)
Slopes = create_model("Slopes", __base__=Record, **{k: (Slope, ...) for k in SLOPE_KEYS})


class TheoryEnds(Record):
    first: GUFM  # at the shallowest network's λ
    last: GUFM  # at the deepest's


class Limit(Record):
    """The objective against depth fitted as L_inf + c L^-a and compared with L*_GUFM
    (:func:`.limit.limit`, written since issue 50): the main result's limit read on the sweep."""

    model: str
    limit: Num  # L_inf, the extrapolated objective of an infinitely deep network
    stderr: Num  # its least-squares standard error (None: the fit has a flat direction)
    exponent: Num  # a
    coefficient: Num  # c
    residual_rms: Num
    points: int
    gufm: Num  # L*_GUFM, the optimum every depth shares
    deviation: Num  # L_inf - L*_GUFM
    deviation_se: Num  # |L_inf - L*_GUFM| / stderr
    gap_last: Num  # the deepest network's objective - L*_GUFM
    resolution: Num  # 2 stderr / gap_last (<= 1: the fit pins the limit below the deepest gap)


class DeepLnSweepSummary(Summary):
    """Networks of several depths (:func:`.summary.summarize`): each depth's mean over seeds, the
    trend from the shallowest to the deepest, the slopes against depth, the GUFM bound."""

    loss: Literal["ce", "mse"]
    block: str
    width: int
    data: str
    num_classes: int
    depths: list[int]
    weight_decay: float
    wd_over_depth: bool
    by_depth: keyed(Unit, r"L\d+", "a depth (L<depth>)")
    trend: Trend
    slopes: Slopes
    theory: TheoryEnds
    # None: fewer than four depths, optima that differ by depth (λ/L), or a record made before
    limit: Limit | None = None
    lower_bound_holds: bool
    min_margin_to_gufm_optimum: Num
    sphere_error_max: Num
    train_acc_min: Num
    test_acc_mean: Num


class MonotoneSeed(Record):
    """One seed of the monotone comparison (:func:`.monotone.run_seed`): depth L trained, embedded
    in depth L' with identity blocks, both trained on; depth L' from scratch beside them."""

    objective_shallow_at_embedding: Num
    objective_embedded_at_embedding: Num
    start_rel_diff: Num
    objective_shallow_trained: Num
    objective_embedded_end: Num
    objective_continued_end: Num
    objective_scratch_end: Num
    embedded_minus_continued: Num
    embedded_minus_at_embedding: Num
    scratch_minus_embedded: Num
    nc1_embedded_end: Num
    nc1_continued_end: Num
    nc1_scratch_end: Num


class DeepLnMonotoneSummary(MonotoneSeed, Summary):
    """The monotone comparison (:func:`.monotone.run`): the mean over seeds (``std``,
    ``per_seed``) and the worst case over seeds (``*_max``)."""

    mode: Literal["monotone"]
    block: str
    loss: Literal["ce", "mse"]
    data: str
    shallow: int
    deep: int
    weight_decay: float
    start_rel_diff_max: Num
    embedded_minus_continued_max: Num
    embedded_minus_at_embedding_max: Num
    per_seed: list[MonotoneSeed] | None = None


SUMMARY = modes(
    lambda keys: keys.get("mode", "sweep"),
    sweep=DeepLnSweepSummary,
    monotone=DeepLnMonotoneSummary,
)
UNIT = Unit
