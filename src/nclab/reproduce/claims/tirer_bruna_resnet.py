"""Claims of Tirer & Bruna (ICML 2022) on real networks, for ``nclab reproduce``: ResNet18 against
the nonlinear extended UFM (§6 Fig. 5 right panels, App. G Fig. 10).

Each claim runs the ``resnet-ufm`` experiment (one setting: MSE without a bias in the last layer,
or cross-entropy with a bias) and judges directions, since the paper shows curves only: which frame
W ends closer to (NC2^OF(W) vs NC2^ETF(W)) in the network and in the extended UFM at the same K,
whether the features' own frame distance falls over training, and whether the penultimate level
collapses more than the level one block earlier.
"""

from __future__ import annotations

import dataclasses

from ..checks import Check, Principle, Ratio, interpolates, ours
from ..registry import Claim, RunSpec, Variant, paper_overrides
from .tirer_bruna import tb_claim

#: why the network's features must fall to 0.8x
FALLS = ours(
    Principle.LOG_PLOT,
    "§6 / Fig. 5 shows the penultimate features' frame distance falling over training, no "
    "number; a 20 % fall is our reading of 'falls' for the short quick training",
)
#: the two levels' order and the shared frame are read off figures (relabelled in issue 50: the
#: text says only "the similarity of the NC metrics", it states neither)
LEVELS = ours(
    Principle.LOG_PLOT,
    "our reading of §6, Fig. 5 (right panels) and App. G, Fig. 10, whose curves show the second "
    "level below the first (the text states no order): a ratio below 1",
)
SAME_FRAME = ours(
    Principle.LOG_PLOT,
    "our reading of §6, Fig. 5 (right panels): the text says only 'the similarity of the NC "
    "metrics' of the network and the extended UFM; 'end closer to the same frame' is what the "
    "curves show (a flag per seed: 1 when they do)",
)


def _resnet_checks(mse: bool) -> list:
    """The frame of W (network and extended UFM), the fall of the features' own frame distance,
    the level contrast and the agreement of the two."""
    ours, other = ("nc2_w_of", "nc2_w_etf") if mse else ("nc2_w_etf", "nc2_w_of")
    falls = "nc2_of" if mse else "nc2_etf"
    label = {"nc2_w_of": "NC2^OF(W)", "nc2_w_etf": "NC2^ETF(W)"}
    frame = "an orthogonal frame" if mse else "a simplex ETF"
    return [
        interpolates("net.train_acc"),
        Check(
            f"ResNet18: {label[ours]} < {label[other]} at the end (W closer to {frame})",
            path=f"net.end.second.{ours}",
            op="<",
            ref=f"net.end.second.{other}",
            name="net-frame",
        ),
        Ratio(
            f"ResNet18: {falls} of the penultimate features falls over training (end/start < 0.8)",
            num=f"net.end.second.{falls}",
            den=f"net.start.second.{falls}",
            below=0.8,
            name="net-falls",
            ours=FALLS,
        ),
        Ratio(
            "ResNet18: the second level collapses more (NC1 of H2 / NC1 of H1 < 1)",
            num="net.end.second.nc1",
            den="net.end.first.nc1",
            below=1.0,
            name="net-levels",
            ours=LEVELS,
        ),
        Check(
            f"extended UFM: {label[ours]} < {label[other]} at the end",
            path=f"ufm.end.second.{ours}",
            op="<",
            ref=f"ufm.end.second.{other}",
            name="ufm-frame",
        ),
        Ratio(
            "extended UFM: σ(W1H1) collapses more than H1 (NC1 ratio < 1)",
            num="ufm.end.second.nc1",
            den="ufm.end.first.nc1",
            below=1.0,
            name="ufm-levels",
            ours=LEVELS,
        ),
        Check(
            "network and extended UFM end closer to the same frame (every seed)",
            path="derived.same_frame",
            op=">=",
            value=1.0,
            name="same-frame",
            ours=SAME_FRAME,
        ),
    ]


def _paper_weight_decay(preset: str) -> Variant:
    """The medium run at the paper's weight decay (the CPU presets use 100x it: their few
    epochs on 16x16 digits collapse little at 5e-4, docs/ufm.md)."""
    over = paper_overrides("resnet-ufm", preset, ("train.weight_decay",))
    return Variant(
        f"the paper's weight decay {over['train.weight_decay']:g}", {"main": over}, ("medium",)
    )


def _resnet(mse: bool) -> Claim:
    """ResNet18 against the nonlinear extended UFM (Fig. 5 right / Fig. 10), one setting."""
    setting = "mse-nobias" if mse else "ce-bias"
    frame = "an orthogonal frame" if mse else "a simplex ETF"
    keys = ("nc1", "nc2_etf", "nc2_of", "nc2_w_etf", "nc2_w_of", "nc3", "nc3_of")
    return tb_claim(
        f"resnet18-{setting}",
        "§6 Fig. 5 (right panels), App. G Fig. 10",
        f"ResNet18 trained with SGD ({'MSE, no bias' if mse else 'cross-entropy with bias'} "
        f"in the last layer) behaves like the nonlinear extended UFM: the penultimate features "
        f"and W approach {frame}, and the penultimate level collapses more than the level one "
        "block earlier; the extended UFM at the same K ends closer to the same frame.",
        runs={
            "main": RunSpec(
                "resnet-ufm",
                quick=f"tb-resnet18-digits-{setting.split('-')[0]}-quick",
                medium=f"tb-resnet18-digits-{setting.split('-')[0]}-medium",
                full=f"tb-resnet18-mnist-{setting.split('-')[0]}-gpu",
                full_needs_gpu=True,
            )
        },
        measured={
            "train accuracy": "net.train_acc",
            "test accuracy": "net.test_acc",
            **{f"ResNet18 H2 {k}": f"net.end.second.{k}" for k in keys},
            "ResNet18 H1 nc1": "net.end.first.nc1",
            "ResNet18 H1 nc2_of": "net.end.first.nc2_of",
            **{f"UFM σ(W1H1) {k}": f"ufm.end.second.{k}" for k in keys},
            "UFM H1 nc1": "ufm.end.first.nc1",
            "NC2^OF(W) - NC2^ETF(W), ResNet18": "derived.net_of_minus_etf",
            "NC2^OF(W) - NC2^ETF(W), UFM": "derived.ufm_of_minus_etf",
        },
        paper_values={
            "frame": f"{frame} (curves, Fig. 5 right" + (", Fig. 10 on CIFAR-10)" if mse else ")"),
            "levels": "the second level collapses more than the first",
        },
        checks=_resnet_checks(mse),
        variants=[_paper_weight_decay(f"tb-resnet18-mnist-{setting.split('-')[0]}-gpu")],
        quick_seconds=30,  # 24 s measured on an idle 2-core machine (ResNet18 + UFM)
        medium_seconds=120,  # 51 s for 3 seeds on 2 workers (recorded 2026-12-01, loaded machine)
        full_seconds=1800,
        note="H1 = layer4.0 (the output of the last stage's first block, average-pooled), "
        "H2 = fc:input (the penultimate features, σ(W1H1) of the model); the extended UFM at "
        "K = 10, d = 32, n = 20 with the network's loss and bias, λ's 0.005, init ×0.1. "
        "docs/ufm.md ('Real networks') has the 3-seed medium numbers.",
    )


def _resnet_cifar10() -> Claim:
    """App. G Fig. 10: the MSE, bias-free setting on CIFAR-10 (GPU work: the data are the user's
    files, the run is hours on a CPU), judged by the MNIST claim's checks."""
    base = _resnet(mse=True)
    return dataclasses.replace(
        base,
        id="tirer-bruna/resnet18-cifar10-mse-nobias",
        where="App. G Fig. 10 (ResNet18 on CIFAR-10)",
        claim="ResNet18 trained on CIFAR-10 with SGD (MSE, no bias in the last layer) behaves like "
        "the nonlinear extended UFM: the penultimate features and W approach an orthogonal frame, "
        "the penultimate level collapses more than the level one block earlier; the extended UFM "
        "at the same K ends closer to the same frame.",
        runs={
            "main": RunSpec(
                "resnet-ufm",
                quick=None,
                full="tb-resnet18-cifar10-mse-gpu",
                full_needs_gpu=True,
            )
        },
        paper_values={
            "frame": "an orthogonal frame (curves, Fig. 10)",
            "levels": "the second level collapses more than the first",
        },
        quick_seconds=0.0,
        medium_seconds=0.0,
        full_seconds=3600.0,
        note="GPU only (CIFAR-10 files from data.data_dir or $NCLAB_DATA_DIR); no quick or medium "
        "rung: the CPU stand-ins on digits are tirer-bruna/resnet18-mse-nobias's. "
        + base.note.split(" docs/ufm.md")[0],
    )


CLAIMS: list[Claim] = [_resnet(mse=True), _resnet(mse=False), _resnet_cifar10()]
