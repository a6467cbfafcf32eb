"""The feature-collapse experiment's settings, the weight decays they imply and their checks.

Sections: ``data`` (the concept/word sentences), ``model`` (the network h, or h* with a
LayerNorm), ``train`` (the objective's weight decays and the trainer). ``train.weight_decay`` is
the paper's λ, a term of the objective (on U, and on W for h), not an optimiser's setting; the
trainers are the hand-written SGD step (``lr``, ``batch_size``, no momentum, no schedule) and
full-batch L-BFGS (``lbfgs_iters``, ``lbfgs_history``; step size 1 with a line search).
``device``: where the network trains (``"cpu"``, ``"cuda"``, ``"auto"``: CUDA when available);
it is measured on the CPU.
"""

from __future__ import annotations

import math
from typing import Literal

from ...config import Config
from ...errors import ConfigError
from ..common.config import ExperimentConfig, TrainCfg, check_train
from ..common.devices import check_device
from ..common.sentences import SentenceDataCfg, check_sentences


class DataCfg(SentenceDataCfg):
    """The paper's sentences (nc=3, nw=1200, L=15, K=1000, 5 per class); ``distinct``: the K
    latent sequences all differ (the theorems' hypothesis)."""

    distinct: bool = False


class ModelCfg(Config):
    """Word embeddings of width ``d``, optionally through a LayerNorm (h*: ``fixed``, without
    parameters; ``learnable``), initialised at scale ``init_scale``, in ``dtype``."""

    d: int = 100
    layer_norm: Literal["none", "fixed", "learnable"] = "none"
    ln_eps: float = 1e-5
    init_scale: float = 1e-3
    dtype: Literal["float32", "float64"] = "float32"


class FCTrainCfg(TrainCfg):
    """The objective's weight decays: ``weight_decay`` (λ) on U, and on W ``weight_decay_w``
    (None: λ for h, 0 for h*); SGD (``lr``, ``batch_size``, reshuffled every epoch) or full-batch
    L-BFGS, one "epoch" = ``lbfgs_iters`` iterations with a memory of ``lbfgs_history``."""

    optimizer: Literal["sgd", "lbfgs"] = "sgd"
    lr: float = 0.1
    weight_decay: float = 1e-3
    weight_decay_w: float | None = None
    epochs: int = 1200
    batch_size: int = 100
    lbfgs_iters: int = 10
    lbfgs_history: int = 20


class FCConfig(ExperimentConfig):
    figure: str = ""  # which paper figure the run reproduces (selects the paper's values)
    data: DataCfg = DataCfg()
    model: ModelCfg = ModelCfg()
    train: FCTrainCfg = FCTrainCfg()
    log_every: int = 100
    checkpoint_every: int = 100
    device: str = "cpu"


def weight_decays(cfg: FCConfig) -> tuple[float, float]:
    """(λ_W, λ_U): the paper's eq. 2 (h: λ on both) and eq. 3 (h*: λ on U only) unless
    ``train.weight_decay_w`` is set.

    >>> weight_decays(FCConfig(model=ModelCfg(layer_norm="fixed")))
    (0.0, 0.001)
    """
    t = cfg.train
    if t.weight_decay_w is not None:
        return t.weight_decay_w, t.weight_decay
    return (t.weight_decay if cfg.model.layer_norm == "none" else 0.0), t.weight_decay


def check(cfg: FCConfig) -> None:
    """Raise :class:`~nclab.errors.ConfigError` for settings no run can use."""
    check_sentences(cfg.data, distinct=cfg.data.distinct)
    check_device(cfg.device)
    t = cfg.train
    check_train(t)
    lam_w, lam_u = weight_decays(cfg)
    for name, v in (("weight_decay", lam_u), ("weight_decay_w", lam_w)):
        if not (math.isfinite(v) and v >= 0):
            raise ConfigError(f"train.{name} must be a finite number >= 0, got {v}")
    if t.momentum != 0 or t.schedule.kind != "constant":
        raise ConfigError(
            "the feature-collapse trainers (plain SGD step, L-BFGS) take no train.momentum and "
            f"no train.schedule, got momentum {t.momentum}, schedule {t.schedule.kind!r}"
        )
    if t.optimizer == "lbfgs" and lam_u == 0:
        raise ConfigError(
            "train.optimizer='lbfgs' needs train.weight_decay > 0: without weight decay the "
            "objective has no minimiser (use train.optimizer='sgd' for the no-weight-decay runs)"
        )
    if t.lbfgs_iters < 1 or t.lbfgs_history < 1:
        raise ConfigError(
            f"train.lbfgs_iters and train.lbfgs_history must be >= 1, got {t.lbfgs_iters}, "
            f"{t.lbfgs_history}"
        )
    if cfg.model.d < 1:
        raise ConfigError(f"model.d must be >= 1, got {cfg.model.d}")
