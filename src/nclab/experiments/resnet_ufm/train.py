"""Training one unit (one seed) of a resnet-ufm run: the extended UFM first (:mod:`.ufm`, seconds,
in ``ufm/`` of the unit's directory), then the ResNet18 with SGD, measuring its two feature levels
as it goes, and the unit's summary (:mod:`.summary`).

The MSE loss is Tirer & Bruna's (1/2N) Σ_i ‖W h_i (+ b) - y_i‖² with one-hot y_i, per batch;
cross-entropy is the mean over the batch. Weight decay is SGD's (coupled L2, on every parameter,
batch norm included, as in the usual ResNet recipes: :func:`nclab.train.optim.make_optimizer`).
The learning rate follows ``train.schedule`` (the paper's: × ``gamma`` every ``every`` epochs,
:func:`nclab.train.optim.make_scheduler`).

The log (``metrics.jsonl``) has a record at epoch 0 (at initialisation), then every
``measure_every`` epochs and at the end: ``{"epoch", "train_loss", "lr", "test_acc", "first":
{...}, "second": {...}}`` measured in eval mode on the (``measure_samples_per_class``) training
samples.
"""

from __future__ import annotations

from typing import Any

import torch
import torch.nn.functional as F
from torch import nn

from ...data.preprocess import balanced_indices
from ...models.resnet18 import resnet18
from ...runs import RunDir
from ...train import TrainState, fit_trainer
from ...train.optim import make_optimizer, make_scheduler
from ..common.devices import resolve_device
from ..common.evaluation import accuracy
from ..protocol import Unit
from .config import ResNetUFMConfig, describe
from .data import load_images
from .measure import network_levels
from .summary import unit_summary
from .ufm import run_ufm


def build_network(cfg: ResNetUFMConfig, in_channels: int, K: int) -> nn.Module:
    """ResNet18 with the small-image stem; ``fc`` with or without a bias (``model.bias``)."""
    net = resnet18(K, in_channels=in_channels, width=cfg.model.width, small_input=True)
    if not cfg.model.bias:
        net.fc = nn.Linear(net.feature_dim, K, bias=False)
    return net


def loss_fn(out: torch.Tensor, y: torch.Tensor, loss: str) -> torch.Tensor:
    """(1/2B) Σ ‖out - onehot(y)‖² (``"mse"``) or the mean cross-entropy (``"ce"``).

    >>> out = torch.tensor([[1.0, 0.0], [0.0, 0.0]])
    >>> float(loss_fn(out, torch.tensor([0, 1]), "mse"))
    0.25
    """
    if loss == "mse":
        target = F.one_hot(y, out.shape[1]).to(out.dtype)
        return 0.5 * ((out - target) ** 2).sum(1).mean()
    return F.cross_entropy(out, y)


class Trainer:
    """The network in training: model, SGD, learning-rate schedule, data on the device, the batch
    order's generator and the probe's loader (a fixed, balanced subset of the training set). The
    order of construction fixes the random numbers each draws."""

    def __init__(self, cfg: ResNetUFMConfig, data, seed: int, device: torch.device):
        self.log_every, self.checkpoint_every = cfg.measure_every, cfg.checkpoint_every
        self.cfg, self.device = cfg, device
        self.K = K = data.num_classes
        torch.manual_seed(seed)
        self.model = build_network(cfg, data.x_train.shape[1], K).to(device)
        t = cfg.train
        self.epochs = t.epochs
        self.opt = make_optimizer(t, self.model.parameters())
        self.sched = make_scheduler(t, self.opt, t.epochs)
        self.x, self.y = data.x_train.to(device), data.y_train.to(device)
        self.xt, self.yt = data.x_test.to(device), data.y_test.to(device)
        self.gen = torch.Generator().manual_seed(seed + 7919)
        keep = torch.arange(len(data.y_train))
        if cfg.measure_samples_per_class is not None:
            g = torch.Generator().manual_seed(seed + 1)
            keep = balanced_indices(data.y_train, cfg.measure_samples_per_class, K, g)
        mb = cfg.measure_batch
        keep = keep.to(device)
        self.probe_loader = [
            (self.x[keep[i : i + mb]], self.y[keep[i : i + mb]]) for i in range(0, len(keep), mb)
        ]
        self.state = TrainState(
            model=self.model, optimizer=self.opt, scheduler=self.sched, generators=self.gen
        )

    def train_epoch(self, epoch: int) -> dict[str, Any]:
        """One pass over the shuffled training set, then the schedule's step."""
        self.model.train()
        N, B = len(self.y), self.cfg.train.batch_size
        perm = torch.randperm(N, generator=self.gen).to(self.device)
        total = torch.zeros((), dtype=torch.float64, device=self.device)
        lr = self.opt.param_groups[0]["lr"]
        for i in range(0, N, B):
            idx = perm[i : i + B]
            loss = loss_fn(self.model(self.x[idx]), self.y[idx], self.cfg.train.loss)
            self.opt.zero_grad(set_to_none=True)
            loss.backward()
            self.opt.step()
            total += loss.detach().to(torch.float64) * len(idx)
        if self.sched is not None:
            self.sched.step()
        return {"train_loss": float(total) / N, "lr": lr}

    def evaluate(self, epoch: int | None = None) -> dict[str, Any]:
        levels = network_levels(self.model, self.probe_loader, self.K, self.cfg.levels)
        return {
            "test_acc": accuracy(self.model, self.xt, self.yt, self.cfg.measure_batch),
            **levels,
        }


def train(cfg: ResNetUFMConfig, unit: Unit, run_dir: RunDir, context: Any) -> dict[str, Any]:
    """One seed: the data (drawn with the unit's seed), the extended UFM in ``run_dir/ufm``, then
    the network in ``run_dir``; returns the unit's summary."""
    data = load_images(cfg.data, unit.seed)
    K = data.num_classes
    ufm_history = run_ufm(cfg, K, unit.seed, run_dir) if cfg.ufm.steps else []
    net = Trainer(cfg, data, unit.seed, resolve_device(cfg.device))
    history = fit_trainer(net, run_dir, f"resnet-ufm: {describe(cfg)}", first_record=net.evaluate)
    return unit_summary(cfg, K, history, ufm_history)
