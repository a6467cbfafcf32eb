"""Training the word networks h / h* with :func:`nclab.train.fit_trainer`, one unit per seed, and
re-measuring a finished run.

Trainers (``train.optimizer``):

* ``"sgd"`` (default, faithful): the authors' recipe — SGD, lr 0.1, batch 100, no momentum,
  reshuffled every epoch, weight decay λ — with the hand-written step
  :func:`nclab.models.wordnet.sgd_step` (same update as ``torch.optim.SGD``, ~1.4x faster).
* ``"lbfgs"`` (fast path): full-batch L-BFGS on the *same* regularised empirical objective
  (:func:`nclab.models.wordnet.full_batch_objective`), one "epoch" = ``train.lbfgs_iters``
  iterations. It reaches the minimiser SGD approaches, which the theory describes; it needs λ > 0
  (without weight decay there is no minimiser).

With ``device`` CUDA the network and its training data live on the GPU (the long no-weight-decay
runs: 5 M small steps); what is measured — records, summaries, figures — is computed on a CPU
copy of the network, the same code on either device.

The checkpoint is a :class:`~nclab.train.TrainState` of the network, the L-BFGS optimiser, the
batch generator and the :class:`Progress` counters (every ``checkpoint_every`` epochs; ``nclab run
--resume DIR`` continues to the same numbers). A unit keeps its trained state in
``final_state.pt``: the figures are drawn from it, and :func:`remeasure` (the experiment's hook,
called by :func:`nclab.experiments.runner.remeasure`) recomputes a finished unit's summary from it.
"""

from __future__ import annotations

import copy
import math
from typing import Any

import torch

from ...collapse.embedding import group_collapse
from ...data.sentences import make_dataset, make_task
from ...errors import ConfigError
from ...models.wordnet import WordNet, collapse_views, full_batch_objective, sgd_step
from ...rng import generator
from ...runs import RunDir
from ...train import TrainState, fit_trainer
from ..common.devices import resolve_device
from ..protocol import Unit, UnitResult
from .config import FCConfig, weight_decays
from .measure import common_u, pca_singular_values, u_offset, u_vs_sampled_frequency
from .measure import measure as measure_network
from .summary import unit_summary

FINAL = "final_state.pt"  # a unit's trained state


class Progress:
    """What an epoch carries to the next besides the weights: optimiser steps taken, and for
    L-BFGS the last objective and whether its memory was just cleared."""

    def __init__(self) -> None:
        self.steps = 0
        self.prev_objective = math.inf
        self.restarted = False

    def state_dict(self) -> dict[str, Any]:
        return {
            "steps": self.steps,
            "prev_objective": self.prev_objective,
            "restarted": self.restarted,
        }

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.steps = int(state["steps"])
        self.prev_objective = float(state["prev_objective"])
        self.restarted = bool(state["restarted"])


def make_network(cfg: FCConfig, seed: int) -> WordNet:
    """The network of seed ``seed`` as initialised."""
    d, m = cfg.data, cfg.model
    dtype = torch.float64 if m.dtype == "float64" else torch.float32
    return WordNet(
        d.nw, d.L, m.d, d.K, m.layer_norm, m.ln_eps, m.init_scale,
        generator=generator(seed, 3), dtype=dtype,
    )  # fmt: skip


def make_sentence_task(cfg: FCConfig, seed: int):
    """The sentence task (latent concept sequences, word frequencies) of seed ``seed``."""
    d = cfg.data
    return make_task(d.nc, d.nw, d.L, d.K, d.freq, d.zipf_s, d.distinct, seed)


class Trainer:
    """The network, its data and one of the two trainers: ``train_epoch`` for
    :func:`~nclab.train.fit_trainer`, ``converged`` (L-BFGS at the minimiser) to stop early.
    ``device`` (default: the config's) is where the network trains."""

    def __init__(self, cfg: FCConfig, seed: int | None = None, device: str | None = None):
        self.log_every, self.checkpoint_every = cfg.log_every, cfg.checkpoint_every
        seed = cfg.seed if seed is None else seed
        t = cfg.train
        self.cfg, self.t = cfg, t
        self.task = make_sentence_task(cfg, seed)
        self.data = make_dataset(self.task, cfg.data.nspl, cfg.data.n_test, seed)
        self.device = resolve_device(cfg.device if device is None else device)
        self.net = make_network(cfg, seed).to(self.device)  # drawn on the CPU: the same numbers
        self.x, self.y = self.data.x_train.to(self.device), self.data.y_train.to(self.device)
        self.dtype = self.net.W.dtype
        self.lam_w, self.lam_u = weight_decays(cfg)
        self.batch_gen = generator(seed, 4)
        self.progress = Progress()
        self.epochs = t.epochs
        self.converged = False
        self.opt = None
        if t.optimizer == "lbfgs":
            self.opt = torch.optim.LBFGS(
                list(self.net.parameters()),
                lr=1.0,
                max_iter=t.lbfgs_iters,
                max_eval=4 * t.lbfgs_iters + 20,
                history_size=t.lbfgs_history,
                tolerance_grad=1e-12,
                tolerance_change=0.0,
                line_search_fn="strong_wolfe",
            )
        self.state = TrainState(
            model=self.net,
            optimizer=self.opt,
            generators={"batch_gen": self.batch_gen},
            progress=self.progress,
        )

    @property
    def optimizer_steps(self) -> int:
        """Optimiser steps so far (SGD mini-batches or L-BFGS iterations)."""
        return self.progress.steps

    def train_epoch(self, epoch: int) -> dict[str, Any]:
        return self._lbfgs_epoch() if self.opt is not None else self._sgd_epoch()

    def _sgd_epoch(self) -> dict[str, Any]:
        t, x, y = self.t, self.x, self.y
        n = x.shape[0]
        perm = torch.randperm(n, generator=self.batch_gen).to(self.device)
        total = torch.zeros((), dtype=torch.float64, device=self.device)
        nb = 0
        learnable = self.cfg.model.layer_norm == "learnable"
        with torch.enable_grad() if learnable else torch.no_grad():
            for i in range(0, n, t.batch_size):
                idx = perm[i : i + t.batch_size]
                total += sgd_step(self.net, x[idx], y[idx], t.lr, self.lam_w, self.lam_u)
                nb += 1
        self.progress.steps += nb
        loss = float(total) / nb
        if not math.isfinite(loss):
            raise ConfigError(f"training diverged (train loss {loss}); lower train.lr")
        return {"train_loss": loss}

    def _lbfgs_epoch(self) -> dict[str, Any]:
        x, y, p = self.x, self.y, self.progress

        def closure():
            self.opt.zero_grad(set_to_none=True)
            f, _ = full_batch_objective(self.net, x, y, self.lam_w, self.lam_u)
            f.backward()
            return f

        before = int(self.opt.state[self.opt._params[0]].get("n_iter", 0))
        self.opt.step(closure)
        p.steps += int(self.opt.state[self.opt._params[0]].get("n_iter", 0)) - before
        with torch.no_grad():  # the objective at the accepted point
            f, ce = (float(v) for v in full_batch_objective(self.net, x, y, self.lam_w, self.lam_u))
        # no progress over an epoch (to the precision of the dtype): first forget the curvature
        # pairs (a stale memory can give a non-descent direction) and retry; converged if a fresh
        # start cannot descend either
        tol = 1e-7 if self.dtype == torch.float32 else 1e-12
        stalled = p.prev_objective - f <= tol * abs(f)
        self.converged = stalled and p.restarted
        if stalled and not p.restarted:
            self.opt.state.clear()
        p.restarted = stalled
        p.prev_objective = f
        return {"train_loss": ce, "objective": f}

    def evaluate(self, epoch: int) -> dict[str, Any]:
        return self.measure(full=False)

    # --- measurements ----------------------------------------------------------------------------
    def cpu_net(self) -> WordNet:
        """The network on the CPU, where it is measured: itself when it trains there, else a copy."""
        return self.net if self.device.type == "cpu" else copy.deepcopy(self.net).cpu()

    def measure(self, full: bool = True) -> dict[str, Any]:
        """:func:`~.measure.measure` of the network now (``full``: every embedding metric)."""
        return measure_network(
            self.cpu_net(), self.task, self.data, self.lam_w, self.lam_u, self.optimizer_steps,
            full=full,
        )  # fmt: skip


@torch.no_grad()
def untrained_collapse(tr: Trainer) -> dict[str, Any]:
    """Within-concept variability of the word vectors of the network as initialised (call before
    training or resuming): the baseline the trained network's collapse is compared with."""
    net = tr.cpu_net()
    words, _ = collapse_views(net)
    m = group_collapse(words, tr.task.word_concept, tr.task.nc, "initial word vectors")
    return {
        "word_nc1_trace": m["nc1_trace"],
        "word_dir_nc1": m["dir_nc1"],
        "u_common_relative": u_offset(net)["relative"],
    }


def summarize_trainer(
    cfg: FCConfig, tr: Trainer, untrained: dict[str, Any], history: list[dict[str, Any]]
) -> dict[str, Any]:
    """A unit's summary: :func:`~.summary.unit_summary` of the network now, beside the untrained
    network's collapse, the PCA panels' singular values, the u blocks' norms against the
    frequencies of the words sampled at them (§2.2's mechanism) and U's distance to the set N of
    Lemmas G and N (:func:`~.measure.common_u`)."""
    summary = unit_summary(cfg, tr.optimizer_steps, tr.measure(full=True), history)
    summary["untrained"] = untrained
    summary["word_nc1_vs_untrained"] = (
        summary["embedding_metrics"]["words"]["nc1_trace"] / untrained["word_nc1_trace"]
    )
    net = tr.cpu_net()
    summary["pca_singular_values"] = pca_singular_values(net, tr.task)
    summary["u_vs_sampled_freq"] = u_vs_sampled_frequency(net, tr.task, tr.data)
    # Lemma G / N on the trained weights (issue 50): U's distance to N = {Σ_k Û_k = 0}
    summary["common_u"] = common_u(net, tr.data, tr.lam_w, tr.lam_u)
    return summary


def train(cfg: FCConfig, unit: Unit, run_dir: RunDir, context: Any) -> dict[str, Any]:
    """Train the network of seed ``unit.seed`` in ``run_dir``; its summary."""
    tr = Trainer(cfg, unit.seed)
    untrained = untrained_collapse(tr)
    history = fit_trainer(
        tr,
        run_dir,
        f"feature-collapse {cfg.figure or ''} ({cfg.train.optimizer})",
        stop=lambda record: tr.converged,
    )
    torch.save(tr.state.state_dict(), run_dir.path / FINAL)  # re-measure, figures
    return summarize_trainer(cfg, tr, untrained, history)


def load_trained(cfg: FCConfig, seed: int, unit_dir: RunDir) -> tuple[Trainer, dict[str, Any]]:
    """(the trainer of seed ``seed`` with the trained state of ``unit_dir``, the untrained
    network's collapse, measured before loading it), on the CPU wherever it trained."""
    tr = Trainer(cfg, seed, device="cpu")
    untrained = untrained_collapse(tr)
    tr.state.load_state_dict(_final_state(unit_dir))
    return tr, untrained


def trained_network(cfg: FCConfig, seed: int, unit_dir: RunDir) -> tuple[WordNet, Any]:
    """(the trained network of the unit ``unit_dir`` of seed ``seed``, its sentence task): what
    the figures draw, without the data sets."""
    net = make_network(cfg, seed)
    net.load_state_dict(_final_state(unit_dir)["model"])
    return net, make_sentence_task(cfg, seed)


def _final_state(unit_dir: RunDir) -> dict[str, Any]:
    saved = torch.load(unit_dir.path / FINAL, map_location="cpu", weights_only=False)
    return _from_legacy(saved)


def remeasure(cfg: FCConfig, unit: UnitResult) -> dict[str, Any]:
    """The summary of the finished ``unit`` measured again from its ``final_state.pt`` (the
    experiment's ``remeasure`` hook; :func:`nclab.experiments.runner.remeasure` calls it for every
    unit of a run and writes the summaries): its data regenerated from its seed, its trained
    weights loaded, its log kept."""
    tr, untrained = load_trained(cfg, unit.unit.seed, unit.run)
    return summarize_trainer(cfg, tr, untrained, unit.run.read_metrics())


def _from_legacy(saved: dict[str, Any]) -> dict[str, Any]:
    """A ``final_state.pt`` written before the trainer's state was a :class:`TrainState` (keys
    net, batch_gen, steps, prev_objective, restarted, opt) in today's layout."""
    if "net" not in saved:
        return saved
    prev = saved.get("prev_objective")
    progress = {
        "steps": saved["steps"],
        "prev_objective": math.inf if prev is None else prev,
        "restarted": bool(saved.get("restarted", False)),
    }
    out = {"model": saved["net"], "batch_gen": saved["batch_gen"], "progress": progress}
    if saved.get("opt") is not None:
        out["opt"] = saved["opt"]
    return out
