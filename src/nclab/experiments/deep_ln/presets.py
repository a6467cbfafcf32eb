"""Presets of the deep-ln experiment (Súkeník, Lampert & Mondelli 2025).

CPU presets train on sklearn's digits (or MNIST-1D, or sentences of the concept/word model for the
transformers) with full-batch Adam, the paper's width 64 and weight decay 5e-3; ``-quick`` variants
sweep three depths; ``*-gpu`` presets read MNIST / CIFAR-10 from ``data.data_dir`` (or
``$NCLAB_DATA_DIR``) and train with mini-batches. ``docs/deep-ln.md`` gives the measured numbers.
"""

from __future__ import annotations

from typing import Any


def _gpu(data: str) -> dict[str, Any]:
    return {
        "data": {"name": data},
        "model": {"width": 64},
        "train": {"epochs": 200, "batch_size": 128, "lr": 1e-3},
        "log_every": 20,
        "checkpoint_every": 20,
    }


PRESETS: dict[str, dict[str, Any]] = {
    # CPU: sklearn's digits, full-batch Adam; the paper's width 64 and weight decay 5e-3
    "rn1-ce": {"train": {"epochs": 2000}, "log_every": 200},
    "rn1-ce-quick": {"depths": [2, 5, 13], "train": {"epochs": 600}},
    "rn2-ce": {
        "model": {"block": "rn2"},
        "train": {"epochs": 2000, "wd_over_depth": True},
        "log_every": 200,
    },
    "rn2-ce-quick": {
        "model": {"block": "rn2"},
        "depths": [2, 5, 13],
        "train": {"epochs": 600, "wd_over_depth": True},
    },
    # MSE converges far more slowly towards its GUFM optimum (an orthogonal frame): larger steps
    "rn1-mse": {"train": {"loss": "mse", "epochs": 2000, "lr": 1e-2}, "log_every": 200},
    "rn1-mse-quick": {"depths": [2, 5, 13], "train": {"loss": "mse", "epochs": 600, "lr": 1e-2}},
    "rn1-ce-mnist1d": {"data": {"name": "mnist1d"}, "train": {"epochs": 2000}, "log_every": 200},
    # transformers on sentences of the concept/word model (10 classes, 6 words from 5 concepts)
    "t11-ce-quick": {
        "data": {"name": "sentences"},
        "model": {"block": "t11", "width": 32},
        "depths": [2, 4, 8],
        "train": {"epochs": 600},
    },
    "t11-ce": {
        "data": {"name": "sentences"},
        "model": {"block": "t11"},
        "depths": [2, 3, 5, 8, 13],
        "train": {"epochs": 1500},
        "log_every": 150,
    },
    "t12-ce": {
        "data": {"name": "sentences"},
        "model": {"block": "t12"},
        "depths": [2, 3, 5, 8, 13],
        "train": {"epochs": 1500, "wd_over_depth": True},
        "log_every": 150,
    },
    # GPU: flattened MNIST / CIFAR-10 from data.data_dir (or $NCLAB_DATA_DIR), mini-batches
    "rn1-ce-mnist-gpu": _gpu("mnist"),
    "rn1-ce-cifar10-gpu": _gpu("cifar10"),
    "rn2-ce-cifar10-gpu": {
        **_gpu("cifar10"),
        "model": {"block": "rn2", "width": 64},
        "train": {**_gpu("cifar10")["train"], "wd_over_depth": True},
    },
}
