"""Claims of *Feature Collapse* (Laurent, von Brecht & Bresson, ICLR 2024) appendix A.3–A.5: feature
collapse beyond the two-layer network — a GPT-2 classifier (uniform and Zipf words), a GPT-2
language model, and the network matched to a depth-4 context-free grammar.

The paper shows these as PCA figures without numbers. Each claim states a level for the
within-symbol variability (trace ratio tr Σ_W / tr Σ_B of the representations grouped by their
latent symbol, :mod:`nclab.collapse.latent`) and requires it to be far below that of the untrained
network of the same shape, measured in the same run (same seed, same data).
"""

from __future__ import annotations

from dataclasses import replace

from ...verdicts import Diagnosis, DiagnosisKind
from ..checks import Check, Principle, ours
from ..registry import Claim, RunSpec, Variant, paper_overrides
from .laurent import COLLAPSED, below_untrained, fc_claim

TF = "fc-transformer"
CFG = "fc-grammar"

#: the stated levels (see docs/feature-collapse.md, "Appendix A.3-A.5")
EMB_NC1_MAX = 0.1  # trace ratio of the word embeddings grouped by concept
UNTRAINED_RATIO = 0.01  # trained / untrained trace ratio, word embeddings
LEVEL_NC1_MAX = 0.1  # every grammar level
LEVEL_RATIO = 0.1  # every grammar level: trained / untrained
#: why the transformers of A.3 are held to 99 % test accuracy
A3_ACC = ours(
    Principle.WORDS,
    "App. A.3 reports no accuracy (it shows the embeddings only); 99 % is our check that the "
    "transformer learned the task, as the main text's networks reach 100 % on it",
)
#: why the grammar network of A.5 is held to 90 % test accuracy
A5_ACC = ours(
    Principle.WORDS,
    "App. A.5 reports no accuracy, only the levels' collapse; 90 % is our floor for a network "
    "that has learned the grammar task before its representations are judged",
)


#: the sentence the embedding checks read, "properly collapsed" as Fig. 8 shows it
COLLAPSED_BY_CONCEPT = "embeddings-collapsed"
#: why the figure's reading is the 2-D PCA plane
FIGURE_READING = ours(
    Principle.WORDS,
    "App. A.3-A.4: 'we display the word embeddings via dimensionality reduction and color coding "
    "... we observe that they are properly collapsed': the figure is a 2-D PCA projection, so "
    "the collapse it shows is the trace ratio in that plane; the level is the one the other "
    "readings use (ours)",
)


def _embedding_checks(*, vs_untrained: bool = True) -> list:
    """The word embeddings collapsed by concept, read three ways (readings of one sentence):
    in all dimensions at our level, against the untrained network, and in the 2-D PCA plane
    the paper's figure shows."""
    reading = {"of": COLLAPSED_BY_CONCEPT}
    level, ratio = below_untrained(
        "word-embedding NC1 (tr ratio by concept)",
        "embedding_metrics.nc1_trace",
        "untrained.emb_nc1_trace",
        EMB_NC1_MAX,
        UNTRAINED_RATIO,
        "embedding-nc1",
        short="word-embedding NC1",
    )
    out = [replace(level, **reading, reading="ours: all dimensions, at our level")]
    if vs_untrained:
        out.append(replace(ratio, **reading, reading="ours: all dimensions, against untrained"))
    out.append(
        Check(
            f"word-embedding NC1 in the figure's 2-D PCA plane <= {EMB_NC1_MAX:g}",
            path="embedding_pca2.nc1_trace",
            op="<=",
            value=EMB_NC1_MAX,
            name="embedding-pca2-nc1",
            ours=FIGURE_READING,
            **reading,
            reading="the figure's: the 2-D PCA projection the paper shows",
        )
    )
    return out


_MEASURED = {
    "word-embedding NC1": "embedding_metrics.nc1_trace",
    "word-embedding directional NC1": "embedding_metrics.dir_nc1",
    "untrained word-embedding NC1": "untrained.emb_nc1_trace",
    "word-embedding NC1, the figure's 2-D PCA plane": "embedding_pca2.nc1_trace",
    "variance the 2-D PCA plane holds": "embedding_pca2.variance_kept",
    "collapse type": "collapse_type",
}


def _paper_optimiser(preset: str) -> Variant:
    """The medium run at the paper's AdamW learning rate and weight decay (the claim's presets
    use 10x both, so that collapse shows within their step budget)."""
    over = paper_overrides(TF, preset, ("train.lr", "train.weight_decay"))
    label = (
        f"the paper's learning rate {over['train.lr']:g} and weight decay "
        f"{over['train.weight_decay']:g}"
    )
    return Variant(label, {"main": over}, scales=("medium",))


def _full_readings(preset: str, full_nc1: str, below: str, quick: str) -> Diagnosis:
    """Why an A.3/A.4 claim is inconclusive at full size: our reading fails there, the figure's
    was not measured by the full records (the quick ones hold both)."""
    return Diagnosis(
        DiagnosisKind.PREDATES,
        f"at full size the word embeddings' NC1 by concept is {full_nc1} in all dimensions (our "
        f"level, 0.1, fails; {below} below the untrained network's); the figure's reading, "
        "NC1 in the 2-D PCA plane Fig. 8 shows, was not measured by the full records (made "
        f"before it was). At quick size the plane's NC1 is {quick} against 0.012-0.12 in all "
        "dimensions: the readings can part by an order of magnitude or more, so only a re-run of "
        "the full presets (about an hour a seed on 2 threads, or a GPU) can decide",
        (f"fc-transformer {preset}", f"fc-transformer {preset}-quick"),
    )


#: the recorded full runs' NC1 (mean over 3 seeds), how far below the untrained network's, and
#: the quick runs' NC1 in the 2-D PCA plane (range over 3 seeds)
_A3_FULL = {
    "uniform": ("15.9", "40x", "at most 0.0066"),
    "zipf": ("14.7", "43x", "at most 0.0031"),
}


def _a3(freq: str, fig: str) -> Claim:
    return fc_claim(
        f"a3-transformer-{freq}",
        f"App. A.3, Fig. {fig}",
        f"A GPT-2 transformer classifier (class token appended) trained on the sentence "
        f"model with {freq} word frequencies has word embeddings (before positional embeddings) "
        "collapsed by concept.",
        runs={
            "main": RunSpec(
                TF, quick=f"a3-{freq}-quick", medium=f"a3-{freq}-large", full=f"a3-{freq}"
            )
        },
        measured={"test accuracy": "test_acc", **_MEASURED},
        paper_values={"collapse": "word embeddings collapse by concept (figure)"},
        checks=[
            Check(
                "test accuracy >= 99 %",
                path="test_acc",
                op=">=",
                value=0.99,
                name="test-acc",
                ours=A3_ACC,
            ),
            *_embedding_checks(),
        ],
        quick_seconds=85,
        medium_seconds=3900,  # a3-*-large: 1214-1344 s a seed on one core (measured, uniform)
        # the estimates are on one core as reproduce schedules runs (two side by side): 3 seeds
        # of 15 000 steps at 1.17 s a step on one thread beside another run (the full a3-uniform
        # run, 2026-12-03: 500 steps in 9.7 min). Alone with --threads 2 the recorded full
        # a3-uniform run took 3851-4482 s a seed (0.26-0.30 s a step, measurement included), the
        # full a3-zipf run 4162 and 4312 s for its seeds alone (5065 s for one that shared the CPU)
        full_seconds=53_000,
        variants=[_paper_optimiser(f"a3-{freq}")],
        diagnosis={"full": _full_readings(f"a3-{freq}", *_A3_FULL[freq])},
        note="faithful: 15 000 AdamW steps of a width-512 GPT-2 on 100 x 16 tokens: 64-75 min a "
        "seed alone on 2 threads (the recorded full a3-uniform and a3-zipf runs), ~4.9 h on one "
        "thread beside another run (1.17 s a step, measured; see docs/feature-collapse.md)",
    )


CLAIMS: list[Claim] = [
    _a3("uniform", "8a"),
    _a3("zipf", "8b"),
    fc_claim(
        "a4-gpt-lm",
        "App. A.4, Fig. 8c",
        "A GPT-2 language model trained on next-word prediction on the sentence model has "
        "word embeddings collapsed by concept.",
        runs={"main": RunSpec(TF, quick="a4-lm-quick", medium="a4-lm-large", full="a4-lm")},
        diagnosis={"full": _full_readings("a4-lm", "4.8", "130x", "at most 0.0012")},
        measured={
            "test next-word loss": "test_loss",
            "the data's unigram entropy (nats)": "data_entropy.unigram",
            "the data's entropy rate (nats)": "data_entropy.floor",
            "fraction of the way from unigram to entropy rate": "lm_learned_fraction",
            **_MEASURED,
        },
        paper_values={"collapse": "word embeddings collapse by concept (figure)"},
        checks=[
            Check(
                "the test next-word loss covers at least half of the way from the data's unigram "
                "entropy (word frequencies only) to its entropy rate (the Bayes loss)",
                path="lm_learned_fraction",
                op=">=",
                value=0.5,
                name="lm-learns",
                ours=ours(
                    Principle.WORDS,
                    "A.4 states no loss (it shows the embeddings only); the baselines are exact "
                    "for the data model (fc_transformer.measure.lm_entropies), and half of the gain "
                    "the latent concepts allow over word frequencies is our reading of 'trained to "
                    "predict the next token'",
                ),
            ),
            *_embedding_checks(),
        ],
        quick_seconds=91,
        # a4-lm-large, 3 seeds of 7500 steps: 1500 steps took 33 min at about half a core
        # (measured 2026-12-02, four processes on the two cores), 0.59 s a step on one core
        medium_seconds=13_400,
        # one core as reproduce schedules runs: 3 seeds of 10 000 steps at 1.14 s a step on one
        # thread beside another run (2026-12-03: 500 steps in 9.4-9.5 min). Alone with
        # --threads 2: 0.34 s a step, seed units of 3176-3240 s (the recorded full run)
        full_seconds=34_500,
    ),
    fc_claim(
        "a5-cfg-depth4",
        "App. A.5, Figs. 9-11",
        "On a depth-4 context-free grammar, the network matched to it gives all segments "
        "generated by the same concept, meta-concept or meta-meta-concept the same "
        "representation at levels 1, 2 and 3.",
        runs={"main": RunSpec(CFG, quick="a5-cfg-quick", medium="a5-cfg-medium", full="a5-cfg")},
        measured={
            "test accuracy": "test_acc",
            "level 1 NC1 (by concept)": "levels[level=1].nc1_trace",
            "level 2 NC1 (by meta-concept)": "levels[level=2].nc1_trace",
            "level 3 NC1 (by meta-meta-concept)": "levels[level=3].nc1_trace",
            "largest level NC1 / untrained": "max_nc1_vs_untrained",
        },
        paper_values={"collapse": "each level collapses by its latent symbol (figure)"},
        checks=[
            Check(
                "test accuracy >= 90 %",
                path="test_acc",
                op=">=",
                value=0.9,
                name="test-acc",
                ours=A5_ACC,
            ),
            Check(
                f"every level's NC1 (tr ratio by latent symbol) <= {LEVEL_NC1_MAX}",
                path="max_level_nc1_trace",
                op="<=",
                value=LEVEL_NC1_MAX,
                name="level-nc1",
                ours=COLLAPSED,
            ),
            Check(
                f"every level's NC1 < {LEVEL_RATIO} x the untrained network's",
                path="max_nc1_vs_untrained",
                op="<",
                value=LEVEL_RATIO,
                name="level-nc1-vs-untrained",
                ours=COLLAPSED,
            ),
        ],
        quick_seconds=10,
        medium_seconds=510,  # a5-cfg-medium: 142-183 s a seed (measured)
        # measured: 1640-1755 s a seed on one core of an idle machine; 2913-3485 s a seed
        # (2026-12-03 ledger run, one core each beside another run)
        full_seconds=9600,
        note="the paper leaves alphabets, widths, optimiser and data size open: the a5-cfg "
        "preset's choices are in docs/feature-collapse.md",
    ),
]
