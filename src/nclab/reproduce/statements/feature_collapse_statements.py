"""The statements of Laurent, von Brecht & Bresson, *Feature Collapse* (ICLR 2024), from
``papers/000_b6da5189c62ae581.txt``: §2's observations, §3's theorems, Appendix A's experiments
and the lemmas of Appendices B–H.

The extraction drops the hats and stars of the notation (h and h* both read ``h W,U``; the
figure captions tell them apart) and garbles formulas; quotes are cut to exact fragments.

Length: a declaration per statement of the paper (its appendix proves the three theorems through
some forty lemmas and claims), no logic.
"""

from __future__ import annotations

from .base import NOT_TESTABLE, PROOF, claim_ids, covered, uncovered

P = "feature-collapse"
FIG3, K50, FIG3_LN, FIG4A = claim_ids(P, "fig3", "k50", "fig3-ln", "fig4a")
FIG4BC, NO_WD, NO_WD_3, NO_WD_6A = claim_ids(
    P, "fig4b-vs-fig4c", "no-weight-decay", "no-wd-fig3", "no-wd-fig6a"
)
#: the new claims of issue 26 (:mod:`nclab.reproduce.claims.laurent_inventory`)
FIG3_PCA, FIG4A_LN, NO_WD_LOSS, THM2_LAMBDA, THM2_NORMS = claim_ids(
    P, "fig3-pca", "fig4a-h-star", "no-wd-loss", "thm2-lambda-bound", "thm2-norms"
)
#: issue 26's claims on statements that needed a new experiment or preset
FEW_FREQUENT = f"{P}/few-frequent-words"
FIG4B_MECHANISM = f"{P}/fig4b-mechanism"
NO_SPURIOUS, THM2_NATURAL = claim_ids(P, "no-spurious-minima", "thm2-lambda-natural")


def _proof(name: str, where: str, quote: str, why: str = "", kind: str = "lemma"):
    """A lemma or claim of the appendix's proofs."""
    return uncovered(
        f"{P}:{name}",
        kind,
        where,
        quote,
        PROOF,
        why or "a step of the proof of the theorem named in its location; the theorem is tested",
    )


def _tested(name: str, where: str, quote: str, *claims: str, kind: str = "lemma"):
    """A lemma or claim of the appendix's proofs that a computation tests directly (issue 50:
    :mod:`nclab.reproduce.claims.laurent_predictions`)."""
    return covered(f"{P}:{name}", kind, where, quote, *claims)


STATEMENTS = [
    # --- §1 the results in brief --------------------------------------------------------------
    covered(
        f"{P}:intro-ln-collapses",
        "summary",
        "§1 (i)",
        "If the network includes Layer Norm then feature collapse takes place.",
        FIG3_LN,
        FIG4BC,
    ),
    covered(
        f"{P}:intro-no-ln-fails",
        "summary",
        "§1 (ii)",
        "If the network does not include Layer Norm then feature collapse fails. … this failure "
        "stems from the fact that common tokens receive large embeddings and rare tokens receive "
        "small embeddings.",
        FIG4A,
        FIG4BC,
    ),
    # --- §2.1 uniform words -------------------------------------------------------------------
    covered(
        f"{P}:uniform-generalise",
        "observation",
        "§2.1 (nc=3, nw=1200, L=15, K=1000, nspl=5)",
        "We then train both networks h, h and evaluate their generalization performance; both "
        "achieve 100% accuracy on test points.",
        FIG3,
        FIG3_LN,
    ),
    covered(
        f"{P}:fig3-pca-words",
        "observation",
        "§2.1, Fig. 3 (top)",
        "The top singular values σ1 = 34.9, σ2 = 34.7 and σ3 = 0.001 associated with the PCA "
        "indicate that the word embeddings essentially live in a 2 dimensional subspace of R100",
        FIG3_PCA,
    ),
    covered(
        f"{P}:fig3-words-simplex",
        "observation",
        "§2.1, Fig. 3 (top)",
        "words from the same concept receive nearly identical embeddings, and these embeddings "
        "form an equilateral triangle or two-dimensional simplex",
        FIG3,
        K50,
    ),
    covered(
        f"{P}:fig3-pca-u",
        "observation",
        "§2.1, Fig. 3 (bottom)",
        "the singular values of the PCA (σ1 = 34.9, σ2 = 34.6 and σ3 = 0.0003) reveal … that the "
        "vectors uk,ℓessentially live in a two dimensional subspace of R100",
        FIG3_PCA,
    ),
    covered(
        f"{P}:fig3-u-collapse",
        "observation",
        "§2.1, Fig. 3 (bottom)",
        "The figure indicates that vectors uk,ℓthat correspond to a same concept collapse around "
        "a single vector.",
        FIG3,
    ),
    covered(
        f"{P}:fig3-h-star",
        "observation",
        "§2.1",
        "A similar analysis applied to the weights of the network h W,U tells the same story, "
        "provided we examine the actual word features (i.e. the embeddings after the Layer Norm)",
        FIG3_LN,
        note="h* (the hat is lost in the extraction)",
    ),
    covered(
        f"{P}:fig3-norm",
        "observation",
        "§2.1, Fig. 3",
        "the word embeddings in figure 3 have a norm equal to 1.41 0.13, while we predict a norm "
        "of 1.42214 theoretically",
        FIG3,
        note="1.41 ± 0.13 (the ± is lost in the extraction)",
    ),
    # --- §2.2 long-tailed words ---------------------------------------------------------------
    covered(
        f"{P}:zipf-large-generalise",
        "observation",
        "§2.2 (Zipf, nspl=500), Fig. 4a",
        "When trained on the large training set, both are 100% accurate at test time",
        FIG4A,
        FIG4A_LN,
    ),
    covered(
        f"{P}:zipf-small-generalise",
        "observation",
        "§2.2 (Zipf, nspl=5), Fig. 4b/4c",
        "The network h achieves a test accuracy of 45% while h remains 100% accurate.",
        FIG4BC,
        note="h and h* (the star is lost in the extraction)",
    ),
    covered(
        f"{P}:fig4a-directional",
        "observation",
        "§2.2, Fig. 4a",
        "we observe directional collapse of the embeddings, but the magnitudes do not collapse",
        FIG4A,
    ),
    covered(
        f"{P}:fig4a-frequency",
        "observation",
        "§2.2, Fig. 4a",
        "The most frequent words in a concept (e.g. potato) have the largest embeddings while "
        "the least frequent words (e.g. achojcha) have the smallest embeddings.",
        FIG4A,
    ),
    covered(
        f"{P}:fig4a-u",
        "observation",
        "§2.2, Fig. 4a",
        "the linear weights uk,ℓmostly concentrate around three well-defined, equi-angular "
        "locations; they collapse in both direction and magnitude",
        FIG4A,
    ),
    covered(
        f"{P}:fig4b-u-dispersed",
        "observation",
        "§2.2, Fig. 4b",
        "the linear weights uk,ℓremain dispersed and fail to collapse. This leads to poor "
        "generalization performance (45% accuracy at test time).",
        FIG4BC,
    ),
    covered(
        f"{P}:large-vs-small",
        "observation",
        "§2.2",
        "when the training set is large, the linear weights uk,ℓcollapse correctly and the "
        "network h W,U generalizes well. When the training set is small the linear weights fail "
        "to collapse, and the network fails to generalize.",
        FIG4A,
        FIG4BC,
    ),
    covered(
        f"{P}:fig4b-mechanism",
        "observation",
        "§2.2, Fig. 4b",
        "This leads to two vectors uk,1, uk,3 that code for the same concept but have different "
        "magnitudes (as seen on figure 4(b)), so features do not properly collapse.",
        FIG4B_MECHANISM,
        note="the norms of u_{k,ℓ} against the mean frequency of the words sampled at (k, ℓ)",
    ),
    covered(
        f"{P}:few-frequent-words",
        "remark",
        "§2.2",
        "If the data were dominated by a few very frequent words, then all rare words combined "
        "would just contribute small perturbations and would not adversely affect performance.",
        FEW_FREQUENT,
        note="h on Fig. 4b's small training set with μ_β ∝ β^-2 (our exponent), against the "
        "paper's law",
    ),
    covered(
        f"{P}:fig4c",
        "observation",
        "§2.2, Fig. 4c",
        "These word representations collapse both in direction and magnitude; they do not "
        "depend on word frequency since the Layer Norm forces vectors to have identical "
        "magnitude.",
        FIG4BC,
    ),
    # --- §3 theorems --------------------------------------------------------------------------
    covered(
        f"{P}:thm1",
        "theorem",
        "§3.1, Theorem 1 (App. E, Theorem E)",
        "Theorem 1 (Full Collapse of h). Assume uniform sampling µβ = 1/sc for each word "
        "distribution. … is a global minimizer of (5).",
        FIG3,
        K50,
        note="type-I collapse with c = √(τ/nw), c' = √(τ/(KL)), τ = argmin H",
    ),
    covered(
        f"{P}:thm1-converse",
        "theorem",
        "§3.1 (App. E, Theorem E, with Assumption B)",
        "any (W, U) that minimizes (5) must be in a type-I collapse configuration",
        FIG3,
        K50,
    ),
    covered(
        f"{P}:no-spurious-minima",
        "theorem",
        "§3.1; App. H, Theorem G",
        "if d > nw then R(W, U) does not have spurious local minimizers; all local minimizers "
        "are global",
        NO_SPURIOUS,
        note="many random starts of L-BFGS on the enumerated true risk (uniform words, K = "
        "nc^L, d > nw) against Theorem 1's value; App. H states it for d > min(nw, KL)",
    ),
    covered(
        f"{P}:thm1-moderate-sizes",
        "observation",
        "§3.1",
        "these solutions still provide valuable predictions when K and nspl have small to",
        FIG3,
        K50,
    ),
    covered(
        f"{P}:k50-norm",
        "observation",
        "§3.1 (K=50, nspl=100)",
        "the theorem predicts that words embeddings should have norm 0.61602. This compares well "
        "against the values 0.61 0.06 observed in experiments.",
        K50,
    ),
    covered(
        f"{P}:frequent-larger",
        "proposition",
        "§3.1 (eq. (7)); App. G.2, Proposition D",
        "The left hand side of (7) is an increasing function of rβ, so µβ < µβ implies rβ < rβ "
        "and more frequent words receive larger embeddings.",
        FIG4A,
        f"{P}/frequent-larger-thm2",
        note="fig4a's λ is above Theorem 2's bound read with K = nc^L, so there it is an "
        "extrapolation; frequent-larger-thm2 tests it where Theorem 2 applies (thm2-small)",
    ),
    _tested(
        "system-unique",
        "§3.1; App. G.2, Proposition D",
        "If the regularization parameter λ is small enough, namely λ2 < L n L+1 c Psc β=1 µ2 β, "
        "then (7) (8) has a unique solution.",
        f"{P}/system-unique",
        kind="proposition",
    ),
    covered(
        f"{P}:thm2",
        "theorem",
        "§3.1, Theorem 2 (App. G)",
        "Then (W, U) is a critical point of the true risk (5) if and only if (c, r1, . . . , rsc) "
        "solve the system (7) (8).",
        THM2_NORMS,
        note="at a size where it applies (nc = 3, L = 3, K = 27): the paper's own runs have "
        "K = 1000 ≠ 3^15",
    ),
    covered(
        f"{P}:thm2-type-I-never-critical",
        "corollary",
        "§3.1, after Theorem 2",
        "a network exhibiting type-I collapse is never critical if the word distributions are "
        "non-uniform",
        FIG4A,
        note="tested through its empirical side: with Zipf words h ends type-III, not type-I",
    ),
    covered(
        f"{P}:thm2-conjecture",
        "conjecture",
        "§3.1, after Theorem 2",
        "While we conjecture global optimality of the solutions in theorem 2 under appropriate "
        "symmetry assumptions, we have no proof of this yet.",
        THM2_NORMS,
        note="evidence, not proof: L-BFGS from a random start on the empirical risk ends at the "
        "type-III point (tests/test_theory_fc.py: the same on the exact true risk)",
    ),
    covered(
        f"{P}:thm2-lambda-natural",
        "remark",
        "§3.1, after Theorem 2",
        "if λ is too large the trivial solution (W, U) = (0, 0) is the only one",
        THM2_NATURAL,
        note="random starts on the enumerated true risk (Zipf words, K = nc^L) at 1.2 and 0.8 "
        "times the bound, which is the exact threshold ‖∇f(0)‖_op there",
    ),
    covered(
        f"{P}:thm2-lambda-satisfied",
        "remark",
        "§3.1, after Theorem 2",
        "In our experiments, λ satisfies this bound.",
        THM2_LAMBDA,
    ),
    covered(
        f"{P}:thm3",
        "theorem",
        "§3.1, Theorem 3 (App. F, Theorem F)",
        "Theorem 3 (Full Collapse of h ). Assume the non-degenerate condition µβ > 0 holds. … "
        "KL is a global minimizer of (9).",
        FIG3_LN,
        FIG4BC,
        f"{P}/thm3-zipf-constant",
        note="type-II collapse of h* with c = τ*/√(KL), any word frequencies: c is checked with "
        "uniform words (fig3-ln) and Zipf words (thm3-zipf-constant, fig4c's h*)",
    ),
    covered(
        f"{P}:thm3-converse",
        "theorem",
        "§3.1 (App. F, Theorem F, with Assumption B)",
        "Any (W, U) that minimizes (9) must be in a type-II collapse configuration",
        FIG3_LN,
        FIG4BC,
    ),
    covered(
        f"{P}:no-wd-no-minimum",
        "remark",
        "§2, remark",
        "Without weight decay (i.e. λ = 0), the above objectives typically do not have global "
        "minima.",
        f"{P}/no-wd-norms-grow",
        note="a fact about infima; what it predicts for a run is that the weights keep growing "
        "while the loss falls (no limit is reached), against runs with weight decay that settle",
    ),
    # --- Appendix A ---------------------------------------------------------------------------
    covered(
        f"{P}:a1-same-picture",
        "observation",
        "App. A.1, Figs. 5-6",
        "These figures are virtually identical to Figures 3 and 4 in the main paper.",
        NO_WD_3,
        NO_WD_6A,
        NO_WD,
    ),
    covered(
        f"{P}:a1-loss",
        "observation",
        "App. A.1",
        "After training, the empirical losses for all networks are below 10 4.",
        NO_WD_LOSS,
        note="below 1e-4 (the exponent's minus is lost in the extraction), after 5 million SGD "
        "iterations",
    ),
    covered(
        f"{P}:a1-fig6a",
        "observation",
        "App. A.1, Fig. 6a (Fig. 4a's caption repeats the words: the quote runs into 6b's)",
        "(a) h trained on the large training set. Test acc. = 100% (b) h trained on the small "
        "training set. Test acc. = 66%",
        NO_WD_6A,
    ),
    covered(
        f"{P}:a1-fig6b",
        "observation",
        "App. A.1, Fig. 6b",
        "(b) h trained on the small training set. Test acc. = 66%",
        NO_WD,
        note="h-test-acc-paper: h's accuracy within 5 points (our tolerance) of the 66 %",
    ),
    covered(
        f"{P}:a1-fig6c",
        "observation",
        "App. A.1, Fig. 6c (Fig. 4c's caption repeats the words: the quote runs into Fig. 6's "
        "title)",
        "(c) h trained on the small training set. Test acc. = 100% Figure 6: Same experiments as "
        "in Figure 4 but with no weight decay.",
        NO_WD,
        note="h* (Fig. 6c)",
    ),
    covered(
        f"{P}:a2-learnable-ln",
        "observation",
        "App. A.2, Fig. 7",
        "one can clearly observe that feature collapse does occur in this setting as well",
        f"{P}/learnable-ln",
    ),
    uncovered(
        f"{P}:a2-sphere-aids",
        "remark",
        "App. A.2",
        "When the Layer Norm module has no learnable weights, the word embeddings must lie on a "
        "sphere of constant radius. This constraint aids collapse.",
        NOT_TESTABLE,
        "an explanation; both LayerNorm kinds are tested (fig4b-vs-fig4c, learnable-ln)",
    ),
    covered(
        f"{P}:a3-transformer",
        "observation",
        "App. A.3, Fig. 8a/8b",
        "We observe that the word embeddings, in both the uniform and long-tail case, are "
        "properly collapsed.",
        f"{P}/a3-transformer-uniform",
        f"{P}/a3-transformer-zipf",
    ),
    covered(
        f"{P}:a4-language-model",
        "observation",
        "App. A.4, Fig. 8c",
        "we observe that they are they are properly collapsed",
        f"{P}/a4-gpt-lm",
    ),
    covered(
        f"{P}:a5-grammar",
        "observation",
        "App. A.5, Fig. 11",
        "All segments of the input sentence that correspond to same concept, meta-concept, or "
        "meta-meta-concept receive the same representations in the appropriate layer of the "
        "network",
        f"{P}/a5-cfg-depth4",
    ),
    uncovered(
        f"{P}:a5-general",
        "remark",
        "App. A.5",
        "This shows that the feature collapse phenomenon is a general one.",
        NOT_TESTABLE,
        "a generalisation beyond any setting a run could fix",
    ),
    # --- Appendices B-H: the proofs -----------------------------------------------------------
    _proof(
        "lemma-a",
        "App. B.2, Lemma A",
        "Lemma A. Suppose A Rm n, B Rm r and C Rr n. Then",
        "an identity of the trace (⟨A, BC⟩ = ⟨BᵀA, C⟩ = ⟨ACᵀ, B⟩) true of any matrices: it says nothing about the paper's networks that float arithmetic could test",
    ),
    _tested(
        "lemma-b",
        "App. C.1, Lemma B",
        "Lemma B. Suppose the latent variables z1, . . . , z K satisfy the symmetry assumption A.",
        f"{P}/lemma-b",
    ),
    _tested(
        "lemma-c",
        "App. C.2, Lemma C",
        "Lemma C. Suppose K = n L c and {z1, . . . , z K} = Z. Then z1, . . . , z K satisfy the "
        "symmetry assumption B.",
        f"{P}/lemma-c",
    ),
    covered(
        f"{P}:c2-assumption-b-mild",
        "remark",
        "App. C.2",
        "This assumption, as we will shortly see, is quite mild and is typically satisfied even "
        "for small values of K.",
        f"{P}/assumption-b-mild",
        note="the text repeats it after (43): 'This number of quadruplets is easily achieved "
        "even for small values of K. So assumption B is quite mild.'",
    ),
    _tested(
        "theorem-d",
        "App. D, Theorem D",
        "Theorem D. If the latent variables satisfy the symmetry assumption A, then",
        f"{P}/theorem-d",
        kind="theorem",
    ),
    _tested(
        "lemma-d",
        "App. D.1, Lemma D",
        "Lemma D. If |Sr(k)| = |Sr(j)| for all j, k [K]",
        f"{P}/lemma-d",
    ),
    _tested(
        "lemma-e",
        "App. D.1, Lemma E",
        "Lemma E. Assume that the latent variables satisfy the symmetry assumption A. Then",
        f"{P}/lemma-e",
    ),
    covered(
        f"{P}:theorem-e",
        "theorem",
        "App. E, Theorem E",
        "Theorem E. Assume uniform sampling µβ = 1/sc for each word distribution.",
        FIG3,
        K50,
        note="Theorem 1 with its converse",
    ),
    _tested(
        "lemma-f",
        "App. E.1, Lemma F",
        "Lemma F. Assume the latent variables satisfy assumption A. Then (W, U) is a solution of "
        "the optimization problem (64) (65) if and only if it belongs to the set",
        f"{P}/lemma-f-bilinear",
    ),
    _tested(
        "claim-a",
        "App. E.1, Claim A",
        "Claim A. If (W, ˆU) BI c, then",
        f"{P}/lemma-f-bilinear",
        kind="claim",
    ),
    _proof(
        "claim-b",
        "App. E.1, Claim B",
        "Claim B. If (W, U) is a solution of (68) (69), then",
        "a step inside the proof of Lemma F (the bilinear problem's maximisers); the conclusion it serves, Lemma F, is computed (feature-collapse/lemma-f-bilinear)",
        kind="claim",
    ),
    _proof(
        "claim-c",
        "App. E.1, Claim C",
        "Claim C. If (W, ˆU) is a solution of (71) (72), then (W, ˆU) BI c.",
        "a step inside the proof of Lemma F (the bilinear problem's maximisers); the conclusion it serves, Lemma F, is computed (feature-collapse/lemma-f-bilinear)",
        kind="claim",
    ),
    _tested(
        "proposition-a",
        "App. E.2, Proposition A",
        "any (W, U) that minimizes R must belong to ΩI c for some c R.",
        f"{P}/proposition-a",
        kind="proposition",
    ),
    _tested(
        "lemma-g",
        "App. E.2 (proof of collapse, for Proposition A), Lemma G",
        "Lemma G. Any global minimizer of (80) must belong to N.",
        f"{P}/lemma-g",
        f"{P}/lemma-g-trained",
    ),
    _tested(
        "lemma-h",
        "App. E.2, Lemma H",
        "Lemma H. Assume the latent variables satisfy assumption A. Assume also that (W , U ) is a "
        "global minimizer of (80)",
        f"{P}/lemma-h-o",
    ),
    _tested(
        "lemma-i",
        "App. E.2, Lemma I",
        "Lemma I. If the latent variables satisfy the symmetry assumption A, then",
        f"{P}/lemma-i-p",
    ),
    _tested(
        "lemma-j",
        "App. E.2, Lemma J",
        "Lemma J. If the latent variables satisfy assumptions A and B, then",
        f"{P}/lemma-j",
    ),
    _tested(
        "lemma-k",
        "App. E.3, Lemma K",
        "Lemma K. Assume the latent variables satisfy assumption A. If the pair of weights (W, U) "
        "belongs to ΩI c, then",
        f"{P}/lemma-k",
    ),
    _proof(
        "remark-e3",
        "App. E.3, remark",
        "In the previous subsections, we only relied on relations (i), (ii) and (iii) of lemma B "
        "to prove collapse. Assumption A was never fully needed.",
        "a remark on which hypotheses the proofs use (Lemma B's relations, not all of assumption A); it predicts nothing about the risk or a run",
        kind="remark",
    ),
    covered(
        f"{P}:theorem-f",
        "theorem",
        "App. F, Theorem F",
        "Theorem F. Assume the non-degenerate condition µβ > 0 holds.",
        FIG3_LN,
        FIG4BC,
        note="Theorem 3 with its converse",
    ),
    _proof(
        "lemma-l",
        "App. F, Lemma L",
        "Lemma L. Given a pair of weights (W, U), we have",
        "a rewriting of h*'s risk through the word representations, used by Theorem F's proof; the risk it leads to, Lemma R's closed form (123), is computed (feature-collapse/lemma-r)",
    ),
    _proof(
        "lemma-m",
        "App. F.1, Lemma M",
        "Lemma M. Assume the latent variables satisfy assumption A. Then (V, U) is a solution of "
        "the optimization problem (96) (97) if and only if it belongs to the set",
        "the h* analogue of Lemma F (the bilinear problem of App. F.1), not computed separately: its consequence, Proposition B, is tested on the minimisers (feature-collapse/proposition-b)",
    ),
    _proof(
        "claim-d",
        "App. F.1, Claim D",
        "Claim D. If (V, U) BII c , then",
        "a step of Lemma M's proof; Lemma M's consequence, Proposition B, is tested (feature-collapse/proposition-b)",
        kind="claim",
    ),
    _proof(
        "claim-e",
        "App. F.1, Claim E",
        "Claim E. If (V, ˆU) is a solution of (96) (97), then (V, ˆU) BII c .",
        "a step of Lemma M's proof; Lemma M's consequence, Proposition B, is tested (feature-collapse/proposition-b)",
        kind="claim",
    ),
    _tested(
        "proposition-b",
        "App. F.2, Proposition B",
        "any (W, U) that minimizes R must belong to ΩII c for some c R.",
        f"{P}/proposition-b",
        kind="proposition",
    ),
    _tested(
        "lemma-n",
        "App. F.2 (proof of collapse, for Proposition B), Lemma N",
        "Lemma N. Any global minimizer of (114) must belong to N.",
        f"{P}/lemma-n",
        f"{P}/lemma-n-trained",
    ),
    _tested(
        "lemma-o",
        "App. F.2, Lemma O",
        "Lemma O. Assume the latent variables satisfy assumption A. Assume also that (W , U ) is a "
        "global minimizer of (114)",
        f"{P}/lemma-h-o",
    ),
    _tested(
        "lemma-p",
        "App. F.2, Lemma P",
        "Lemma P. If the latent variables satisfy the symmetry assumption A, then",
        f"{P}/lemma-i-p",
    ),
    _proof(
        "lemma-q",
        "App. F.2, Lemma Q",
        "Lemma Q. If the latent variables satisfy assumptions A and B, then",
        "the h* analogue of Lemma J (computed for h: feature-collapse/lemma-j); its conclusion, that the minimisers are type II, is tested (feature-collapse/proposition-b)",
    ),
    _tested(
        "lemma-r",
        "App. F.3, Lemma R",
        "Lemma R. Assume the latent variables satisfy assumption A. If the pair of weights (W, U) "
        "belongs to ΩII c , then",
        f"{P}/lemma-r",
    ),
    _proof(
        "lemma-s",
        "App. G.1, Lemma S",
        "Lemma S. The partial derivatives of R0 with respect to uk,ℓand w(α,β) are given by",
        "the gradient of R0 (the chain rule), a step of Proposition C, whose conclusion is computed (feature-collapse/proposition-c)",
    ),
    _tested(
        "proposition-c",
        "App. G.1, Proposition C",
        "Proposition C. Suppose K = n L c and {z1, . . . , z K} = Z. If the weights (W, U) are in "
        "a type-III collapse configuration",
        f"{P}/proposition-c",
        kind="proposition",
    ),
    _proof(
        "lemma-t",
        "App. G.1, Lemma T",
        "Lemma T. The quantity Φ(α ,β ),(k,ℓ)(W, U) can be expressed as",
        "a step of Proposition C's gradient computation, whose conclusion is computed (feature-collapse/proposition-c)",
    ),
    _proof(
        "lemma-u",
        "App. G.1, Lemma U",
        "Lemma U. Assume K = n L c and {z1, . . . , z K} = Z. Assume also that the weights (W, U) "
        "are in a type-III collapse configuration",
        "a step of Proposition C's gradient computation, whose conclusion is computed (feature-collapse/proposition-c)",
    ),
    _proof(
        "lemma-v",
        "App. G.1, Lemma V",
        "Lemma V. Assume K = n L c and {z1, . . . , z K} = Z. Assume also that the weights (W, U) "
        "are in a type-III collapse configuration",
        "a step of Proposition C's gradient computation, whose conclusion is computed (feature-collapse/proposition-c)",
    ),
    _proof(
        "lemma-w",
        "App. G.1, Lemma W",
        "Lemma W. Assume K = n L c and {z1, . . . , z K} = Z. Assume also that the weights (W, U) "
        "are in a type-III collapse configuration",
        "a step of Proposition C's gradient computation, whose conclusion is computed (feature-collapse/proposition-c)",
    ),
    _proof(
        "claim-f",
        "App. G.2, Claim F",
        "Claim F. The function ϕβ : [0, + ) (0, + ) is continuous, strictly decreasing",
        "a property of the function φ_β inside the proof of Proposition D, whose conclusion (one solution of (7)-(8) from every start) is computed (feature-collapse/system-unique)",
        kind="claim",
    ),
    _proof(
        "claim-g",
        "App. H, Claim G",
        "Claim G. For all A Rd m and B Rd n, we have that ψ(AT B) φ(A, B).",
        "a step of Theorem G (the nuclear-norm inequality behind it), which feature-collapse/no-spurious-minima tests",
        kind="claim",
    ),
    _proof(
        "claim-h",
        "App. H, Claim H",
        "Claim H. Suppose (A, B) is a critical point of φ which satisfies",
        "a step of Theorem G (a property of its critical points), which feature-collapse/no-spurious-minima tests",
        kind="claim",
    ),
    _proof(
        "claim-i",
        "App. H, Claim I",
        "Claim I. Suppose (A, B) is a critical point of φ which satisfies",
        "a step of Theorem G (a property of its critical points), which feature-collapse/no-spurious-minima tests",
        kind="claim",
    ),
]
