"""Benchmark: what the collapse callbacks add to a training run, in Lightning and the Hugging Face
``Trainer``.

A small CNN (two 3x3 convolutions, global average pooling, a linear classifier) is trained for a
few epochs on synthetic 10-class images with a validation (evaluation) pass every epoch, three ways
per framework, from the same seed:

* ``without``: no callback;
* ``with``: ``CollapseCallback(["pool", "fc:input"], classifier="fc")`` as documented, measuring on
  the validation loop's own forward passes (the second pass from the pooled features in memory);
* ``today``: the same callback with ``loader=<the validation loader>``: the probe's own two passes
  over it at every measurement, what the callback did by default before it measured in the loop.

Time: the whole ``fit`` / ``train`` call, best of ``--repeats`` runs after a tiny warm-up run of
each, the variants interleaved so that a slow moment of the machine hits them alike. Agreement: the largest relative difference
between the last measurement of ``with`` and of ``today`` (the same final model: nothing in the
callbacks draws random numbers), expected at rounding level.

Usage: python benchmarks/bench_callbacks.py [--epochs 3] [--train 8192] [--val 2048] [--repeats 3]
[--threads 0] [--smoke]. ``--smoke`` (or ``--quick``): one epoch on 128 images, one repeat, no
warm-up: seconds, to check the script runs (``tests/test_benchmarks.py``); its timings mean
nothing. The last line of output is one JSON object: ``overhead`` = (time with the
callback) / (time without), per framework (target for Lightning: <= 1.10), ``overhead_today`` the
same for ``today``, and the seconds of every variant.
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
import warnings

import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

K, SIDE, LAYERS = 10, 16, ["pool", "fc:input"]


class CNN(nn.Module):
    """conv(3 -> 32) - ReLU - conv(32 -> 64) - ReLU - global average pool - fc(64 -> K)."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Sequential(
            nn.Conv2d(3, 32, 3, padding=1), nn.ReLU(), nn.Conv2d(32, 64, 3, padding=1), nn.ReLU()
        )
        self.pool = nn.Sequential(nn.AdaptiveAvgPool2d(1), nn.Flatten())
        self.fc = nn.Linear(64, K)

    def forward(self, x):
        return self.fc(self.pool(self.conv(x)))


def images(n: int, seed: int) -> tuple[torch.Tensor, torch.Tensor]:
    """A colour pattern per class plus noise."""
    g = torch.Generator().manual_seed(seed)
    y = torch.arange(n) % K
    patterns = torch.randn(K, 3, SIDE, SIDE, generator=torch.Generator().manual_seed(99))
    return patterns[y] + 1.5 * torch.randn(n, 3, SIDE, SIDE, generator=g), y


# --- Lightning -------------------------------------------------------------------------------------
def lightning_run(variant: str, cfg: argparse.Namespace) -> tuple[float, dict]:
    import lightning as L

    from nclab.integrations.lightning import CollapseCallback

    class Module(L.LightningModule):
        def __init__(self):
            super().__init__()
            self.net = CNN()

        def forward(self, x):
            return self.net(x)

        def training_step(self, batch, i):
            return nn.functional.cross_entropy(self(batch[0]), batch[1])

        def validation_step(self, batch, i):
            self.log("val_loss", nn.functional.cross_entropy(self(batch[0]), batch[1]))

        def configure_optimizers(self):
            return torch.optim.SGD(self.parameters(), lr=0.05, momentum=0.9)

    torch.manual_seed(0)
    train = DataLoader(TensorDataset(*images(cfg.train, 1)), batch_size=128, shuffle=True)
    val = DataLoader(TensorDataset(*images(cfg.val, 2)), batch_size=256)
    layers = [f"net.{name}" for name in LAYERS]
    callbacks = []
    if variant != "without":
        own = {"loader": val} if variant == "today" else {}
        callbacks.append(CollapseCallback(layers, K, classifier="net.fc", **own))
    trainer = L.Trainer(
        max_epochs=cfg.epochs,
        callbacks=callbacks,
        logger=False,
        enable_checkpointing=False,
        enable_progress_bar=False,
        enable_model_summary=False,
        num_sanity_val_steps=0,
        accelerator="cpu",
    )
    start = time.perf_counter()
    trainer.fit(Module(), train, val)
    seconds = time.perf_counter() - start
    return seconds, (callbacks[0].history[-1] if callbacks else {})


# --- the Hugging Face Trainer ----------------------------------------------------------------------
def hf_run(variant: str, cfg: argparse.Namespace) -> tuple[float, dict]:
    import transformers

    from nclab.integrations.transformers import CollapseCallback

    class Model(nn.Module):
        def __init__(self):
            super().__init__()
            self.net = CNN()

        def forward(self, pixel_values, labels=None):
            logits = self.net(pixel_values)
            loss = nn.functional.cross_entropy(logits, labels) if labels is not None else None
            return {"loss": loss, "logits": logits}

    def rows(n, seed):
        x, y = images(n, seed)
        return [{"pixel_values": x[i], "labels": y[i]} for i in range(n)]

    torch.manual_seed(0)
    model = Model()
    train, val = rows(cfg.train, 1), rows(cfg.val, 2)
    args = transformers.TrainingArguments(
        tempfile.mkdtemp(),
        num_train_epochs=cfg.epochs,
        eval_strategy="epoch",
        save_strategy="no",
        learning_rate=0.05,
        optim="sgd",
        per_device_train_batch_size=128,
        per_device_eval_batch_size=256,
        report_to=[],
        use_cpu=True,
        disable_tqdm=True,
        seed=0,
        dataloader_num_workers=0,
    )
    trainer = transformers.Trainer(model=model, args=args, train_dataset=train, eval_dataset=val)
    trainer.remove_callback(transformers.PrinterCallback)
    callback = None
    if variant != "without":
        own = {}
        if variant == "today":
            own["loader"] = trainer.get_eval_dataloader()
        layers = [f"net.{name}" for name in LAYERS]
        callback = CollapseCallback(layers, K, classifier="net.fc", **own)
        trainer.add_callback(callback)
    start = time.perf_counter()
    trainer.train()
    seconds = time.perf_counter() - start
    last = {k.removeprefix("eval_"): v for k, v in callback.history[-1].items()} if callback else {}
    return seconds, last


def largest_gap(a: dict, b: dict) -> float:
    keys = [k for k in a if k.startswith("collapse/") and k in b]
    return max(abs(a[k] - b[k]) / max(abs(b[k]), 1e-300) for k in keys)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--epochs", type=int, default=3)
    ap.add_argument("--train", type=int, default=8192, help="training images")
    ap.add_argument("--val", type=int, default=2048, help="validation images")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--threads", type=int, default=0, help="torch threads (0: torch's default)")
    ap.add_argument(
        "--smoke", "--quick", action="store_true", help="tiny settings, seconds: checks it runs"
    )
    cfg = ap.parse_args()
    if cfg.smoke:
        cfg.epochs, cfg.train, cfg.val, cfg.repeats = 1, 128, 64, 1
    if cfg.threads:
        torch.set_num_threads(cfg.threads)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    warnings.filterwarnings("ignore")  # the frameworks' advice on workers and logging intervals
    import logging

    import lightning.pytorch  # noqa: F401  (it sets its logger's level when imported)

    logging.getLogger("lightning.pytorch").setLevel(logging.ERROR)
    variants = ("without", "with", "today")
    runs = {"lightning": lightning_run, "transformers": hf_run}
    seconds = {fw: {v: float("inf") for v in variants} for fw in runs}
    last: dict = {fw: {} for fw in runs}
    tiny = argparse.Namespace(epochs=1, train=256, val=128)
    if not cfg.smoke:  # warm-up: imports, first calls, allocator
        for run in runs.values():
            for v in variants:
                run(v, tiny)
    for _ in range(cfg.repeats):
        for fw, run in runs.items():
            for v in variants:
                t, values = run(v, cfg)
                seconds[fw][v] = min(seconds[fw][v], t)
                last[fw][v] = values
    out = {
        "overhead": {fw: seconds[fw]["with"] / seconds[fw]["without"] for fw in runs},
        "overhead_today": {fw: seconds[fw]["today"] / seconds[fw]["without"] for fw in runs},
        "target": {"lightning": 1.10},
        "agreement": {fw: largest_gap(last[fw]["with"], last[fw]["today"]) for fw in runs},
        "seconds": seconds,
        "settings": {
            "epochs": cfg.epochs,
            "train": cfg.train,
            "val": cfg.val,
            "repeats": cfg.repeats,
            "threads": torch.get_num_threads(),
        },
    }
    for fw in runs:
        s = seconds[fw]
        print(
            f"{fw:12s} without {s['without']:7.2f} s   with {s['with']:7.2f} s "
            f"(x{out['overhead'][fw]:.3f})   today's {s['today']:7.2f} s "
            f"(x{out['overhead_today'][fw]:.3f})   agreement {out['agreement'][fw]:.1e}"
        )
    print(json.dumps(out))


if __name__ == "__main__":
    main()
