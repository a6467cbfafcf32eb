"""Claims of Tirer & Bruna, *Extended Unconstrained Features Model for Exploring Deep Neural
Collapse* (ICML 2022), for ``nclab reproduce``.

Each claim runs the ``ufm`` experiment (batched plain gradient descent with the paper's settings)
and judges the summary against the closed forms of :mod:`nclab.theory` (``theory_objective``,
``theory_norms``): the relative objective gap, the NC metrics the theorem sets to zero (worst seed)
and the norms / singular values. The paper reports curves, not numbers: its "values" are the
statements that every metric goes to zero and that GD reaches the global minimiser. The
ResNet18 claims (``resnet18-*``) are in :mod:`.tirer_bruna_resnet`.

Length: one claim per figure of the paper, each with its checks and their thresholds' origin.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from ...experiments.catalog import get_experiment
from ...experiments.protocol import Validity
from ...experiments.ufm.config import REACHED_GAP
from ..checks import Check, Equals, Principle, at_most, beyond, compare, ours
from ..registry import Claim, RunSpec
from ._common import claims_of, main_run

PAPER = "Tirer & Bruna, Extended Unconstrained Features Model (ICML 2022)"
#: a claim of this paper (its id prefix ``tirer-bruna/``)
tb_claim = claims_of(PAPER, "tirer-bruna")
EXP = "ufm"
ZERO = "-> 0 (plotted)"


#: why 1e-6: the theorems' minimisers are closed forms, so the tolerance is numerical
EXACT = ours(
    Principle.NUMERICAL,
    "the theorem's closed form is exact; 1e-6 is our numerical tolerance for float64 gradient "
    "descent reaching it (the paper plots the metrics going to zero, no number)",
)
#: why points near a threshold or kink are held to 1e-4 only
SLOW = ours(
    Principle.THEORY,
    "near the threshold (kink) the minimiser's curvature vanishes and GD converges slowly; "
    "1e-4 is our tolerance there, the points away from it are held to 1e-6",
)
#: why the ReLU model's metrics are held to the fourth root of the gap tolerance
QUARTIC = ours(
    Principle.THEORY,
    f"derived from the objective tolerance, not from a run: at a relative objective gap "
    f"{REACHED_GAP:g}, a loss that grows at least quartically away from its minimiser set (as the "
    f"ReLU model's does along its flat directions: its metrics converge sublinearly, docs/ufm.md) "
    f"allows distances up to gap^(1/4) = {REACHED_GAP**0.25:.3g} (constant 1, ours)",
)


#: why Theorem 5.1's checks have these tolerances
FINITE_N = ours(
    Principle.THEORY,
    "Theorem 5.1 states the n -> infinity limit and the 1/sqrt(n) rate only (no experiment); "
    "the tolerance is ours, for a fit over the sweep's few n and for the largest finite n, "
    "where the 1/sqrt(n) gap is still a few percent",
)
#: why the largest λ_b is held to these distances from Theorem 3.1's orthogonal frame
LARGE_BIAS = ours(
    Principle.THEORY,
    "Theorem 3.1 holds in the limit λ_b -> infinity; the largest λ_b of the sweep is finite, so "
    "the margin and the tolerance to the limit's frame are ours",
)


#: §6: the paper's experiments are about the global minimiser its tuned GD reaches
TUNED = (
    "§6: 'For each setting that is considered in the theorems of Sections 3 and 4 we tune a "
    "gradient descent scheme to reach a global minimizer'"
)
#: a seed of the ReLU extended UFM is evidence about Theorem 4.2's minimiser when it reached it
REACHED = Validity(
    "objective_gap",
    "<=",
    REACHED_GAP,
    "a seed that stalls at another critical point says nothing of the global minimiser's "
    f"structure, which the paper reaches with a tuned scheme ({TUNED})",
)
#: why a run below the closed form's objective by more than this contradicts the theorem
BELOW = ours(
    Principle.NUMERICAL,
    "float64 gradient descent evaluates the objective to ~1e-12 relative; 1e-9 is our numerical "
    "tolerance for 'not below the closed form's value'",
)


def _not_below() -> Check:
    """The theorem's global-minimum claim, testable on any run: no seed ends below the closed
    form's objective (it holds for any instance: depends on no setting)."""
    return Check(
        "no seed ends below the closed form's objective (the closed form is the global minimum)",
        path="objective_excess",
        op=">=",
        value=-1e-9,
        name="none-below-closed-form",
        ours=BELOW,
        depends_on=(),
    )


def _metric_checks(
    prefix: str, keys: tuple[str, ...], tol: float = 1e-6, why: str = EXACT
) -> list[Check]:
    return [at_most(f"metrics.{prefix}{k}", tol, ours=why) for k in keys]


OF = ("nc1", "nc2_of", "nc2_w_of", "nc3_of")
ETF = ("nc1", "nc2_etf", "nc2_w_etf", "nc3")


def _sweep(preset: str, no_paper: str) -> dict[str, RunSpec]:
    """The one run of a claim on a sweep or a limit the paper runs no experiment on: ``ufm``'s
    ``<preset>-quick`` at quick scale, ``preset`` at full (``no_paper``: what the paper does)."""
    return main_run(EXP, f"{preset}-quick", preset, no_paper)


class _Figure(NamedTuple):
    """What a figure's claim runs: figure ``fig`` (the claim's id starts with it), its ``ufm``
    presets, where the paper shows it, its ``setting`` in words and the run times."""

    fig: str
    quick: str
    full: str
    where: str
    setting: str
    quick_s: float
    full_s: float

    def run(self, **spec: Any) -> dict[str, RunSpec]:
        """The claim's one run (``spec``: the rest of its :class:`RunSpec`)."""
        return {"main": RunSpec(EXP, quick=self.quick, full=self.full, **spec)}


def _plain(f: _Figure, bias: bool) -> Claim:
    keys = ETF if bias else OF
    name = "bias" if bias else "bias-free"
    structure = "a simplex ETF (Theorem 3.2)" if bias else "an orthogonal frame (Theorem 3.1)"
    norms = ("rho", "w_norm", "h_norm") + (("b",) if bias else ())
    return tb_claim(
        f"{f.fig}-{name}",
        f.where,
        f"Plain GD on the {'unregularised-bias' if bias else 'bias-free'} regularised-MSE "
        f"UFM ({f.setting}) reaches the global minimiser: features collapse to {structure}, "
        f"W aligned with H̄ᵀ; NC1, NC2 and NC3 go to zero.",
        runs=f.run(),
        measured={
            "objective": "objective",
            **{k: f"metrics.{k}" for k in keys},
            **{f"measured {k}": f"measured_norms.{k}" for k in norms},
        },
        theory={"objective": "theory_objective", **{k: f"theory_norms.{k}" for k in norms}},
        paper_values={k: ZERO for k in keys},
        checks=[
            at_most("objective_gap", 1e-6, "relative objective gap", ours=EXACT),
            *_metric_checks("", keys),
            *[at_most(f"norm_gaps.{k}", 1e-6, ours=EXACT) for k in norms],
        ],
        quick_seconds=f.quick_s,
        full_seconds=f.full_s,
    )


def _extended(
    f: _Figure,
    relu: bool,
    metric_tol: float,
    gap_tol: float,
    note: str = "",
    seeds: int = 3,
) -> Claim:
    """An extended-UFM figure's claim (Figs. 5 and 9): the objective at the closed form's, the
    last level's metrics and the norms at theirs. The ReLU model's structure is judged on the
    seeds that reached the minimiser (its run's validity), beside the statement that no seed ends
    below it; plain GD reaching it on every seed is ours-beyond (the paper tunes its scheme).

    Length: one claim's checks, each with where its threshold comes from."""
    last = "A1" if relu else "Z1"
    keys = ("nc1", "nc2_of", "nc2_w_of", "nc3_of")
    norms = ("sigma_W2", "sigma_A1") if relu else ("sigma_W2", "sigma_W1", "sigma_H", "sigma_Z1")
    why = QUARTIC if metric_tol > 1e-6 else EXACT
    checks = [
        at_most("objective_gap", gap_tol, "relative objective gap", ours=EXACT),
        at_most(f"metrics.{last}.nc1", 1e-6, ours=EXACT),
        *_metric_checks(f"{last}.", keys[1:], metric_tol, why),
        *[at_most(f"norm_gaps.{k}", metric_tol, ours=why) for k in norms],
    ]
    if relu:  # the structure is judged at the minimiser, on the seeds that reached it
        checks = [_not_below(), *checks[1:]]
        checks.append(
            beyond(
                Equals(
                    "plain GD from the paper's initialisation reaches the closed-form minimiser "
                    f"of Theorem 4.2 on every seed (relative objective gap <= {REACHED_GAP:g}); "
                    "the paper tunes its scheme to reach it",
                    path="reached_minimiser",
                    expected=True,
                    name="reached-minimiser",
                    on_invalid=True,
                )
            )
        )
    if not relu:
        checks += [
            at_most("metrics.H1.nc1", 1e-6, ours=EXACT),
            at_most("metrics.H1.nc2_of", 1e-6, ours=EXACT),
        ]
    feat = "σ(W1H1)" if relu else "W1H1 and H1"
    return tb_claim(
        f"{f.fig}-{'relu' if relu else 'linear'}",
        f.where,
        (
            f"Theorem 4.2's closed form is the global minimum of the ReLU extended UFM "
            f"({f.setting}): no GD run ends below it, and at it {feat} collapse to an orthogonal "
            "frame aligned with W2, singular values from the quartic (judged on the seeds that "
            "reach it, as the paper's tuned scheme does)."
            if relu
            else f"Plain GD on the linear extended UFM ({f.setting}) reaches the minimiser of "
            f"Theorem 4.1: {feat} collapse to an orthogonal frame aligned with W2, singular "
            "values from the quartic."
        ),
        runs=f.run(seeds=seeds, full_seeds=seeds, validity=(REACHED,) if relu else None),
        measured={
            "objective": "objective",
            **({"seeds reaching the minimiser": "seeds_reaching_minimiser"} if relu else {}),
            **({"smallest objective excess over seeds": "objective_excess"} if relu else {}),
            **{f"{last} {k}": f"metrics.{last}.{k}" for k in keys},
            "H1 nc1": "metrics.H1.nc1",
            "H1 nc2_of": "metrics.H1.nc2_of",
            **{f"measured {k}": f"measured_norms.{k}" for k in norms},
        },
        theory={"objective": "theory_objective", **{k: f"theory_norms.{k}" for k in norms}},
        paper_values={f"{last} {k}": ZERO for k in keys},
        checks=checks,
        quick_seconds=f.quick_s,
        full_seconds=f.full_s,
        note=note,
    )


def _rate(why: str) -> list[Check]:
    """The gap to the n -> infinity limit shrinks like 1/√n: the fitted slope of log gap against
    log n within 0.1 of -1/2 (``why``: the tolerance's reason)."""
    return [
        compare("slope", "<=", -0.4, "gap slope", name="slope-max", ours=why),
        compare("slope", ">=", -0.6, "gap slope", name="slope-min", ours=why),
    ]


def _limit_frame(big: str, w: str, why: str) -> list[Check]:
    """The limit's orthogonal frame, read at the largest n (``<big>.*``): NC2^OF of ``w`` (the
    classifier) and NC3^OF of ``w`` and H̄ at most 0.02 and 0.05."""
    return [
        at_most(f"{big}.nc2_w_of", 0.02, f"NC2^OF of {w} (largest n)", ours=why),
        at_most(f"{big}.nc3_of", 0.05, f"NC3^OF of {w} and H̄ (largest n)", ours=why),
    ]


def _at_limit(describe: str, path: str, limit: str, name: str) -> Check:
    """The value at ``path`` (largest n) within 10 % of the n -> infinity limit's (``limit``)."""
    return Check(describe, path=path, op="~", ref=limit, rtol=0.1, name=name, ours=FINITE_N)


def _gaps(point: str, distance: str) -> list[Check]:
    """A sweep across a kink or threshold (``point``), where GD converges slowly: the relative
    gap to the closed form at most 1e-6 at the points whose ``distance`` from it is at least
    0.1 (``objective_gap_off_<point>``), 1e-4 at every point."""
    return [
        at_most(
            f"objective_gap_off_{point}",
            1e-6,
            f"relative gap at points with {distance} >= 0.1",
            ours=EXACT,
        ),
        at_most("objective_gap", 1e-4, "relative gap at every point", ours=SLOW),
    ]


def _fixed_features_checks(big: str) -> list:
    """Theorem 5.1's checks on the largest n and on the rate."""
    return [
        *_rate(FINITE_N),
        Check(
            "√n · gap at the largest n within 15 % of the theory's constant",
            path="gap_constant_ratio",
            op="~",
            value=1.0,
            rtol=0.15,
            name="gap-constant",
            ours=FINITE_N,
        ),
        at_most(
            f"{big}.scale_gap",
            5e-3,
            "relative error of the scale of Ŵ_n (largest n)",
            ours=FINITE_N,
        ),
        _at_limit(
            "Ŵ_n tends to a W*, not to W*: ‖Ŵ_n - W*‖/‖W*‖ ≈ 1 - a (10 %)",
            f"{big}.gap_to_w_star",
            "limit_gap_to_w_star",
            "attenuation",
        ),
        *_limit_frame(big, "Ŵ_n", FINITE_N),
        _at_limit(
            "the features stay non-collapsed: NC1 ≈ (K-1)σ_e²/ρ (10 %)",
            f"{big}.nc1",
            "limit_nc1",
            "nc1-features",
        ),
    ]


def _fixed_features() -> Claim:
    """Theorem 5.1: the exact classifier of fixed noisy features converges like 1/√n."""
    big = "largest_n"
    return tb_claim(
        "fixed-features",
        "§5 Theorem 5.1, App. F",
        "With the features fixed at H̄ ⊗ 1ᵀ + E (i.i.d. noise σ_e, not collapsed) and "
        "λ_H = λ̃_H/n, the minimiser Ŵ_n over W converges as n → ∞ to an attenuated W*: "
        "Ŵ_∞ = H̄ᵀ/(ρ + K(λ_W + σ_e²)), an orthogonal frame aligned with H̄ᵀ; the gap "
        "shrinks like 1/√n. Exact minimisers for every n × seed in one run.",
        runs=_sweep("tb-fixed-features", "the paper states the limit only, with no experiment"),
        measured={
            "fitted slope of log gap vs log n": "slope",
            "√n · gap / theory constant (largest n)": "gap_constant_ratio",
            "scale of Ŵ_n (largest n)": f"{big}.scale",
            "‖Ŵ_n - W*‖/‖W*‖ (largest n)": f"{big}.gap_to_w_star",
            "NC2^OF of Ŵ_n (largest n)": f"{big}.nc2_w_of",
            "NC1 of the features (largest n)": f"{big}.nc1",
        },
        theory={
            "Ŵ_∞ scale": "theory.w_hat_scale",
            "W* scale": "theory.w_star_scale",
            "1 - attenuation": "limit_gap_to_w_star",
            "gap constant": "theory.gap_constant",
            "NC1 limit": "limit_nc1",
        },
        paper_values={"limit": "Ŵ_n → attenuated W* (asymptotic, no figure)"},
        checks=_fixed_features_checks(big),
        quick_seconds=4,
        full_seconds=55,
        note="K=4, d=20, λ_W=0.005, λ̃_H=0.25 (Fig. 2's λ_H at n=50), σ_e=0.1 (the noise norm "
        "σ_e√d = 0.45 exceeds the class-mean norm √ρ = 0.35); the paper states the limit only. "
        "gap = RMS over seeds of ‖Ŵ_n - Ŵ_∞‖/‖Ŵ_∞‖.",
    )


def _bias_checks(ends: str) -> list:
    """The λ_b sweep's checks: monotone trends, the closed form everywhere, the two ends."""
    return [
        Equals(
            "NC2^OF non-increasing in λ_b",
            path="monotone.nc2_of_nonincreasing",
            expected=True,
            name="nc2-of-falls",
        ),
        Equals(
            "NC2^ETF of W non-decreasing in λ_b",
            path="monotone.nc2_w_etf_nondecreasing",
            expected=True,
            name="nc2-w-etf-rises",
        ),
        *_gaps("kink", "|μ/c - 1|"),
        at_most("metric_gap_off_kink", 1e-6, "|NC metric - closed form| off the kink", ours=EXACT),
        at_most(f"{ends}.etf.nc2_w_etf", 1e-6, "NC2^ETF of W at the smallest λ_b", ours=EXACT),
        at_most(
            f"{ends}.etf.rho_gap_thm32", 1e-6, "ρ at the smallest λ_b vs Theorem 3.2", ours=EXACT
        ),
        Check(
            "at the largest λ_b NC2^OF is below NC2^ETF of W by 0.4",
            path=f"{ends}.of.nc2_of",
            op="<=",
            ref=f"{ends}.of.nc2_w_etf",
            margin=-0.4,
            name="of-end",
            ours=LARGE_BIAS,
        ),
        at_most(
            f"{ends}.of.rho_mean_gap_thm31",
            0.02,
            "ρ_mean at the largest λ_b vs Thm 3.1's ρ",
            ours=LARGE_BIAS,
        ),
    ]


def _regularized_bias() -> Claim:
    """0 < λ_b < ∞: from the simplex ETF to the orthogonal frame, one batched sweep."""
    ends = "ends"
    return tb_claim(
        "regularized-bias",
        "§3 (λ_b = 0: Theorem 3.2; λ_b → ∞: Theorem 3.1; λ_b > 0 from both)",
        "With a regularised bias the global minimiser moves from the simplex ETF "
        "(λ_b → 0) to the orthogonal frame (λ_b → ∞) as λ_b grows: NC2^OF falls and NC2^ETF "
        "of W rises monotonically, the centred means stay a simplex ETF, and GD reaches the "
        "closed form at every λ_b (exactly the ETF up to λ_b = c/(1-c)).",
        runs=_sweep(
            "tb-regularized-bias", "the paper characterises the two ends λ_b = 0 and λ_b → ∞ only"
        ),
        measured={
            "largest gap off the kink": "objective_gap_off_kink",
            "largest metric error off the kink": "metric_gap_off_kink",
            "NC2^ETF(W) at the smallest λ_b": f"{ends}.etf.nc2_w_etf",
            "NC2^OF at the largest λ_b": f"{ends}.of.nc2_of",
            "ρ_mean/ρ at the largest λ_b": f"{ends}.of.of_fraction",
        },
        theory={"λ_b^ETF = c/(1-c)": "lambda_b_etf"},
        paper_values={"ends": "simplex ETF (λ_b = 0), orthogonal frame (λ_b → ∞)"},
        checks=_bias_checks(ends),
        quick_seconds=14,
        full_seconds=70,
        note="Fig. 2's setting (K=4, d=20, n=50, λ_W=λ_H=0.005, step 0.1), λ_b from 0.01 to 16 "
        "(plain GD at step 0.1 needs λ_b < 19); λ_b^ETF = 0.165. Points within 10 % of the kink "
        "(μ = c) converge slowly and are held to a 1e-4 gap only. The paper characterises the "
        "two ends; the closed form between them is nclab's (docs/theory-ufm.md).",
    )


def _setting(preset: str, form: str) -> str:
    """The paper's setting of a figure in words, read from its one home, the ``ufm`` preset that
    runs it: ``form`` is a ``str.format`` template over the model section ``m`` and ``lr``."""
    cfg = get_experiment(EXP).config(preset)
    return form.format(m=cfg.model, lr=cfg.train.lr)


_SIZES = "K={m.K}, d={m.d}, n={m.n}"
_FIG2 = _setting("tb-fig2-nobias", _SIZES + ", λ_W=λ_H={m.lambda_w:g}, step {lr:g}, N(0,1) init")
_FIG5 = _setting("tb-fig5-linear", _SIZES + ", λ's {m.lambda_w:g}, init ×{m.init.w:g}, step {lr:g}")
_FIG9 = _setting("tb-fig9-nobias", _SIZES + ", λ_W={m.lambda_w:g}, λ_H={m.lambda_h:g}, step {lr:g}")
_FIG9X_FORM = (
    _SIZES + ", λ_W2={m.lambda_w:g}, λ_W1={m.lambda_w1:g}, λ_H1={m.lambda_h:g}, step {lr:g}"
)

CLAIMS: list[Claim] = [
    _plain(
        _Figure("fig2", "tb-fig2-nobias", "tb-fig2-nobias", "§6 Fig. 2, Theorem 3.1", _FIG2, 8, 8),
        False,
    ),
    _plain(
        _Figure("fig2", "tb-fig2-bias", "tb-fig2-bias", "§6 Fig. 2, Theorem 3.2", _FIG2, 8, 8), True
    ),
    _plain(
        _Figure(
            "fig9",
            "tb-fig9-nobias-quick",
            "tb-fig9-nobias",
            "App. G Fig. 9, Theorem 3.1",
            _FIG9,
            8,
            20,
        ),
        False,
    ),
    _plain(
        _Figure(
            "fig9",
            "tb-fig9-bias-quick",
            "tb-fig9-bias",
            "App. G Fig. 9, Theorem 3.2",
            _FIG9,
            15,
            25,
        ),
        True,
    ),
    _extended(
        _Figure(
            "fig5", "tb-fig5-linear", "tb-fig5-linear", "§6 Fig. 5, Theorem 4.1", _FIG5, 10, 10
        ),
        False,
        1e-6,
        1e-6,
    ),
    _extended(
        _Figure("fig5", "tb-fig5-relu", "tb-fig5-relu", "§6 Fig. 5, Theorem 4.2", _FIG5, 120, 120),
        True,
        REACHED_GAP**0.25,
        REACHED_GAP,
        note="The paper plots one GD run per setting (§6: 'we tune a gradient descent scheme to "
        "reach a global minimizer'); we run 8 seeds of its initialisation (N(0,1) x 0.1, step "
        "0.1, 600 000 steps): the seeds that reach Theorem 4.2's closed form are judged on its "
        "structure, those that stall at spurious minima a few percent above it (docs/ufm.md) are "
        "invalid evidence about the minimiser and counted by the ours-beyond reached-minimiser "
        "(k/8). The ReLU model converges sublinearly: NC2^OF of "
        "σ(W1H1), W2 and NC3 are ~1e-3 at 6e5 steps on the seeds that reach it; they are held "
        "to the gap tolerance's fourth root (0.032), the objective gap to 1e-6.",
        seeds=8,
    ),
    _extended(
        _Figure(
            "fig9",
            "tb-fig9-linear-quick",
            "tb-fig9-linear",
            "App. G Fig. 9, Theorem 4.1",
            _setting("tb-fig9-linear", _FIG9X_FORM),
            15,
            35,
        ),
        False,
        1e-6,
        1e-6,
    ),
    _extended(
        _Figure(
            "fig9",
            "tb-fig9-relu-quick",
            "tb-fig9-relu",
            "App. G Fig. 9, Theorem 4.2",
            _setting(
                "tb-fig9-relu", _FIG9X_FORM + ", inits ×{m.init.w:g}/×{m.init.w1:g}/×{m.init.h:g}"
            ),
            25,
            60,
        ),
        True,
        1e-6,
        1e-6,
    ),
    tb_claim(
        "phase-diagram",
        "Theorem 3.1 (threshold K√(nλ_Hλ_W) = 1)",
        "Across λ_W = λ_H = λ, GD ends at the collapsed orthogonal frame below the "
        "threshold K√(nλ_Hλ_W) = 1 and at zero above it, with the optimal objective "
        "c - c²/2 (c = K√(nλ_Hλ_W)), resp. 1/2; one batched solve of the whole grid.",
        runs=_sweep(
            "tb-phase-diagram",
            "Theorem 3.1 states the threshold; the paper runs no sweep across it",
        ),
        measured={
            "largest gap": "objective_gap",
            "largest gap off threshold": "objective_gap_off_threshold",
            "largest NC metric (collapsed points)": "collapse_max",
            "threshold λ*": "threshold_lambda",
        },
        theory={},
        paper_values={"collapse threshold": "K√(nλ_Hλ_W) = 1"},
        checks=[
            *_gaps("threshold", "|c - 1|"),
            at_most("collapse_max", 1e-6, "NC metrics of the collapsed points", ours=EXACT),
        ],
        quick_seconds=10,
        full_seconds=75,
        note="points within 10 % of the threshold converge slowly (the collapsed mode's "
        "curvature vanishes at c = 1): their gap is reported and held to 1e-4 only",
    ),
    _fixed_features(),
    _regularized_bias(),
]
