"""Claims of Súkeník, Lampert & Mondelli's appendix that its proof of Lemma 4.1 states and a run
tests directly (issue 50): the optimal features given W, and the margin of ‖w_k‖ below d^(-1/2),
read at the end of the GUFM-MSE run (``ufm`` preset ``gufm-mse``).
"""

from __future__ import annotations

from ...experiments.ufm.config import REACHED_GAP
from ..checks import Check, Principle, ours, to_precision
from ..registry import Claim
from .sukenik import _proof_run, sukenik_claim

#: the proof's own rate (mse-rate-features): a feature deviates from the optimum by at most
#: O(ε^(1/4)) at an extra loss ε; the runs reach ε <= REACHED_GAP
RATE_TOL = REACHED_GAP**0.25
RATE_WHY = ours(
    Principle.THEORY,
    "derived from the theory: the same proof bounds a feature's deviation from the optimum by "
    f"O(ε^(1/4)) at an extra loss ε (sukenik/mse-rate-features), and the run reaches ε <= "
    f"{REACHED_GAP:g} (sukenik/gufm-mse's objective check): {RATE_TOL:.3g}",
)
#: the measured ‖w_k‖ is exact to the gufm-mse claim's norm tolerance
NORM_PRECISION = 1e-6

CLAIMS: list[Claim] = [
    sukenik_claim(
        "mse-optimum-given-w",
        "Appendix, proof of Lemma 4.1 (MSE)",
        "For the GUFM with MSE, given W with ‖w_k‖ <= d^(-1/2), the optimal features are "
        "x_ki = √d w_k / ‖w_k‖; and at the optimum ‖w_k‖ is strictly below d^(-1/2) with a "
        "non-zero margin: read at the end of the gufm-mse run (K = 4, d = 16, n = 10, "
        "λ = 0.005), its features against √d w_k / ‖w_k‖ of its own W.",
        runs=_proof_run("gufm-mse"),
        measured={
            "max ‖x_ki - √d w_k/‖w_k‖‖ / √d (worst seed)": "features_given_w_gap",
            "1 - √d max ‖w_k‖ (smallest seed)": "w_norm_sphere_margin",
            "‖w_k‖": "measured_norms.w_norm",
            "objective gap": "objective_gap",
        },
        theory={"‖w_k‖ (closed form)": "theory_norms.w_norm"},
        paper_values={"features": "√d w_k / ‖w_k‖ (proof)", "‖w_k‖": "< d^(-1/2), margin > 0"},
        checks=[
            Check(
                f"the features are √d w_k/‖w_k‖ of the run's own W (largest distance / √d <= "
                f"{RATE_TOL:.3g})",
                path="features_given_w_gap",
                op="<=",
                value=RATE_TOL,
                name="features-given-w",
                ours=RATE_WHY,
                depends_on=(),
            ),
            to_precision(
                f"‖w_k‖ is below d^(-1/2) by more than the norm's precision (1 - √d max ‖w_k‖ > "
                f"{NORM_PRECISION:g})",
                "w_norm_sphere_margin",
                ">",
                NORM_PRECISION,
                "w-norm-margin",
                "numerical precision: the run's ‖w_k‖ is exact to 1e-6 (sukenik/gufm-mse's "
                "norm check), so a margin above it is a non-zero margin",
                depends_on=(),
            ),
        ],
        quick_seconds=20,
        full_seconds=20,
        note="Both sentences sit in the proof of Lemma 4.1 (MSE); the optimum's closed form "
        "‖w_k‖ = 1/(√d (1 + λK/d)) gives the margin λK/d / (1 + λK/d) = 1.25e-3 here.",
    ),
]
