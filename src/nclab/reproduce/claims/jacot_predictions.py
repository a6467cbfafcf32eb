"""Claims of Jacot, Súkeník, Wang & Mondelli (ICLR 2025) that a proof step states and a trained
network tests directly (issue 50): Lemma C.2's bound on the linear head's departure from exact
balancedness, and §5's identity κ(W_L) = κ(W_(L:L1+1))^(1/L2) in the approximate form Lemma C.2
gives it, on the network of Theorem 3.1's certificate (``linear-head`` preset ``thm31-bounds``).
"""

from __future__ import annotations

from ...experiments.protocol import Validity
from ..checks import Check, Principle, beyond, ours
from ..registry import Claim
from .jacot_beyond import _certificate_claim

LEMMA_WHY = ours(
    Principle.THEORY,
    "derived from the theory: Lemma C.2 holds for any weights meeting its two hypotheses, so its "
    "bound, evaluated with the head's own ε2 (largest ‖W_(l+1)ᵀW_(l+1) - W_l W_lᵀ‖_op) and r "
    "(largest ‖W_l‖_op), is the threshold",
)
WEYL_WHY = ours(
    Principle.THEORY,
    "derived from the theory: by Weyl's inequality, a symmetric perturbation δ (Lemma C.2's "
    "bound) of W_(L:L1+1)W_(L:L1+1)ᵀ moves each eigenvalue of (W_L W_Lᵀ)^L2 by at most δ, so "
    "κ(W_L) lies in [((s_1² - δ)/(s_K² + δ))^(1/(2 L2)), ((s_1² + δ)/(s_K² - δ))^(1/(2 L2))], "
    "s_i the product's singular values; the check reads the larger of the two distances from "
    "κ(W_(L:L1+1))^(1/L2) to the bracket's ends, relative",
)

_MEASURED = {
    "‖(W_L W_Lᵀ)^L2 - W_(L:L1+1)W_(L:L1+1)ᵀ‖_op": "certificate.lemma_c2.lhs",
    "Lemma C.2's bound L2²/2 ε2 r^(2(L2-1))": "certificate.lemma_c2.bound",
    "left side / bound": "certificate.lemma_c2.ratio",
    "ε2": "certificate.lemma_c2.eps2",
    "r (largest ‖W_l‖_op of the head)": "certificate.lemma_c2.r",
}
#: the identity is testable only where Lemma C.2's bound brackets κ(W_L)
_BRACKETED = Validity(
    "certificate.lemma_c2.kappa_tolerance",
    "<",
    1.0,
    "where Lemma C.2's bound reaches s_K(W_(L:L1+1))², Weyl's inequality does not bound κ(W_L) "
    "from above (the tolerance is written as the largest float): the run cannot test the "
    "identity",
)


def _within_lemma(describe: str, key: str, bound: str, name: str, why: str) -> Check:
    """``lemma_c2.<key> <= lemma_c2.<bound>`` on the certificate's network: a quantity of the
    trained head within what Lemma C.2 gives at the head's own ε2 and r, for any network that
    meets the lemma's hypotheses (it depends on no setting)."""
    c2 = "certificate.lemma_c2"
    return Check(
        describe,
        path=f"{c2}.{key}",
        op="<=",
        ref=f"{c2}.{bound}",
        name=name,
        ours=why,
        depends_on=(),
    )


CLAIMS: list[Claim] = [
    _certificate_claim(
        "lemma-c2",
        "App. C, Lemma C.2",
        "If the linear head is approximately balanced (ε2) with ‖W_l‖_op <= r, then "
        "‖(W_L W_Lᵀ)^L2 - W_(L:L1+1)W_(L:L1+1)ᵀ‖_op <= L2²/2 · ε2 · r^(2(L2-1)): on the trained "
        "network of Theorem 3.1's certificate.",
        measured=_MEASURED,
        paper_values={"Lemma C.2": "a bound (proved)"},
        checks=[
            _within_lemma(
                "Lemma C.2: the left side is at most L2²/2 ε2 r^(2(L2-1))",
                "lhs",
                "bound",
                "lemma-c2",
                LEMMA_WHY,
            ),
            beyond(
                Check(
                    "Lemma C.2's bound is informative: the left side is at least a tenth of it",
                    path="certificate.lemma_c2.ratio",
                    op=">=",
                    value=0.1,
                    name="lemma-c2-tight",
                    ours=ours(
                        Principle.LOG_PLOT,
                        "how tight the lemma is here (the paper states a bound, not its "
                        "tightness): within a decade of the left side",
                    ),
                )
            ),
        ],
        note="lemma_c2 is computed from the trained head's float64 weights beside Theorem 3.1's "
        "certificate (linear_head.measure.lemma_c2).",
    ),
    _certificate_claim(
        "balanced-kappa",
        "§5 (κ(W_L) = κ(W_(L:L1+1))^(1/L2)); App. C, Lemma C.2",
        "Balancedness gives κ(W_L) = κ(W_(L:L1+1))^(1/L2) (§5); for an approximately "
        "balanced head it holds within the perturbation Lemma C.2 allows: on the trained network "
        "of Theorem 3.1's certificate.",
        _BRACKETED,
        measured={
            "κ(W_L)": "certificate.lemma_c2.kappa_wl",
            "κ(W_(L:L1+1))^(1/L2)": "certificate.lemma_c2.kappa_root",
            "|κ(W_L) - κ(W_(L:L1+1))^(1/L2)| / κ(W_L)": "certificate.lemma_c2.kappa_rel_gap",
            "half-width of the Weyl bracket, relative": "certificate.lemma_c2.kappa_tolerance",
            **_MEASURED,
        },
        paper_values={"κ(W_L)": "κ(W_(L:L1+1))^(1/L2) if balanced"},
        checks=[
            _within_lemma(
                "κ(W_L) is κ(W_(L:L1+1))^(1/L2) within the Weyl bracket of Lemma C.2's bound",
                "kappa_rel_gap",
                "kappa_tolerance",
                "balanced-kappa",
                WEYL_WHY,
            ),
        ],
    ),
]
