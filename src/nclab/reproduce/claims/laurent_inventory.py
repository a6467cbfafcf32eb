"""Claims of *Feature Collapse* (Laurent, von Brecht & Bresson, ICLR 2024) that the statement
inventory (:mod:`nclab.reproduce.statements.feature_collapse_statements`) found untested: the numbers of
Fig. 3's PCA, h* on the large Zipf training set, App. A.1's final losses, whether the paper's
λ satisfies Theorem 2's bound, §2.2's remark on a few very frequent words, and two statements on
the true risk that the ``fc-landscape`` experiment tests (App. H's absence of spurious local
minimisers; §3.1's zero solution above Theorem 2's bound). What the paper reports is read from
the experiment's ``PAPER``.

Length: nine claims, each with its checks and where their thresholds come from.
"""

from __future__ import annotations

from dataclasses import replace

from ...experiments.fc_landscape.config import FLOAT_FLOOR
from ...experiments.feature_collapse.presets import PAPER as REPORTED
from ...verdicts import Diagnosis, DiagnosisKind
from ..checks import Check, Equals, Principle, Ratio, ours, sanity, to_precision
from ..registry import Claim, RunSpec
from .laurent import (
    _ACC,
    ACC_WHY,
    EXP,
    NO_WD,
    NO_WD_GPU_SECONDS,
    THM2_SMALL,
    _acc,
    _percent,
    _run,
    _spec,
    _theorem,
    fc_claim,
)

_FIG3 = REPORTED["fig3"]
#: the paper prints σ3 to one significant digit (0.001, 0.0003): the checks allow σ3 up to 1.5x the
#: printed value (our margin for its rounding) against the printed σ1
ROUNDING = 1.5


def _pca_check(panel: str, label: str) -> Check:
    """σ3/σ1 of a PCA panel at most the paper's (its σ3 read at its printed precision)."""
    s1, _, s3 = _FIG3[f"pca_{panel}"]
    bound = ROUNDING * s3 / s1
    return Check(
        f"{label}: σ3/σ1 <= the paper's {s3:g}/{s1:g} (σ3 up to {ROUNDING:g}x its printed digit)",
        path=f"pca_singular_values.{panel}_third_over_first",
        op="<=",
        value=bound,
        name=f"{panel}-sigma3",
        source=f"§2.1, Fig. 3: its printed σ3 / σ1, σ3 allowed up to {ROUNDING:g}x its printed digit "
        "(our margin for the rounding)",
    )


#: Theorem 2's norms against the trained network's (ours: the empirical risk samples the word
#: frequencies the true risk has exactly)
NORM_TOL = 0.05
#: why Theorem 2's norms are held to NORM_TOL
NORM_WHY = ours(
    Principle.THEORY,
    "Theorem 2's norms minimise the true risk; 5 % is our tolerance for the empirical risk, "
    "whose sampled word frequencies differ from the true ones (the paper runs no such case)",
)

_A1_LOSS = REPORTED["no-wd-fig3"]["train_loss_max"]


def _loss_check(alias: str) -> Check:
    return Check(
        f"{alias}: final training loss (cross-entropy) < {_A1_LOSS:g}",
        path=f"{alias}:train_loss",
        op="<",
        value=_A1_LOSS,
        name=f"{alias}-loss",
        source="App. A.1: 'the empirical losses for all networks are below' the stated bound",
        min_scale="full",
        scale_why="the loss after the paper's 5 million SGD iterations: without weight decay it "
        "keeps falling, so a run of a fraction of them (the quick and medium presets: 2.4-4.8 %) "
        "cannot test the bound",
    )


_FIG4B = REPORTED["fig4b"]
LANDSCAPE = "fc-landscape"
_NO_LANDSCAPE_RUN = (
    "the paper proves this and runs no experiment on it; the presets enumerate the true risk of "
    "a problem of all K = nc^L latent variables small enough for it"
)


def _landscape(preset: str) -> RunSpec:
    """The ``fc-landscape`` run of ``preset`` (``<preset>-quick`` at quick scale)."""
    return RunSpec(LANDSCAPE, quick=f"{preset}-quick", full=preset, no_paper=_NO_LANDSCAPE_RUN)


#: why the gap tolerance is what it is (fc-landscape's train module derives it)
GAP_WHY = ours(
    Principle.THEORY,
    "derived from the optimiser's stopping rule max |∇R| <= g: near a minimiser whose smallest "
    "non-flat Hessian eigenvalue is μ (computed at the theory's point), R - R* <= n g² / (2μ); "
    f"plus {FLOAT_FLOOR:g} |R*| for the float64 evaluation of the risk",
)
ZERO_WHY = ours(
    Principle.THEORY,
    "derived from the stopping rule: at λ > λ0 the Hessian at (0, 0) has eigenvalues λ ± "
    "σ_i(∇f(0)), so μ = λ - λ0 and a point with max |∇R| <= g is within √n g / μ of (0, 0)",
)
#: 'not zero' below the bound, made a number
NONZERO = 0.5


def _converged(alias: str) -> Check:
    return sanity(
        Check(
            f"{alias}: every start met the stopping rule max |∇R| <= grad_tol",
            path=f"{alias}:main.converged_fraction",
            op=">=",
            value=1.0,
            name=f"{alias}-converged",
            ours=ours(
                Principle.THEORY,
                "the tolerances hold at points that meet the stopping rule: every start must",
            ),
        )
    )


def _closed_form(alias: str) -> Check:
    return sanity(
        Check(
            f"{alias}: the true risk at the theory's point equals its closed form",
            path=f"{alias}:main.global_risk_evaluated",
            op="~",
            ref=f"{alias}:main.global_objective",
            rtol=1e-10,
            name=f"{alias}-closed-form",
            ours=ours(
                Principle.NUMERICAL,
                "an identity (Theorem 1 / 2's risk formula against the enumerated risk), to "
                "float64 precision with room",
            ),
        )
    )


#: where the paper says λ satisfies Theorem 2's bound
_BOUND_SAID = (
    "§3.1, after Theorem 2: 'In our experiments, λ satisfies this bound' (a ratio below 1)"
)
#: the settings Theorem 2's bound is arithmetic on (the length, the optimiser, the sample and
#: the width do not enter it; the literal reading does not read K either)
_BOUND_SETTINGS = (
    "data.nc",
    "data.L",
    "data.nw",
    "data.freq",
    "data.zipf_s",
    "train.weight_decay",
    "train.weight_decay_w",
)


#: the steeper law of the few-frequent-words claim (the fig4b-steep presets)
STEEP_S = 2.0


CLAIMS: list[Claim] = [
    fc_claim(
        "fig3-pca",
        "§2.1, Fig. 3 (the PCA's singular values)",
        "With uniform words, h's word embeddings and its vectors u_{k,ℓ} essentially live "
        f"in a plane: the PCA's singular values are {', '.join(f'{v:g}' for v in _FIG3['pca_words'])} "
        f"(words) and {', '.join(f'{v:g}' for v in _FIG3['pca_u'])} (u).",
        runs=_run("fig3"),
        measured={
            "words: σ3/σ1": "pca_singular_values.words_third_over_first",
            "u: σ3/σ1": "pca_singular_values.u_third_over_first",
            **_ACC,
        },
        paper_values={
            "words: σ1, σ2, σ3": ", ".join(f"{v:g}" for v in _FIG3["pca_words"]),
            "u: σ1, σ2, σ3": ", ".join(f"{v:g}" for v in _FIG3["pca_u"]),
        },
        checks=[_pca_check("words", "word embeddings"), _pca_check("u", "vectors u_{k,ℓ}")],
        quick_seconds=5,
        full_seconds=1800,  # 10 ms a step (K=1000, d=100, one core) x steps x 3 seeds
        note="σ3/σ1 compares runs of any size (σ1 grows with the number of vectors and their "
        "norm): the quick run has 300 words, the paper 1200. Theorem 1's minimiser has σ3 = 0; "
        "the threshold is the paper's reported value, not ours, and docs/feature-collapse.md "
        "records σ3 = 0.18 for the faithful SGD run (0.011 for L-BFGS to convergence).",
        diagnosis={
            "full": Diagnosis(
                DiagnosisKind.PAPER_FAILS,
                f"the paper prints σ3 = {_FIG3['pca_words'][2]:g} (words) and "
                f"{_FIG3['pca_u'][2]:g} (u); the authors' own notebook "
                "for Fig. 3 (reproduce_fig3.ipynb in xbresson/feature_collapse, committed with "
                "its outputs, the paper's settings and 1200 epochs) prints σ = 35.05, 34.46, "
                "0.1841 (words) and 35.07, 34.48, 0.1842 (u), and our 3 faithful seeds give "
                "σ3 = 0.181-0.200 with σ1, σ2 = 34.0-35.5: the printed σ3 is not what the paper's "
                "own code produces. The 2-D picture stands (σ3/σ1 = 0.0054): the miss is the "
                "printed number, not the collapse.",
                ("feature-collapse fig3", "external:feature-collapse/authors-notebooks"),
            )
        },
    ),
    fc_claim(
        "fig4a-h-star",
        "§2.2 (Zipf words, the large training set)",
        "With Zipf word frequencies and the large training set (500 sentences per class) "
        f"h* (LayerNorm) is also {REPORTED['fig4a-ln']['test_acc']:.0%} accurate at test time.",
        runs=_run("fig4a-ln"),
        measured={**_ACC, "collapse type": "collapse_type"},
        paper_values={"test accuracy": REPORTED["fig4a-ln"]["test_acc"]},
        checks=[_acc()],
        quick_seconds=10,
        full_seconds=2400,  # 10 ms a step (K=1000, d=100, one core) x steps x 3 seeds + measuring
        note="the paper shows no figure of this network; the fig4a-ln presets are fig4a's with "
        "the parameter-free LayerNorm (fig4c's network)",
    ),
    fc_claim(
        "no-wd-loss",
        "App. A.1 (no weight decay, 5 million SGD iterations)",
        "Without weight decay, after training the empirical losses of all four networks "
        f"(Figs. 5, 6a, 6b, 6c) are below {_A1_LOSS:g}.",
        runs={alias: _spec(alias) for alias in NO_WD},
        measured={f"{alias}: final training loss": f"{alias}:train_loss" for alias in NO_WD},
        paper_values={"final training loss": f"< {_A1_LOSS:g} for all networks"},
        checks=[_loss_check(alias) for alias in NO_WD],
        quick_seconds=75,
        medium_seconds=21_600,  # the four -medium presets: 2 + 2 + 1 + 1 core-hours
        full_seconds=4 * NO_WD_GPU_SECONDS,
        note="the statement is about the paper's 5 million iterations: the quick and medium "
        "presets run a fraction of them (300 to 1500 epochs of the smaller problems; 300 k to "
        "600 k steps), so only the full runs (GPU work: about 14 h a seed on one CPU core) test it",
    ),
    fc_claim(
        "thm2-norms",
        "§3.1, Theorem 2 (system (7)-(8); App. G)",
        "With Zipf word frequencies and all nc^L latent variables, h is at the type-III "
        "configuration of Theorem 2: the embedding of the β-th word of each concept has the norm "
        "r_β and every u_{k,ℓ} the norm c that solve the system (7)-(8) (the conjectured global "
        "minimiser; the paper proves it critical).",
        runs={"main": THM2_SMALL},
        measured={
            "max over β of |‖w_β‖ - r_β| / r_β": "theory_rel_gap.word_norms_by_rank_max",
            "mean u norm": "u_norm_mean",
            "train accuracy": "train_acc",
        },
        theory={"c (fc-thm2)": "theory.u_norm"},
        paper_values={"norms": "r_β, c from (7)-(8); frequent words larger"},
        checks=[
            Check(
                f"every rank's mean word norm within {NORM_TOL:.0%} of Theorem 2's r_β",
                path="theory_rel_gap.word_norms_by_rank_max",
                op="<=",
                value=NORM_TOL,
                name="word-norms-thm2",
                ours=NORM_WHY,
            ),
            _theorem("mean u norm", "u_norm_mean", 2, NORM_TOL, "u-norm-thm2"),
        ],
        quick_seconds=10,
        full_seconds=120,
        note="nc = 3, L = 3, K = 27 (all latents), 10 Zipf words per concept, λ = 1e-3 (the "
        "bound is 0.082), L-BFGS on the empirical risk of 500 (quick) or 5000 sentences per "
        "class; the 5 % tolerance is ours, for the empirical risk's sampled frequencies.",
    ),
    fc_claim(
        "thm2-lambda-bound",
        "§3.1, after Theorem 2",
        "In the paper's experiments λ satisfies Theorem 2's bound "
        '("In our experiments, λ satisfies this bound."): read with the experiments\' own K '
        "(1000 classes), λ² < L Σ_β μ_β² / (nc K); read literally with the theorem's K = nc^L, "
        "λ² < L Σ_β μ_β² / nc^(L+1).",
        runs=_run("fig4a"),
        measured={"λ": "theory.lam"},
        theory={
            "Theorem 2's bound on λ, the run's K": "theory.lam_bound_thm2_run_k",
            "Theorem 2's bound on λ, K = nc^L": "theory.lam_bound_thm2",
        },
        paper_values={"λ vs the bound": "below it (stated)"},
        checks=[
            Ratio(
                "the run's λ is below Theorem 2's bound with the run's K, sqrt(L Σ μ² / (nc K))",
                num="theory.lam",
                den="theory.lam_bound_thm2_run_k",
                below=1.0,
                name="lambda-below-bound-run-k",
                source=_BOUND_SAID,
                depends_on=(*_BOUND_SETTINGS, "data.K"),
                of="lambda-below-bound",
                reading="the experiments' K = 1000 (the 1/K of the risk is a class's probability)",
            ),
            Ratio(
                "the run's λ is below Theorem 2's bound as stated, sqrt(L Σ μ² / nc^(L+1))",
                num="theory.lam",
                den="theory.lam_bound_thm2",
                below=1.0,
                name="lambda-below-bound-literal",
                source=_BOUND_SAID,
                depends_on=_BOUND_SETTINGS,
                of="lambda-below-bound",
                reading="literal: the theorem's assumption K = nc^L = 3^15",
            ),
        ],
        quick_seconds=10,
        full_seconds=2400,  # 10 ms a step (K=1000, d=100, one core) x steps x 3 seeds + measuring
        note="arithmetic on the run's configuration (nc = 3, L = 15, K = 1000, 400 Zipf words "
        "per concept, λ = 1e-3): every seed and every scale that keeps these settings gives the "
        "same numbers, so the verdict rests on the reading, not on the seeds. "
        "docs/theory-feature-collapse.md derives the bound.",
        diagnosis={
            "*": Diagnosis(
                DiagnosisKind.READINGS_SPLIT,
                "with the experiments' K = 1000 the bound is 0.0138, about 14x the paper's "
                "λ = 1e-3 (ratio 0.072): the sentence holds; with the theorem's own K = nc^L = "
                "3^15 it is 1.15e-4 and λ is 8.7x above it. The theorem assumes all nc^L "
                "latents; the experiments use 1000, so the second reading evaluates the bound "
                "outside its theorem's assumption.",
                ("feature-collapse fig4a",),
            )
        },
    ),
    fc_claim(
        "few-frequent-words",
        "§2.2 (the remark closing the section)",
        "If the data were dominated by a few very frequent words, the rare words would only "
        "perturb h and would not hurt its performance: on Fig. 4b's small training set (5 "
        f"sentences per class) with the steeper law μ_β ∝ β^-{STEEP_S:g}, h stays at the "
        f"paper's 100 % test accuracy, far above h under the paper's law 1/β "
        f"({_percent(_FIG4B['test_acc'])}).",
        runs={
            "steep": RunSpec(
                EXP,
                quick="fig4b-steep-quick",
                medium="fig4b-steep-medium",
                full="fig4b-steep",
                no_paper="the paper states the remark without a setting or a figure; the "
                "presets are Fig. 4b's with the Zipf exponent 2 (ours)",
            ),
            "paper_law": replace(_spec("fig4b"), medium="fig4b-medium"),
        },
        measured={
            "h test accuracy, μ_β ∝ β^-2": "steep:test_acc",
            "h test accuracy, μ_β ∝ 1/β (Fig. 4b)": "paper_law:test_acc",
            "h collapse type, μ_β ∝ β^-2": "steep:collapse_type",
        },
        paper_values={
            "h test accuracy, μ_β ∝ 1/β (Fig. 4b)": _FIG4B["test_acc"],
            "h test accuracy, few frequent words": "not adversely affected (no number)",
        },
        checks=[
            Check(
                "h test accuracy with the steep law >= 99 % (not adversely affected)",
                path="steep:test_acc",
                op=">=",
                value=0.99,
                name="steep-test-acc",
                ours=ours(
                    Principle.PRINTED,
                    "'would not adversely affect performance': h's performance where feature "
                    "collapse works (Figs. 3 and 4a) is the paper's 100 %; " + ACC_WHY,
                ),
            ),
            Check(
                "h test accuracy with the steep law above h's with the paper's law",
                path="steep:test_acc",
                op=">",
                ref="paper_law:test_acc",
                name="steep-beats-paper-law",
            ),
        ],
        quick_seconds=260,  # two runs of 3 seeds, about 40 s a seed each (L-BFGS, K = 1000)
        medium_seconds=3000,  # the -medium presets: a third of the steps
        full_seconds=9000,  # 10 ms a step (K=1000, d=100, one core) x steps x 3 seeds
        note=f"the exponent {STEEP_S:g} is ours for 'dominated by a few very frequent words': "
        "the three most frequent of a concept's 400 words carry 83 % of its mass (28 % under "
        "the paper's 1/β); the quick presets are fig4b-quick's (K = 1000, nspl = 5, d = 20, "
        "L-BFGS to the minimiser)",
    ),
    fc_claim(
        "no-spurious-minima",
        "§3.1; App. H, Theorem G",
        "If d > min(nw, KL) the true risk R(W, U) of h has no spurious local minimisers: "
        "local minimisation from any random start ends at the global value, which for uniform "
        "words and all K = nc^L latent variables is Theorem 1's H(τ).",
        runs={"main": _landscape("no-spurious")},
        measured={
            "starts at the global value (per seed)": "main.at_global",
            "starts (per seed)": "main.starts",
            "max over starts of R(end) - R*": "main.gap_max",
            "d = 2 (outside the hypothesis): fraction of starts at the global value": (
                "contrast.fraction_at_global"
            ),
            "d = 2: max over starts of R(end) - R*": "contrast.gap_max",
            "d = 2: fraction of starts meeting the stopping rule": "contrast.converged_fraction",
        },
        theory={
            "R* (Theorem 1's H(τ))": "main.global_objective",
            "gap tolerance n g² / (2μ) + float floor": "main.gap_tolerance",
        },
        paper_values={"spurious local minimisers": "none when d > min(nw, KL) (proved)"},
        checks=[
            Check(
                "every start ends at Theorem 1's global value (max gap <= the tolerance of the "
                "stopping rule)",
                path="main.gap_max",
                op="<=",
                ref="main.gap_tolerance",
                name="every-start-global",
                ours=GAP_WHY,
            ),
            sanity(
                Equals(
                    "the width meets Theorem G's hypothesis d > min(nw, KL)",
                    "main.hypothesis",
                    True,
                    name="hypothesis",
                )
            ),
            _converged("main"),
            _closed_form("main"),
        ],
        quick_seconds=15,  # 8 s for 3 seeds on a busy machine
        full_seconds=150,  # recorded run: 137 s of units for 3 seeds (92 s wall, 2 workers)
        note="L-BFGS (float64) from 20 starts a seed (quick; 50 at full scale) on the enumerated "
        "true risk of nc = 3, L = 3 (quick) or 4 (full), 2 uniform words per concept, d = 8 > "
        "nw = 6, λ = 0.3 λ0 (the paper's λ / λ0 at its Fig. 3 size is 0.28); the starts draw "
        "every weight N(0, s²) with s log-uniform in [0.03, 3]. The same starts at d = 2 (outside "
        "the hypothesis; the paper says nothing there) are reported, not judged.",
    ),
    fc_claim(
        "thm2-lambda-natural",
        "§3.1, after Theorem 2",
        "Theorem 2's bound on λ is the natural one: above it the trivial solution "
        "(W, U) = (0, 0) is the only minimiser of the true risk (every local minimisation ends "
        "there), below it the minimiser is not zero.",
        runs={"above": _landscape("thm2-zero"), "below": _landscape("thm2-nonzero")},
        measured={
            "λ / bound above": "above:lam_factor",
            "above: max over starts of ‖(W, U)‖_F": "above:main.norm_max",
            "below: min over starts of ‖(W, U)‖_F": "below:main.norm_min",
            "below: max over starts of R(end) - R(Theorem 2)": "below:main.gap_max",
            "below: fraction of starts at Theorem 2's point": "below:main.fraction_at_global",
        },
        theory={
            "Theorem 2's bound λ0": "above:lam_threshold",
            "‖∇f(0)‖_op (the exact zero threshold)": "above:lam_threshold_numeric",
            "zero tolerance √n g / (λ - λ0)": "above:main.zero_norm_tolerance",
            "below: ‖(W, U)‖_F of Theorem 2's point": "below:main.global_norm",
        },
        paper_values={"above the bound": "(W, U) = (0, 0) is the only solution"},
        checks=[
            Check(
                "above the bound every start ends at (W, U) = (0, 0) (norm <= the tolerance of "
                "the stopping rule)",
                path="above:main.norm_max",
                op="<=",
                ref="above:main.zero_norm_tolerance",
                name="above-zero",
                ours=ZERO_WHY,
            ),
            Check(
                f"below the bound no start ends near zero (norm >= {NONZERO:g} x Theorem 2's "
                "point's)",
                path="below:main.norm_min_over_global",
                op=">=",
                value=NONZERO,
                name="below-nonzero",
                ours=ours(
                    Principle.WORDS,
                    "'not the trivial solution' as a number: at least half the norm of Theorem "
                    "2's type-III point, which exists below the bound",
                ),
            ),
            sanity(
                to_precision(
                    "Theorem 2's bound equals the exact zero threshold ‖∇f(0)‖_op",
                    "above:lam_threshold_rel_gap",
                    "<=",
                    1e-9,
                    "bound-is-threshold",
                    "an identity for K = nc^L (docs/theory-feature-collapse.md), to float64 "
                    "precision with room",
                )
            ),
            sanity(
                Equals(
                    "above: the theory's solution is zero",
                    "above:main.global_solution",
                    "zero",
                    name="above-theory-zero",
                )
            ),
            _converged("above"),
            _converged("below"),
            _closed_form("below"),
        ],
        quick_seconds=30,  # 25 s for both runs of 3 seeds
        full_seconds=1800,
        note="L-BFGS (float64) from 10 starts a seed (quick; 30 at full scale) on the enumerated "
        "true risk of nc = 3, L = 3 (quick) or 4 (full), 3 Zipf words per concept, d = 10 > nw "
        "= 9, at λ = 1.2 and 0.8 times Theorem 2's bound (our factors). Below the bound the "
        "minimiser is Theorem 2's type-III point (conjectured global), reported beside it.",
    ),
    fc_claim(
        "fig4b-mechanism",
        "§2.2, Fig. 4b",
        "On the small Zipf training set, the words sampled for two occurrences of one "
        "concept in a class have different frequencies, so the vectors u_{k,1}, u_{k,3} coding "
        "them get different magnitudes: within a class and concept, the norm of u_{k,ℓ} follows "
        "the mean frequency of the training words sampled at position ℓ.",
        runs=_run("fig4b"),
        measured={
            "Spearman(u norm, sampled frequency), within class and concept": (
                "u_vs_sampled_freq.spearman_within"
            ),
            "Spearman(u norm, sampled frequency), over all (k, ℓ)": "u_vs_sampled_freq.spearman",
            "mean std/mean of the u norms of one concept in one class": (
                "u_vs_sampled_freq.u_norm_cv_within"
            ),
            **_ACC,
        },
        paper_values={"u_{k,1}, u_{k,3}": "different magnitudes, from the sampled frequencies"},
        checks=[
            Check(
                "|Spearman| of u norm and sampled frequency within class and concept >= 0.5",
                path="u_vs_sampled_freq.spearman_within_abs",
                op=">=",
                value=0.5,
                name="u-norm-follows-sampled-frequency",
                ours=ours(
                    Principle.WORDS,
                    "the paper says the magnitudes depend on the sampled frequencies without a "
                    "number or a sign; a rank correlation of at least 0.5 in size is our reading of "
                    "'depend on'",
                ),
            )
        ],
        quick_seconds=130,  # fig4b-quick, 3 seeds (about 40 s each)
        medium_seconds=3100,  # fig4b-medium, recorded: 621-1523 s a seed
        full_seconds=4500,  # 10 ms a step (K=1000, d=100, one core) x steps x 3 seeds
        note="the pairing is written by the feature-collapse summary since issue 26 "
        "(u_vs_sampled_freq): for each class k and position ℓ, the norm of u_{k,ℓ} and the mean "
        "frequency μ of the nspl training words at that position; 'within' centres both on "
        "their (class, concept) group, the paper's u_{k,1} against u_{k,3}",
    ),
]
