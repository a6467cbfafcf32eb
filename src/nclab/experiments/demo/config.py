"""The demo's settings."""

from __future__ import annotations

from typing import Literal

from ...config import Config
from ...errors import ConfigError
from ..common.config import ExperimentConfig, TrainCfg, check_train


class ModelCfg(Config):
    """An MLP of ``depth`` hidden ReLU layers of ``width`` units."""

    width: int = 128
    depth: int = 3


class DemoTrainCfg(TrainCfg):
    optimizer: Literal["adamw"] = "adamw"
    lr: float = 2e-3
    weight_decay: float = 5e-4
    epochs: int = 150
    batch_size: int | None = 128


class DemoConfig(ExperimentConfig):
    model: ModelCfg = ModelCfg()
    train: DemoTrainCfg = DemoTrainCfg()
    log_every: int = 10
    checkpoint_every: int = 10


def check(cfg: DemoConfig) -> None:
    """Raise :class:`~nclab.errors.ConfigError` for settings no run can use."""
    check_train(cfg.train)
    if cfg.model.width < 1 or cfg.model.depth < 1:
        raise ConfigError(
            f"model.width and model.depth must be >= 1, got {cfg.model.width}, {cfg.model.depth}"
        )
