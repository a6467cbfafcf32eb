"""The structure of a ``ufm`` summary, one model per mode (:mod:`.summary`, :mod:`.bias_sweep`,
:mod:`.fixed_features`): one configuration over seeds (:class:`UfmSummary`), a phase-diagram grid
(:class:`UfmPhaseSummary`), a λ_b sweep (:class:`UfmBiasSweepSummary`), the fixed-features
classifier over n (:class:`UfmFixedFeaturesSummary`), the extended UFM with fixed features
(:class:`UfmFixedExtendedSummary`) and the GUFM-MSE's sublevel sets (:class:`UfmRatesSummary`).
``SUMMARY`` is their union, told apart by the keys only one mode writes.

Length: six modes' declarations, one record class per nested block; one file keeps the union and
how its modes are told apart beside what they are.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import Field

from ...theory.extended_ufm import DeepUFMPrediction, ExtendedUFMPrediction
from ...theory.fixed_features import FixedFeaturesPrediction
from ...theory.gufm import GUFMPrediction
from ...theory.ufm import UFMCEPrediction, UFMMSEPrediction
from ..schema import Num, Record, Summary, keyed, modes, optional, prediction_record

#: the feature layers of a deep model: H1, then Z_l = W_l ... (linear) or A_l = σ(Z_l) (ReLU)
LAYER = r"H1|[ZA]\d+"
#: what :func:`.measure.measured_norms` measures: norms of the plain UFM / GUFM, the mean top-K
#: singular value of each weight and feature layer of a deep one (sigma_H is H1's)
NORM = r"w_norm|h_norm|feature_norm|rho|rho_mean|b|sigma_(W\d+|H|[ZA]\d+)"


Metrics = optional(
    "Metrics",
    Num,
    "nc1 nc2_etf nc2_of nc2_w_etf nc2_w_of nc3 nc3_of",
    "Some of the canonical metrics (:func:`.measure.layer_metrics`; None where undefined): those "
    "a phase diagram's points set to zero.",
)


class FeatureMetrics(Record):
    """The metrics of a layer of features (every layer but the classifier's input)."""

    nc1: Num
    nc2_etf: Num
    nc2_of: Num


class ClassifierMetrics(FeatureMetrics):
    """The metrics of the classifier's input layer: its features', and W's against them."""

    nc2_w_etf: Num
    nc2_w_of: Num
    nc3: Num
    nc3_of: Num


Norms = keyed(Num, NORM, "a norm name")
#: the metrics of each layer of a deep model (the flat :class:`ClassifierMetrics` of a plain one)
LayerMetrics = ClassifierMetrics | keyed(ClassifierMetrics | FeatureMetrics, LAYER, "a layer")
Theory = (
    prediction_record(UFMMSEPrediction)
    | prediction_record(UFMCEPrediction)
    | prediction_record(GUFMPrediction)
    | prediction_record(ExtendedUFMPrediction)
    | prediction_record(DeepUFMPrediction)
)


#: NC1 (or its log-rate) per feature layer of a deep model
LayerValues = keyed(Num, LAYER, "a layer")
LayerSeries = keyed(list[Num], LAYER, "a layer")


class NuclearNorms(Record):
    """‖W1H1‖_* and ‖σ(W1H1)‖_* of the ReLU extended UFM (:func:`.levels.nuclear_norms`)."""

    Z1: Num
    A1: Num


class Structure(Record):
    """The minimiser's structure beyond the canonical metrics (written since issue 50): one seed's values in :class:`Seed`, their reduction over seeds in
    :class:`UfmSummary` (:mod:`.levels`: the worst seed's, the largest residual, sine, gap, tail
    and fit change, the smallest margin and ``negatives_kept``; the mean ``dead_fraction``)."""

    # the linear extended UFM (App. D, from the proof of Theorem 4.1): relative residuals of
    # λ_W2 W2ᵀW2 = λ_W1 W1W1ᵀ and λ_W1 W1ᵀW1 = λ_H1 H1H1ᵀ, the largest sine of the principal angles
    # between the top-K ranges of W2ᵀ, W1ᵀ, H1 (range_sine) and between those the identities
    # equate, W2ᵀ with W1 and W1ᵀ with H1 (range_sine_chain), the largest σ_{K+1}/σ_1 of W1 and H1
    balance_w2_w1: Num = None
    balance_w1_h1: Num = None
    range_sine: Num = None
    range_sine_chain: Num = None
    # the GUFM with MSE (Súkeník et al., proof of Lemma 4.1): the largest distance of a feature to
    # √d w_k/‖w_k‖ over √d, and 1 - √d max_k ‖w_k‖
    features_given_w_gap: Num = None
    w_norm_sphere_margin: Num = None
    rank_tail: Num = None
    # W σ(H) (model.relu_features): the fraction of H's entries negative at initialisation still
    # <= 0 at the end, their change beyond the weight decay's, the dead fraction of H at the end
    negatives_kept: Num = None
    negatives_fit_change: Num = None
    dead_fraction: Num = None


class Seed(Structure):
    """One seed of one configuration."""

    seed: int
    objective: Num
    objective_gap: Num
    metrics: LayerMetrics
    measured_norms: Norms
    #: this seed's relative gaps to the theory's norms, and its signed relative objective excess
    #: (objective - theory) / |theory|: below 0 the run beats the closed form (since issue 49)
    norm_gaps: Norms | None = None
    objective_excess: Num = None
    #: objective within REACHED_GAP of the closed form's (written since issue 26)
    reached_minimiser: bool | None = None
    # :mod:`.levels` (written since issue 26): NC1 of the classifier's input at the start and end
    nc1_start: Num = None
    nc1_median: Num = None  # this seed's final NC1 (the top level's median of one)
    # a deep model: NC1 of every layer at each logged step, its log-rate over the rate window,
    # the two levels' contrasts (nc1_rate_contrast only where the last level collapsed)
    nc1_trajectory: LayerSeries | None = None
    nc1_rates: LayerValues | None = None
    nc1_value_contrast: Num = None
    nc1_rate_contrast: Num = None
    level_collapsed: bool | None = None
    # the ReLU extended UFM: nuclear norms of W1H1 and σ(W1H1), their relative difference
    # (nuclear_gap_at_minimiser only for a seed that reached the minimiser)
    nuclear_norms: NuclearNorms | None = None
    nuclear_gap: Num = None
    nuclear_gap_at_minimiser: Num = None


class UfmSummary(Structure, Summary):
    """One configuration over seeds (:func:`.summary.single_summary`): the final objective (mean)
    beside the theory's, the largest gap and metric over seeds, norms beside the theory's."""

    model: str
    theorem: str
    objective: Num
    objective_per_seed: list[Num]
    theory_objective: Num
    objective_gap: Num
    metrics: LayerMetrics
    expected_zero: keyed(list[str], r"H|" + LAYER, "a layer name")
    collapse_max: Num
    collapse_max_at: str | None
    theory: Theory | None
    theory_norms: Norms
    measured_norms: Norms
    norm_gaps: Norms
    #: the smallest signed relative objective excess over seeds (since issue 49): below 0 a seed
    #: ended below the closed form's objective, so it is not the global minimum
    objective_excess: Num = None
    per_seed: list[Seed]
    #: every seed / how many seeds reached the minimiser (written since issue 26)
    reached_minimiser: bool | None = None
    seeds_reaching_minimiser: int | None = None
    steps: int
    seeds: list[int]
    # :mod:`.levels` (written since issue 26): medians over seeds of the classifier input's NC1
    nc1_start_median: Num = None
    nc1_median: Num = None
    # a deep model: the logged steps, the rate window, the two levels (first, last), medians over
    # seeds of each layer's NC1 log-rate (decades per 1000 steps) and of the levels' contrasts,
    # the seeds whose last level collapsed (NC1 <= 1e-6)
    nc1_steps: list[int] | None = None
    nc1_rate_window: list[int] | None = None
    nc1_levels: list[str] | None = None
    nc1_rates: LayerValues | None = None
    nc1_rate_contrast: Num = None
    nc1_value_contrast: Num = None
    seeds_collapsed: int | None = None
    # the ReLU extended UFM: worst relative difference of ‖W1H1‖_* and ‖σ(W1H1)‖_* over every
    # seed, over the seeds at the minimiser (every seed when none is), over those that are not
    nuclear_gap: Num = None
    nuclear_gap_at_minimiser: Num = None
    nuclear_gap_not_reached: Num = None
    # W σ(H) (model.relu_features): the weight decay's factor ∏(1 - ηλ_H) over the run
    weight_decay_factor: Num = None


class PhasePoint(Record):
    """One (λ, seed) of a phase diagram (λ_W = λ_H = λ)."""

    lambda_: float = Field(alias="lambda")
    seed: int
    criticality: Num
    collapsed: bool
    objective: Num
    theory_objective: Num
    objective_gap: Num
    metrics: ClassifierMetrics
    collapse_max: Num
    expected_zero: list[str]
    measured_norms: Norms
    theory_norms: Norms


class CENorms(Record):
    """The regularised CE UFM's optimal norms against the regularisation (:func:`.summary.
    ce_norms`): the closed form over λ = λ_W = λ_H and over λ_H at fixed λ_W, GD beside it."""

    lambdas: list[float]
    h_norm: list[Num]
    w_norm: list[Num]
    spearman_h: Num
    spearman_w: Num
    h_norm_at_smallest: Num
    h_norm_at_largest: Num
    gd_lambdas: list[float]
    gd_h_norm: list[Num]
    gd_w_norm: list[Num]
    gd_spearman_h: Num
    gd_spearman_w: Num
    gd_norm_gap: Num
    lambda_w: float
    lambda_hs: list[float]
    h_norm_lambda_h: list[Num]
    spearman_h_lambda_h: Num
    monotone_h_lambda_h: Num
    brackets_sqrt_d: bool


class UfmPhaseSummary(Summary):
    """A phase diagram (:func:`.summary.phase_summary`): the objective against λ, the largest
    gaps (everywhere, and off the threshold) and metrics of the collapsed points."""

    model: str
    theorem: str
    threshold_lambda: Num
    lambdas: list[float]
    objective: list[Num]
    theory_objective: list[Num]
    objective_gap: Num
    objective_gap_off_threshold: Num
    objective_gap_best_off_threshold: Num = None  # the best seed per λ (written since issue 26)
    near_threshold_margin: float
    #: the smallest signed relative excess over the theorem's objective, and the worst NC metric
    #: of the collapsed off-threshold points that reached it (written since issue 49)
    objective_excess: Num = None
    collapse_max_reached: Num = None
    metrics: Metrics
    collapse_max: Num
    points: int
    seeds: list[int]
    steps: int
    grid: list[PhasePoint]
    #: the plain CE UFM's norms against the regularisation (written since issue 26)
    ce_norms: CENorms | None = None


class BiasPoint(Record):
    """One (λ_b, seed) of a λ_b sweep: metrics and norms beside the closed form's."""

    lambda_b: float
    seed: int
    near_kink: bool
    objective: Num
    theory_objective: Num
    objective_gap: Num
    metrics: ClassifierMetrics
    theory_metrics: ClassifierMetrics
    metric_gap: Num
    of_fraction: Num
    theory_of_fraction: Num
    measured_norms: Norms
    theory_norms: Norms


class BiasEnd(ClassifierMetrics):
    """One end of a λ_b sweep (mean over seeds) against Theorems 3.2 (λ_b = 0) and 3.1 (∞)."""

    lambda_b: float
    of_fraction: Num
    rho: Num
    rho_mean: Num
    rho_gap_thm32: Num
    rho_mean_gap_thm31: Num


class BiasEnds(Record):
    etf: BiasEnd  # the smallest λ_b
    of: BiasEnd  # the largest λ_b


class BiasMonotone(Record):
    nc2_of_nonincreasing: bool
    nc2_w_etf_nondecreasing: bool


class SweepMetrics(Record):
    """Each metric against λ_b (mean over seeds; the theory's value beside it)."""

    nc1: list[Num]
    nc2_etf: list[Num]
    nc2_of: list[Num]
    nc2_w_etf: list[Num]
    nc2_w_of: list[Num]
    nc3: list[Num]
    nc3_of: list[Num]


class UfmBiasSweepSummary(Summary):
    """A sweep over the bias's weight decay λ_b (:func:`.bias_sweep.bias_summary`)."""

    model: str
    theorem: str
    threshold: Num
    lambda_b_etf: Num
    lambda_bs: list[float]
    metrics: SweepMetrics
    theory_metrics: SweepMetrics
    of_fraction: list[Num]
    theory_of_fraction: list[Num]
    monotone: BiasMonotone
    objective_gap: Num
    objective_gap_off_kink: Num
    metric_gap: Num
    metric_gap_off_kink: Num
    near_kink_margin: float
    ends: BiasEnds
    points: int
    seeds: list[int]
    steps: int
    grid: list[BiasPoint]


class FixedSeries(Record):
    """The exact minimiser's measures of one n (``largest_n``: the largest, with its n)."""

    n: int | None = None
    gap: Num
    gap_sqrt_n: Num
    gap_to_w_star: Num
    scale: Num
    scale_gap: Num
    nc2_w_of: Num
    nc3_of: Num
    nc1: Num


class FixedSeed(Record):
    """One seed's measures, one entry per n."""

    seed: int
    gap: list[Num]
    gap_to_w_star: list[Num]
    scale: list[Num]
    nc2_w_of: list[Num]
    nc3_of: list[Num]
    nc1: list[Num]


class UfmFixedFeaturesSummary(Summary):
    """Theorem 5.1's classifier of fixed noisy features over n (:func:`.fixed_features.
    fixed_summary`): each measure against n (gap: RMS over seeds), the fitted rate, the limits."""

    model: str
    theorem: str
    theory: prediction_record(FixedFeaturesPrediction)
    ns: list[int]
    seeds: list[int]
    sigma_e: float
    lambda_h_tilde: float
    gap: list[Num]
    gap_sqrt_n: list[Num]
    gap_to_w_star: list[Num]
    scale: list[Num]
    scale_gap: list[Num]
    nc2_w_of: list[Num]
    nc3_of: list[Num]
    nc1: list[Num]
    slope: Num
    gap_constant_ratio: Num
    first_over_last: Num
    sqrt_n_ratio: Num
    limit_gap_to_w_star: Num
    limit_nc1: Num
    largest_n: FixedSeries
    per_seed: list[FixedSeed]


class RateMeasure(Record):
    """One deviation of the GUFM-MSE's ε-sublevel sets (:func:`.rates.measure_summary`): the
    log-log slopes of its upper envelope against ε (None: fewer than 3 front points), the front
    inside the window (ε / L*, deviation)."""

    exponent: float
    objective: str
    slope: Num
    slope_small: Num
    slope_adversarial: Num
    slope_descent: Num
    slope_random: Num
    slope_per_seed: list[Num]
    front_points: int
    front_eps: list[Num]
    front_dev: list[Num]
    points: int
    #: ``norm`` only: the exact worst deviation on (13) at the front's ε, and the front over it
    exact_dev: list[Num] | None = None
    exact_ratio_min: Num = None
    exact_ratio_max: Num = None


class RateMeasures(Record):
    feat: RateMeasure
    set: RateMeasure
    norm: RateMeasure
    orth: RateMeasure


class UfmRatesSummary(Summary):
    """The GUFM-MSE's ε-sublevel sets (:func:`.rates.run_rates`, written since issue 26)."""

    model: str
    theorem: str
    theory: prediction_record(GUFMPrediction)
    eps_window: list[float]
    measures: RateMeasures
    seeds: list[int]


class ExtendedSeries(Record):
    """The measures of one n of a fixed-features extended UFM run (``largest_n``)."""

    n: int | None = None
    gap: Num
    scale: Num
    scale_gap: Num
    nc2_w_of: Num
    nc3_of: Num
    opt_gap: Num


class ExtendedSeed(Record):
    """One seed's measures, one entry per n."""

    seed: int
    gap: list[Num]
    scale: list[Num]
    nc2_w_of: list[Num]
    nc3_of: list[Num]
    opt_gap: list[Num]


class UfmFixedExtendedSummary(Summary):
    """GD over (W2, W1) of the linear extended UFM with H1 fixed at noisy features, over n
    (:func:`.fixed_extended.run_fixed_extended`; written since issue 26): W2W1 against its
    n -> ∞ limit c H̄ᵀ, per n, the fitted rate, the limits."""

    model: str
    theorem: str
    ns: list[int]
    seeds: list[int]
    sigma_e: float
    lambda_h_tilde: float
    gap: list[Num]
    scale: list[Num]
    scale_gap: list[Num]
    nc2_w_of: list[Num]
    nc3_of: list[Num]
    opt_gap: list[Num]
    slope: Num
    rho: Num
    mu: Num
    limit_scale: Num
    collapsed_scale: Num
    attenuation: Num
    theory_product_gap: Num
    opt_gap_max: Num
    largest_n: ExtendedSeries
    per_seed: list[ExtendedSeed]


def _mode(keys: Mapping[str, Any]) -> str:
    """The mode a summary was written in, from the keys only it writes."""
    if "eps_window" in keys:
        return "rates"
    if "limit_scale" in keys:
        return "fixed_extended"
    if "ns" in keys:
        return "fixed_features"
    if "lambda_bs" in keys:
        return "bias_sweep"
    return "phase" if "lambdas" in keys else "single"


SUMMARY = modes(
    _mode,
    single=UfmSummary,
    phase=UfmPhaseSummary,
    bias_sweep=UfmBiasSweepSummary,
    fixed_features=UfmFixedFeaturesSummary,
    rates=UfmRatesSummary,
    fixed_extended=UfmFixedExtendedSummary,
)
