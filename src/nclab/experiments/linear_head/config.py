"""The linear-head experiment's settings: data, network (L1 nonlinear + L2 linear layers), training,
measurement and the depth sweep."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from ...config import Config
from ..common.config import ExperimentConfig, RealDataCfg, ScheduleCfg
from ..common.config import TrainCfg as BaseTrainCfg

Sweep = Literal["none", "linear_depth", "nonlinear_depth", "lr", "weight_decay"]


class DataCfg(RealDataCfg):
    name: Literal["digits", "mnist1d", "mnist", "fashion-mnist", "cifar10", "mixture"] = "mnist1d"
    # "mixture": a Gaussian mixture of ``mixture_modes`` modes per class (nclab.data.mixtures)
    mixture_modes: int = 3
    mixture_dim: int = 20
    mixture_separation: float = 3.0
    mixture_noise: float = 0.3
    # keep only the classes 0 .. num_classes - 1 (None: all)
    num_classes: int | None = None


class ModelCfg(Config):
    backbone: Literal["none", "resnet20"] = "none"
    L1: int = 5
    L2: int = 4
    width: int = 128
    first_width: int | None = None
    head_width: int | None = None
    activation: Literal["relu", "leaky_relu", "smooth_relu"] = "relu"
    bias: bool = True
    head_bias: bool = False
    init: Literal["kaiming", "torch"] = "kaiming"
    init_scale: float = 1.0
    resnet_width: int = 16


class TrainCfg(BaseTrainCfg):
    """SGD (with ``momentum``), Adam or AdamW with the optimiser's weight decay; MSE or CE. The
    learning rate drops by ``schedule.gamma`` after the fraction ``schedule.at`` of the epochs
    (the paper: x0.1 at 80 %; ``schedule.kind = "constant"``: no drop)."""

    optimizer: Literal["sgd", "adam", "adamw"] = "adam"
    lr: float = 1e-3
    momentum: float = 0.9
    weight_decay: float = 1.8e-3
    epochs: int = 300
    batch_size: int | None = None  # None: full batch
    loss: Literal["mse", "ce"] = "mse"
    schedule: ScheduleCfg = ScheduleCfg(kind="multistep", at=[0.8], gamma=0.1)


class LinearHeadConfig(ExperimentConfig):
    data: DataCfg = DataCfg()
    model: ModelCfg = ModelCfg()
    train: TrainCfg = TrainCfg()
    measure_every: int = 10
    measure_from: int = 2
    measure_batch: int = 1024
    # log ||W_(l+1)^T W_(l+1) - W_l W_l^T||_op of the pairs l >= L1 with every record
    # (balance_rate.py: the per-step decay against (1 - lr wd)^2)
    track_imbalance: bool = False
    # with track_imbalance: the levels eps2 of max_l ||D_l||_op (linear pairs) whose reaching
    # time (lr x steps) is reported (balance_rate.py; Jacot et al.'s Theorem 4.4, time (10))
    imbalance_eps2: list[float] = Field(default_factory=list)
    # log the top Hessian eigenvalue of the training objective with every record (sharpness.py:
    # the edge of stability, sharpness against 2 / lr), Lanczos steps per estimate
    track_sharpness: bool = False
    sharpness_iterations: int = 40
    # after training: Prop 5.1 / Thm 5.2 bounds beside the measured kappas (minimiser.py), and with
    # ntk also ||Theta||_op and Prop 5.3's bounds
    conditioning: bool = False
    ntk: bool = False
    ntk_iterations: int = 300
    # a network whose training diverges stops and its summary says so (``diverged``): a non-finite
    # loss, weight or measured representation, or (when set) a train loss above
    # ``diverge_loss_factor`` times the first epoch's (:class:`.train.Diverged`)
    diverge_loss_factor: float | None = None
    # with sweep = "lr": Proposition 5.3's bound on the step at every network that ends stably
    # eps1-interpolating, against its step (:mod:`.lr_bound`; needs ``conditioning``)
    lr_bound: bool = False
    sweep: Sweep = "none"
    sweep_values: list[int] = Field(default_factory=list)
    sweep_weight_decays: list[float] = Field(default_factory=list)
    sweep_lrs: list[float] = Field(default_factory=list)
    # the learning rate of a network is lr / L2 (eta = eta_0 / L2, Jacot et al. Section 5.2)
    lr_over_linear_depth: bool = False
    wd_over_depth: bool = False
    checkpoint_every: int = 50
    device: str = "auto"
    threads: int = 1  # torch CPU threads, set by the runner for the run
