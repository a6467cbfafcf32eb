"""The deep-ln experiment's settings: data (vectors or sentences), block and width, training, the
depths of the sweep."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from ...config import Config
from ..common.config import ExperimentConfig, RealDataCfg
from ..common.config import TrainCfg as BaseTrainCfg

DEPTHS = [2, 3, 5, 8, 13, 21, 34]  # the paper's sweep


class DataCfg(RealDataCfg):
    name: Literal[
        "digits", "mnist1d", "mnist", "fashion-mnist", "cifar10", "sentences", "sentiment", "imdb"
    ] = "digits"
    # "sentences": the concept/word model of Feature Collapse (nclab.data.sentences);
    # "sentiment": the synthetic IMDB stand-in (nclab.data.sentiment), nspl / nspl_test per class;
    # "imdb": the aclImdb folder at data_dir (nclab.data.imdb), text_vocab and text_len its caps
    nc: int = 5
    nw: int = 50
    sentence_length: int = 6
    num_classes: int = 10
    nspl: int = 30
    freq: Literal["uniform", "zipf"] = "uniform"
    nspl_test: int = 100
    text_vocab: int = 200
    text_len: int = 32
    polar_rate: float = 0.2
    agreement: float = 0.8


class ModelCfg(Config):
    block: Literal["rn1", "rn2", "t11", "t12", "t11-pre"] = "rn1"
    width: int = 64
    patch: int = 0  # transformers on image data: p x p patches as tokens (0: not images)


class MonotoneCfg(Config):
    """``mode = "monotone"``: train depth ``shallow`` for ``train.epochs``, embed it into depth
    ``deep`` with identity blocks, train both on for ``epochs_after``; depth ``deep`` from scratch
    for ``train.epochs + epochs_after``."""

    shallow: int = 3
    deep: int = 8
    epochs_after: int = 300
    bias: float = 0.1  # the new blocks' bias: an all-equal vector, removed by the LayerNorm


class TrainCfg(BaseTrainCfg):
    """Adam or SGD (with momentum) on the exact objective: ``weight_decay`` is its λ (divided by
    the depth with ``wd_over_depth``), not the optimiser's."""

    loss: Literal["ce", "mse"] = "ce"
    weight_decay: float = 5e-3
    wd_over_depth: bool = False
    optimizer: Literal["adam", "sgd"] = "adam"
    lr: float = 1e-3
    momentum: float = 0.9
    epochs: int = 1000
    batch_size: int | None = None  # None: full batch (one step per epoch)


class DeepLNConfig(ExperimentConfig):
    mode: Literal["sweep", "monotone"] = "sweep"
    data: DataCfg = DataCfg()
    model: ModelCfg = ModelCfg()
    train: TrainCfg = TrainCfg()
    depths: list[int] = Field(default_factory=lambda: list(DEPTHS))
    monotone: MonotoneCfg = MonotoneCfg()
    log_every: int = 100
    checkpoint_every: int = 200
    device: str = "auto"
