"""Settings of the transformer experiments of *Feature Collapse* appendix A.3 (classifier) and A.4
(GPT-2 language model), and their checks."""

from __future__ import annotations

from typing import Literal

from ...config import Config
from ...errors import ConfigError


class TransformerConfig(Config):
    seed: int = 0
    figure: str = ""  # which paper figure the run reproduces (selects the paper's values)
    task: Literal["classify", "lm"] = "classify"  # A.3 / A.4
    # data model (the paper's nc=3, nw=1200, L=15, K=1000)
    nc: int = 3
    nw: int = 1200
    L: int = 15
    K: int = 1000
    freq: Literal["uniform", "zipf"] = "uniform"
    zipf_s: float = 1.0
    nspl: int = 500  # training sentences per class: 0.5 M in A.3 (1 M = 1000 in A.4)
    n_test: int = 5
    # GPT-2 network (2 layers, 8 heads, width 512)
    n_layer: int = 2
    n_head: int = 8
    d: int = 512
    dropout: float = 0.0  # not stated in the paper; GPT-2's default is 0.1
    # AdamW, constant lr 1e-4, weight decay 0.1, betas (0.9, 0.95); 3 epochs (A.4: 1)
    lr: float = 1e-4
    weight_decay: float = 0.1
    beta1: float = 0.9
    beta2: float = 0.95
    epochs: int = 3
    batch_size: int = 100  # not stated in the paper
    # measurement
    log_every: int = 500  # optimiser steps between records
    checkpoint_every: int = 500
    measure_sentences: int = 1000  # test sentences whose token states are measured per layer
    threads: int = 0


def validate(cfg: TransformerConfig) -> None:
    """Raise :class:`~nclab.errors.ConfigError` for settings no run can use."""
    for name in ("nspl", "n_test", "epochs", "batch_size", "measure_sentences"):
        if getattr(cfg, name) < 1:
            raise ConfigError(f"{name} must be >= 1, got {getattr(cfg, name)}")
    if not (cfg.lr > 0 and cfg.weight_decay >= 0 and 0 <= cfg.beta1 < 1 and 0 <= cfg.beta2 < 1):
        raise ConfigError("need lr > 0, weight_decay >= 0 and betas in [0, 1)")
