"""Optimisers and learning-rate schedules from a training section (duck-typed: any object with
the fields of :class:`nclab.experiments.common.config.TrainCfg`).

>>> from types import SimpleNamespace as NS
>>> t = NS(optimizer="adamw", lr=1e-3, momentum=0.0, betas=(0.9, 0.95), weight_decay=0.1)
>>> opt = make_optimizer(t, torch.nn.Linear(2, 2).parameters())
>>> type(opt).__name__, opt.defaults["betas"], opt.defaults["weight_decay"]
('AdamW', (0.9, 0.95), 0.1)
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import torch

from ..errors import ConfigError


def make_optimizer(
    t: Any, params: Iterable, lr: float | None = None, weight_decay: float | None = None
) -> torch.optim.Optimizer:
    """``t.optimizer`` ("sgd", "adam", "adamw") over ``params`` with ``t``'s settings; ``lr`` and
    ``weight_decay`` replace ``t.lr`` / ``t.weight_decay`` when given (a unit's own values).
    SGD's weight decay is coupled L2, Adam's too, AdamW's decoupled (torch's conventions)."""
    lr = t.lr if lr is None else lr
    wd = t.weight_decay if weight_decay is None else weight_decay
    if t.optimizer == "sgd":
        return torch.optim.SGD(params, lr=lr, momentum=t.momentum, weight_decay=wd)
    if t.optimizer == "adam":
        return torch.optim.Adam(params, lr=lr, betas=tuple(t.betas), weight_decay=wd)
    if t.optimizer == "adamw":
        return torch.optim.AdamW(params, lr=lr, betas=tuple(t.betas), weight_decay=wd)
    raise ConfigError(f"make_optimizer builds sgd, adam or adamw, got {t.optimizer!r}")


def make_scheduler(t: Any, opt: torch.optim.Optimizer, length: int):
    """The learning-rate schedule ``t.schedule`` of ``opt`` over ``length`` epochs (or steps),
    stepped once per epoch (or step); None for a constant rate.

    * ``multistep``: × ``gamma`` after ``max(1, round(a * length))`` units for each ``a`` in
      ``at``;
    * ``step``: × ``gamma`` every ``every`` units;
    * ``warmup``: lr × min(1, (u + 1) / ``warmup``) at unit u.
    """
    s = t.schedule
    if s.kind == "constant":
        return None
    if s.kind == "multistep":
        drops = [max(1, round(a * length)) for a in s.at if a < 1.0]
        return torch.optim.lr_scheduler.MultiStepLR(opt, drops, gamma=s.gamma)
    if s.kind == "step":
        return torch.optim.lr_scheduler.StepLR(opt, s.every, gamma=s.gamma)
    w = s.warmup
    return torch.optim.lr_scheduler.LambdaLR(opt, lambda u: min(1.0, (u + 1) / w))
