"""The statements of Tirer & Bruna, *Extended Unconstrained Features Model for Exploring Deep
Neural Collapse* (ICML 2022), from ``papers/001_fef387e7d9c3df05.txt``.

The extraction drops the theorem environments (Theorems 3.1, 3.2, 4.1, 4.2, 5.1 and Lemmas A.1,
B.1, C.1 are referred to but not printed): each theorem is quoted where the text states it (the
section's summary, the end of its proof in the appendix), with a note. It also prints every
figure number of §6 as "Figure 2" or "Figure 5" (the paper's Figs. 1-2 and 3-5); the claims use
the same numbers.

Length: a declaration per statement of the paper, no logic.
"""

from __future__ import annotations

from .base import NOT_TESTABLE, PROOF, claim_ids, covered, uncovered

P = "tirer-bruna"
FIG2_OF, FIG2_ETF, FIG9_OF, FIG9_ETF = claim_ids(
    P, "fig2-bias-free", "fig2-bias", "fig9-bias-free", "fig9-bias"
)
FIG5_LIN, FIG5_RELU, FIG9_LIN, FIG9_RELU = claim_ids(
    P, "fig5-linear", "fig5-relu", "fig9-linear", "fig9-relu"
)
PHASE, FIXED, BIAS = claim_ids(P, "phase-diagram", "fixed-features", "regularized-bias")
RESNET_MSE, RESNET_CE = claim_ids(P, "resnet18-mse-nobias", "resnet18-ce-bias")
#: the new claims of issue 26 (:mod:`nclab.reproduce.claims.tirer_bruna_inventory`)
PHASE_LIN, TWO_LEVELS, RESNET_CIFAR = claim_ids(
    P, "phase-diagram-linear", "fig5-two-levels", "resnet18-cifar10-mse-nobias"
)
SIMILAR_NC1, TWO_LEVELS_RATE, NUCLEAR, UNREG = claim_ids(
    P,
    "fig5-linear-similar-nc1",
    "fig5-two-levels-rate",
    "relu-nuclear-norm",
    "unregularized-no-collapse",
)
_MISSING = "the theorem's own text is missing from the extraction; quoted from {}"

STATEMENTS = [
    covered(
        f"{P}:unregularized-no-collapse",
        "remark",
        "§2 (the UFM without regularisation)",
        "In fact, experiments with unregularized MSE loss and randomly initialized gradient "
        "descent typically convergence to non-collapse global minimizers.",
        UNREG,
    ),
    # --- §3 the plain UFM ---------------------------------------------------------------------
    covered(
        f"{P}:thm3.1",
        "theorem",
        "§3.1, Theorem 3.1 (eqs. (5)-(9); proof in App. A)",
        "in the bias-free case the features and weights of any global minimizer are aligned in "
        "an orthogonal frame (OF) structure",
        FIG2_OF,
        FIG9_OF,
        note=_MISSING.format("§3's summary"),
    ),
    covered(
        f"{P}:thm3.1-threshold",
        "theorem",
        "§3.1, Theorem 3.1 (App. A, Lemma A.1; App. B repeats it with Lemma B.1)",
        "Invoking Lemma A.1 with \\beta=\\|\\mathbf{w}_{k}\\|_{2}\\|\\mathbf{h}_{k}\\|_{2} and "
        "c=K\\sqrt{n\\lambda_{H}\\lambda_{W}}, we get that if K\\sqrt{n\\lambda_{H}\\lambda_{W}}>1 "
        "then the minimizer is "
        "(\\mathbf{W}^{*},\\mathbf{H}^{*})=(\\mathbf{0},\\mathbf{0})",
        PHASE,
        note=_MISSING.format("its proof (App. A)"),
    ),
    covered(
        f"{P}:thm3.2",
        "theorem",
        "§3.2, Theorem 3.2 (proof in App. B)",
        "in the unregularized-bias case the features and weights of any global minimizer are "
        "aligned in a simplex ETF structure",
        FIG2_ETF,
        FIG9_ETF,
        note=_MISSING.format("§3's summary"),
    ),
    covered(
        f"{P}:regularized-bias",
        "corollary",
        "§3 (0 < λ_b < ∞)",
        "From these results, several conclusions are deduced also for the case where "
        "\\lambda_{b}>0 and \\mathbf{b} is optimizable.",
        BIAS,
    ),
    uncovered(
        f"{P}:of-to-etf",
        "remark",
        "§3",
        "Since any orthogonal frame can trivially be turned into a simplex ETF by reducing its "
        "global mean, in a sense, this collapse is more structured than a simplex ETF collapse.",
        NOT_TESTABLE,
        "a fact about frames, true by construction",
    ),
    covered(
        f"{P}:gd-reaches-minimizer",
        "remark",
        "§3, remark on the optimization procedure",
        "its global minimizers are easily obtained by simple optimization algorithms, such as "
        "plain gradient descent",
        FIG2_OF,
        FIG2_ETF,
        FIG9_OF,
        FIG9_ETF,
    ),
    covered(
        f"{P}:lemma-a.1",
        "lemma",
        "App. A, Lemma A.1",
        "To summarize, (i) if c>1 we get the minimizers "
        "\\tilde{f}(\\alpha^{*},\\beta^{*}=0)=\\frac{1}{2}; (ii) If c\\leq 1 we get the "
        "minimizer \\tilde{f}(\\alpha^{*}=0,\\beta^{*}=1-c)=c-\\frac{1}{2}c^{2}.",
        PHASE,
        note="the optimal objective c - c²/2 below the threshold, 1/2 above it",
    ),
    covered(
        f"{P}:lemma-b.1",
        "lemma",
        "App. B, Lemma B.1",
        "we get minimum at (\\alpha^{*},\\tilde{\\alpha}^{*},\\beta^{*})=(0,\\mathrm{arccos}"
        "(\\frac{-1}{K-1}),\\frac{(1-c)(K-1)}{K}) with objective value of",
        FIG2_ETF,
        FIG9_ETF,
        note="the optimal objective (K-1)/K (c - c²/2) of the unregularised-bias UFM",
    ),
    # --- §4 the extended UFM ------------------------------------------------------------------
    covered(
        f"{P}:thm4.1",
        "theorem",
        "§4, Theorem 4.1 (proof in App. C)",
        "we have that \\mathbf{W}_{1}^{*}\\mathbf{H}_{1}^{*} collapses to an orthogonal "
        "d\\times K frame, and \\mathbf{W}_{2}^{*\\top} is an orthogonal d\\times K matrix that "
        "is aligned with \\mathbf{W}_{1}^{*}\\mathbf{H}_{1}^{*}",
        FIG5_LIN,
        FIG9_LIN,
        note=_MISSING.format("the end of its proof (App. C)"),
    ),
    covered(
        f"{P}:thm4.1-h1",
        "theorem",
        "§4, Theorem 4.1 (proof in App. C)",
        "\\mathbf{H}_{1}^{*} collapses to an orthogonal d\\times K frame, and "
        "(\\mathbf{W}_{2}^{*}\\mathbf{W}_{1}^{*})^{\\top} is an orthogonal d\\times K matrix "
        "that is aligned with \\mathbf{H}_{1}^{*}",
        FIG5_LIN,
        FIG9_LIN,
        note=_MISSING.format("the end of its proof (App. C)"),
    ),
    covered(
        f"{P}:thm4.1-threshold",
        "theorem",
        "§4, Theorem 4.1 (a nonzero minimizer); App. D, the conclusion on W1H1 (the one on H1 "
        "repeats the words)",
        "for d\\geq K and (\\mathbf{W}_{2}^{*},\\mathbf{W}_{1}^{*},\\mathbf{H}_{1}^{*}) being a "
        "(nonzero) global minimizer of (23), we have that \\mathbf{W}_{1}^{*}\\mathbf{H}_{1}^{*} "
        "collapses",
        PHASE_LIN,
        note="the condition for a nonzero minimizer is missing from the extraction; nclab's "
        "theory derives it, K (n λ_H1 λ_W1 λ_W2)^(1/3) <= 2^(-4/3) (docs/theory-ufm.md)",
    ),
    covered(
        f"{P}:thm4.1-quartic",
        "theorem",
        "App. C (proof of Theorem 4.1)",
        "The value of \\sigma_{W} can be computed numerically as the positive root of the above "
        "4th degree polynomial",
        FIG5_LIN,
        FIG9_LIN,
    ),
    covered(
        f"{P}:thm4.1-same-range",
        "claim",
        "App. D (from the proof of Theorem 4.1)",
        "the global minimizers necessarily have that \\mathbf{W}_{2}^{*\\top},"
        "\\mathbf{W}_{1}^{*\\top} and \\mathbf{H}_{1}^{*} have exactly the same K dimensional "
        "range (column space)",
        f"{P}/thm4.1-same-range",
        note="the identities it cites equate range(W2ᵀ) with range(W1) and range(W1ᵀ) with "
        "range(H1); read literally the sentence also equates range(W2ᵀ) with range(W1ᵀ), which "
        "the minimisers' rotations do not fix",
    ),
    covered(
        f"{P}:similar-nc1",
        "observation",
        "App. D (Fig. 5, linear model)",
        "we empirically observed that \\mathbf{H}_{1} and \\mathbf{H}_{2} also have similar "
        "NC_{1} along gradient-based optimization (see Figure 5)",
        SIMILAR_NC1,
    ),
    covered(
        f"{P}:thm4.2",
        "theorem",
        "§4, Theorem 4.2 (proof in App. E)",
        "is a (global) minimizer of f_{1}(\\mathbf{W}_{2},\\mathbf{H}) and thus carries the "
        "orthogonal collapse properties",
        FIG5_RELU,
        FIG9_RELU,
        note=_MISSING.format("the end of its proof (App. E)") + ": (W2*, σ(W1*H1*)) collapse to "
        "an orthogonal frame",
    ),
    covered(
        f"{P}:nuclear-norm-observed",
        "observation",
        "App. E (the assumption of Theorem 4.2)",
        "in any numerical experiment that we performed (much beyond those that are presented in "
        "this paper) we observed that a minimizer of",
        NUCLEAR,
    ),
    covered(
        f"{P}:nuclear-norm-conjecture",
        "conjecture",
        "App. E",
        "Yet, we conjecture that it necessarily holds, such that a version of the theorem "
        "without this assumption may be published in the future.",
        NUCLEAR,
        note="tested through its numerical side, the observation above, on GD's minimisers",
    ),
    uncovered(
        f"{P}:lemma-c.1",
        "lemma",
        "App. C, Lemma C.1 (Zhu et al., 2021)",
        "We will use the following lemma from (Zhu et al., 2021) (which slightly generalizes a "
        "result from (Srebro, 2004)).",
        PROOF,
        "a cited variational form of the nuclear norm, used to split the three-factor problem",
        note="the lemma's own text is missing from the extraction",
    ),
    # --- §5 fixed features --------------------------------------------------------------------
    covered(
        f"{P}:thm5.1",
        "theorem",
        "§5, Theorem 5.1 (proof in App. F)",
        "Theorem 5.1 shows that as the number of samples tend to infinity we have that "
        "properties of the optimal weights such as the orthogonal structure and the alignment "
        "with \\overline{\\mathbf{H}}^{\\top}",
        FIXED,
        note=_MISSING.format("§5's reading of it"),
    ),
    covered(
        f"{P}:thm5.1-attenuation",
        "remark",
        "§5 (App. F.1)",
        "the asymptotic consequence of the deviation from “perfectly” collapsed features will "
        "only be some attenuation of \\mathbf{W}^{*}",
        FIXED,
    ),
    covered(
        f"{P}:thm5.1-extended",
        "remark",
        "§5 (App. F.1)",
        "This intuition applies also for the extended UFMs with fixed features (where no "
        "closed-form minimizers exist).",
        f"{P}/fixed-features-extended",
        note="the linear extended UFM (the ReLU one is not run)",
    ),
    uncovered(
        f"{P}:thm5.1-consistency",
        "claim",
        "App. F",
        "Note that, as expected, if we fixed \\mathbf{H} to be \\mathbf{H}^{*}_{n}, a global "
        "minimizer of the joint optimization",
        PROOF,
        "a consistency step of the proof of Theorem 5.1: with H fixed at a joint minimiser's "
        "H*, the W-problem returns its W* (true by the definition of a joint minimiser); it "
        "predicts nothing beyond Theorem 5.1, which tirer-bruna/fixed-features tests",
    ),
    # --- §6 and App. G: experiments -----------------------------------------------------------
    covered(
        f"{P}:metrics-to-zero",
        "observation",
        "§6",
        "The theorems are verified by demonstrating the convergence of the NC metrics to zero.",
        FIG2_OF,
        FIG2_ETF,
        FIG5_LIN,
        FIG5_RELU,
        FIG9_OF,
        FIG9_ETF,
        FIG9_LIN,
        FIG9_RELU,
    ),
    covered(
        f"{P}:fig2-thm3.1",
        "observation",
        "§6, Fig. 2 (the paper's Fig. 1)",
        "Figure 2 corroborates Theorem 3.1 for K=4,d=20,n=50 and \\lambda_{W}=\\lambda_{H}=0.005",
        FIG2_OF,
    ),
    covered(
        f"{P}:fig2-thm3.2",
        "observation",
        "§6, Fig. 2 (the paper's Fig. 2)",
        "Figure 2 corroborates Theorem 3.2 for K=4,d=20,n=50, "
        "\\lambda_{W}=\\lambda_{H}=0.005 and \\lambda_{b}=0.",
        FIG2_ETF,
    ),
    covered(
        f"{P}:fig5-thm4.1",
        "observation",
        "§6, Fig. 5 (the paper's Fig. 3)",
        "The collapse of both \\mathbf{W}_{1}\\mathbf{H}_{1} and \\mathbf{H}_{1} to OF "
        "(demonstrated by NC1 and NC2 converging to zero) is in agreement with Theorem 4.1.",
        FIG5_LIN,
    ),
    covered(
        f"{P}:fig5-thm4.2",
        "observation",
        "§6, Fig. 5 (the paper's Fig. 4)",
        "Figure 5 corroborates Theorem 4.2 that considers the nonlinear model in (24). We use "
        "K=4,d=20,n=50",
        FIG5_RELU,
    ),
    covered(
        f"{P}:relu-two-levels-structure",
        "observation",
        "§6, Figs. 3-4 (extracted as Fig. 5): the structure",
        "adding the ReLU nonlinearity to the model better distinguishes between the behavior of "
        "the features in the two levels, both in the rate of the collapse and in its structure",
        TWO_LEVELS,
    ),
    covered(
        f"{P}:relu-two-levels-rate",
        "observation",
        "§6, Figs. 3-4 (extracted as Fig. 5): the rate",
        "adding the ReLU nonlinearity to the model better distinguishes between the behavior of "
        "the features in the two levels, both in the rate of the collapse and in its structure",
        TWO_LEVELS_RATE,
    ),
    covered(
        f"{P}:resnet18-mnist",
        "observation",
        "§6, Fig. 5 right panels (ResNet18 on MNIST)",
        "The behaviors of the metrics in both cases correlate with the one of the extended UFM "
        "in Figure 5.",
        RESNET_MSE,
        RESNET_CE,
    ),
    covered(
        f"{P}:necessity-of-relu",
        "summary",
        "§7",
        "The aforementioned experiments further demonstrated the necessity of the nonlinearity "
        "in the model.",
        TWO_LEVELS,
    ),
    covered(
        f"{P}:relu-plain-ufm-fails",
        "remark",
        "§7",
        "Optimizing such a model with simple gradient-based method after random initialization "
        "(which is the common way to train practical DNNs), is doomed to fail because the "
        "negative entries in the first layer cannot be modified.",
        f"{P}/relu-plain-ufm-fails",
    ),
    covered(
        f"{P}:other-settings-similar",
        "observation",
        "§6 (App. G)",
        "experiments with different hyper-parameter setting yield similar results, as shown in "
        "Appendix G",
        FIG9_OF,
        FIG9_ETF,
        FIG9_LIN,
        FIG9_RELU,
    ),
    covered(
        f"{P}:fig9-thm3.1",
        "observation",
        "App. G, Fig. 9",
        "Figure 9 corroborates Theorem 3.1 for K=5,d=20,n=100",
        FIG9_OF,
    ),
    covered(
        f"{P}:fig9-thm3.2",
        "observation",
        "App. G, Fig. 9",
        "Figure 9 corroborates Theorem 3.2 for K=5,d=20,n=100",
        FIG9_ETF,
    ),
    covered(
        f"{P}:fig9-thm4.1",
        "observation",
        "App. G, Fig. 9",
        "The collapse of \\mathbf{W}_{1}\\mathbf{H}_{1} and \\mathbf{H}_{1} to OF (demonstrated "
        "by NC1 and NC2 converging to zero) is in agreement with Theorems 4.1.",
        FIG9_LIN,
    ),
    covered(
        f"{P}:fig9-thm4.2",
        "observation",
        "App. G, Fig. 9",
        "Figure 9 corroborates Theorem 4.2 that considers the nonlinear model in (24). We use "
        "K=5,d=20,n=100",
        FIG9_RELU,
    ),
    covered(
        f"{P}:fig10-resnet18-cifar10",
        "observation",
        "App. G, Fig. 10 (ResNet18 on CIFAR-10, MSE, no bias)",
        "in Figure 10 we show the similarity of the NC metrics that are obtained for the "
        "(nonlinear) extended UFM and metrics obtained by a practical well-trained DNN",
        RESNET_CIFAR,
    ),
]
