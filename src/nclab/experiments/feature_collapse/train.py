"""Training the word networks h / h* with :func:`nclab.train.fit`, and re-measuring a finished run.

Trainers (``optimizer``):

* ``"sgd"`` (default, faithful): the authors' recipe — SGD, lr 0.1, batch 100, no momentum,
  reshuffled every epoch, weight decay λ — with the hand-written step
  :func:`nclab.models.wordnet.sgd_step` (same update as ``torch.optim.SGD``, ~1.4x faster).
* ``"lbfgs"`` (fast path): full-batch L-BFGS on the *same* regularised empirical objective
  (:func:`nclab.models.wordnet.full_batch_objective`), one "epoch" = ``lbfgs_iters`` iterations.
  It reaches the minimiser SGD approaches, which the theory describes; it needs λ > 0 (without
  weight decay there is no minimiser).

Both run inside :func:`nclab.train.fit`; the checkpoint is a :class:`~nclab.train.TrainState`
of the network, the L-BFGS optimiser, the batch generator and the :class:`Progress` counters
(checkpoints every ``checkpoint_every`` epochs; ``nclab run --resume DIR`` continues to the same
numbers).
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import torch

from ...collapse.embedding import group_collapse
from ...data.sentences import make_dataset, make_task
from ...errors import ConfigError
from ...models.wordnet import WordNet, collapse_views, full_batch_objective, sgd_step
from ...rng import generator
from ...runs import RunDir
from ...threads import torch_threads
from ...train import TrainState, fit
from .config import FCConfig, validate, weight_decays
from .figures import save_figures
from .measure import accuracy as accuracy_of
from .measure import measure as measure_network
from .summary import summarize


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


class Trainer:
    """The network, its data and one of the two trainers, with the hooks :func:`fit` calls."""

    def __init__(self, cfg: FCConfig):
        validate(cfg)
        self.cfg = cfg
        self.dtype = torch.float64 if cfg.dtype == "float64" else torch.float32
        self.task = make_task(
            cfg.nc, cfg.nw, cfg.L, cfg.K, cfg.freq, cfg.zipf_s, cfg.distinct, cfg.seed
        )
        self.data = make_dataset(self.task, cfg.nspl, cfg.n_test, cfg.seed)
        self.net = WordNet(
            cfg.nw, cfg.L, cfg.d, cfg.K, cfg.layer_norm, cfg.ln_eps, cfg.init_scale,
            generator=generator(cfg.seed, 3), dtype=self.dtype,
        )  # fmt: skip
        self.lam_w, self.lam_u = weight_decays(cfg)
        self.batch_gen = generator(cfg.seed, 4)
        self.progress = Progress()
        self.converged = False
        self.opt = None
        if cfg.optimizer == "lbfgs":
            self.opt = torch.optim.LBFGS(
                list(self.net.parameters()),
                lr=1.0,
                max_iter=cfg.lbfgs_iters,
                max_eval=4 * cfg.lbfgs_iters + 20,
                history_size=cfg.lbfgs_history,
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
    def steps(self) -> int:
        """Optimiser steps so far (SGD mini-batches or L-BFGS iterations)."""
        return self.progress.steps

    # --- fit hooks -------------------------------------------------------------------------------
    def train_epoch(self, epoch: int) -> dict[str, Any]:
        return self._lbfgs_epoch() if self.opt is not None else self._sgd_epoch()

    def _sgd_epoch(self) -> dict[str, Any]:
        cfg, x, y = self.cfg, self.data.x_train, self.data.y_train
        n = x.shape[0]
        perm = torch.randperm(n, generator=self.batch_gen)
        total = torch.zeros((), dtype=torch.float64)
        nb = 0
        grad_ctx = torch.enable_grad() if cfg.layer_norm == "learnable" else torch.no_grad()
        with grad_ctx:
            for i in range(0, n, cfg.batch_size):
                idx = perm[i : i + cfg.batch_size]
                total += sgd_step(self.net, x[idx], y[idx], cfg.lr, self.lam_w, self.lam_u)
                nb += 1
        self.progress.steps += nb
        loss = float(total) / nb
        if not math.isfinite(loss):
            raise ConfigError(f"training diverged (train loss {loss}); lower lr")
        return {"train_loss": loss}

    def _lbfgs_epoch(self) -> dict[str, Any]:
        x, y, p = self.data.x_train, self.data.y_train, self.progress

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
    def accuracy(self, x: torch.Tensor, y: torch.Tensor) -> float:
        return accuracy_of(self.net, x, y)

    def measure(self, full: bool = True) -> dict[str, Any]:
        """:func:`~.measure.measure` of the network now (``full``: every embedding metric)."""
        return measure_network(
            self.net, self.task, self.data, self.lam_w, self.lam_u, self.steps, full=full
        )


@torch.no_grad()
def untrained_collapse(tr: Trainer) -> dict[str, Any]:
    """Within-concept variability of the word vectors of the network as initialised (call before
    training or resuming): the baseline the trained network's collapse is compared with."""
    words, _ = collapse_views(tr.net)
    m = group_collapse(words, tr.task.word_concept, tr.task.nc, "initial word vectors")
    return {"word_nc1_trace": m["nc1_trace"], "word_dir_nc1": m["dir_nc1"]}


def run(cfg: FCConfig, run_dir: RunDir) -> dict[str, Any]:
    tr = Trainer(cfg)
    untrained = untrained_collapse(tr)
    history = fit(
        epochs=cfg.epochs,
        train_epoch=tr.train_epoch,
        evaluate=tr.evaluate,
        log_every=cfg.log_every,
        run=run_dir,
        state=tr.state,
        checkpoint_every=cfg.checkpoint_every,
        description=f"feature-collapse {cfg.figure or ''} ({cfg.optimizer})",
        stop=lambda record: tr.converged,
    )
    torch.save(tr.state.state_dict(), run_dir.path / "final_state.pt")  # re-measure, no retraining
    summary = summarize(cfg, tr.steps, tr.measure(full=True), history)
    summary["untrained"] = untrained
    summary["word_nc1_vs_untrained"] = (
        summary["embedding_metrics"]["words"]["nc1_trace"] / untrained["word_nc1_trace"]
    )
    summary["figures"] = save_figures(run_dir, tr.net, tr.task, history, summary)
    return summary


def remeasure(path: str | Path, figures: bool = True) -> dict[str, Any]:
    """Recompute the summary (and figures) of a finished run from its ``final_state.pt``.

    For when the measures change after a long run: the data are regenerated from the seed, the
    trained weights loaded, and ``summary.json`` rewritten (its ``seconds`` and history kept).
    """
    run_dir = RunDir(path, create=False)
    data = run_dir.read_config()
    data.pop("nclab", None)
    cfg = FCConfig.from_dict(data)
    old = run_dir.read_summary()
    with torch_threads(cfg.threads):
        tr = Trainer(cfg)
        saved = torch.load(run_dir.path / "final_state.pt", weights_only=False)
        tr.state.load_state_dict(_from_legacy(saved))
        history = run_dir.read_metrics()
        summary = summarize(cfg, tr.steps, tr.measure(full=True), history)
        if figures:
            summary["figures"] = save_figures(run_dir, tr.net, tr.task, history, summary)
    keep = ("seconds", "versions", "seed", "experiment", "preset", "pca_singular_values")
    for key in (*keep, "untrained", "word_nc1_vs_untrained"):
        if key in old and key not in summary:
            summary[key] = old[key]
    summary["remeasured"] = True
    return run_dir.write_summary(summary)


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
