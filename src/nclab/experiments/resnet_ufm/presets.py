"""Presets of the resnet-ufm experiment (``nclab run resnet-ufm --preset NAME``).

Tirer & Bruna (ICML 2022) §6 Fig. 5 (right) and App. G Fig. 10: ResNet18 trained with SGD, lr 0.05
divided by 10 every 40 epochs, weight decay 5e-4, (1) MSE loss without a bias in the last layer,
(2) cross-entropy with a bias; MNIST, and CIFAR-10 with MSE and no bias. The ``*-gpu`` presets are
these settings (the full ResNet18, the whole training set, 120 epochs; the files from
``data.data_dir`` or ``$NCLAB_DATA_DIR``). The extended UFM beside them runs at K = 10.

The CPU presets train a narrow ResNet18 (``width`` 8: 8-16-32-64 channels) on the bundled digits
resized to 16x16, ``-quick`` (60 per class, 24 epochs) and ``-medium`` (100 per class, 45 epochs,
for ``--seeds 3``), in three lr stages (0.05, ÷10 twice). A small training set gives few SGD steps
per epoch, so the presets use batches of 32 and weight decay 5e-2: the decay weight decay applies
in the first stage, lr · wd · steps = 0.05 · 0.05 · 32 · 15 = 1.2 (medium), against 0.47 in the
paper's MNIST run (0.05 · 5e-4 · 469 · 40). With 5e-4 and batches of 128 it would be 0.003, and
with 1e-2 (0.24) the MSE network's W still ends closer to a simplex ETF (docs/ufm.md). ``docs/ufm.md``
("Real networks") lists what each shows and the numbers it measured.
"""

from __future__ import annotations

from typing import Any

from ..protocol import PaperSetting, Smoke

#: the paper's optimiser and schedule: lr 0.05, ÷10 every 40 epochs, weight decay 5e-4
_PAPER_TRAIN = {"optimizer": "sgd", "lr": 0.05, "momentum": 0.9, "weight_decay": 5e-4}
_PAPER_SCHEDULE = {"kind": "step", "every": 40, "gamma": 0.1}
_MSE_NOBIAS = {"model": {"bias": False}, "train": {"loss": "mse"}}
_CE_BIAS = {"model": {"bias": True}, "train": {"loss": "ce"}}
#: the extended UFM at K = 10 (Fig. 5's λ's, init and step; d = 32 >= K, n = 20)
_UFM = {"n": 20, "d": 32, "init": 0.1, "lr": 0.1, "steps": 30_000, "log_every": 1_000}


def _gpu(data: str, setting: dict[str, Any]) -> dict[str, Any]:
    return {
        "data": {"name": data, "image_size": 0, "standardize": True},
        "model": {**setting["model"], "width": 64},
        "train": {
            **_PAPER_TRAIN,
            **setting["train"],
            "epochs": 120,
            "batch_size": 128,
            "schedule": _PAPER_SCHEDULE,
        },
        "ufm": _UFM,
        "measure_every": 5,
        "measure_samples_per_class": 1000,
        "checkpoint_every": 5,
        "device": "auto",
    }


def _cpu(setting: dict[str, Any], epochs: int, per_class: int, ufm_steps: int) -> dict:
    return {
        "data": {"name": "digits", "image_size": 16, "samples_per_class": per_class},
        "model": {**setting["model"], "width": 8},
        "train": {
            **_PAPER_TRAIN,
            **setting["train"],
            "weight_decay": 5e-2,
            "epochs": epochs,
            "batch_size": 32,
            "schedule": {**_PAPER_SCHEDULE, "every": epochs // 3},
        },
        "ufm": {**_UFM, "steps": ufm_steps, "log_every": ufm_steps // 20},
        "measure_every": max(1, epochs // 9),
        "checkpoint_every": max(1, epochs // 6),
        "device": "cpu",
        "threads": 1,
    }


PRESETS: dict[str, dict[str, Any]] = {
    # the paper's settings (GPU)
    "tb-resnet18-mnist-mse-gpu": _gpu("mnist", _MSE_NOBIAS),
    "tb-resnet18-mnist-ce-gpu": _gpu("mnist", _CE_BIAS),
    "tb-resnet18-cifar10-mse-gpu": _gpu("cifar10", _MSE_NOBIAS),
    # narrow ResNet18 on 16x16 digits (CPU)
    "tb-resnet18-digits-mse-quick": _cpu(_MSE_NOBIAS, 24, 60, 10_000),
    "tb-resnet18-digits-ce-quick": _cpu(_CE_BIAS, 24, 60, 10_000),
    "tb-resnet18-digits-mse-medium": _cpu(_MSE_NOBIAS, 45, 100, 20_000),
    "tb-resnet18-digits-ce-medium": _cpu(_CE_BIAS, 45, 100, 20_000),
}


#: the ``*-gpu`` presets run the paper's settings (ResNet18, SGD with lr 0.05 ÷10 every 40 epochs,
#: weight decay 5e-4; the loss and bias of each panel); the paper states neither the momentum, the
#: batch size nor the number of epochs, nor which earlier level it compares (ours: ``layer4.0``),
#: how many training samples the metrics are measured on, or an extended UFM at the network's K
#: (its Fig. 5 UFM has K = 4: the one beside the network, n = 20, d = 32, is ours)
_UNSTATED = (
    "train.momentum",
    "train.batch_size",
    "train.epochs",
    "levels.first",
    "measure_samples_per_class",
    "ufm.n",
    "ufm.d",
    "ufm.steps",
)
PAPER_SETTINGS: dict[str, PaperSetting] = {
    "tb-resnet18-mnist-mse-gpu": PaperSetting("§6 Fig. 5 (right panels)", _UNSTATED),
    "tb-resnet18-mnist-ce-gpu": PaperSetting("§6 Fig. 5 (right panels)", _UNSTATED),
    "tb-resnet18-cifar10-mse-gpu": PaperSetting("App. G Fig. 10", _UNSTATED),
}


#: the smoke rung (what the tests run): training cut short, the summary's structure kept
SMOKE = Smoke(
    {
        "train.epochs": 2,
        "measure_every": 1,
        "data.samples_per_class": 20,
        "ufm.steps": 200,
        "ufm.log_every": 100,
        "checkpoint_every": 0,
    }
)
