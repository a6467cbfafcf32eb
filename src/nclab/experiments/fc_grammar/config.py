"""Settings of the context-free-grammar experiment (*Feature Collapse* appendix A.5) and checks.

The paper fixes K = 100, depth 4, 5 choices and 8 children per level (4096-word sentences), the
block structure (MLP + LayerNorm on 8 concatenated child vectors, shared across positions, ReLU)
and 1000 test sentences; everything else is chosen here and is a field: the alphabet sizes per
level, the widths, the optimiser, the training set and the epochs.
"""

from __future__ import annotations

from pydantic import Field

from ...config import Config
from ...errors import ConfigError


class GrammarConfig(Config):
    seed: int = 0
    figure: str = ""
    # grammar (paper: K=100, depth 4, 5 choices, 8 children); alphabets: not in the paper
    K: int = 100
    symbols: list[int] = Field(
        default_factory=lambda: [10, 10, 10, 10]
    )  # words, concepts, meta-concepts, meta-meta-concepts
    choices: int = 5
    children: int = 8
    n_train: int = 100_000  # not in the paper (stored as uint8 word ids: 4096 bytes a sentence)
    n_test: int = 1000  # the paper's 1000 test sentences
    # network (Fig. 10); widths of levels 0..3 and the MLPs' hidden width: not in the paper
    widths: list[int] = Field(default_factory=lambda: [32, 64, 64, 64])
    hidden: int = 128
    # the logits' Linear starts at zero: without it, with 8 children, the top block's ReLUs all
    # die on the log K plateau (the uniform prediction is the plateau's optimum; measured)
    zero_head: bool = False
    # optimiser: not in the paper (lr 1e-3 dies on the log K plateau with 5 choices: measured)
    lr: float = 3e-4
    warmup_steps: int = 0  # the lr grows linearly from lr / warmup_steps to lr over these steps
    weight_decay: float = 0.0
    epochs: int = 10
    batch_size: int = 50
    log_every: int = 1000  # steps
    checkpoint_every: int = 500
    threads: int = 0


def validate(cfg: GrammarConfig) -> None:
    if len(cfg.widths) != len(cfg.symbols):
        raise ConfigError(
            f"widths lists one width per level below the top ({len(cfg.symbols)}), got "
            f"{len(cfg.widths)}"
        )
    for name in ("n_train", "n_test", "epochs", "batch_size", "hidden"):
        if getattr(cfg, name) < 1:
            raise ConfigError(f"{name} must be >= 1, got {getattr(cfg, name)}")
    if cfg.warmup_steps < 0:
        raise ConfigError(f"warmup_steps must be >= 0, got {cfg.warmup_steps}")
    if not (cfg.lr > 0 and cfg.weight_decay >= 0):
        raise ConfigError("need lr > 0 and weight_decay >= 0")
