"""Settings of the transformer experiments of *Feature Collapse* appendix A.3 (classifier) and A.4
(GPT-2 language model), and their checks.

``task`` at the top chooses the experiment (A.3 / A.4); sections ``data`` (the concept/word
sentences), ``model`` (the GPT-2 network) and ``train`` (AdamW, length, batch size, schedule);
``device``: where the network trains and runs (``"cpu"``, ``"cuda"``, ``"auto"``: CUDA when
available); the collapse measures are computed on the CPU.
"""

from __future__ import annotations

from typing import Literal

from ...config import Config
from ...errors import ConfigError
from ..common.config import ExperimentConfig, TrainCfg, check_train
from ..common.devices import check_device
from ..common.sentences import SentenceDataCfg, check_sentences


class DataCfg(SentenceDataCfg):
    """The paper's sentences (nc=3, nw=1200, L=15, K=1000); ``nspl`` training sentences per
    class: 0.5 M in A.3 (1 M = 1000 per class in A.4)."""

    nspl: int = 500


class ModelCfg(Config):
    """GPT-2 with ``n_layer`` blocks of ``n_head`` heads at width ``d`` (the paper's 2, 8, 512);
    ``dropout``: not stated in the paper (GPT-2's default is 0.1)."""

    n_layer: int = 2
    n_head: int = 8
    d: int = 512
    dropout: float = 0.0


class TransformerTrainCfg(TrainCfg):
    """AdamW, constant lr 1e-4, weight decay 0.1, betas (0.9, 0.95); 3 epochs (A.4: 1); the
    batch size is not stated in the paper. ``schedule``: per optimiser step."""

    optimizer: Literal["adamw"] = "adamw"
    lr: float = 1e-4
    weight_decay: float = 0.1
    betas: tuple[float, float] = (0.9, 0.95)
    epochs: int = 3
    batch_size: int = 100


class TransformerConfig(ExperimentConfig):
    figure: str = ""  # which paper figure the run reproduces (selects the paper's values)
    task: Literal["classify", "lm"] = "classify"  # A.3 / A.4
    data: DataCfg = DataCfg()
    model: ModelCfg = ModelCfg()
    train: TransformerTrainCfg = TransformerTrainCfg()
    log_every: int = 500  # optimiser steps between records
    checkpoint_every: int = 500
    measure_sentences: int = 1000  # test sentences whose token states are measured per layer
    device: str = "cpu"


def check(cfg: TransformerConfig) -> None:
    """Raise :class:`~nclab.errors.ConfigError` for settings no run can use."""
    check_sentences(cfg.data)
    check_device(cfg.device)
    check_train(cfg.train)
    m = cfg.model
    if min(m.n_layer, m.n_head, m.d) < 1 or m.d % m.n_head:
        raise ConfigError(
            f"model.n_layer, model.n_head and model.d must be >= 1, the width d={m.d} a "
            f"multiple of n_head={m.n_head}"
        )
    if not 0 <= m.dropout < 1:
        raise ConfigError(f"model.dropout must lie in [0, 1), got {m.dropout}")
    if cfg.measure_sentences < 1:
        raise ConfigError(f"measure_sentences must be >= 1, got {cfg.measure_sentences}")
