"""The demo's settings."""

from __future__ import annotations

from ...config import Config


class DemoConfig(Config):
    seed: int = 0
    width: int = 128
    depth: int = 3
    epochs: int = 150
    lr: float = 2e-3
    weight_decay: float = 5e-4
    batch_size: int = 128
    log_every: int = 10
    checkpoint_every: int = 10
