"""The statements of Jacot, Súkeník, Wang & Mondelli, *Wide Neural Networks Trained with Weight
Decay Provably Exhibit Neural Collapse* (ICLR 2025), from ``papers/004_9ba4ea23ea7ac53f.txt``:
Theorem 3.1's bounds, Section 4's end-to-end NC1 (Theorem 4.4, Proposition 4.5), Section 5's
conditioning results, §6's observations and Appendices A-C.

§6's text describes Fig. 1 as ResNet20 on CIFAR-10 while its caption describes a 9-layer MLP on
MNIST (App. A's Fig. 4 is that MLP): the claims keep both (``jacot/fig1-resnet20``,
``jacot/fig1-mlp``).

Length: a declaration per statement of the paper (its theorems, propositions, the lemmas of its appendices and §6's observations), no logic.
"""

from __future__ import annotations

from .base import NOT_TESTABLE, PROOF, claim_ids, covered, uncovered

P = "jacot"
FIG1, FIG1_RN, FIG2, FIG2_RN = claim_ids(
    P, "fig1-mlp", "fig1-resnet20", "fig2-depth", "fig2-depth-resnet20"
)
FIG3, RATE, COND, NTK, EOS, THM31 = claim_ids(
    P,
    "fig3-nonlinear-depth",
    "balancedness-rate",
    "conditioning-minimiser",
    "ntk-bound",
    "edge-of-stability",
    "thm31-nc2-nc3",
)
#: the new claims of issue 26 (:mod:`nclab.reproduce.claims.jacot_inventory`)
FIG1_NC3, FIG1_PLATEAU, FIG2_NC1, FIG3_LAST, FIGA5 = claim_ids(
    P,
    "fig1-nc3",
    "fig1-balancedness-plateau",
    "fig2-nc1-depth",
    "fig3-last-negativity",
    "figA5-resnet20-mnist",
)
#: the claims of :mod:`nclab.reproduce.claims.jacot_dynamics`
TIME, THM44_NC1 = claim_ids(P, "thm44-time", "thm44-nc1")
#: issue 50: phase 1 of Theorem 4.4's proof (:mod:`nclab.reproduce.claims.jacot_phase1`) and the
#: sentence after Theorem 5.2 (:mod:`nclab.reproduce.claims.jacot_composed`)
PROP45, PHASE1, THM52_NC = claim_ids(P, "prop45-inequality", "thm44-phase1", "thm52-nc")
#: Proposition 5.3's cap on the learning rate (:mod:`nclab.reproduce.claims.jacot_beyond`)
LR = f"{P}/lr-upper-bound"
LR_DEPTH = f"{P}/lr-scales-with-depth"

STATEMENTS = [
    # --- §1, the contributions (the paper's own summary; added in issue 50) --------------------
    covered(
        f"{P}:intro-nc1",
        "summary",
        "§1, contributions (first)",
        "First, we show that within-class variability collapse (i.e., NC1) occurs, as long as the "
        "training error is low and the linear layers are approximately balanced",
        THM31,
        FIG1,
    ),
    covered(
        f"{P}:intro-nc2-nc3-depth",
        "summary",
        "§1, contributions (first)",
        "This implies that, as the number of linear layers grows, class means become orthogonal "
        "and, furthermore, they align with the last layer’s row vectors, which proves both NC2 "
        "and NC3.",
        THM31,
        FIG2,
    ),
    covered(
        f"{P}:intro-gd",
        "summary",
        "§1, contributions (second)",
        "Next, we show that the sufficient conditions above for NC1 are satisfied by a class of "
        "deep networks with a wide first layer, smooth activations and pyramidal topology, after "
        "gradient training with weight decay.",
        THM44_NC1,
        RATE,
    ),
    covered(
        f"{P}:intro-well-conditioned",
        "summary",
        "§1, contributions (third)",
        "either the network approaches a global optimum of the $\\ell_{2}$ -regularized square "
        "loss, or it nearly interpolates the data while being stable under large learning rates.",
        COND,
        NTK,
        EOS,
    ),
    covered(
        f"{P}:intro-experiments",
        "summary",
        "§1, contributions (fourth)",
        "(i) NC2 is more prominent as the depth of the linear head increases, and (ii) the final "
        "linear layers are balanced at convergence. Furthermore, we show that, as the non-linear "
        "part of the network gets deeper, the non-negative layers become less non-linear and "
        "more balanced.",
        FIG2,
        FIG1,
        FIG3,
    ),
    # --- §3 Theorem 3.1 -----------------------------------------------------------------------
    covered(
        f"{P}:thm3.1-nc1",
        "theorem",
        "§3, Theorem 3.1, bound (2)",
        "In words, (2) shows that, when $\\epsilon_{1},\\epsilon_{2}\\approx 0$ (i.e., the "
        "network approximately interpolates the data in a balanced way), "
        "$\\Psi(\\epsilon_{1},\\epsilon_{2},r)\\approx 0$ and the within-class variability "
        "(which captures NC1) vanishes.",
        THM31,
        FIG1,
    ),
    covered(
        f"{P}:thm3.1-kappa",
        "theorem",
        "§3, Theorem 3.1, bound (3)",
        "If we additionally assume that the linear part of the network is not too "
        "ill-conditioned, i.e., $\\kappa(W_{L:L_{1}+1})\\leq c_{3}$ , then",
        THM31,
    ),
    covered(
        f"{P}:thm3.1-nc2-nc3",
        "theorem",
        "§3, Theorem 3.1, bounds (4)-(5)",
        "This implies that (i) $Z_{L-1}$ is also close to orthogonal (which captures NC2), and "
        "(ii) the weights in the last layer align with $Z_{L-1}$ (which captures NC3).",
        THM31,
        note="a misprint the code follows corrected (nclab.theory.bounds_theorem): bound (5) "
        "prints √K where its proof gives √N (‖((W_L')^+ - (W_L')ᵀ) Y‖_F <= (κ - 1/κ) √N)",
    ),
    covered(
        f"{P}:thm3.1-deep-head",
        "theorem",
        "§3, after Theorem 3.1",
        "If in addition the depth of the linear part of the network grows, the RHS of (3) "
        "approaches 1, i.e., the last weight matrix $W_{L}$ is close to orthogonal.",
        FIG2,
        FIG2_RN,
        note="tested through its consequence in §6: NC2 of the last layer improves with L2",
    ),
    # --- §4 gradient descent and NC1 ----------------------------------------------------------
    covered(
        f"{P}:thm4.4",
        "theorem",
        "§4, Theorem 4.4, bound (11)",
        "In words, if regularization and learning rate are small enough and we run GD for "
        "sufficiently long (as in (10)), then the within-class variability vanishes (as in (11)).",
        THM44_NC1,
        note="tested with (10)'s step-size condition replaced by the gradient flow it "
        "approximates: (10)'s own eta (~1e-38) and k (~1e45) cannot be run, so the flow is "
        "run for the time t* = lim_(eta -> 0) eta k of (10) (a stiff solver, checked against "
        "GD at a step and its half), on a network meeting Assumptions 4.1-4.3 with lambda at "
        "(10)'s bound; 'vanishes' is tested as NC1 at t* falling with every smaller (eps1, "
        "eps2) and ending two decades below its initial value, with (25)'s interpolation at "
        "t*; bound (11) itself is vacuous there (r of (12) ~ 6e8) and only a sanity check",
    ),
    covered(
        f"{P}:thm4.4-nc1-limit",
        "claim",
        "§4, after Theorem 4.4",
        "To interpret the result, note that the NC1 metric tends to $0$ (i.e., the collapse is "
        "perfect) as $\\epsilon_{1},\\epsilon_{2}\\to 0$ .",
        THM44_NC1,
        note="the same test as jacot:thm4.4's: NC1 at t* over a sweep of eps1 (eps2 = 0.1 "
        "eps1^2, lambda of order eps1^2), in the gradient-flow reading of (10)",
    ),
    covered(
        f"{P}:nc1-beyond-assumptions",
        "conjecture",
        "§4",
        "We expect that similar conditions – and, therefore, NC1 – also hold under minimal "
        "over-parameterization and for ReLU networks",
        FIG1,
        note="the §6 networks are ReLU MLPs: jacot/fig1-mlp's NC1 falls with their training",
    ),
    covered(
        f"{P}:thm4.4-phase1",
        "claim",
        "§4, proof sketch of Theorem 4.4",
        "The first phase lasts for logarithmic time in $1/\\lambda$ (or, equivalently, "
        "$1/\\epsilon_{1}$ ) and, here, the loss decreases exponentially fast",
        PHASE1,
        RATE,
        note="the time is tested over a sweep of λ on the Theorem 4.4 network (jacot/thm44-phase1: "
        "the first time C_λ falls to Prop. 4.5's level 2λm_λ, against (15)'s logarithmic time "
        "and as a function of log(1/λ)); jacot/balancedness-rate's 'loss first' on the "
        "linear-head network is a proxy for the phase, not its time",
    ),
    covered(
        f"{P}:thm4.4-phase2",
        "claim",
        "§4, after Proposition 4.5",
        "The second phase lasts for linear time in $1/\\lambda$ (or, equivalently in "
        "$1/\\epsilon_{1}^{2}$ ) and logarithmic time in $1/\\epsilon_{2}$ and, here, the weight "
        "matrices in the linear part of the network become balanced.",
        RATE,
    ),
    covered(
        f"{P}:balancedness-exponential",
        "claim",
        "§4, after Proposition 4.5; App. B (the recursion of D_l)",
        "decreases exponentially and the exponent scales with $1/\\lambda$ , which gives "
        "approximate balancedness",
        RATE,
    ),
    covered(
        f"{P}:thm4.4-time",
        "claim",
        "§4, after Theorem 4.4",
        "is of order $\\log(1/\\lambda)+\\log(1/\\epsilon_{2})/\\lambda$",
        TIME,
        note="the 1/λ and log(1/ε2)/λ dependence of the time to ε2-balancedness over a sweep "
        "of λ; the log(1/λ) term (phase 1) is jacot/balancedness-rate's",
    ),
    covered(
        f"{P}:prop4.5",
        "proposition",
        "§4, Proposition 4.5 (14)-(16)",
        "Then, in the same ball, $C_{\\lambda}(\\theta)$ satisfies the inequality",
        PROP45,
        note="both sides of (14) (and of the PL inequality (13) it assumes) at every step of the "
        "stiff solver along the gradient flow of the Theorem 4.4 network inside B(θ0, r0), with "
        "α and r0 in closed form from the proof of Theorem 4.4; (15)-(16) as the first time C_λ "
        "reaches 2λm_λ and the distance from θ0 there",
    ),
    uncovered(
        f"{P}:activation-7",
        "claim",
        "§4, activation (7)",
        "One can readily verify that the activation in (7) satisfies Assumption 4.2 and it "
        "uniformly approximates the ReLU function",
        PROOF,
        "a cited property (Nguyen & Mondelli, Lemma B.1); the pyramid-flow experiment uses (7) "
        "in closed form and tests/test_pyramid_flow.py checks it against quadrature and "
        "Assumption 4.2 (i)-(iii) on it (a unit test, not a run)",
    ),
    uncovered(
        f"{P}:assumption4.3-satisfiable",
        "claim",
        "§4, after Assumption 4.3",
        "We note that (9) can be satisfied by choosing a sufficiently small initialization for "
        "the second layer and a sufficiently large one for the remaining layers.",
        PROOF,
        "a remark on the theorem's hypotheses: jacot/thm44-nc1's network is initialised so "
        "(small second layer, the others large) and checks (9) as a sanity check",
    ),
    # --- §5 conditioning ----------------------------------------------------------------------
    covered(
        f"{P}:balanced-kappa",
        "claim",
        "§5",
        "which gives that $\\kappa(W_{L})=\\kappa(W_{L:L_{1}+1})^{\\frac{1}{L_{2}}}$",
        f"{P}/balanced-kappa",
    ),
    covered(
        f"{P}:prop5.1",
        "proposition",
        "§5.1, Proposition 5.1 (17)",
        "We first show that any set of parameters that approximately interpolate with small norm "
        "has bounded condition number.",
        COND,
    ),
    covered(
        f"{P}:thm5.2",
        "theorem",
        "§5.1, Theorem 5.2 (18)",
        "Then, at any global minimizer of the regularized loss",
        COND,
        note="misprints the code follows corrected (nclab.theory.jacot_conditioning): the "
        "statement's λ <= ε1²/(KL + c) is KL2 + c in its proof (the competitor's norm), and "
        "its κ(W_L) <= (…)^(K/L1) exp((…)/(2 L1)) has 1/L1 where balancedness gives "
        "κ(W_L) = κ(W_(L:L1+1))^(1/L2) (§5, balanced-kappa): nclab uses KL2 + c and 1/L2",
    ),
    covered(
        f"{P}:thm5.2-nc",
        "corollary",
        "§5.1, after Theorem 5.2",
        "This implies that the bounds on NC1, NC2 and NC3 in (2), (4) and (5), respectively, "
        "hold with $\\kappa(W_{L})$ upper bounded as above and $\\epsilon_{2}=0$ .",
        THM52_NC,
        note="(18)'s κ(W_L) bound fed into (2), (4), (5) with ε2 = 0 on the conditioning-minimiser "
        "network, both readings of (18)'s exponent (1/L2 as balancedness gives, 1/L1 as printed); "
        "at the presets' sizes (K = 2, L2 = 3) the composed bounds are loose by decades and (5) is "
        "vacuous (the claim's measured rows say by how much)",
    ),
    covered(
        f"{P}:thm5.2-width",
        "claim",
        "§5.1, after Theorem 5.2",
        "The assumption that the parameters of the nonlinear part can be chosen to fit the "
        "labels $Y$ is guaranteed for large enough width",
        COND,
    ),
    covered(
        f"{P}:edge-of-stability",
        "observation",
        "§5.2 (with Cohen et al., 2021)",
        "for large $\\eta$ (but not too large) the parameters naturally end up at the ‘edge of "
        "stability’",
        EOS,
    ),
    covered(
        f"{P}:hessian-ntk",
        "claim",
        "§5.2, eq. (19)",
        "at approximately interpolating points, we have",
        NTK,
        note="‖H C_λ(θ)‖_op = ‖Θ‖_op + O(ε1) + O(λ)",
    ),
    covered(
        f"{P}:prop5.3-kappa",
        "proposition",
        "§5.2, Proposition 5.3",
        "for any $M\\leq L_{2}$ , there is $\\ell\\in\\{L_{1}+1,\\dots,L_{1}+M\\}$ such that",
        NTK,
    ),
    covered(
        f"{P}:prop5.3-ntk",
        "proposition",
        "§5.2, Proposition 5.3, bound (20)",
        "Furthermore, any network that satisfies approximate interpolation and bounded weights "
        "is such that",
        NTK,
    ),
    covered(
        f"{P}:large-lr-conditioning",
        "claim",
        "§5.2, after Proposition 5.3",
        "Proposition 5.3 implies that there is a linear layer with bounded conditioning",
        EOS,
    ),
    covered(
        f"{P}:lr-upper-bound",
        "claim",
        "§5.2, after Proposition 5.3",
        "which implies that the learning rate must be smaller than",
        LR,
        LR_DEPTH,
        note="full-batch GD over steps from well below to far above the bound (nclab's loss: "
        "N K / 2 times the paper's bound); the bound holding is a sanity check, the statement's "
        "'cannot take any significantly larger learning rate' is read two ways: as the bound "
        "lying within a decade of the largest step that still eps1-interpolates stably "
        "(lr-upper-bound), and as that step falling like 1/L2 with the depth of the linear head "
        "(lr-scales-with-depth)",
    ),
    uncovered(
        f"{P}:lemma-c.1",
        "lemma",
        "App. C, Lemma C.1",
        "the gradient of the loss $\\nabla C_{0}(\\theta)$ is",
        PROOF,
        "the Lipschitz constant of the gradient used by Theorem 4.4",
    ),
    covered(
        f"{P}:lemma-c.2",
        "lemma",
        "App. C, Lemma C.2 (Theorem 3.1 opens with the same words)",
        "Lemma C.2. If the network satisfies … approximate balancedness $\\left\\|W_{\\ell+1}^{T}",
        f"{P}/lemma-c2",
    ),
    covered(
        f"{P}:gd-recursion",
        "claim",
        "App. B, proof of Theorem 4.4",
        "D_{\\ell}^{k+1}=(1-\\eta\\lambda)^{2}D_{\\ell}^{k}+",
        RATE,
        note="the per-step factor (1 - ηλ)² of the imbalance of consecutive linear layers",
    ),
    # --- §6 and App. A: experiments -----------------------------------------------------------
    covered(
        f"{P}:fig1-collapse",
        "observation",
        "§6, Fig. 1",
        "The plot clearly shows that the collapse is reached throughout the training.",
        FIG1,
        FIG1_RN,
        FIG1_NC3,
    ),
    covered(
        f"{P}:fig1-nc2-layers",
        "observation",
        "§6, Fig. 1",
        "We also see that the NC2 metric improves progressively with each layer of the linear "
        "head, as predicted by our theory.",
        FIG1,
        FIG1_RN,
    ),
    covered(
        f"{P}:fig1-gram",
        "observation",
        "§6, Fig. 1 (bottom)",
        "This effect is also clearly visible from the gram matrices of the class-means (bottom "
        "row of Figure 1), which rapidly converge towards the identity.",
        FIG1,
        FIG1_RN,
    ),
    uncovered(
        f"{P}:fig1-consistent",
        "remark",
        "§6",
        "We note that these findings are remarkably consistent across a wide variety of "
        "hyperparameter settings and architectures.",
        NOT_TESTABLE,
        "names no settings; the claims run the architectures and data sets the paper shows",
    ),
    covered(
        f"{P}:fig2-nc2-last",
        "observation",
        "§6, Fig. 2",
        "The plots clearly show that the NC2 significantly improves in the last layer as the "
        "depth of the linear head increases",
        FIG2,
        FIG2_RN,
    ),
    covered(
        f"{P}:fig2-head-input",
        "observation",
        "§6, Fig. 2",
        "while it gets slightly worse in the input layer to the linear head",
        FIG2,
        FIG2_RN,
    ),
    covered(
        f"{P}:fig2-nc1",
        "observation",
        "§6, Fig. 2",
        "The NC1 does not have a strong dependence with the number of layers.",
        FIG2_NC1,
    ),
    uncovered(
        f"{P}:fig2-variance",
        "remark",
        "§6, Fig. 2",
        "The relatively high variance of the results is due to averaging over rather strongly "
        "different weight decay values used per each depth.",
        NOT_TESTABLE,
        "an explanation of the figure's spread",
    ),
    covered(
        f"{P}:fig1-balancedness-falls",
        "observation",
        "§6, Fig. 1",
        "Figure 1 shows that the metric capturing the balancedness exponentially decreases",
        FIG1,
        note="fig1-mlp checks a fall by more than 4x, not its exponential shape",
    ),
    covered(
        f"{P}:fig1-balancedness-plateau",
        "observation",
        "§6, Fig. 1",
        "until it plateaus at a rather small value (due to the large learning rate) and then "
        "again it exponentially decreases at a smaller rate after reducing the learning rate",
        FIG1_PLATEAU,
    ),
    covered(
        f"{P}:fig1-nonlinear-plateau",
        "observation",
        "§6, Fig. 1",
        "The balancedness of non-linear layers instead plateaus at a significantly larger value.",
        FIG1,
    ),
    covered(
        f"{P}:fig3-balancedness",
        "observation",
        "§6, Fig. 3",
        "Balancedness clearly improves with depth, both on average per layer and in the most "
        "balanced layer.",
        FIG3,
    ),
    covered(
        f"{P}:fig3-min-negativity",
        "observation",
        "§6, Fig. 3",
        "the non-negativity of the layer that least uses the ReLU clearly decreases",
        FIG3,
    ),
    covered(
        f"{P}:fig3-mean-negativity",
        "observation",
        "§6, Fig. 3",
        "a decrease in the mean negativity is also reported (although less pronounced)",
        FIG3,
    ),
    covered(
        f"{P}:fig3-summary",
        "observation",
        "§6, Fig. 3",
        "these results suggest that the network tends to use non-linearities less as the depth "
        "increases and, in addition, it becomes more balanced",
        FIG3,
    ),
    covered(
        f"{P}:fig3-last-negativity",
        "observation",
        "§6, Fig. 3",
        "in order to fit the data, regardless of the depth, the last non-linear layer(s) always "
        "exhibit significant negativity, heavily relying on the ReLU",
        FIG3_LAST,
    ),
    covered(
        f"{P}:figA4-agrees",
        "observation",
        "App. A, Fig. 4 (MLP on MNIST)",
        "The plot fully agrees with the one in Figure 1 with ResNet20 training on CIFAR10 in "
        "every qualitative aspect",
        FIG1,
    ),
    covered(
        f"{P}:figA4-nc2",
        "observation",
        "App. A, Fig. 4",
        "the conclusion is that the NC is attained across different architectures and NC2 "
        "progressively improves as we get closer to the last layer of the DNN",
        FIG1,
        FIG1_RN,
    ),
    covered(
        f"{P}:figA5-resnet20-mnist",
        "observation",
        "App. A, Fig. 5 (ResNet20 on MNIST)",
        "Next, we extend Figure 2 with experiments on ResNet20 trained on MNIST, which are shown "
        "in Figure 5. As above, the results match the interpretations discussed in Section 6",
        FIGA5,
    ),
]
