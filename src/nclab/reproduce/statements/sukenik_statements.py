"""The statements of Súkeník, Lampert & Mondelli, *Neural Collapse is Globally Optimal in Deep
Regularized ResNets and Transformers*, from ``papers/002_b5b6c029051a0db4.txt``: an appendix
fragment (the proof of Lemma 4.1 for the GUFM, CE and MSE, and the start of the proof of the main
result for L-RN1). The main text, with the L-RN2 and transformer results and the depth sweeps of
its Figure 1, is not in ``papers/``: the claims that test it stand outside this inventory
(:data:`OUTSIDE`).

Length: a declaration per statement of the fragment, no logic.
"""

from __future__ import annotations

from .base import PROOF, claim_ids, covered, uncovered

P = "sukenik"
GUFM_MSE, GUFM_CE, UFM_CE = claim_ids(P, "gufm-mse", "gufm-ce", "ufm-ce")
RN1_CE, RN1_MSE = claim_ids(P, "rn1-depth-ce", "rn1-depth-mse")
#: the new claims of issue 26 (:mod:`nclab.reproduce.claims.sukenik`): the CIFAR-10 depth sweep,
#: Lemma 4.1's rates (the ufm experiment's sublevel-set sampler) and the CE norms' sweep
RN1_CIFAR = f"{P}/rn1-depth-ce-cifar10"

STATEMENTS = [
    covered(
        f"{P}:lemma4.1-ce",
        "lemma",
        "Appendix, proof of Lemma 4.1 (CE, by Theorem 3.1 of Zhu et al. [71])",
        "from this theorem it follows that the optimal solutions of the regularized UFM-CE (not "
        "a-priori equivalent to (8) because of the feature constraint) exhibit neural collapse",
        UFM_CE,
        GUFM_CE,
    ),
    covered(
        f"{P}:ce-norm-grows",
        "claim",
        "Appendix, proof of Lemma 4.1 (CE)",
        "the absolute size of these vectors is an increasing function of the regularization "
        "strength, with the limit as $\\lambda\\xrightarrow{}\\infty$ being infinity",
        f"{P}/ce-norm-grows",
        note="tested as worded (increasing, to infinity as λ → ∞); what the proof does with it "
        "is the next statement",
    ),
    covered(
        f"{P}:ce-pick-lambda-h",
        "claim",
        "Appendix, proof of Lemma 4.1 (CE)",
        "while we find $\\lambda_{H}$ s.t. the optimal solutions of the problem in [71] have norm "
        "$\\sqrt{d}$",
        f"{P}/ce-lambda-h-exists",
    ),
    covered(
        f"{P}:gufm-ce-equivalence",
        "claim",
        "Appendix, proof of Lemma 4.1 (CE)",
        "Then, the global optima of the regularized UFM-CE are exactly those of the UFM-CE we "
        "consider in (8).",
        GUFM_CE,
    ),
    covered(
        f"{P}:mse-features-given-w",
        "claim",
        "Appendix, proof of Lemma 4.1 (MSE)",
        "if $\\left\\lVert w_{k}\\right\\rVert\\leq d^{-\\frac{1}{2}}$, then the optimal solution "
        "is $x_{ki}=\\sqrt{d}\\cdot w_{k}/\\left\\lVert w_{k}\\right\\rVert.$",
        f"{P}/mse-optimum-given-w",
    ),
    covered(
        f"{P}:mse-rate-features",
        "claim",
        "Appendix, proof of Lemma 4.1 (MSE)",
        "in all cases the maximum allowed deviation from the optimum given an extra loss of "
        "$\\epsilon$ is at most $\\mathcal{O}(\\epsilon^{1/4})$",
        f"{P}/mse-rate-features",
    ),
    covered(
        f"{P}:mse-w-norm",
        "claim",
        "Appendix, proof of Lemma 4.1 (MSE)",
        "The solution is simply $\\frac{1}{\\sqrt{d}(1+\\lambda K)}.$",
        GUFM_MSE,
        note="in the appendix's normalisation (λ_app = λ/d in nclab's, docs/theory-ufm.md)",
    ),
    covered(
        f"{P}:mse-w-norm-margin",
        "claim",
        "Appendix, proof of Lemma 4.1 (MSE)",
        "for fixed $\\lambda,K,$ this solution is strictly smaller than $d^{-\\frac{1}{2}}$ with "
        "non-zero margin",
        f"{P}/mse-optimum-given-w",
    ),
    covered(
        f"{P}:mse-rate-norm",
        "claim",
        "Appendix, proof of Lemma 4.1 (MSE)",
        "for a fixed extra loss of $\\epsilon$, the maximum allowed deviation of "
        "$\\left\\lVert z_{k}\\right\\rVert$ from its optimal value is "
        "$\\mathcal{O}(\\epsilon^{1/2})$",
        f"{P}/mse-rate-norm",
    ),
    covered(
        f"{P}:mse-nc1-nc3",
        "lemma",
        "Appendix, proof of Lemma 4.1 (MSE)",
        "the solutions in $\\underline{\\mathcal{M}}^{\\text{UFM-MSE}}_{0}$ must satisfy the NC1 "
        "and NC3 properties",
        GUFM_MSE,
    ),
    covered(
        f"{P}:mse-nc2",
        "lemma",
        "Appendix, proof of Lemma 4.1 (MSE; d >= K)",
        "the solutions of (8) with MSE must satisfy NC2",
        GUFM_MSE,
    ),
    covered(
        f"{P}:mse-rate-orthogonal",
        "claim",
        "Appendix, proof of Lemma 4.1 (MSE)",
        "the solution in $\\mathcal{M}^{\\text{UFM-MSE}}_{\\epsilon}$ must be "
        "$\\mathcal{O}(\\epsilon^{1/4})$ close to an orthogonal matrix",
        f"{P}/mse-rate-orthogonal",
    ),
    covered(
        f"{P}:rn1-limit",
        "theorem",
        "Appendix, proof of the main result for L-RN1, its first paragraph (after "
        "L_{L,1}(θ) = L_GUFM(W_L, X_L) + (λ/2) Σ_{l<L} ‖W_l‖²)",
        "The goal is to show "
        "${\\mathcal{L}}^{*}_{\\text{GUFM}}=\\underset{L\\xrightarrow{}\\infty}{\\lim}"
        "{\\mathcal{L}}^{*}_{L,1}.$",
        RN1_CE,
        RN1_MSE,
        RN1_CIFAR,
        note="tested as a limit since issue 50 (checks limit-is-gufm, limit-resolved): the "
        "sweep's objectives fitted as L_inf + c L^-a, L_inf within 2 standard errors of "
        "L*_GUFM, the interval narrower than the deepest network's gap; the trained objectives "
        "bound L*_{L,1} from above, L*_GUFM bounds it from below (tests/test_deep_ln.py)",
    ),
    covered(
        f"{P}:rn1-collapse",
        "theorem",
        "Appendix, proof of the main result for L-RN1",
        "must also belong to ${\\mathcal{M}}_{\\epsilon}^{\\text{GUFM}}$ for $\\epsilon$ "
        "arbitrarily small, which evoking Lemma 4.1 guarantees the convergence as defined in (10)",
        RN1_CE,
        RN1_MSE,
        RN1_CIFAR,
        note="near-optimal deep L-RN1 networks are nearly collapsed (NC1-NC3 fall with depth)",
    ),
    covered(
        f"{P}:depth-monotone",
        "claim",
        "Appendix, proof of the main result (identity blocks)",
        "Thus, ${\\mathcal{L}}^{*}_{L,1}$ is non-increasing in $L$",
        f"{P}/depth-monotone",
    ),
    uncovered(
        f"{P}:distinct-samples",
        "claim",
        "Appendix, construction for L-RN1",
        "Since points in $X_{0}$ are all disjoint, this property holds also for $X_{1}$ with "
        "probability 1.",
        PROOF,
        "a step of the construction in the proof of the main result",
    ),
    uncovered(
        f"{P}:construction-exists",
        "claim",
        "Appendix, construction for L-RN1",
        "It is clear that a construction satisfying these properties exists",
        PROOF,
        "a step of the construction in the proof of the main result",
    ),
    uncovered(
        f"{P}:construction-dimension",
        "claim",
        "Appendix, construction for L-RN1",
        "this requires the inner dimension of the representations to be at least 4 since this "
        "would not be possible on a 2D circle",
        PROOF,
        "a condition of the construction (the experiments' widths are far above 4)",
    ),
    uncovered(
        f"{P}:construction-moves-one",
        "claim",
        "Appendix, construction for L-RN1",
        "it is clear that $x_{ki}$ is moving along and on the curve, while the other samples "
        "stay stationary",
        PROOF,
        "a step of the construction in the proof of the main result",
    ),
    uncovered(
        f"{P}:construction-cost",
        "claim",
        "Appendix, construction for L-RN1",
        "We see that this cost goes to 0 as $L_{1}$ goes to infinity.",
        PROOF,
        "a step of the construction; its conclusion (the limit) is tested by the depth claims",
    ),
]

_MAIN = (
    "tests the main text's result for {} (not in papers/: the appendix fragment proves the "
    "GUFM lemma and starts the L-RN1 proof)"
)
#: claims that test statements of the paper's main text, which papers/ does not hold
OUTSIDE: dict[str, str] = {
    f"{P}/rn2-depth-ce": _MAIN.format("L-RN2 (two-layer blocks, weight decay λ/L)"),
    f"{P}/rn2-depth-ce-cifar10": _MAIN.format("L-RN2 (two-layer blocks, weight decay λ/L)"),
    f"{P}/t11-depth-ce": _MAIN.format("the transformer L-T11"),
    f"{P}/t12-depth-ce": _MAIN.format("the transformer L-T12"),
    f"{P}/t11-pre-depth-ce": _MAIN.format("the pre-LN transformer L-T11 (its IMDB panel)"),
    f"{P}/t11-img-depth-ce": _MAIN.format("L-T11 on images (its CIFAR-10 panel)"),
    f"{P}/rn2-constant-lambda": "tests the appendix figure of L-RN2 with a constant λ, which is "
    "not in the fragment in papers/ (its negative control)",
}
