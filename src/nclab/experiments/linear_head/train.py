"""Training one network of the linear-head experiment (one depth, weight decay, learning rate, seed).

The loss follows ``torch.nn.MSELoss``: :math:`\\frac{1}{BK}\\sum_i \\|f(x_i) - y_i\\|^2` over a batch of
B samples with one-hot :math:`y_i` (``loss = "ce"``: mean cross-entropy); weight decay is the
optimiser's (coupled L2 for SGD and Adam, decoupled for AdamW: :func:`nclab.train.optim.make_optimizer`);
the learning rate drops by ``train.schedule.gamma`` after the fraction ``train.schedule.at`` of the
epochs (the paper: x0.1 at 80 %; :func:`nclab.train.optim.make_scheduler`).

Under torch.distributed each rank computes its shard ``batch[rank::world]`` of every batch and scales
its loss so that DDP's gradient average equals the full batch's gradient.

:func:`setup` joins the process group (under ``torchrun``) and loads the data once per process;
:func:`train` builds a :class:`Trainer` (model, optimiser, schedule, data on the device), runs it
through :func:`nclab.train.fit_trainer` and summarises the trained network with Theorem 3.1's
certificate.

A network whose training diverges (:class:`Diverged`: a non-finite train loss, a non-finite weight
or network output when it is measured, a non-finite representation in the measurement, or, with
``diverge_loss_factor``, a train loss above that factor times the first epoch's) stops there; its
summary is :func:`diverged_summary`: ``diverged: true``, the epoch it diverged at (a step of
full-batch gradient descent), the last finite train loss and why, and no collapse metrics.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import torch
import torch.nn.functional as F

from ...distributed import sum_over_ranks
from ...errors import DataError
from ...models.mlp import LinearHeadMLP
from ...models.resnet import resnet20_mlp
from ...runs import RunDir
from ...train import TrainState, fit_trainer
from ...train.optim import make_optimizer, make_scheduler
from ..common.evaluation import accuracy
from ..protocol import Unit
from .balance_rate import pair_imbalance
from .config import LinearHeadConfig
from .data import load_data
from .distributed import setup_distributed
from .lr_bound import unit_record as lr_bound_record
from .measure import certificate, layer_label, measure_layers
from .minimiser import report as conditioning_report
from .sharpness import training_sharpness


class Diverged(Exception):
    """Training diverged at ``epoch`` (1-based: the epochs done when it was seen); ``last_loss``:
    the last finite train loss (None if none was), ``why``: what was seen."""

    def __init__(self, epoch: int, last_loss: float | None, why: str):
        super().__init__(f"training diverged at epoch {epoch}: {why}")
        self.epoch, self.last_loss, self.why = epoch, last_loss, why


def diverged_summary(cfg, job: Mapping[str, Any], exc: Diverged, steps_per_epoch: int):
    """The summary of a network whose training diverged: its job, ``diverged`` and where, no
    collapse metrics (they are absent, never NaN)."""
    out = {k: job[k] for k in ("L1", "L2", "weight_decay", "lr", "seed")}
    return out | {
        "epochs": cfg.train.epochs,
        "steps_per_epoch": steps_per_epoch,
        "diverged": True,
        "diverged_epoch": exc.epoch,
        "last_finite_loss": exc.last_loss,
        "diverged_reason": exc.why,
    }


def build_model(cfg, job: Mapping[str, Any], input_shape: tuple[int, ...], K: int) -> LinearHeadMLP:
    m = cfg.model
    L1, L2 = job["L1"], job["L2"]
    widths = [m.width] * L1
    if L1 and m.first_width:
        widths[0] = m.first_width
    head = [m.head_width or m.width] * (L2 - 1)
    kw = dict(
        activation=m.activation,
        bias=m.bias,
        head_bias=m.head_bias,
        init=m.init,
        init_scale=m.init_scale,
    )
    if m.backbone == "resnet20":
        return resnet20_mlp(K, widths, head, in_channels=input_shape[0], width=m.resnet_width, **kw)
    in_dim = 1
    for s in input_shape:
        in_dim *= s
    return LinearHeadMLP(in_dim, K, widths, head, **kw)


def train_mse_from_stats(stats, K: int) -> float:
    """Mean over N*K entries of (Z_L - Y)^2, exactly, from the class statistics of Z_L:
    sum_c [within-class sum of squares + n_c ||mu_c - e_c||^2] / (N K)."""
    eye = torch.eye(K, dtype=stats.means.dtype, device=stats.means.device)
    n = stats.counts.to(stats.means.dtype)
    total = stats.class_ss.sum() + (n * ((stats.means - eye) ** 2).sum(1)).sum()
    return float(total / (n.sum() * K))


def _ddp(model: LinearHeadMLP, device: torch.device) -> tuple[LinearHeadMLP, torch.nn.Module]:
    """(the model, batch norms synchronised on GPUs; it wrapped for DistributedDataParallel)."""
    from torch.nn.parallel import DistributedDataParallel as DDP

    if device.type == "cuda":
        model = torch.nn.SyncBatchNorm.convert_sync_batchnorm(model)
    return model, DDP(model, device_ids=[device.index] if device.type == "cuda" else None)


def setup(cfg: LinearHeadConfig) -> tuple[Any, int, int, torch.device]:
    """What every unit of a run shares: (the data, this process's rank, the world size, the
    device); joins the process group under ``torchrun``."""
    rank, world, device = setup_distributed(cfg.device)
    return load_data(cfg), rank, world, device


class Trainer:
    """One network in training: the model (``net``: DDP-wrapped under torch.distributed), its
    optimiser and learning-rate schedule, the data on the device, this rank's shard and the batch
    order's generator. The order of construction fixes the random numbers each draws."""

    def __init__(self, cfg, job: Mapping[str, Any], data, rank: int, world: int, device):
        self.log_every, self.checkpoint_every = cfg.measure_every, cfg.checkpoint_every
        self.cfg, self.rank, self.world, self.device = cfg, rank, world, device
        self.K = K = data.num_classes
        torch.manual_seed(job["seed"])
        self.model = self.net = build_model(cfg, job, data.input_shape, K).to(device)
        if world > 1:
            self.model, self.net = _ddp(self.model, device)
        t = cfg.train
        self.wd = job["weight_decay"]
        self.epochs = t.epochs
        self.opt = make_optimizer(t, self.model.parameters(), lr=job["lr"], weight_decay=self.wd)
        self.sched = make_scheduler(t, self.opt, t.epochs)
        self.x, self.y = data.x_train.to(device), data.y_train.to(device)
        self.xt, self.yt = data.x_test.to(device), data.y_test.to(device)
        self.N = N = len(self.y)
        self.onehot = F.one_hot(self.y, K).to(self.x.dtype)
        self.B = min(t.batch_size or N, N)
        self.gen = torch.Generator().manual_seed(job["seed"] + 7919)
        self.shard = torch.arange(rank, N, world, device=device)
        mb = cfg.measure_batch
        self.probe_loader = [
            (self.x[self.shard[i : i + mb]], self.y[self.shard[i : i + mb]])
            for i in range(0, len(self.shard), mb)
        ]
        self.final: dict[str, Any] = {}  # the last epoch's measurement (with the Gram matrices)
        self.first_loss: float | None = None  # the first epoch's train loss (divergence factor)
        self.last_loss: float | None = None  # the last finite train loss
        self.state = TrainState(
            model=self.model, optimizer=self.opt, scheduler=self.sched, generators=self.gen
        )

    def step(self, idx: torch.Tensor) -> torch.Tensor:
        """One optimiser step on the batch ``idx`` (this rank's part of it); returns the batch's
        summed loss on this rank."""
        mine = idx[self.rank :: self.world]
        out = self.net(self.x[mine])
        if self.cfg.train.loss == "mse":
            loss_sum = ((out - self.onehot[mine]) ** 2).sum() / self.K
        else:
            loss_sum = F.cross_entropy(out, self.y[mine], reduction="sum")
        loss = loss_sum * (self.world / len(idx))
        self.opt.zero_grad(set_to_none=True)
        loss.backward()
        self.opt.step()
        return loss_sum.detach()

    def train_epoch(self, epoch: int) -> dict[str, Any]:
        """One pass over the (shuffled, unless full-batch) training set, then the schedule's step."""
        self.net.train()
        N, B, device = self.N, self.B, self.device
        perm = (
            torch.randperm(N, generator=self.gen).to(device)
            if B < N
            else torch.arange(N, device=device)
        )
        total = torch.zeros((), dtype=torch.float64, device=device)
        for i in range(0, N, B):
            total += self.step(perm[i : i + B]).to(torch.float64)
        if self.sched is not None:
            self.sched.step()
        if self.world > 1:  # every rank's share of the loss (no process group in one process)
            sum_over_ranks(total)
        loss = float(total) / N
        self._check_loss(epoch, loss)
        return {"train_loss": loss, "lr": self.opt.param_groups[0]["lr"]}

    def _check_loss(self, epoch: int, loss: float) -> None:
        """Raise :class:`Diverged` on a non-finite loss or one past ``diverge_loss_factor`` times
        the first epoch's; else remember it."""
        if not math.isfinite(loss):
            raise Diverged(epoch + 1, self.last_loss, f"non-finite train loss ({loss})")
        if self.first_loss is None:
            self.first_loss = loss
        f = self.cfg.diverge_loss_factor
        if f is not None and loss > f * self.first_loss:
            why = f"train loss {loss:.4g} > {f:g} x the first epoch's {self.first_loss:.4g}"
            raise Diverged(epoch + 1, self.last_loss, why)
        self.last_loss = loss

    @torch.no_grad()
    def _check_network(self, epoch: int) -> None:
        """Raise :class:`Diverged` if a weight or the network's output on the training set is
        not finite (a last step that overflowed, seen before the next loss is)."""
        if not all(bool(torch.isfinite(p).all()) for p in self.model.parameters()):
            raise Diverged(epoch + 1, self.last_loss, "non-finite weights")
        was = self.model.training
        self.model.eval()
        bad = torch.zeros((), dtype=torch.float64, device=self.device)
        try:
            for xb, _ in self.probe_loader:
                bad += (~torch.isfinite(self.model(xb))).any().to(torch.float64)
        finally:
            self.model.train(was)
        if self.world > 1:  # every rank stops together (each saw its shard)
            sum_over_ranks(bad)
        if float(bad) > 0:
            raise Diverged(epoch + 1, self.last_loss, "non-finite network output")

    def measure(self, grams: bool) -> dict[str, Any]:
        return measure_layers(
            self.model, self.probe_loader, self.K, first=self.cfg.measure_from, grams=grams
        )

    def evaluate(self, epoch: int) -> dict[str, Any]:
        """The logged record: train MSE and accuracy, test accuracy, every measured layer."""
        final = epoch + 1 == self.epochs
        self._check_network(epoch)
        try:
            res = self.measure(grams=final)
        except DataError as exc:  # a representation overflowed inside a finite network
            raise Diverged(epoch + 1, self.last_loss, f"in the measurement: {exc}") from None
        rec = {
            "train_mse": train_mse_from_stats(res["stats"][layer_label(self.model.L)], self.K),
            "train_acc": res["train_acc"],
            "test_acc": accuracy(self.model, self.xt, self.yt, self.cfg.measure_batch),
            "layers": res["layers"],
        }
        if self.cfg.track_imbalance:
            rec["imbalance"] = pair_imbalance(self.model)
        if self.cfg.track_sharpness:
            t = self.cfg.train
            rec["sharpness"] = training_sharpness(
                self.model, self.x, self.y, self.K, t.loss, self.wd, self.cfg.sharpness_iterations
            )
        if final:
            self.final.update(res)
        return rec


def train(cfg: LinearHeadConfig, unit: Unit, run_dir: RunDir, context) -> dict[str, Any]:
    """Train one network (the unit's job) into ``run_dir`` and measure it; returns its summary."""
    data, rank, world, device = context
    job = unit.params
    u = Trainer(cfg, job, data, rank, world, device)
    try:
        history = fit_trainer(u, run_dir, f"linear-head {job['label']}", progress=rank == 0)
    except Diverged as exc:
        return diverged_summary(cfg, job, exc, -(-u.N // u.B))
    if not u.final:  # resumed after the final evaluation was logged: measure again
        u.final.update(u.measure(grams=True))
    final_rec = history[-1]
    cert = certificate(cfg, u.model, u.x[u.shard], u.y[u.shard], u.K, final_rec["layers"])
    summary = {k: job[k] for k in ("L1", "L2", "weight_decay", "lr", "seed")}
    summary.update(
        layers=[{"name": name, **rec} for name, rec in final_rec["layers"].items()],
        train_mse=final_rec["train_mse"],
        train_acc=final_rec["train_acc"],
        test_acc=final_rec["test_acc"],
        certificate=cert,
        grams=u.final.get("grams", {}),
        epochs=cfg.train.epochs,
        steps_per_epoch=-(-u.N // u.B),
        diverged=False,
    )
    if cfg.imbalance_eps2:  # the levels of balance_rate.time_derived
        summary["imbalance_eps2"] = list(cfg.imbalance_eps2)
    if cfg.conditioning:
        summary["conditioning"] = conditioning_report(cfg, u.model, u.x, u.y, u.K, u.wd)
    if cfg.lr_bound:
        summary["lr_bound"] = lr_bound_record(summary, u.N, u.K)
    return summary
