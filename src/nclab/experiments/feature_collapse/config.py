"""The feature-collapse experiment's settings, the weight decays they imply and their checks."""

from __future__ import annotations

import math
from typing import Literal

from ...config import Config
from ...errors import ConfigError


class FCConfig(Config):
    seed: int = 0
    figure: str = ""  # which paper figure the run reproduces (selects the paper's values)
    # data model
    nc: int = 3
    nw: int = 1200
    L: int = 15
    K: int = 1000
    freq: Literal["uniform", "zipf"] = "uniform"
    zipf_s: float = 1.0
    distinct: bool = False
    nspl: int = 5
    n_test: int = 5
    # network
    d: int = 100
    layer_norm: Literal["none", "fixed", "learnable"] = "none"
    ln_eps: float = 1e-5
    init_scale: float = 1e-3
    # objective: weight decay lam on U, and on W for h (lam_w: None = lam for h, 0 for h*)
    lam: float = 1e-3
    lam_w: float | None = None
    # trainer
    optimizer: Literal["sgd", "lbfgs"] = "sgd"
    epochs: int = 1200
    lr: float = 0.1
    batch_size: int = 100
    lbfgs_iters: int = 10
    lbfgs_history: int = 20
    dtype: Literal["float32", "float64"] = "float32"
    log_every: int = 100
    checkpoint_every: int = 100
    threads: int = 0  # torch intra-op threads for this run (0: leave torch's setting)


def weight_decays(cfg: FCConfig) -> tuple[float, float]:
    """(λ_W, λ_U): the paper's eq. 2 (h: λ on both) and eq. 3 (h*: λ on U only) unless lam_w set.

    >>> weight_decays(FCConfig(layer_norm="fixed"))
    (0.0, 0.001)
    """
    lam_w = cfg.lam_w if cfg.lam_w is not None else (cfg.lam if cfg.layer_norm == "none" else 0.0)
    return lam_w, cfg.lam


def validate(cfg: FCConfig) -> None:
    """Raise :class:`~nclab.errors.ConfigError` for settings no run can use."""
    if cfg.nspl < 1 or cfg.n_test < 1:
        raise ConfigError(f"nspl and n_test must be >= 1, got nspl={cfg.nspl}, n_test={cfg.n_test}")
    lam_w, lam_u = weight_decays(cfg)
    for name, v in (("lam", lam_u), ("lam_w", lam_w)):
        if not (math.isfinite(v) and v >= 0):
            raise ConfigError(f"{name} must be a finite number >= 0, got {v}")
    if cfg.optimizer == "lbfgs" and lam_u == 0:
        raise ConfigError(
            "optimizer='lbfgs' needs lam > 0: without weight decay the objective has "
            "no minimiser (use optimizer='sgd' for the no-weight-decay runs)"
        )
    if cfg.epochs < 1 or cfg.batch_size < 1 or not cfg.lr > 0:
        raise ConfigError("epochs and batch_size must be >= 1 and lr > 0")
