"""Presets of the transformer experiments (appendix A.3, Fig. 8a/8b; A.4, Fig. 8c) and the values
the paper reports.

Faithful presets follow the paper: nc=3, nw=1200, L=15, K=1000; GPT-2 with 2 layers, 8 heads,
width 512; AdamW lr 1e-4 (constant), weight decay 0.1, β = (0.9, 0.95); A.3: 3 epochs over 0.5 M
sentences, A.4: one epoch over 1 M. Unstated there: batch size (100, as the paper's SGD runs) and
dropout (0). They train on CUDA where it is available (``device = "auto"``; 3-5 h a seed on one
CPU core). ``-quick`` presets: see ``_SMALL`` below (a few minutes on 2 cores).
"""

from __future__ import annotations

from typing import Any

from ..protocol import PaperSetting, Smoke

ZIPF = {"data.freq": "zipf"}
LM = {"task": "lm"}

_FAITHFUL: dict[str, dict[str, Any]] = {
    "a3-uniform": {"device": "auto"},
    "a3-zipf": {**ZIPF, "device": "auto"},
    "a4-lm": {**LM, "data.nspl": 1000, "train.epochs": 1, "device": "auto"},
}
#: quick: width 64, 4 heads, nw=150 (50 words per concept), K=100, 600 sentences per class (60 000),
#: lr 1e-3 and weight decay 1.0 (AdamW decays by lr·wd per step: 1e-3 per step over 1200 steps,
#: where the paper's 1e-5 per step runs 15 000 steps), 2 epochs
_SMALL = {
    "model.d": 64,
    "model.n_head": 4,
    "data.nw": 150,
    "data.K": 100,
    "data.nspl": 600,
    "train.lr": 1e-3,
    "train.weight_decay": 1.0,
    "train.epochs": 2,
    "log_every": 200,
    "checkpoint_every": 200,
    "measure_sentences": 300,
    "threads": 1,
}
#: medium (the size run with 3 seeds on 2 CPU cores, docs/feature-collapse.md): the paper's data
#: model (nc=3, nw=1200, L=15, K=1000) and 2 layers, 8 heads, at width 128 on 100 sentences per
#: class (0.1 M), 3 epochs (3000 steps), with the quick presets' lr 1e-3 and weight decay 1.0
_MEDIUM = {
    "model.d": 128,
    "data.nspl": 100,
    "train.lr": 1e-3,
    "train.weight_decay": 1.0,
    "train.epochs": 3,
    "log_every": 300,
    "checkpoint_every": 300,
    "threads": 1,
}
#: large (for "a few hours" on CPU, docs/feature-collapse.md): the medium settings at width 256 on
#: 250 sentences per class (0.25 M), 3 epochs (7500 steps); about an hour per seed on one core
#: (estimated: a 100-step probe costs 3.2 times the width-128 one)
_LARGE = {**_MEDIUM, "model.d": 256, "data.nspl": 250, "log_every": 750, "checkpoint_every": 250}
_QUICK: dict[str, dict[str, Any]] = {
    "a3-uniform-quick": {**_SMALL},
    "a3-zipf-quick": {**_SMALL, **ZIPF},
    # A.4's recipe, not A.3's: one epoch over the paper's 1000 sentences per class (1000 steps)
    "a4-lm-quick": {**_SMALL, **LM, "data.nspl": 1000, "train.epochs": 1},
}

PRESETS: dict[str, dict[str, Any]] = {
    name: {"figure": name.removesuffix("-quick"), **over}
    for name, over in {**_FAITHFUL, **_QUICK}.items()
}
PRESETS["a3-uniform-medium"] = {"figure": "a3-uniform", **_MEDIUM}
# the claims' medium scale (about an hour for 3 seeds on 2 cores): the large settings; A.4's
# language model over as many steps, one epoch over 0.75 M sentences
PRESETS["a3-uniform-large"] = {"figure": "a3-uniform", **_LARGE}
PRESETS["a3-zipf-large"] = {"figure": "a3-zipf", **_LARGE, **ZIPF}
PRESETS["a4-lm-large"] = {"figure": "a4-lm", **_LARGE, **LM, "data.nspl": 750, "train.epochs": 1}

_SIZES = "nc=3, nw=1200, L=15, K=1000; GPT-2 2 layers, 8 heads, width 512; AdamW 1e-4, wd 0.1"

#: what the paper reports (figures only: no number is given)
PAPER: dict[str, dict[str, Any]] = {
    "a3-uniform": {
        "where": "App. A.3, Fig. 8a",
        "setting": _SIZES + ", uniform words, 0.5 M sentences, 3 epochs",
        "note": "word embeddings (before positional embeddings) collapse by concept",
    },
    "a3-zipf": {
        "where": "App. A.3, Fig. 8b",
        "setting": _SIZES + ", Zipf words, 0.5 M sentences, 3 epochs",
        "note": "word embeddings collapse by concept in the long-tail case too",
    },
    "a4-lm": {
        "where": "App. A.4, Fig. 8c",
        "setting": _SIZES + ", next-token prediction, uniform words, 1 M sentences, 1 epoch",
        "note": "word embeddings collapse by concept",
    },
}


#: the faithful presets run the paper's settings; the paper does not state the batch size (100,
#: as its SGD runs), the dropout (0; GPT-2's default is 0.1), the test set (5 sentences per class)
#: nor, since it shows the word embeddings only, how many test sentences' token states to measure
PAPER_SETTINGS: dict[str, PaperSetting] = {
    name: PaperSetting(
        PAPER[name]["where"],
        unstated=("train.batch_size", "model.dropout", "data.n_test", "measure_sentences"),
    )
    for name in _FAITHFUL
}


#: the smoke rung (what the tests run): training cut short, the summary's structure kept
SMOKE = Smoke(
    {
        "data.nspl": 2,
        "data.n_test": 2,
        "train.epochs": 1,
        "log_every": 1,
        "measure_sentences": 20,
    }
)
