"""Settings of the context-free-grammar experiment (*Feature Collapse* appendix A.5) and checks.

The paper fixes K = 100, depth 4, 5 choices and 8 children per level (4096-word sentences), the
block structure (MLP + LayerNorm on 8 concatenated child vectors, shared across positions, ReLU)
and 1000 test sentences; everything else is chosen here and is a field: the alphabet sizes per
level, the widths, the optimiser, the training set and the epochs. Sections ``data`` (the grammar
and its samples), ``model`` (the matched network) and ``train`` (AdamW; a linear warm-up is
``train.schedule`` of kind ``"warmup"``).
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from ...config import Config
from ...errors import ConfigError
from ..common.config import ExperimentConfig, TrainCfg, check_train


class DataCfg(Config):
    """The grammar (paper: K=100 classes, depth 4, 5 choices of 8 children; the alphabet sizes of
    words, concepts, meta-concepts, meta-meta-concepts ``symbols`` are not in the paper) and its
    samples: ``n_train`` training sentences (not in the paper; stored as uint8 word ids, 4096
    bytes a sentence), ``n_test`` test sentences (the paper's 1000)."""

    K: int = 100
    symbols: list[int] = Field(default_factory=lambda: [10, 10, 10, 10])
    choices: int = 5
    children: int = 8
    n_train: int = 100_000
    n_test: int = 1000


class ModelCfg(Config):
    """The matched network (Fig. 10): ``widths`` of levels 0..3 and the MLPs' ``hidden`` width
    (not in the paper); ``zero_head``: the logits' Linear starts at zero (without it, with 8
    children, the top block's ReLUs all die on the log K plateau: the uniform prediction is the
    plateau's optimum; measured)."""

    widths: list[int] = Field(default_factory=lambda: [32, 64, 64, 64])
    hidden: int = 128
    zero_head: bool = False


class GrammarTrainCfg(TrainCfg):
    """AdamW (not in the paper; lr 1e-3 dies on the log K plateau with 5 choices: measured);
    ``schedule`` per optimiser step, e.g. ``kind = "warmup"``: the lr grows linearly from
    lr / warmup to lr over the first ``warmup`` steps."""

    optimizer: Literal["adamw"] = "adamw"
    lr: float = 3e-4
    weight_decay: float = 0.0
    epochs: int = 10
    batch_size: int = 50


class GrammarConfig(ExperimentConfig):
    figure: str = ""
    data: DataCfg = DataCfg()
    model: ModelCfg = ModelCfg()
    train: GrammarTrainCfg = GrammarTrainCfg()
    log_every: int = 1000  # steps
    checkpoint_every: int = 500


def check(cfg: GrammarConfig) -> None:
    """Raise :class:`~nclab.errors.ConfigError` for settings no run can use (including the
    grammars :func:`~nclab.data.grammar.make_grammar` cannot draw)."""
    d, m = cfg.data, cfg.model
    if len(m.widths) != len(d.symbols):
        raise ConfigError(
            f"model.widths lists one width per level below the top ({len(d.symbols)}), got "
            f"{len(m.widths)}"
        )
    for name, v in (
        ("data.n_train", d.n_train),
        ("data.n_test", d.n_test),
        ("model.hidden", m.hidden),
        ("data.choices", d.choices),
        ("data.children", d.children),
    ):
        if v < 1:
            raise ConfigError(f"{name} must be >= 1, got {v}")
    if d.K < 2 or not d.symbols or min(d.symbols) < 2 or min(m.widths) < 1:
        raise ConfigError(
            "data.K must be >= 2, data.symbols list >= 1 alphabet sizes, each >= 2, and "
            f"model.widths be >= 1, got K={d.K}, symbols={d.symbols}, widths={m.widths}"
        )
    sizes = (*d.symbols, d.K)
    for j in range(1, len(sizes)):
        n, below = sizes[j], sizes[j - 1]
        if n * d.choices > below**d.children:
            raise ConfigError(
                f"level {j}: {n} x {d.choices} distinct productions of {d.children} symbols out "
                f"of {below} do not exist (data.symbols, data.K, data.choices, data.children)"
            )
    check_train(cfg.train)
