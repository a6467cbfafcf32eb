"""The structure of a ``feature-collapse`` summary (:func:`.summary.summarize`, completed by
:func:`.train.train`): the final measures, the embedding metrics and the collapse verdict
(:mod:`nclab.metrics.embedding`), the theorems' predictions that apply and the paper's values."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from ...theory.feature_collapse import FCThm1, FCThm2, FCThm3
from ..common.schema import CollapseType, PaperSetting
from ..schema import Num, Record, Summary, optional, prediction_record


class GroupCollapse(Record):
    """The collapse of one grouped weight set (:func:`nclab.metrics.embedding.group_collapse`)."""

    nc1_trace: Num
    nc1: Num
    dir_nc1: Num
    etf: Num
    offset: Num
    equinorm: Num
    equiangle: Num
    skipped: dict[str, str] | None = None  # metric -> why it is undefined
    norm_mean: Num
    norm_std: Num
    norm_cv: Num
    norm_min: Num
    norm_max: Num
    group_norm_mean: list[Num]
    group_norm_std: list[Num]


class WordCollapse(GroupCollapse):
    """The word vectors' collapse, and whether their norms follow frequency and training counts."""

    spearman_norm_freq: Num = None
    spearman_norm_count: Num = None


class Thresholds(Record):
    """The verdict's thresholds (:data:`nclab.metrics.embedding.THRESHOLDS`)."""

    dir_nc1_max: float
    etf_max: float
    align_min: float
    norm_cv_max: float
    u_norm_cv_max: float
    offset_max: float


class EmbeddingMetrics(Record):
    """Every measure of :func:`nclab.metrics.embedding.embedding_collapse` and the verdict."""

    words: WordCollapse
    u: GroupCollapse
    alignment: Num
    skipped: dict[str, str] | None = None
    collapse_type: CollapseType
    verdict_reasons: list[str]
    thresholds: Thresholds


class NotApplicable(Record):
    """A theorem whose hypotheses the configuration does not meet."""

    applies: Literal[False]
    reason: str


class Theory(Record):
    """The theorem that applies (``which``, None if none) and its predictions, with every theorem
    tried (:func:`.summary.theory_for`)."""

    which: Literal["fc-thm1", "fc-thm2", "fc-thm3"] | None
    note: str | None = None  # why no theorem was tried
    word_norm: Num = None  # fc-thm1
    u_norm: Num = None  # fc-thm1, fc-thm2 (c), fc-thm3
    objective: Num = None  # fc-thm1, fc-thm3
    word_rep_norm: Num = None  # fc-thm3
    word_norms: list[Num] | None = None  # fc-thm2: one per word frequency (r)
    lam: Num = None  # h with one weight decay λ on W and U: λ, and Theorem 2's bound on it
    lam_bound_thm2: Num = None  # sqrt(L sum mu^2 / nc^(L+1)), whether Theorem 2 applies or not
    lam_bound_thm2_run_k: Num = None  # sqrt(L sum mu^2 / (nc K)) with the run's K (since issue 49)
    thm1: prediction_record(FCThm1) | NotApplicable | None = Field(None, alias="fc-thm1")
    thm2: prediction_record(FCThm2) | NotApplicable | None = Field(None, alias="fc-thm2")
    thm3: prediction_record(FCThm3) | NotApplicable | None = Field(None, alias="fc-thm3")


PaperNumbers = optional(
    "PaperNumbers",
    float,
    "test_acc word_norm_mean word_norm_std theory_word_norm train_loss_max",
    "The numbers the paper reports for a figure.",
)


class PaperValues(PaperSetting, PaperNumbers):
    """What the paper reports for the preset's figure (:data:`.presets.PAPER`; empty for others):
    where and in which setting, its numbers, the collapse it shows, its PCA's singular values."""

    collapse_type: CollapseType | None = None
    pca_words: list[float] | None = None
    pca_u: list[float] | None = None


class TheoryGaps(Record):
    """(measured - predicted) / predicted, where a theorem predicts the value."""

    word_norm_mean: Num = None
    u_norm_mean: Num = None
    train_objective: Num = None
    # fc-thm2: max over the ranks β of |mean word norm of rank β - r_β| / r_β (since issue 26)
    word_norms_by_rank_max: Num = None


class Untrained(Record):
    """The within-concept variability of the word vectors of the network as initialised."""

    word_nc1_trace: Num
    word_dir_nc1: Num
    # ‖Σ_k Û_k‖_F / (√K ‖U‖_F) as initialised (written since issue 50; about 1/√K)
    u_common_relative: Num = None


class PcaSingularValues(Record):
    """The top singular values of the PCA figure's two panels
    (:func:`.measure.pca_singular_values`) and each panel's σ3/σ1 (written since issue 26)."""

    words: list[Num]
    u: list[Num]
    words_third_over_first: Num = None
    u_third_over_first: Num = None


class USampledFreq(Record):
    """The norms of the u_{k,ℓ} against the mean frequency of the training words sampled at
    position ℓ of class k (:func:`.measure.u_vs_sampled_frequency`, written since issue 26)."""

    spearman: Num
    spearman_within: Num  # one concept in one class (u_{k,1} vs u_{k,3}), centred per group
    spearman_within_abs: Num
    u_norm_cv_within: Num
    groups: int


class NormGrowth(Record):
    """The second half of training (:func:`.summary.norm_growth`, written since issue 50): the
    mean word and u norms and the training cross-entropy at the end over their value at its
    start, and the fraction of logged intervals in which each norm grew."""

    from_epoch: int
    to_epoch: int
    w_ratio: Num
    u_ratio: Num
    loss_ratio: Num
    w_rising: Num
    u_rising: Num


class CommonU(Record):
    """U's distance to N = {Σ_k Û_k = 0}, the set Lemma G (h) and Lemma N (h*) put every global
    minimiser in, and its bound from the full-batch gradient (:func:`.measure.common_u`, written
    since issue 50)."""

    norm: Num  # ‖Σ_k Û_k‖_F / √K, the Frobenius distance from U to N
    relative: Num  # norm / ‖U‖_F (1/√K for class-independent blocks, 0 on N)
    grad_norm: Num  # ‖∇_U F‖_F, the full-batch gradient of the regularised training objective
    bound: Num  # grad_norm / λ_U: norm <= bound (the cross-entropy is blind to the common part)
    relative_bound: Num  # bound / ‖U‖_F
    excess: Num  # (λ_U / 2) norm²: the objective the common part costs


class FeatureCollapseSummary(Summary):
    test_acc: Num
    train_acc: Num
    train_loss: Num  # cross-entropy
    train_objective: Num  # cross-entropy + weight decay
    word_norm_mean: Num
    word_norm_std: Num
    rep_norm_mean: Num  # the word representations' (LayerNorm outputs for h*)
    u_norm_mean: Num
    u_norm_std: Num
    collapse_type: CollapseType
    embedding_metrics: EmbeddingMetrics
    theory: Theory
    paper: PaperValues
    peak_test_acc: Num
    optimizer: str
    epochs: int
    steps: int
    network: str  # "h" or "h* (<kind> LayerNorm)"
    theory_rel_gap: TheoryGaps
    untrained: Untrained | None = None  # kept by a re-measurement from the old summary
    word_nc1_vs_untrained: Num = None
    pca_singular_values: PcaSingularValues | None = None
    u_vs_sampled_freq: USampledFreq | None = None
    norm_growth: NormGrowth | None = None  # written since issue 50
    # min over β of (mean norm of rank β - of rank β+1) / of rank β (written since issue 50)
    rank_norm_min_step: Num = None
    common_u: CommonU | None = None  # Lemma G / N on the trained weights (since issue 50)


SUMMARY = FeatureCollapseSummary
