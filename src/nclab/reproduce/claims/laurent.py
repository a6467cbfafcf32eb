"""Claims of Laurent, von Brecht & Bresson, *Feature Collapse* (ICLR 2024), for ``nclab reproduce``.

Each claim runs the ``feature-collapse`` experiment (quick: reduced sizes, seconds on 2 cores; full:
the authors' recipe) and judges the summary: accuracy, collapse type (:mod:`nclab.collapse.embedding`)
and the norms against the theorems' predictions (``theory.*`` keys, from ``fc-thm1/2/3``). The
checks several claims share are built by the helpers below (:func:`below_untrained` also serves
the appendix's claims, :mod:`.laurent_appendix`). What the paper reports is read from its one
home, the experiment's ``PAPER`` (:mod:`nclab.experiments.feature_collapse.presets`).

Length: one claim per figure of the paper, each check with its threshold's origin (ours
with the reason, or the paper's place).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ...experiments.feature_collapse.presets import PAPER as REPORTED
from ...experiments.feature_collapse.presets import PRESETS
from ..checks import Check, Equals, Principle, Ratio, ours
from ..registry import Claim, RunSpec
from ._common import claims_of

PAPER = "Feature Collapse (Laurent, von Brecht & Bresson, ICLR 2024)"
EXP = "feature-collapse"
#: a claim of this paper (its id prefix ``feature-collapse/``)
fc_claim = claims_of(PAPER, "feature-collapse")


def _reported(figure: str, labels: Mapping[str, str]) -> dict[str, Any]:
    """What the paper reports for ``figure`` (``REPORTED[figure]``), under the claim's labels:
    ``labels`` maps a label to a key of the figure's values."""
    return {label: REPORTED[figure][key] for label, key in labels.items()}


def _percent(fraction: float) -> str:
    """A fraction as a percentage: 0.5 -> ``"50 %"``."""
    return f"{fraction * 100:g} %"


def _spec(preset: str) -> RunSpec:
    """The run of ``preset``: ``<preset>-quick``, ``<preset>-medium`` where it exists (the full
    run is GPU work, as the no-weight-decay presets' 5 M iterations, about 14 h a seed on one CPU
    core, or more than an hour of CPU for 3 seeds), ``preset``."""
    no_wd = preset.startswith("no-wd-")
    medium = f"{preset}-medium" if f"{preset}-medium" in PRESETS else None
    return RunSpec(EXP, quick=f"{preset}-quick", medium=medium, full=preset, full_needs_gpu=no_wd)


def _run(preset: str) -> dict[str, RunSpec]:
    """The one run of a claim (alias ``main``): :func:`_spec`'s."""
    return {"main": _spec(preset)}


def _h_and_h_star(h: str, h_star: str) -> dict[str, RunSpec]:
    """The two networks of a comparison, h (no LayerNorm) and h* (LayerNorm), run as ``_run``."""
    return {"h": _spec(h), "h_star": _spec(h_star)}


#: the four networks of App. A.1 (no weight decay), by their presets
NO_WD = ("no-wd-fig3", "no-wd-fig4a", "no-wd-fig4b", "no-wd-fig4c")
#: the run where Theorem 2 applies (all K = nc^L latent variables, λ below its bound)
THM2_SMALL = RunSpec(
    EXP,
    quick="thm2-small-quick",
    full="thm2-small",
    no_paper="Theorem 2 needs K = nc^L; the paper's runs (K = 1000, L = 15) are not such a case "
    "and it runs none that is",
)


def _collapse(alias: str, kind: str) -> Equals:
    return Equals(
        f"{alias}: collapse type is {kind}",
        f"{alias}:collapse_type",
        kind,
        name=f"{alias}-collapse-type",
    )


def _acc(path: str = "test_acc") -> Check:
    alias = path.rpartition(":")[0] or "main"
    who = "h* " if alias == "h_star" else ""
    return Check(
        f"{who}test accuracy >= 99 %",
        path=path,
        op=">=",
        value=0.99,
        name=f"{alias}-test-acc",
        ours=ACC_WHY,
    )


#: why 99 % stands for the paper's 100 %
ACC_WHY = ours(
    Principle.PRINTED,
    "the paper reports 100 % test accuracy; 99 % leaves room for a few misclassified test "
    "sentences of one seed (the quick test sets have a few thousand sentences)",
)
#: why the theorems' norms are held to 5 % (10 % for Theorem 3)
THEOREM_WHY = ours(
    Principle.PRINTED,
    "the paper compares by eye (Fig. 3: the measured word norm, mean ± std over words, against "
    "Theorem 1's prediction, under 1 % apart on the mean); 5 % (10 % for h*, whose SGD iterate "
    "is not the minimiser) is our tolerance "
    "for SGD's iterate against the minimiser's closed form",
)


def _theorem(what: str, path: str, thm: int, rtol: float, name: str, case: str = "") -> Check:
    """``what`` (at ``path``) within ``rtol`` of Theorem ``thm``'s value (at ``theory.<same>``);
    ``case``: the setting it is read in, where the claim names it."""
    ref = "theory." + path.removesuffix("_mean")
    return Check(
        f"{what} within {rtol * 100:g} % of Theorem {thm}" + (f" ({case})" if case else ""),
        path=path,
        op="~",
        ref=ref,
        rtol=rtol,
        name=name,
        ours=THEOREM_WHY,
    )


def _h_star_beats_h(points: int) -> list[Check | Equals]:
    """h* reaches 99 %, ``points`` above h; h* collapses (type-II), h does not."""
    return [
        _acc("h_star:test_acc"),
        Check(
            f"test accuracy of h* exceeds h by >= {points} points",
            path="h_star:test_acc",
            op=">=",
            ref="h:test_acc",
            margin=points / 100,
            name="h_star-beats-h",
            ours=ours(
                Principle.PRINTED,
                f"the paper's h* is {points}+ points above h (100 % vs 45 % / 66 %); {points} "
                "points is our margin for 'generalises poorly' on the smaller instances",
            ),
        ),
        # "virtually identical to Figures 3 and 4" (App. A.1): h* collapses (4c), h does not (4b)
        _collapse("h_star", "type-II"),
        _collapse("h", "none"),
    ]


#: frequent words get larger embeddings (type-III collapse, Theorem 2)
_NORM_FOLLOWS_FREQUENCY = Check(
    "word norm increases with frequency (Spearman >= 0.8)",
    path="embedding_metrics.words.spearman_norm_freq",
    op=">=",
    value=0.8,
    name="norm-frequency-spearman",
    ours=(
        ours(
            Principle.WORDS,
            "Theorem 2 and Fig. 4a show frequent words getting larger embeddings, no correlation; "
            "Spearman >= 0.8 is our reading of 'the norm increases with frequency' over the words",
        )
    ),
)


def below_untrained(
    what: str, path: str, untrained: str, level: float, ratio: float, name: str, short: str = ""
) -> list[Check | Ratio]:
    """``what`` (at ``path``) at most ``level`` and below ``ratio`` times the same measure on the
    untrained network of the run (at ``untrained``); ``short`` names it in the second check."""
    return [
        Check(f"{what} <= {level:g}", path=path, op="<=", value=level, name=name, ours=COLLAPSED),
        Ratio(
            f"{short or what} < {ratio:g} x the untrained network's",
            num=path,
            den=untrained,
            below=ratio,
            name=f"{name}-vs-untrained",
            ours=COLLAPSED,
        ),
    ]


#: why the collapse levels are ours
COLLAPSED = ours(
    Principle.WORDS,
    "the paper shows the collapse in figures (PCA plots) with no number; a level and a factor "
    "below the untrained network's are our reading of 'collapsed'",
)


def _variability(what: str, key: str, name: str) -> list[Check | Ratio]:
    """``what`` (``embedding_metrics.words.<key>``) at most 0.05 and below 1 % of the same measure
    on the untrained network of the run (``untrained.word_<key>``)."""
    return below_untrained(
        what, f"embedding_metrics.words.{key}", f"untrained.word_{key}", 0.05, 0.01, name
    )


#: tolerance on h's test accuracy against the paper's (Fig. 4b, Fig. 6b): see
#: docs/feature-collapse.md ("fig4b accuracy over seeds")
FIG4B_ACC_TOL = 0.05
#: why: the paper prints one accuracy per figure, no spread
FIG4B_ACC_WHY = ours(
    Principle.PRINTED,
    "the paper prints one run's accuracy with no spread; ±5 points covers the seed spread of h "
    "on the small training set (about 0.5 point) and the gap between SGD's iterate and the "
    "minimiser (the authors' own Fig. 4b run ends at 43.7 % against the printed 45 %)",
)


def _h_acc_paper(acc: float, figure: str) -> Check:
    """h's test accuracy within :data:`FIG4B_ACC_TOL` (absolute) of the paper's ``acc``."""
    return Check(
        f"h test accuracy within {FIG4B_ACC_TOL * 100:g} points of the paper's {_percent(acc)} "
        f"({figure})",
        path="h:test_acc",
        op="~",
        ref="h:paper.test_acc",
        rtol=FIG4B_ACC_TOL / acc,
        name="h-test-acc-paper",
        ours=FIG4B_ACC_WHY,
    )


_FIG3, _K50 = REPORTED["fig3"], REPORTED["k50"]
_FIG4B_ACC, _NO_WD_FIG4B_ACC = REPORTED["fig4b"]["test_acc"], REPORTED["no-wd-fig4b"]["test_acc"]
_ACC = {"test accuracy": "test_acc"}
_NORMS = {"mean word norm": "word_norm_mean", "std word norm": "word_norm_std"}
_THM1 = {"word norm (fc-thm1)": "theory_word_norm"}


def _h_and_h_star_acc(h: str, h_star: str) -> dict[str, Any]:
    """The paper's test accuracies of h (figure ``h``) and h* (figure ``h_star``)."""
    return {
        **_reported(h, {"h test accuracy": "test_acc"}),
        **_reported(h_star, {"h* test accuracy": "test_acc"}),
    }


#: the full runs without weight decay: the paper's 5 million SGD iterations
_FIVE_MILLION = (
    "the full run is the paper's 5 million SGD iterations, GPU work: on one CPU core a step "
    "takes 10 ms (three 100 x 1500 x 1000 products), about 14 h a seed"
)
#: the no-weight-decay full runs on a GPU, 3 seeds: an estimate (5 M steps of a dozen small
#: kernels, ~0.1 ms each step, plus measuring on the CPU), not yet timed on one
NO_WD_GPU_SECONDS = 3 * 900


def _figure(preset: str, where: str, claim: str, **fields: Any) -> Claim:
    """The claim of a figure (or a section's number), named and run after its preset
    (:func:`_run`); ``fields``: the rest of the claim."""
    return fc_claim(preset, where, claim, runs=_run(preset), **fields)


def _h_vs_h_star(
    id: str,
    where: str,
    claim: str,
    presets: tuple[str, str, str],
    points: int,
    measured: dict[str, str] | None = None,
    **rest: Any,
) -> Claim:
    """Fig. 4b/4c, with weight decay or without (App. A.1): on the small Zipf training set h*
    beats h by ``points`` and collapses, h does not and stays at the paper's accuracy.
    ``presets``: h's, h*'s and the figure that prints h's accuracy; ``measured``: read beside
    the two accuracies; ``rest``: the claim's other fields (run times, theory, note)."""
    h, h_star, figure = presets
    return fc_claim(
        id,
        where,
        claim,
        runs=_h_and_h_star(h, h_star),
        measured={
            "h test accuracy": "h:test_acc",
            "h* test accuracy": "h_star:test_acc",
            **(measured or {}),
        },
        paper_values=_h_and_h_star_acc(h, h_star),
        checks=[*_h_star_beats_h(points), _h_acc_paper(REPORTED[h]["test_acc"], figure)],
        **rest,
    )


def _no_wd_collapse(
    id: str,
    where: str,
    claim: str,
    preset: str,
    kind: str,
    variability: tuple[str, str, str],
    measured: dict[str, str],
    paper_values: dict[str, Any],
    quick_seconds: float,
    more: tuple[Check, ...] = (),
) -> Claim:
    """App. A.1: a network of a main-text figure trained without weight decay (``preset``: the
    paper's 5 million SGD iterations at full scale) still generalises and collapses as with it:
    collapse type ``kind``, the word ``variability`` (``what, key, name`` of :func:`_variability`)
    far below the untrained network's, and the ``more`` checks of its figure."""
    return fc_claim(
        id,
        where,
        claim,
        runs=_run(preset),
        measured={**_ACC, **measured},
        paper_values=paper_values,
        checks=[_acc(), _collapse("main", kind), *_variability(*variability), *more],
        quick_seconds=quick_seconds,
        medium_seconds=7200,
        full_seconds=NO_WD_GPU_SECONDS,
        note=_FIVE_MILLION,
    )


CLAIMS: list[Claim] = [
    _figure(
        "fig3",
        "§2.1 Fig. 3, §3.1 Theorem 1",
        "With uniform word frequencies, h generalises perfectly and its weights form a type-I "
        f"collapse whose word-embedding norm matches Theorem 1 ({_FIG3['word_norm_mean']:g} ± "
        f"{_FIG3['word_norm_std']:g} measured vs {_FIG3['theory_word_norm']:g} predicted).",
        measured={
            **_ACC,
            **_NORMS,
            "mean u norm": "u_norm_mean",
            "word directional NC1": "embedding_metrics.words.dir_nc1",
        },
        theory={"word norm (fc-thm1)": "theory.word_norm", "u norm (fc-thm1)": "theory.u_norm"},
        paper_values=_reported("fig3", {**_ACC, **_NORMS, **_THM1}),
        checks=[
            _acc(),
            _collapse("main", "type-I"),
            _theorem("mean word norm", "word_norm_mean", 1, 0.05, "word-norm-thm1"),
            _theorem("mean u norm", "u_norm_mean", 1, 0.05, "u-norm-thm1"),
        ],
        quick_seconds=5,
        full_seconds=1800,  # 10 ms a step (K=1000, d=100, one core) x steps x 3 seeds
    ),
    _figure(
        "k50",
        "§3.1",
        "With K = 50 classes and 100 sentences per class the word-embedding norm is "
        f"{_K50['word_norm_mean']:g} ± {_K50['word_norm_std']:g}, against "
        f"{_K50['theory_word_norm']:g} predicted by Theorem 1.",
        measured={
            **_ACC,
            **_NORMS,
        },
        theory={"word norm (fc-thm1)": "theory.word_norm"},
        paper_values=_reported("k50", {**_NORMS, **_THM1}),
        checks=[
            _collapse("main", "type-I"),
            _theorem("mean word norm", "word_norm_mean", 1, 0.05, "word-norm-thm1"),
        ],
        quick_seconds=5,
        # the recorded full run: 677 s for its last seed on a free core (3 seeds ~ 2000 s)
        full_seconds=2000,
    ),
    _figure(
        "fig3-ln",
        "§2.1, Theorem 3",
        "With uniform words, h* (LayerNorm) also generalises perfectly; its word "
        "representations and u vectors form a type-II collapse (Theorem 3).",
        measured={
            **_ACC,
            "mean u norm": "u_norm_mean",
            "representation norm": "rep_norm_mean",
        },
        theory={"u norm (fc-thm3)": "theory.u_norm", "representation norm": "theory.word_rep_norm"},
        paper_values=_reported("fig3-ln", _ACC),
        checks=[
            _acc(),
            _collapse("main", "type-II"),
            _theorem("mean u norm", "u_norm_mean", 3, 0.10, "u-norm-thm3"),
        ],
        quick_seconds=5,
        medium_seconds=460,  # fig3-ln-medium: 146-157 s a seed (recorded, 3 seeds)
        full_seconds=4000,  # measured 2026-12-02: about 1.1 s an epoch of 50 steps (h*, LayerNorm) on one core, 3 seeds of 1200 epochs
    ),
    _figure(
        "fig4a",
        "§2.2 Fig. 4a, Theorem 2",
        "With Zipf word frequencies and a large training set, h generalises, its embeddings "
        "collapse in direction only (type-III) and frequent words get larger norms.",
        measured={
            **_ACC,
            "Spearman(norm, frequency)": "embedding_metrics.words.spearman_norm_freq",
            "word norm CV": "embedding_metrics.words.norm_cv",
        },
        paper_values=_reported("fig4a", _ACC),
        checks=[_acc(), _collapse("main", "type-III"), _NORM_FOLLOWS_FREQUENCY],
        quick_seconds=10,
        full_seconds=2400,  # 10 ms a step (K=1000, d=100, one core) x steps x 3 seeds + measuring
    ),
    _h_vs_h_star(
        "fig4b-vs-fig4c",
        "§2.2 Fig. 4b/4c, Theorem 3",
        "With Zipf frequencies and only 5 sentences per class, h fails to collapse and "
        f"generalises poorly ({_percent(_FIG4B_ACC)}) while h* collapses fully and stays at "
        f"{_percent(REPORTED['fig4c']['test_acc'])}.",
        ("fig4b", "fig4c", "Fig. 4b"),
        30,
        {"h peak test accuracy": "h:peak_test_acc"},
        theory={"h* u norm (fc-thm3)": "h_star:theory.u_norm"},
        quick_seconds=70,  # fig4b-quick (L-BFGS) + fig4c-quick (SGD, 38 s under load)
        # fig4b-medium (recorded: 621-1523 s a seed) + fig4c-medium (recorded: 70-73 s a seed)
        medium_seconds=3300,
        full_seconds=5300,  # 10 ms a step (K=1000, d=100, one core) x steps x 3 seeds
    ),
    _h_vs_h_star(
        "no-weight-decay",
        "App. A.1 Fig. 6b/6c",
        "Without weight decay the picture is the same: on the small Zipf training set h "
        f"reaches {_percent(_NO_WD_FIG4B_ACC)} test accuracy and h* "
        f"{_percent(REPORTED['no-wd-fig4c']['test_acc'])}.",
        ("no-wd-fig4b", "no-wd-fig4c", "Fig. 6b"),
        20,
        quick_seconds=8,
        medium_seconds=7200,  # the -medium presets: 2 core-hours for 3 seeds (10 ms a step)
        full_seconds=2 * NO_WD_GPU_SECONDS,
        note=_FIVE_MILLION.replace("run is", "runs are"),
    ),
    _no_wd_collapse(
        "no-wd-fig3",
        "App. A.1 Fig. 5",
        "Without weight decay (5 million SGD iterations) h on the uniform Fig. 3 task still "
        "generalises perfectly and its weights form the same type-I collapse.",
        "no-wd-fig3",
        "type-I",
        ("word NC1 (tr ratio by concept)", "nc1_trace", "word-nc1"),
        {
            "word NC1 (by concept)": "embedding_metrics.words.nc1_trace",
            "untrained word NC1": "untrained.word_nc1_trace",
            "word directional NC1": "embedding_metrics.words.dir_nc1",
        },
        # "virtually identical to Figure 3" (App. A.1): the accuracy is Fig. 3's
        {**_reported("fig3", _ACC), **_reported("no-wd-fig3", {"collapse": "collapse_type"})},
        quick_seconds=30,
    ),
    _no_wd_collapse(
        "no-wd-fig6a",
        "App. A.1 Fig. 6a",
        "Without weight decay h on the large Zipf training set still generalises and its "
        "embeddings collapse in direction, with norms growing with frequency (type-III).",
        "no-wd-fig4a",
        "type-III",
        ("word directional NC1", "dir_nc1", "word-dir-nc1"),
        {
            "word directional NC1": "embedding_metrics.words.dir_nc1",
            "untrained word directional NC1": "untrained.word_dir_nc1",
            "Spearman(norm, frequency)": "embedding_metrics.words.spearman_norm_freq",
        },
        _reported("no-wd-fig4a", {**_ACC, "collapse": "collapse_type"}),
        quick_seconds=35,
        more=(_NORM_FOLLOWS_FREQUENCY,),
    ),
    _figure(
        "learnable-ln",
        "App. A.2 Fig. 7",
        "With a learnable LayerNorm, h* on the small Zipf training set still collapses.",
        measured={
            **_ACC,
            "representation directional NC1": "embedding_metrics.words.dir_nc1",
        },
        paper_values=_reported("learnable-ln", {"collapse": "collapse_type"}),
        checks=[_acc(), _collapse("main", "type-II")],
        quick_seconds=5,
        medium_seconds=250,  # learnable-ln-medium: 78-87 s a seed (recorded, 3 seeds)
        # recorded: 1291, 2064, 1700 s a seed (2026-12-02), beside another run, both at two torch
        # threads on two cores (fixed since: --workers 1 ran at torch's default): an upper figure
        full_seconds=4000,
    ),
]
