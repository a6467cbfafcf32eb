"""The deep-ln experiment's settings: data (vectors or sentences), block and width, training, the
depths of the sweep."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from ...config import Config
from ..common.data import RealDataCfg

DEPTHS = [2, 3, 5, 8, 13, 21, 34]  # the paper's sweep


class DataCfg(RealDataCfg):
    name: Literal["digits", "mnist1d", "mnist", "fashion-mnist", "cifar10", "sentences"] = "digits"
    # "sentences": the concept/word model of Feature Collapse (nclab.data.sentences)
    nc: int = 5
    nw: int = 50
    sentence_length: int = 6
    num_classes: int = 10
    nspl: int = 30
    freq: Literal["uniform", "zipf"] = "uniform"


class ModelCfg(Config):
    block: Literal["rn1", "rn2", "t11", "t12"] = "rn1"
    width: int = 64


class TrainCfg(Config):
    loss: Literal["ce", "mse"] = "ce"
    weight_decay: float = 5e-3
    wd_over_depth: bool = False
    optimizer: Literal["adam", "sgd"] = "adam"
    lr: float = 1e-3
    momentum: float = 0.9
    epochs: int = 1000
    batch_size: int | None = None  # None: full batch (one step per epoch)


class DeepLNConfig(Config):
    seed: int = 0
    seeds: int = 1
    data: DataCfg = DataCfg()
    model: ModelCfg = ModelCfg()
    train: TrainCfg = TrainCfg()
    depths: list[int] = Field(default_factory=lambda: list(DEPTHS))
    log_every: int = 100
    checkpoint_every: int = 200
    device: str = "auto"
    threads: int = 0  # torch CPU threads, set by the runner for the run (0: leave torch's setting)
