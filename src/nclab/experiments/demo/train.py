"""Training the demo MLP with :func:`nclab.train.fit` and measuring it with the probe."""

from __future__ import annotations

from typing import Any

import torch
from torch import nn

from ...data.real import digits
from ...probe import CollapseProbe
from ...runs import RunDir
from ...train import TrainState, fit_trainer
from ...train.optim import make_optimizer
from ..protocol import Unit
from .config import DemoConfig


def build_model(d_in: int, k: int, width: int, depth: int) -> nn.Sequential:
    layers: list[nn.Module] = []
    d = d_in
    for _ in range(depth):
        layers += [nn.Linear(d, width), nn.ReLU()]
        d = width
    layers.append(nn.Linear(d, k))
    return nn.Sequential(*layers)


def probe_layers(model: nn.Sequential) -> tuple[list[str], str, dict[str, str]]:
    """(layers to probe, the classifier, layer -> display name): every ReLU's output but the
    last, and the classifier's input (the last ReLU's output)."""
    relus = [str(i) for i, m in enumerate(model) if isinstance(m, nn.ReLU)]
    clf = str(len(model) - 1)
    clf_input = f"{clf}:input"
    names = {name: f"relu{i + 1}" for i, name in enumerate(relus)} | {clf_input: "classifier input"}
    return [*relus[:-1], clf_input], clf, names


class Trainer:
    """The MLP on the digits, AdamW, mini-batches reshuffled every epoch, the probe's layers."""

    def __init__(self, cfg: DemoConfig, seed: int):
        self.log_every, self.checkpoint_every = cfg.log_every, cfg.checkpoint_every
        torch.manual_seed(seed)
        self.data = digits(seed=seed)
        t = cfg.train
        self.model = build_model(
            self.data.x_train.shape[1], self.data.num_classes, cfg.model.width, cfg.model.depth
        )
        self.opt = make_optimizer(t, self.model.parameters())
        self.loss_fn = nn.CrossEntropyLoss()
        self.gen = torch.Generator().manual_seed(seed)
        self.layers, self.clf, self.names = probe_layers(self.model)
        self.epochs, self.batch_size = t.epochs, t.batch_size or len(self.data.y_train)
        self.state = TrainState(model=self.model, optimizer=self.opt, generators=self.gen)

    def train_epoch(self, epoch: int) -> dict[str, Any]:
        x, y = self.data.x_train, self.data.y_train
        self.model.train()
        n = len(y)
        perm = torch.randperm(n, generator=self.gen)
        total = 0.0
        for i in range(0, n, self.batch_size):
            idx = perm[i : i + self.batch_size]
            loss = self.loss_fn(self.model(x[idx]), y[idx])
            self.opt.zero_grad()
            loss.backward()
            self.opt.step()
            total += loss.item() * len(idx)
        return {"train_loss": total / n}

    def evaluate(self, epoch: int) -> dict[str, Any]:
        d = self.data
        probe = CollapseProbe(self.model, self.layers, d.num_classes, classifier=self.clf)
        res = probe.run([(d.x_train, d.y_train)], progress=False).to_dict()
        with torch.no_grad():
            test_acc = float((self.model(d.x_test).argmax(1) == d.y_test).float().mean())
        return {"test_acc": test_acc, "layers": {self.names[k]: v for k, v in res.items()}}


def train(cfg: DemoConfig, unit: Unit, run_dir: RunDir, context: Any) -> dict[str, Any]:
    tr = Trainer(cfg, unit.seed)
    history = fit_trainer(tr, run_dir, "demo: training")
    final = history[-1]
    return {
        "train_acc": final["layers"]["classifier input"].get("acc"),
        "test_acc": final["test_acc"],
        "train_loss": final["train_loss"],
        "layers": final["layers"],
    }
