"""Records several experiments' summaries share: the collapse of vectors grouped by a latent label
(:mod:`nclab.metrics.latent`, :mod:`nclab.metrics.embedding`) and the paper's values of a preset."""

from __future__ import annotations

from typing import Literal

from ..schema import Num, Record

#: the verdicts of :func:`nclab.metrics.latent.latent_verdict` (and of the embedding verdict)
CollapseType = Literal["none", "type-I", "type-II", "type-III"]


class LatentCollapse(Record):
    """Every measure of :meth:`nclab.metrics.latent.LatentCollapse.compute` and the verdict
    (None where a metric is undefined, with the reason under ``skipped``)."""

    items: int
    labels: int
    labels_present: int
    labels_dropped: list[int]
    nc1_trace: Num
    dir_nc1: Num
    nc1: Num
    equinorm: Num
    equiangle: Num
    nc2_etf: Num
    etf: Num
    offset: Num
    skipped: dict[str, str] | None = None  # metric -> why it is undefined
    norm_mean: Num
    norm_std: Num
    norm_cv: Num
    group_norm_mean: list[Num]
    group_norm_std: list[Num]
    collapse_type: CollapseType
    verdict_reasons: list[str]


class LatentBrief(Record):
    """The measures of a :class:`LatentCollapse` every record keeps (``common.latent.KEEP``)."""

    nc1_trace: Num
    dir_nc1: Num
    nc1: Num
    etf: Num
    offset: Num
    equinorm: Num
    norm_cv: Num
    collapse_type: CollapseType


class PaperSetting(Record):
    """Where the paper shows a preset's figure, its setting and what it reports in words (empty
    for a preset of no figure)."""

    where: str | None = None
    setting: str | None = None
    note: str | None = None
