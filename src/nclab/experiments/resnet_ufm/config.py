"""The resnet-ufm experiment's settings: data (as images), the ResNet18, its SGD training, the two
feature levels the probe measures, and the extended UFM run beside it."""

from __future__ import annotations

from typing import Literal

from ...config import Config
from ...errors import ConfigError
from ..common.config import ExperimentConfig, RealDataCfg, ScheduleCfg, check_train
from ..common.config import TrainCfg as BaseTrainCfg


class DataCfg(RealDataCfg):
    """``digits`` (8x8) and ``mnist1d`` (40 samples, one row) are resized to ``image_size`` x
    ``image_size`` (bilinear; MNIST-1D's row is repeated down the columns); MNIST, Fashion-MNIST
    (28x28) and CIFAR-10 (32x32, 3 channels) keep their size unless ``image_size`` > 0 asks for
    another."""

    name: Literal["digits", "mnist1d", "mnist", "fashion-mnist", "cifar10"] = "digits"
    image_size: int = 16


class ModelCfg(Config):
    """ResNet18 (torchvision's names, 3x3 stem, no max-pool); ``width`` 64 is the real network.
    ``bias``: a bias in the last layer ``fc``."""

    width: int = 64
    bias: bool = False


class TrainCfg(BaseTrainCfg):
    """SGD with momentum and weight decay; the learning rate is multiplied by ``schedule.gamma``
    every ``schedule.every`` epochs (the paper: 0.05, ÷10 every 40 epochs, weight decay 5e-4)."""

    optimizer: Literal["sgd"] = "sgd"
    lr: float = 0.05
    momentum: float = 0.9
    weight_decay: float = 5e-4
    epochs: int = 120
    batch_size: int = 128
    loss: Literal["mse", "ce"] = "mse"
    schedule: ScheduleCfg = ScheduleCfg(kind="step", every=40, gamma=0.1)


class LevelsCfg(Config):
    """The probe's layer specs of the two feature levels: ``first`` plays the extended UFM's H1,
    ``second`` its σ(W1 H1) (the classifier's input). Convolutional maps are average-pooled."""

    first: str = "layer4.0"
    second: str = "fc:input"


class UFMCfg(Config):
    """The ReLU extended UFM W2 σ(W1 H1) (+ b) run beside the network, at the network's K and with
    its loss and bias: ``n`` samples per class, ``d`` features, weight decays ``lambda_*``, N(0,
    ``init``²) initialisation, plain gradient descent with step ``lr`` for ``steps`` steps.
    ``steps = 0``: no UFM run."""

    n: int = 20
    d: int = 32
    lambda_w: float = 0.005
    lambda_w1: float = 0.005
    lambda_h: float = 0.005
    init: float = 0.1
    lr: float = 0.1
    steps: int = 30_000
    log_every: int = 1_000
    checkpoint_every: int = 10_000


class ResNetUFMConfig(ExperimentConfig):
    data: DataCfg = DataCfg()
    model: ModelCfg = ModelCfg()
    train: TrainCfg = TrainCfg()
    levels: LevelsCfg = LevelsCfg()
    ufm: UFMCfg = UFMCfg()
    measure_every: int = 5
    # the probe measures this many training samples per class (None: the whole training set)
    measure_samples_per_class: int | None = None
    measure_batch: int = 500
    checkpoint_every: int = 5
    device: str = "auto"


def check(cfg: ResNetUFMConfig) -> None:
    """Raise :class:`~nclab.errors.ConfigError` for settings no run can use."""
    check_train(cfg.train)
    if cfg.measure_every < 1 or cfg.checkpoint_every < 0 or cfg.measure_batch < 1:
        raise ConfigError(
            "measure_every and measure_batch must be >= 1 and checkpoint_every >= 0, got "
            f"{cfg.measure_every}, {cfg.measure_batch}, {cfg.checkpoint_every}"
        )
    if cfg.model.width < 1 or cfg.data.image_size < 0:
        raise ConfigError(
            f"model.width must be >= 1 and data.image_size >= 0, got {cfg.model.width}, "
            f"{cfg.data.image_size}"
        )
    u = cfg.ufm
    if u.steps < 0 or u.log_every < 1 or u.n < 1 or u.d < 2:
        raise ConfigError(
            f"ufm needs steps >= 0, log_every >= 1, n >= 1 and d >= 2, got {u.steps}, "
            f"{u.log_every}, {u.n}, {u.d}"
        )
    if cfg.levels.first == cfg.levels.second:
        raise ConfigError(f"levels.first and levels.second are both {cfg.levels.first!r}")


def describe(cfg: ResNetUFMConfig) -> str:
    """The setting in words.

    >>> describe(ResNetUFMConfig())
    'ResNet18 (width 64) on digits, MSE, no bias in the last layer'
    """
    bias = "bias in the last layer" if cfg.model.bias else "no bias in the last layer"
    return (
        f"ResNet18 (width {cfg.model.width}) on {cfg.data.name}, {cfg.train.loss.upper()}, {bias}"
    )
