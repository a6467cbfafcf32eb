"""Training a UFM-laboratory run: every problem of the run as one batched model, with
:func:`nclab.train.fit` (step-based: one gradient step of every problem per unit).

The log (``metrics.jsonl``) has a record at step 0 (``lr_factor`` 1.0), then every ``log_every``
steps and at the end, each ``{"step", "lr_factor", "objective", "objective_gap", "metrics"}``.
"""

from __future__ import annotations

from typing import Any

import torch

from ...models.ufm import BatchedUFM, UFMSpec, lr_factor
from ...runs import RunDir
from ...train import TrainState, fit_trainer
from ..protocol import Unit
from .bias_sweep import bias_summary
from .bias_sweep import theory as bias_theory
from .config import UFMConfig, describe, problems
from .fixed_extended import run_fixed_extended
from .fixed_features import run_fixed
from .levels import negatives
from .measure import measure, theory_for
from .rates import run_rates
from .summary import phase_summary, single_summary


def build(cfg: UFMConfig, probs: list[dict[str, Any]]) -> BatchedUFM:
    """The batched model of the problems ``probs`` (:func:`~.config.problems`)."""
    spec = UFMSpec(
        K=cfg.model.K, n=cfg.model.n, d=cfg.model.d, depth=cfg.model.depth, relu=cfg.model.relu, loss=cfg.model.loss,
        bias=cfg.model.bias, layernorm=cfg.model.layernorm, relu_features=cfg.model.relu_features,
    )  # fmt: skip
    return BatchedUFM(
        spec,
        seeds=[p["seed"] for p in probs],
        lambda_w=[p["lambda_w"] for p in probs],
        lambda_w1=[p["lambda_w1"] for p in probs],
        lambda_h=[p["lambda_h"] for p in probs],
        lambda_b=[p.get("lambda_b", cfg.model.lambda_b) for p in probs],
        lr=cfg.train.lr,
        momentum=cfg.train.momentum,
        lr_h_scale=cfg.train.lr_h_scale,
        init=cfg.model.init.to_dict(),
        dtype=getattr(torch, cfg.dtype),
        device=cfg.device,
    )


def with_theory(cfg: UFMConfig) -> list[dict[str, Any]]:
    """The run's problems, each with the theory's ``pred`` and ``note`` (computed once per λ's).

    Parameters outside a theorem fail here, before any training.
    """
    probs = problems(cfg)
    cache: dict[tuple, tuple] = {}
    for p in probs:
        key = (p["lambda_w"], p["lambda_w1"], p["lambda_h"], p.get("lambda_b"))
        if key not in cache:
            cache[key] = (
                theory_for(cfg, *key[:3])
                if key[3] is None
                else (bias_theory(cfg, key[3]), "regularised bias (docs/theory-ufm.md)")
            )
        p["pred"], p["note"] = cache[key]
    return probs


def _seeds(cfg: UFMConfig, default: int) -> list[int]:
    return [cfg.seed + i for i in range(cfg.seeds if cfg.seeds > 1 else default)]


class Trainer:
    """Every problem of the run as one :class:`~nclab.models.ufm.BatchedUFM`: one gradient step
    of every problem per step, with the schedule's factor."""

    def __init__(self, cfg: UFMConfig, probs: list[dict[str, Any]]):
        self.log_every, self.checkpoint_every = cfg.log_every, cfg.checkpoint_every
        self.cfg, self.steps = cfg, cfg.train.steps
        self.model = build(cfg, probs)
        #: H at initialisation (W σ(H): the summary compares its negative entries with the end's)
        self.h0 = self.model.h.detach().clone() if cfg.model.relu_features else None
        self.theory_obj = [p["pred"].objective if p["pred"] is not None else None for p in probs]
        self.state = TrainState(model=self.model)

    def train_step(self, t: int) -> dict[str, Any]:
        c = self.cfg
        factor = lr_factor(t, c.train.schedule, c.train.milestones, c.train.gamma, c.train.steps)
        self.model.step(factor)
        return {"lr_factor": factor}

    def first_record(self) -> dict[str, Any]:
        return {"lr_factor": 1.0, **measure(self.model, 0, self.theory_obj)}

    def evaluate(self, t: int) -> dict[str, Any]:
        return measure(self.model, t + 1, self.theory_obj)


def train(cfg: UFMConfig, unit: Unit, run_dir: RunDir, context: Any) -> dict[str, Any]:
    """The run's one unit: every seed (and λ of a phase diagram or bias sweep) batched."""
    if cfg.fixed_features.ns and cfg.model.depth == 2:  # §5 / App. F.1: GD over (W2, W1)
        return run_fixed_extended(cfg, run_dir, _seeds(cfg, cfg.fixed_features.seeds))
    if cfg.fixed_features.ns:  # Theorem 5.1: exact minimisers, no gradient descent
        return run_fixed(cfg, run_dir, _seeds(cfg, cfg.fixed_features.seeds))
    if cfg.rates.steps_per_decade:  # Lemma 4.1's sublevel sets: adversarial search, no training
        return run_rates(cfg, run_dir, _seeds(cfg, cfg.rates.seeds))
    probs = with_theory(cfg)
    tr = Trainer(cfg, probs)
    history = fit_trainer(tr, run_dir, f"ufm: {describe(cfg)}", first_record=tr.first_record)
    if cfg.bias_sweep.points:
        return bias_summary(cfg, tr.model, probs, history)
    if cfg.phase.points:
        return phase_summary(cfg, tr.model, probs, history)
    summary = single_summary(cfg, tr.model, probs, history)
    if tr.h0 is not None:
        top, per = negatives(cfg, tr.h0, tr.model.h.detach())
        summary.update(top)
        for seed, extra in zip(summary["per_seed"], per, strict=True):
            seed.update(extra)
    return summary
