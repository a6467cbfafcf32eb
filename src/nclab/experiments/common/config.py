"""The config pieces every experiment shares, defined once.

One nesting convention: a run's own settings at the top (``seed``, ``seeds``, ``threads``,
``workers``, and where they apply ``device``, ``log_every``, ``checkpoint_every``, ``figure``),
the rest in sections ``data``, ``model`` and ``train``. An experiment's ``train`` section
subclasses :class:`TrainCfg` (the optimiser, its learning rate, momentum, betas and weight decay,
the length in epochs or steps, the batch size, the schedule), narrowing ``optimizer`` to what it
supports and setting its defaults; :func:`nclab.train.optim.make_optimizer` builds the
optimiser from it and :func:`~nclab.train.optim.make_scheduler` the schedule.

>>> class MyTrain(TrainCfg):
...     optimizer: Literal["sgd"] = "sgd"
...     lr: float = 0.05
>>> t = MyTrain(momentum=0.9)
>>> (t.optimizer, t.lr, t.momentum, t.epochs)
('sgd', 0.05, 0.9, 100)
"""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import Field

from ...config import Config
from ...errors import ConfigError

Optimizer = Literal["sgd", "adam", "adamw", "lbfgs"]


class ExperimentConfig(Config):
    """What every experiment's config has: the first ``seed`` and how many (``seeds``), torch CPU
    threads for the run (0: leave torch's setting; applied once by the runner, restored after)
    and how many units train at once (``workers`` spawned processes sharing the threads; the
    numbers do not depend on it)."""

    #: the dotted keys that say how a run is carried out, not what it computes: left out when a
    #: preset's setting is compared with the paper's (:meth:`Experiment.setting
    #: <nclab.experiments.protocol.Experiment.setting>`); a key a config lacks is ignored, and an
    #: experiment names its own beside them (``Experiment(bookkeeping=...)``)
    BOOKKEEPING: ClassVar[tuple[str, ...]] = (
        "seed",
        "seeds",
        "threads",
        "workers",
        "log_every",
        "checkpoint_every",
        "device",
        "figure",
        "measure_batch",
        "data.data_dir",
    )

    seed: int = 0
    seeds: int = 1
    threads: int = 0
    workers: int = 1


class RealDataCfg(Config):
    """Which real data set (subclasses narrow ``name`` to the sets they accept, with their
    default, and add their own synthetic data's settings), where its files are, how much of it,
    and whether to standardise it with the training statistics
    (:func:`nclab.experiments.common.data.load_real` loads it)."""

    name: str = "digits"
    data_dir: str | None = None
    samples_per_class: int | None = None
    test_samples_per_class: int | None = None
    standardize: bool = True


class ScheduleCfg(Config):
    """The learning rate over training: ``"constant"``; ``"multistep"`` (× ``gamma`` at each
    fraction ``at`` of the length); ``"step"`` (× ``gamma`` every ``every`` epochs);
    ``"warmup"`` (linear from lr / ``warmup`` to lr over the first ``warmup`` steps)."""

    kind: Literal["constant", "multistep", "step", "warmup"] = "constant"
    at: list[float] = Field(default_factory=list)
    every: int = 1
    gamma: float = 0.1
    warmup: int = 0


class TrainCfg(Config):
    """The training section: optimiser and its settings, length, batch size, schedule.
    ``batch_size`` None is the full batch; ``steps`` 0 means the length is ``epochs``."""

    optimizer: Optimizer = "sgd"
    lr: float = 0.1
    momentum: float = 0.0
    betas: tuple[float, float] = (0.9, 0.999)
    weight_decay: float = 0.0
    epochs: int = 100
    batch_size: int | None = None
    schedule: ScheduleCfg = ScheduleCfg()


def check_train(t: TrainCfg, where: str = "train") -> None:
    """The checks every training section needs (lengths >= 1, lr > 0, decays >= 0, betas in
    [0, 1))."""
    if t.epochs < 1 or (t.batch_size is not None and t.batch_size < 1):
        raise ConfigError(
            f"{where}.epochs and {where}.batch_size must be >= 1, got {t.epochs}, {t.batch_size}"
        )
    if not (t.lr > 0 and t.weight_decay >= 0 and t.momentum >= 0):
        raise ConfigError(
            f"need {where}.lr > 0, {where}.weight_decay >= 0 and {where}.momentum >= 0, got "
            f"{t.lr}, {t.weight_decay}, {t.momentum}"
        )
    if not all(0 <= b < 1 for b in t.betas):
        raise ConfigError(f"{where}.betas must lie in [0, 1), got {t.betas}")
    s = t.schedule
    if (s.kind == "warmup" and s.warmup < 1) or s.every < 1 or not s.gamma > 0:
        raise ConfigError(
            f"{where}.schedule needs warmup >= 1 (kind 'warmup'), every >= 1 and gamma > 0"
        )
