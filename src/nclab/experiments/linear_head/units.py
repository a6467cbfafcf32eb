"""The units of a linear-head run and the checks of its config (no torch).

One unit per (depth, weight decay or learning rate, seed) of the sweep, ``units/<label>``; a run of
one network trains in the run directory itself (key ``""``). A unit's ``params`` are its job:
``label``, ``seed``, ``L1``, ``L2``, ``weight_decay`` (divided by the depth with
``wd_over_depth``), ``lr`` (divided by L2 with ``lr_over_linear_depth``) and, in a sweep,
``wd_group`` (the sweep's weight decay) or ``lr0`` (the sweep's learning rate).
"""

from __future__ import annotations

import math
from typing import Any

from ...errors import ConfigError
from ..common.config import check_train
from ..protocol import Unit
from .config import LinearHeadConfig

#: the classes of every data set the experiment reads (digits, MNIST-1D, MNIST, Fashion-MNIST,
#: CIFAR-10, the Gaussian mixture)
CLASSES = 10


def check(cfg: LinearHeadConfig) -> None:
    """Raise :class:`~nclab.errors.ConfigError` for settings no run can use."""
    check_train(cfg.train)
    if cfg.train.schedule.kind not in ("constant", "multistep"):
        raise ConfigError(
            "train.schedule.kind must be 'multistep' (x gamma at the fractions 'at' of the "
            f"epochs) or 'constant', got {cfg.train.schedule.kind!r}"
        )
    if cfg.measure_every < 1 or cfg.measure_batch < 1 or cfg.checkpoint_every < 0:
        raise ConfigError(
            "measure_every and measure_batch must be >= 1 and checkpoint_every >= 0, got "
            f"{cfg.measure_every}, {cfg.measure_batch}, {cfg.checkpoint_every}"
        )
    k = cfg.data.num_classes
    if k is not None and not 2 <= k <= CLASSES:
        raise ConfigError(f"data.num_classes must be in 2..{CLASSES}, got {k}")
    f = cfg.diverge_loss_factor
    if f is not None and not (f > 1 and math.isfinite(f)):
        raise ConfigError(f"diverge_loss_factor must be a finite number > 1 (or None), got {f}")
    if cfg.lr_bound and (cfg.sweep != "lr" or not cfg.conditioning):
        raise ConfigError(
            "lr_bound needs sweep = 'lr' (the step sizes) and conditioning = true (eps1, r and "
            f"s_K(Y) of each network), got sweep = {cfg.sweep!r}, conditioning = {cfg.conditioning}"
        )
    if cfg.sweep == "lr" and not cfg.sweep_lrs:
        raise ConfigError("sweep = 'lr' needs sweep_lrs (the learning rates)")
    if cfg.sweep == "weight_decay" and len(set(cfg.sweep_weight_decays)) < 2:
        raise ConfigError(
            "sweep = 'weight_decay' needs sweep_weight_decays with at least two distinct values, "
            f"got {cfg.sweep_weight_decays}"
        )
    if cfg.sweep == "weight_decay" and any(not (w > 0) for w in cfg.sweep_weight_decays):
        raise ConfigError(f"sweep_weight_decays must be > 0, got {cfg.sweep_weight_decays}")
    eps2 = cfg.imbalance_eps2
    if eps2 and (any(not (e > 0) for e in eps2) or eps2 != sorted(set(eps2), reverse=True)):
        raise ConfigError(f"imbalance_eps2 must be positive and strictly decreasing, got {eps2}")
    if eps2 and not cfg.track_imbalance:
        raise ConfigError("imbalance_eps2 needs track_imbalance = true (the imbalance records)")
    if cfg.sweep in ("linear_depth", "nonlinear_depth") and not cfg.sweep_values:
        raise ConfigError(f"sweep = {cfg.sweep!r} needs sweep_values (the depths)")
    for job in jobs(cfg):
        if job["L1"] < 0 or job["L2"] < 1:
            raise ConfigError(
                f"need L1 >= 0 nonlinear and L2 >= 1 linear layers, got {job['L1']}, {job['L2']}"
            )


def units(cfg: LinearHeadConfig) -> list[Unit]:
    """The run's units: one per job (:func:`jobs`), the deepest the costliest; one job trains in
    the run directory itself."""
    js = jobs(cfg)
    if len(js) == 1:
        return [Unit("", js[0]["seed"], js[0], cost=js[0]["L1"] + js[0]["L2"])]
    return [Unit(j["label"], j["seed"], j, cost=j["L1"] + j["L2"]) for j in js]


def jobs(cfg: LinearHeadConfig) -> list[dict[str, Any]]:
    """One training job per (depth, weight decay / learning rate, seed) of the sweep."""
    seeds = [cfg.seed + i for i in range(max(1, cfg.seeds))]
    per = cfg.model.L2 if cfg.lr_over_linear_depth else 1
    if cfg.sweep == "none":
        return [
            {
                "label": f"seed-{s}",
                "seed": s,
                "L1": cfg.model.L1,
                "L2": cfg.model.L2,
                "weight_decay": cfg.train.weight_decay,
                "lr": cfg.train.lr / per,
            }
            for s in seeds
        ]
    if cfg.sweep == "lr":
        return _lr_jobs(cfg, seeds, per)
    if cfg.sweep == "weight_decay":
        return _wd_jobs(cfg, seeds, per)
    wds = cfg.sweep_weight_decays or [cfg.train.weight_decay]
    lrs = cfg.sweep_lrs or [cfg.train.lr]
    out = []
    for v in cfg.sweep_values:
        L1, L2 = (cfg.model.L1, v) if cfg.sweep == "linear_depth" else (v, cfg.model.L2)
        for wd in wds:
            for lr in lrs:
                for s in seeds:
                    eff = wd / (L1 + L2) if cfg.wd_over_depth else wd
                    step = lr / L2 if cfg.lr_over_linear_depth else lr
                    out.append(
                        {
                            "label": f"L1-{L1}_L2-{L2}_wd-{wd:g}_lr-{lr:g}_seed-{s}",
                            "seed": s,
                            "L1": L1,
                            "L2": L2,
                            "weight_decay": eff,
                            "lr": step,
                            "wd_group": wd,
                        }
                    )
    return out


def _lr_jobs(cfg: LinearHeadConfig, seeds: list[int], per: int) -> list[dict[str, Any]]:
    """A learning-rate sweep at fixed depths: one job per (lr in sweep_lrs, seed); with
    ``lr_over_linear_depth`` the step is lr / L2 (``lr0`` keeps the sweep's value)."""
    m, wd = cfg.model, cfg.train.weight_decay
    return [
        {
            "label": f"lr-{lr:g}_seed-{s}",
            "seed": s,
            "L1": m.L1,
            "L2": m.L2,
            "weight_decay": wd,
            "lr": lr / per,
            "lr0": lr,
            "wd_group": wd,
        }
        for lr in cfg.sweep_lrs
        for s in seeds
    ]


def _wd_jobs(cfg: LinearHeadConfig, seeds: list[int], per: int) -> list[dict[str, Any]]:
    """A weight-decay sweep at fixed depths and step: one job per (wd in sweep_weight_decays,
    seed); ``wd_group`` keeps the sweep's value (``wd_over_depth`` divides the job's by L)."""
    m = cfg.model
    L = m.L1 + m.L2
    return [
        {
            "label": f"wd-{wd:g}_seed-{s}",
            "seed": s,
            "L1": m.L1,
            "L2": m.L2,
            "weight_decay": wd / L if cfg.wd_over_depth else wd,
            "lr": cfg.train.lr / per,
            "wd_group": wd,
        }
        for wd in cfg.sweep_weight_decays
        for s in seeds
    ]
