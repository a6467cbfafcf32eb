"""Claims of Tirer & Bruna (ICML 2022) that the statement inventory
(:mod:`nclab.reproduce.statements.tirer_bruna_statements`) found untested: Theorem 4.1's threshold for a
nonzero minimiser of the linear extended UFM, and the two feature levels of the ReLU model ending
in different structures (§6, the paper's Figs. 3-4).
"""

from __future__ import annotations

from dataclasses import replace

from ...experiments.ufm.config import REACHED_GAP
from ...verdicts import Diagnosis, DiagnosisKind
from ..checks import Check, Principle, Ratio, at_most, beyond, ours
from ..registry import Claim, RunSpec
from .tirer_bruna import EXACT, EXP, REACHED, _not_below, _sweep, tb_claim

#: the two levels "differ in structure" when the first stays at least this many times farther
#: from an orthogonal frame than the second (ours: an order of magnitude)
LEVEL_CONTRAST = 0.1
#: why the level contrast is an order of magnitude
CONTRAST_WHY = ours(
    Principle.LOG_PLOT,
    "Theorem 4.2 says nothing of H1 and Figs. 3-4 show the two levels apart without a number; "
    "an order of magnitude is our reading of 'far from' an orthogonal frame",
)


def _of(alias: str, layer: str, what: str) -> Check:
    return Check(
        f"{alias} model: NC2^OF of {what} <= 1e-6 (an orthogonal frame, Theorem 4.1)",
        path=f"{alias}:metrics.{layer}.nc2_of",
        op="<=",
        value=1e-6,
        name=f"{alias}-{layer}-of",
        ours=EXACT,
    )


CLAIMS: list[Claim] = [
    tb_claim(
        "phase-diagram-linear",
        "§4, Theorem 4.1 (a nonzero minimiser below its threshold)",
        "Across λ_W2 = λ_W1 = λ_H1 = λ, the linear extended UFM's global minimum is the "
        "collapsed orthogonal frame of Theorem 4.1 below the threshold K (nλ³)^(1/3) = 2^(-4/3) "
        "and zero above it; one batched solve of the grid, several starts per λ.",
        runs=_sweep(
            "tb-phase-diagram-linear",
            "Theorem 4.1 implies the threshold; the paper runs no sweep across it",
        ),
        measured={
            "largest gap, best seed per λ, off threshold": "objective_gap_best_off_threshold",
            "largest gap, every seed, off threshold": "objective_gap_off_threshold",
            "largest gap": "objective_gap",
            "largest NC metric (collapsed points)": "collapse_max",
            "threshold λ*": "threshold_lambda",
        },
        paper_values={"threshold": "a nonzero minimiser only below it (Theorem 4.1)"},
        checks=[
            replace(
                _not_below(),
                describe="no start at any λ ends below the theorem's objective (its minimiser, "
                "collapsed below the threshold and zero above, is the global minimum)",
            ),
            Check(
                "NC metrics of the collapsed points off the threshold that reached the theorem's "
                f"objective (relative gap <= {REACHED_GAP:g}) <= 1e-6",
                path="collapse_max_reached",
                op="<=",
                value=1e-6,
                name="collapse-at-minimum",
                ours=EXACT,
                depends_on=(),
            ),
            beyond(
                at_most(
                    "objective_gap_best_off_threshold",
                    1e-6,
                    "relative gap of the best start at each λ with |c - 1| >= 0.1",
                    ours=EXACT,
                )
            ),
            beyond(
                at_most(
                    "objective_gap_off_threshold",
                    1e-6,
                    "relative gap of every start at each λ with |c - 1| >= 0.1",
                    ours=EXACT,
                )
            ),
            beyond(
                at_most(
                    "collapse_max",
                    1e-6,
                    "NC metrics of the collapsed points (every start)",
                    ours=EXACT,
                )
            ),
        ],
        quick_seconds=90,  # 30 problems x 60k steps, one batched solve
        full_seconds=600,
        note="c = K (nλ³)^(1/3) / 2^(-4/3); points within 10 % of c = 1 are reported, not judged. "
        "The zero solution is a local minimum on both sides of the threshold and a nonzero "
        "local minimum survives just above it, so a start can end at either. The theorem is "
        "about the global minimum: no start may end below it, and the starts that reach it "
        "must be collapsed (the statement checks); whether gradient descent from the best or "
        "every start (init x0.5, our choice) reaches it is ours-beyond (the paper tunes its "
        "scheme, §6, and runs no sweep).",
    ),
    tb_claim(
        "fig5-two-levels",
        "§6, Figs. 3-4 (extracted as Fig. 5): the linear and ReLU extended UFM",
        "Adding the ReLU separates the two feature levels in structure: in the linear model "
        "both H1 and W1H1 end at an orthogonal frame; in the ReLU model σ(W1H1) does while H1 "
        "stays far from one.",
        runs={
            "linear": RunSpec(EXP, quick="tb-fig5-linear", full="tb-fig5-linear"),
            # the structure is the minimiser's: judged on the seeds that reach it
            "relu": RunSpec(
                EXP, quick="tb-fig5-relu-quick", full="tb-fig5-relu", validity=(REACHED,)
            ),
        },
        measured={
            "linear: NC2^OF of H1": "linear:metrics.H1.nc2_of",
            "linear: NC2^OF of W1H1": "linear:metrics.Z1.nc2_of",
            "ReLU: NC2^OF of H1": "relu:metrics.H1.nc2_of",
            "ReLU: NC2^OF of W1H1": "relu:metrics.Z1.nc2_of",
            "ReLU: NC2^OF of σ(W1H1)": "relu:metrics.A1.nc2_of",
            "linear: NC1 of H1": "linear:metrics.H1.nc1",
            "ReLU: NC1 of H1": "relu:metrics.H1.nc1",
            "ReLU: NC1 of σ(W1H1)": "relu:metrics.A1.nc1",
        },
        paper_values={"levels": "the ReLU distinguishes them in rate and in structure (Figs. 3-4)"},
        checks=[
            _of("linear", "H1", "H1"),
            _of("linear", "Z1", "W1H1"),
            Ratio(
                f"ReLU model: NC2^OF of σ(W1H1) below {LEVEL_CONTRAST:g} x that of H1 (the "
                "second level reaches an orthogonal frame, the first does not)",
                num="relu:metrics.A1.nc2_of",
                den="relu:metrics.H1.nc2_of",
                below=LEVEL_CONTRAST,
                name="relu-levels-differ",
                ours=CONTRAST_WHY,
            ),
        ],
        quick_seconds=25,
        full_seconds=110,
        diagnosis={
            "full": Diagnosis(
                DiagnosisKind.SEEDS_SPLIT,
                "the linear half holds on 8/8 seeds; of the 4 ReLU seeds that reach Theorem "
                "4.2's minimiser, 2 end with H1 far from an orthogonal frame (NC2^OF 0.26 and "
                "0.15 against σ(W1H1)'s 1.5e-3 and 3.6e-5) and 2 with H1 at one too (NC2^OF "
                "below 1e-3): the theorem fixes σ(W1H1), not H1, and which H1 gradient descent "
                "ends at differs across seeds; the paper plots one run",
                ("ufm tb-fig5-relu", "ufm tb-fig5-linear"),
            )
        },
        note="tests the structure half of the statement (the rate half: "
        "tirer-bruna/fig5-two-levels-rate). The metrics are the worst seed's "
        "(2 of 4 seeds of the ReLU model can stall at a spurious minimum, docs/ufm.md); the "
        "order-of-magnitude contrast is our threshold, Theorem 4.2 says nothing of H1.",
    ),
]
