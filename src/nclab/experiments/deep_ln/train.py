"""Training one deep-ln network (one depth, one seed) on the exact objective

.. math:: \\mathrm{loss}(W_LX_L) + \\frac{\\lambda}{2}\\sum_{l=1}^{L}\\|W_l\\|_F^2

with Adam or SGD (full batch unless ``batch_size``), measured every ``log_every`` epochs with
:func:`~nclab.experiments.deep_ln.measure.measure`.
"""

from __future__ import annotations

import copy
from typing import Any

import torch
import torch.nn.functional as F

from ...models.lnresnet import LNResNet, LNTransformer
from ...runs import RunDir
from ...train import TrainState, fit_trainer
from ...train.optim import make_optimizer
from ..common.devices import resolve_device
from ..protocol import Unit
from .config import DeepLNConfig
from .data import load_data
from .measure import fit_loss, measure, theory_for


def build_model(cfg: DeepLNConfig, depth: int, data, in_dim: int) -> torch.nn.Module:
    m, K = cfg.model, data.num_classes
    if m.block in ("t11", "t12", "t11-pre"):
        x = data.x_train
        if x.is_floating_point():  # patches: N x T x token_dim
            return LNTransformer(0, x.shape[1], m.width, depth, K, m.block, token_dim=x.shape[2])
        pad = getattr(data, "pad_id", None)
        return LNTransformer(data.vocab, x.shape[1], m.width, depth, K, m.block, pad_id=pad)
    return LNResNet(in_dim, m.width, depth, K, m.block)


def _optimizer(cfg: DeepLNConfig, params) -> torch.optim.Optimizer:
    """Adam or SGD with momentum, without weight decay (the objective holds the regulariser)."""
    return make_optimizer(cfg.train, params, weight_decay=0.0)


def setup(cfg: DeepLNConfig) -> tuple[Any, torch.device]:
    """What every unit of a run shares: (the data set, the device)."""
    return load_data(cfg), resolve_device(cfg.device)


class Trainer:
    """One network in training: the model, its optimiser, the data on the device, λ (divided by
    the depth with ``wd_over_depth``), the GUFM optimum and the batch order's generator. The order
    of construction fixes the random numbers each draws."""

    def __init__(self, cfg: DeepLNConfig, depth: int, seed: int, data, device, epochs=None):
        self.log_every, self.checkpoint_every = cfg.log_every, cfg.checkpoint_every
        t = cfg.train
        self.cfg, self.device = cfg, device
        K = data.num_classes
        self.lam = t.weight_decay / depth if t.wd_over_depth else t.weight_decay
        self.theory = theory_for(t.loss, K, cfg.model.width, self.lam)
        torch.manual_seed(seed)
        x, self.y = data.x_train.to(device), data.y_train.to(device)
        xt, self.yt = data.x_test.to(device), data.y_test.to(device)
        self.x, self.xt = (x, xt) if x.dim() == 3 else (x.flatten(1), xt.flatten(1))
        self.model = build_model(cfg, depth, data, self.x.shape[-1]).to(device)
        self.decayed = self.model.decayed_parameters()
        self.opt = _optimizer(cfg, self.model.parameters())
        self.N = len(self.y)
        self.B = min(t.batch_size or self.N, self.N)
        self.onehot = F.one_hot(self.y, K).float()
        self.gen = torch.Generator().manual_seed(seed + 7919)
        self.epochs = t.epochs if epochs is None else epochs
        self.state = TrainState(model=self.model, optimizer=self.opt, generators=self.gen)

    def use_model(self, model: torch.nn.Module) -> None:
        """Train ``model`` (e.g. a trained network embedded in a deeper one) from here on, with a
        fresh optimiser."""
        self.model = model.to(self.device)
        self.decayed = self.model.decayed_parameters()
        self.opt = _optimizer(self.cfg, self.model.parameters())
        self.state = TrainState(model=self.model, optimizer=self.opt, generators=self.gen)

    def step(self, idx) -> float:
        """One optimiser step on the samples ``idx`` (a slice for the full batch); returns the
        batch's objective weighted by its share of the training set."""
        y = self.y[idx]
        loss = fit_loss(self.model(self.x[idx]), y, self.onehot[idx], self.cfg.train.loss)
        loss = loss + self.lam / 2 * sum((p * p).sum() for p in self.decayed)
        self.opt.zero_grad(set_to_none=True)
        loss.backward()
        self.opt.step()
        return float(loss.detach()) * (len(y) / self.N)

    def train_epoch(self, epoch: int) -> dict[str, Any]:
        N, B = self.N, self.B
        perm = torch.randperm(N, generator=self.gen).to(self.device) if B < N else None
        total = 0.0
        for i in range(0, N, B):
            total += self.step(perm[i : i + B] if perm is not None else slice(None))
        return {"train_objective": total}

    def evaluate(self, epoch: int) -> dict[str, Any]:
        return measure(
            self.model, self.x, self.y, self.xt, self.yt, self.lam, self.cfg.train.loss, self.theory
        )


def train_network(
    cfg: DeepLNConfig,
    depth: int,
    seed: int,
    data,
    unit: RunDir,
    device,
    model: torch.nn.Module | None = None,
    epochs: int | None = None,
) -> dict:
    """Train the depth-``depth`` network of seed ``seed`` in ``unit`` (``model`` if given, a fresh
    one otherwise) for ``epochs`` (default ``train.epochs``); returns its summary (the last
    measurement, λ and the GUFM optimum). The unit keeps the trained weights in ``model.pt``."""
    u = Trainer(cfg, depth, seed, data, device, epochs)
    if model is not None:
        u.use_model(model)
    history = fit_trainer(u, unit, f"deep-ln L={depth} seed={seed}")
    torch.save(u.model.state_dict(), unit.path / "model.pt")
    final = {k: v for k, v in history[-1].items() if k not in ("epoch", "train_objective")}
    return {
        "depth": depth,
        "seed": seed,
        "weight_decay": u.lam,
        "theory": u.theory.to_dict(),
        **final,
    }


def train(cfg: DeepLNConfig, unit: Unit, run_dir: RunDir, context) -> dict[str, Any]:
    """One unit: a network of the sweep, or one of the four of a monotone comparison."""
    data, device = context
    if "role" in unit.params:
        return train_role(cfg, unit, run_dir, data, device)
    return train_network(cfg, unit["depth"], unit.seed, data, run_dir, device)


def train_role(cfg: DeepLNConfig, unit: Unit, run_dir: RunDir, data, device) -> dict[str, Any]:
    """A unit of ``mode = "monotone"`` (:mod:`.monotone`): ``shallow`` and ``scratch`` train a
    fresh network; ``continued`` trains the shallow unit's network on, ``embedded`` that network
    embedded into depth ``monotone.deep`` (its objective at the embedding measured beside the
    shallow one's, in float64, before training)."""
    role, depth, epochs = unit["role"], unit["depth"], unit["epochs"]
    if role in ("shallow", "scratch"):
        return train_network(cfg, depth, unit.seed, data, run_dir, device, epochs=epochs)
    shallow_dir = run_dir.path.parent / f"shallow_seed-{unit.seed}"
    u = Trainer(cfg, cfg.monotone.shallow, unit.seed, data, device)
    u.model.load_state_dict(torch.load(shallow_dir / "model.pt", map_location=device))
    model, extra = u.model, {}
    if role == "embedded":
        model = u.model.embed_into(cfg.monotone.deep, bias=cfg.monotone.bias)
        extra = {
            "objective_shallow_at_embedding": objective64(cfg, data, u.model),
            "objective_embedded_at_embedding": objective64(cfg, data, model),
        }
    out = train_network(cfg, depth, unit.seed, data, run_dir, device, model, epochs)
    return out | extra


@torch.no_grad()
def objective64(cfg: DeepLNConfig, data, model: torch.nn.Module) -> float:
    """The objective loss + (λ/2) Σ‖W_l‖² of ``model`` on the training set, in float64."""
    m = copy.deepcopy(model).cpu().double()
    x, y = data.x_train.flatten(1).double(), data.y_train
    onehot = F.one_hot(y, data.num_classes).double()
    fit = float(fit_loss(m(x), y, onehot, cfg.train.loss))
    lam = cfg.train.weight_decay
    return fit + lam / 2 * sum(float((p * p).sum()) for p in m.decayed_parameters())
