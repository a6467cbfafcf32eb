"""The structure of a ``linear-head`` summary (:mod:`.summary`): one network over seeds
(:class:`LinearHeadSummary`) or a sweep over depths or step sizes (:class:`LinearHeadSweepSummary`),
told apart by ``sweep_kind``. ``UNIT`` is one trained network's summary (:func:`.train.train`;
``units/<label>/summary.json`` of a run of several networks, an entry of ``per_seed``).

A network whose training diverged (:class:`.train.Diverged`, written since issue 26) has
``diverged: true``, ``diverged_epoch``, ``last_finite_loss``, ``diverged_reason`` and none of the
measured fields (``layers``, the scores, ``certificate``); every other network has them all.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import model_validator

from ..schema import Num, Record, StdTree, Summary, UnitRecord, keyed, modes, optional

#: the layers Z_l of the network (Z_0: the input or the backbone's output)
LAYER = r"Z\d+"


class Layer(Record):
    """The collapse metrics of Z_l (None where a metric does not apply: ``nc3_cos`` is the
    classifier input's only, ``balancedness`` / ``negativity`` need weights on both sides)."""

    name: str
    kind: Literal["input", "backbone", "nonlinear", "linear"]
    index: int
    nc1_trace: Num
    nc2_kappa: Num
    nc2_of: Num
    nc3_cos: Num
    balancedness: Num
    negativity: Num


class Hypotheses(Record):
    """The quantities Theorem 3.1's hypotheses are stated in, measured on the network."""

    eps1: Num
    eps2: Num
    r: Num
    c3: Num
    z_op: Num = None
    s_k_y: Num = None
    K: int | None = None
    N: int | None = None
    n_penult: int | None = None
    L2: int | None = None
    z_lm2_op: Num = None
    z_lm1_op: Num = None
    w_head_op: Num = None


CertMeasured = optional(
    "CertMeasured",
    Num,
    "nc1_trace kappa_wl nc2_kappa nc3_cos",
    "The network's metrics the bounds are compared with (those that are defined).",
)
Bounds = optional(
    "Bounds", Num, "nc1 kappa_wl nc2 nc3 psi eps", "The theorem's chain of bounds, (2) to (5)."
)
BoundsGivenKappa = optional(
    "BoundsGivenKappa", Num, "nc2 nc3", "(4) and (5) at the measured kappa(W_L)."
)
Holds = optional(
    "Holds",
    bool,
    "nc1 kappa_wl nc2 nc3 nc2_given_kappa nc3_given_kappa",
    "Whether each measured metric respects its bound (the bounds that exist).",
)


class LemmaC2(Record):
    """Lemma C.2 and §5's κ(W_L) = κ(W_(L:L1+1))^(1/L2) on the trained head
    (:func:`.measure.lemma_c2`, written since issue 50)."""

    L2: int
    eps2: Num
    r: Num
    lhs: Num  # ‖(W_L W_Lᵀ)^L2 - W_(L:L1+1)W_(L:L1+1)ᵀ‖_op
    bound: Num  # L2²/2 ε2 r^(2(L2-1))
    ratio: Num
    kappa_wl: Num
    kappa_root: Num  # κ(W_(L:L1+1))^(1/L2)
    kappa_rel_gap: Num
    kappa_tolerance: Num  # the Weyl bracket's half-width from Lemma C.2's bound, relative


class Certificate(Record):
    """Theorem 3.1 on the trained network (:func:`.measure.certificate`,
    :class:`nclab.theory.bounds_certificate.JacotCertificate`); only ``applies``, ``reason``,
    ``measured`` (and ``hypotheses``) where it does not apply."""

    applies: bool
    reason: str
    hypotheses: Hypotheses | None = None
    measured: CertMeasured
    bounds: Bounds | None = None
    bounds_given_kappa: BoundsGivenKappa | None = None
    holds: Holds | None = None
    skipped: dict[str, str] | None = None  # bound -> why it is not given
    lemma_c2: LemmaC2 | None = None  # written since issue 50


class Conditioning(Record):
    """Section 5's bounds at the trained network (:func:`.minimiser.report`), with
    ``conditioning``: the measured conditioning, Prop. 5.1, Thm 5.2 and Prop. 5.3 (``ntk``)."""

    applies: bool
    reason: str
    measured: dict[str, Any] | None = None
    prop51: dict[str, Any] | None = None
    thm52: dict[str, Any] | None = None
    ntk: dict[str, Any] | None = None


Grams = keyed(list[list[Num]], LAYER, "a layer Z_l")


class LrBound(Record):
    """Proposition 5.3's cap on the step at one network (:func:`.lr_bound.unit_record`, with
    ``lr_bound``): nclab's ``lr_max`` is N K / 2 times the paper's ``lr_max_paper``; None where
    the network does not eps1-interpolate (eps1 >= s_K(Y))."""

    lr: float
    N: int
    K: int
    L2: int
    eps1: Num
    s_k_y: Num
    r: Num
    interpolates: bool
    lr_max_paper: Num
    lr_max: Num
    lr_over_bound: Num


#: the measured fields of a network, absent where its training diverged
_MEASURED = ("layers", "train_mse", "train_acc", "test_acc", "certificate")


class Network(UnitRecord):
    """One trained network (:func:`.train.train`), or one whose training diverged
    (:func:`.train.diverged_summary`: ``diverged`` and where, none of the measured fields)."""

    L1: int
    L2: int
    weight_decay: float
    lr: float
    seed: int
    layers: list[Layer] | None = None
    train_mse: Num = None
    train_acc: Num = None
    test_acc: Num = None
    certificate: Certificate | None = None
    grams: Grams | None = None  # the class-mean Gram matrices (left out of ``per_seed``)
    epochs: int
    steps_per_epoch: int
    conditioning: Conditioning | None = None  # with ``conditioning``
    imbalance_eps2: list[float] | None = None  # with ``imbalance_eps2``
    lr_bound: LrBound | None = None  # with ``lr_bound``
    # written since issue 26: whether training diverged, at which epoch (a step of full-batch
    # GD), the last finite train loss and what was seen
    diverged: bool | None = None
    diverged_epoch: int | None = None
    last_finite_loss: Num = None
    diverged_reason: str | None = None

    @model_validator(mode="before")
    @classmethod
    def _measured_unless_diverged(cls, data: Any) -> Any:
        """A network that did not diverge has every measured field; a diverged one has none."""
        if not isinstance(data, dict):
            return data
        if data.get("diverged"):
            here = [k for k in _MEASURED if k in data]
            if here or "diverged_epoch" not in data:
                raise ValueError(
                    "a diverged network has diverged_epoch and no measured fields, got "
                    + (", ".join(here) or "no diverged_epoch")
                )
        else:
            missing = [k for k in _MEASURED if k not in data]
            if missing:
                raise ValueError(f"missing measured fields {', '.join(missing)}")
        return data


class Derived(Record):
    """The derived scalars of a network, the mean over its seeds (:func:`.summary.derived`; the
    module docstring defines them). None where a scalar does not apply to the run."""

    # the balancedness recursion (:mod:`.balance_rate`, with ``track_imbalance``)
    imbalance_rate_predicted: Num
    imbalance_rate_error_linear: Num
    imbalance_log_rate_ratio_straddle: Num
    imbalance_end_over_start: Num
    loss_settled_fraction: Num
    imbalance_settled_fraction: Num
    # the time to reach levels eps2 of imbalance (:func:`.balance_rate.time_derived`, with
    # ``imbalance_eps2``)
    imbalance_time_eps2: Num = None
    imbalance_time_eps2_last: Num = None
    imbalance_time_per_log_eps2: Num = None
    imbalance_time_per_log_eps2_times_wd: Num = None
    # the edge of stability (:mod:`.sharpness`, with ``track_sharpness``)
    eos_ratio_late: Num
    eos_ratio_max: Num
    eos_ratio_start: Num
    sharpness_late: Num
    # Theorem 3.1's certificate (:func:`.summary.thm31_derived`)
    thm31_bounds_given: Num = None  # written since summaries are judged per scale
    thm31_bounds_holding: Num
    thm31_nc1_bound_over_measured: Num
    thm31_kappa_wl_bound_over_measured: Num
    thm31_nc2_bound_over_measured: Num
    thm31_nc3_measured_minus_bound: Num
    # Section 5 (:func:`.minimiser.conditioning_derived`, with ``conditioning``)
    cond_kappa_product: Num
    cond_kappa_wl: Num
    cond_eps1: Num
    cond_prop51_log10_bound: Num
    cond_prop51_log10_ratio: Num
    cond_thm52_applies: Num
    cond_thm52_log10_bound: Num
    cond_thm52_log10_ratio: Num
    cond_thm52_log10_ratio_wl: Num
    cond_thm52_bound_wl: Num
    # written since issue 50: Theorem 3.1's (2), (4), (5) at eps2 = 0 with (18)'s kappa(W_L)
    # (:func:`.minimiser.composed_derived`)
    cond_thm52_nc1_bound: Num = None
    cond_thm52_nc1_log10_ratio: Num = None
    cond_thm52_nc2_bound: Num = None
    cond_thm52_nc2_log10_ratio: Num = None
    cond_thm52_nc2_log10_ratio_printed: Num = None
    cond_thm52_nc3_bound: Num = None
    cond_thm52_nc3_margin: Num = None
    cond_thm52_nc3_margin_printed: Num = None
    cond_eps1_over_allowed: Num
    cond_reg_loss_over_competitor: Num
    ntk_op: Num
    ntk_op_head: Num
    ntk_lower_bound: Num
    ntk_over_lower_bound: Num
    ntk_head_over_lower_bound: Num
    ntk_head_over_sum_bound: Num
    ntk_kappa_over_bound_max: Num
    ntk_hessian_over_ntk: Num
    # collapse, conditioning and balancedness through the network
    nc1_last: Num
    nc1_last_start: Num
    nc2_head_input: Num
    nc2_last: Num
    nc2_head_decrease: Num
    gram_of_last: Num
    gram_of_last_start: Num
    balancedness_linear_max: Num
    balancedness_linear_mean: Num
    balancedness_linear_start: Num
    balancedness_nonlinear_mean: Num
    balancedness_nonlinear_min: Num
    negativity_mean: Num
    negativity_min: Num
    # written since issue 26 (the last nonlinear layer; NC3 of Z_(L-1) as 1 - mean cosine)
    negativity_last: Num = None
    nc3_gap_last: Num = None
    nc3_gap_last_start: Num = None
    # written since issue 26: Fig. 1's balancedness before the plateau, on it and after the
    # learning-rate drop (:mod:`.plateau`; log-rates per epoch, None without a drop)
    balancedness_rate_before: Num = None
    balancedness_rate_plateau: Num = None
    balancedness_rate_after: Num = None
    balancedness_plateau_over_before: Num = None
    balancedness_after_over_before: Num = None


class Ddp(Record):
    world_size: int
    ranks_agree: bool | None = None  # with several ranks


class Group(Record):
    """The mean over the networks of a group (seeds) and its ``std`` (:func:`.summary.aggregate`),
    over the networks that did not diverge (every metric None, ``layers`` empty and no
    ``certificate`` where all did)."""

    train_mse: Num
    train_acc: Num
    test_acc: Num
    layers: list[Layer]
    derived: Derived
    certificate: Certificate | None = None  # the first network's that did not diverge
    std: StdTree = None
    n: int  # networks
    n_diverged: int | None = None  # of them, those whose training diverged (since issue 26)


class SweepPoint(Group):
    """One point of a sweep: its depth (``L2`` / ``L1``) or step ``lr0``, and weight decay (or
    step) group."""

    L1: int | None = None
    L2: int | None = None
    lr0: float | None = None
    weight_decay: float | None = None
    lr: float | None = None


class TimeScaling(Record):
    """Theorem 4.4's time against the weight decay over a weight-decay sweep
    (:func:`.summary.time_scaling`): exponents (log-log slopes) and wd x time per log(1/eps2)."""

    exponent_time_eps2: Num
    exponent_time_eps2_last: Num
    exponent_time_per_log_eps2: Num
    time_per_log_eps2_times_wd_min: Num
    time_per_log_eps2_times_wd_max: Num


class SweepLrBound(Record):
    """Proposition 5.3's cap on the step over a step-size sweep (:func:`.lr_bound.sweep_record`;
    counts, the worst step over its bound, the slack at the largest stable step, what happens above
    the bounds), over one seed's networks (``by_seed``) or every seed's."""

    n_networks: int
    n_diverged: int
    n_stable_interpolating: int
    n_stable_not_interpolating: int
    lr_over_bound_max: Num
    n_stable_interpolating_above_bound: int | None
    largest_stable_lr: Num
    bound_at_largest_stable: Num
    slack: Num
    log10_slack: Num
    smallest_failing_lr: Num
    failing_over_bound: Num
    bound_max: Num
    n_above_bound: int | None
    n_above_bound_diverged: int | None
    n_above_bound_not_interpolating: int | None
    n_above_bound_stable_interpolating: int | None


class Row(Derived):
    """One depth (``by_depth.<L>``) or step size (``by_lr``, keyed by rank: select it by its
    step, ``by_lr[lr0=12]``): the derived scalars over its networks, their ``std``, scores."""

    std: StdTree = None
    test_acc: Num
    train_mse: Num
    n: int
    n_diverged: int | None = None  # networks whose training diverged (since issue 26)
    lr0: float | None = None  # step-size sweeps: the step before division by L2
    lr: float | None = None
    train_acc: Num = None
    weight_decay: float | None = None  # weight-decay sweeps: the sweep's value


class LinearHeadSummary(Group, Summary):
    """One network over seeds (:func:`.summary.summarize`, ``sweep = "none"``)."""

    sweep_kind: Literal["none"]
    per_seed: list[Network]
    grams: Grams  # the first network's
    ddp: Ddp


class LinearHeadSweepSummary(Summary):
    """A sweep (:func:`.summary.sweep_summary`): every point, one row per depth (or step), and the
    deepest networks' (or largest step's) layers, derived scalars and certificate."""

    sweep_kind: Literal["linear_depth", "nonlinear_depth", "lr", "weight_decay"]
    sweep: list[SweepPoint]
    by_depth: keyed(Row, r"\d+", "a depth") | None = None
    by_lr: keyed(Row, r"\d+", "a rank of the step sizes (0: the smallest)") | None = None
    by_wd: keyed(Row, r"\d+", "a rank of the weight decays (0: the smallest)") | None = None
    time_scaling: TimeScaling | None = None  # weight-decay sweeps
    lr_bound: SweepLrBound | None = None  # step-size sweeps with ``lr_bound``
    layers: list[Layer]
    train_mse: Num
    train_acc: Num
    test_acc: Num
    certificate: Certificate | None = None  # None where every network of the sweep diverged
    derived: Derived
    layers_from: str
    ddp: Ddp


SUMMARY = modes(
    lambda keys: "single" if keys.get("sweep_kind") == "none" else "sweep",
    single=LinearHeadSummary,
    sweep=LinearHeadSweepSummary,
)
UNIT = Network
