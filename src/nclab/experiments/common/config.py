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

import math
from typing import ClassVar, Literal

from pydantic import Field

from ...config import Config
from ...errors import ConfigError

Optimizer = Literal["sgd", "adam", "adamw", "lbfgs"]
#: the most sentences an enumerated true risk may hold (K sc^L), and the most parameters whose
#: Hessian is formed (the curvature at a minimiser): fc-landscape's and fc-lemmas' problems
MAX_SENTENCES, MAX_PARAMS = 200_000, 4000


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


class LBFGSCfg(Config):
    """Random starts of L-BFGS on a true risk: every entry N(0, s²), s log-uniform in
    [``init_min``, ``init_max``]; L-BFGS (memory ``history``) in rounds of ``iters_per_round``
    iterations until max |∇R| <= ``grad_tol`` or ``max_rounds`` rounds
    (:func:`nclab.experiments.common.lbfgs.minimise`). Subclasses set their defaults and add the
    rest of their section."""

    init_min: float = 0.1
    init_max: float = 1.0
    grad_tol: float = 1e-8
    iters_per_round: int = 500
    max_rounds: int = 20
    history: int = 50


def check_lbfgs(s: LBFGSCfg, where: str) -> None:
    """The checks every L-BFGS section needs (a finite scale range, a finite tolerance > 0, at
    least one iteration, round and remembered step)."""
    if not (0 < s.init_min <= s.init_max and math.isfinite(s.init_max)):
        raise ConfigError(f"{where} needs 0 < init_min <= init_max, got {s.init_min}, {s.init_max}")
    if not (math.isfinite(s.grad_tol) and s.grad_tol > 0):
        raise ConfigError(f"{where}.grad_tol must be a finite number > 0, got {s.grad_tol}")
    for name in ("iters_per_round", "max_rounds", "history"):
        if getattr(s, name) < 1:
            raise ConfigError(f"{where}.{name} must be >= 1, got {getattr(s, name)}")


def check_enumerated(sentences: int, params: int, lower: tuple[str, str]) -> None:
    """A true risk small enough to enumerate (at most :data:`MAX_SENTENCES` sentences) and to form
    the Hessian of (at most :data:`MAX_PARAMS` parameters); ``lower``: the settings that shrink
    each, named in the message."""
    if sentences > MAX_SENTENCES:
        raise ConfigError(
            f"the true risk enumerates K sc^L = {sentences} sentences; at most {MAX_SENTENCES} "
            f"(lower {lower[0]})"
        )
    if params > MAX_PARAMS:
        raise ConfigError(
            f"{params} parameters: the Hessian at a minimiser is formed for at most {MAX_PARAMS} "
            f"(lower {lower[1]})"
        )
