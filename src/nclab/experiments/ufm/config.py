"""The UFM laboratory's settings and what follows from them alone: the batched problems of a run,
the collapse threshold λ* and the model's one-line description."""

from __future__ import annotations

from typing import Any, Literal

import numpy as np
import pydantic

from ...config import Config
from ...errors import ConfigError
from ..common.config import ExperimentConfig

#: a seed "reached the minimiser" when its objective is within this relative gap of the closed
#: form's (float64 GD's tolerance for every Tirer & Bruna claim; a spurious minimum of the ReLU
#: model sits percents above it, docs/ufm.md)
REACHED_GAP = 1e-6
#: a level "collapsed" when its final NC1 is at most this (the numerical tolerance every Tirer &
#: Bruna claim holds a vanishing NC metric to, reproduce/claims/tirer_bruna.py EXACT)
COLLAPSED = 1e-6


class InitConfig(Config):
    """Std of the N(0, std²) initialisation: classifier, hidden layers, features, bias."""

    w: float = 1.0
    w1: float = 1.0
    h: float = 1.0
    b: float = 1.0


class PhaseConfig(Config):
    """Phase diagram: ``points`` values of λ_W = λ_W1 = λ_H, log-spaced between ``lo`` and ``hi``
    times the threshold λ* (where the zero solution starts to win), ``seeds`` seeds each
    (``--seeds S`` with S > 1 overrides it). ``points = 0``: one configuration."""

    points: int = 0
    lo: float = 0.2
    hi: float = 2.5
    seeds: int = 5


class BiasSweepConfig(Config):
    """λ_b sweep (``bias="regularized"``): ``points`` values of λ_b log-spaced in [``lo``, ``hi``],
    ``seeds`` seeds each (``--seeds S`` with S > 1 overrides it), one batched solve
    (:mod:`.bias_sweep`). ``points = 0``: one λ_b (``lambda_b``). Plain GD needs
    lr (1 + hi) < 2 (the bias's curvature is 1 + λ_b)."""

    points: int = 0
    lo: float = 0.01
    hi: float = 16.0
    seeds: int = 2


class FixedFeaturesConfig(Config):
    """Theorem 5.1 (:mod:`.fixed_features`): the exact classifier of fixed noisy features
    H̄ ⊗ 1ᵀ + E (N(0, ``sigma_e``²)) for every n in ``ns`` with λ_H = n_cfg λ_H / n, ``seeds`` seeds
    each (``--seeds S`` with S > 1 overrides it). Empty ``ns``: off (gradient descent)."""

    ns: list[int] = pydantic.Field(default_factory=list)
    sigma_e: float = 0.1
    seeds: int = 5


class RatesConfig(Config):
    """The ε-sublevel sets of the GUFM with MSE (:mod:`.rates`): deviations of points whose
    excess loss ε lies in [``eps_lo``, ``eps_hi``] × L*, found by an adversarial search
    (``steps_per_decade`` targets per decade of ε, L-BFGS with ``iters`` iterations per point,
    relative penalty ``penalty``, seeded kicks of ``kick`` × the last deviation, starts
    ``start`` away from the optimum, multiplier continuation from ``t_start``), projected GD
    (``descent_steps`` steps, ``descent_records`` log-spaced records) and ``random_points``
    random perturbations, ``seeds`` seeds each (``--seeds S`` with S > 1 overrides it).
    ``steps_per_decade = 0``: off."""

    steps_per_decade: int = 0
    eps_lo: float = 1e-8
    eps_hi: float = 0.1
    iters: int = 300
    penalty: float = 1e3
    kick: float = 0.3
    start: float = 1e-3
    t_start: float = 1e-12
    descent_steps: int = 20_000
    descent_records: int = 40
    random_points: int = 40
    seeds: int = 3


class ModelConfig(Config):
    """The model: K classes, n samples per class, d features, ``depth`` weight layers (ReLU
    between them with ``relu``), the loss, the bias, LayerNorm features (the GUFM), the weight
    decays and the initialisation."""

    K: int = 4
    n: int = 50
    d: int = 20
    depth: int = 1
    relu: bool = False
    loss: Literal["mse", "ce"] = "mse"
    bias: Literal["none", "free", "regularized"] = "none"
    layernorm: bool = False
    # the plain UFM with a ReLU on its features, W σ(H) (Tirer & Bruna §7; depth 1, MSE, no bias)
    relu_features: bool = False
    lambda_w: float = 0.005  # classifier W (W_2, W_L)
    lambda_w1: float | None = None  # hidden layers W_1..W_{L-1} (default lambda_w)
    lambda_h: float = 0.005  # features H (H_1); 0 for the GUFM
    lambda_b: float = 0.0  # bias="regularized"
    init: InitConfig = InitConfig()


class TrainConfig(Config):
    """Full-batch gradient descent on every problem of the run: step ``lr`` (× ``lr_h_scale``
    on the features), heavy-ball ``momentum``, the step size's schedule (× ``gamma`` at each
    milestone, or cosine), ``steps`` steps."""

    lr: float = 0.1
    lr_h_scale: float = 1.0
    momentum: float = 0.0
    schedule: Literal["constant", "step", "cosine"] = "constant"
    milestones: list[int] = pydantic.Field(default_factory=list)
    gamma: float = 0.1
    steps: int = 60_000


class UFMConfig(ExperimentConfig):
    model: ModelConfig = ModelConfig()
    train: TrainConfig = TrainConfig()
    log_every: int = 5_000
    checkpoint_every: int = 50_000
    dtype: Literal["float64", "float32"] = "float64"
    device: str = "cpu"
    # torch CPU threads during the run: these small batched products run fastest on one thread
    # (parallel kernels are slower, and far slower on a busy machine); 0 leaves torch's setting
    threads: int = 1
    phase: PhaseConfig = PhaseConfig()
    bias_sweep: BiasSweepConfig = BiasSweepConfig()
    fixed_features: FixedFeaturesConfig = FixedFeaturesConfig()
    rates: RatesConfig = RatesConfig()


def check(cfg: UFMConfig) -> None:
    """Raise :class:`~nclab.errors.ConfigError` for settings no run can use."""
    if cfg.train.steps < 1 or cfg.log_every < 1 or cfg.checkpoint_every < 0:
        raise ConfigError(
            "train.steps and log_every must be >= 1 and checkpoint_every >= 0, got "
            f"{cfg.train.steps}, {cfg.log_every}, {cfg.checkpoint_every}"
        )
    if cfg.model.layernorm and (
        cfg.model.depth != 1 or cfg.model.bias != "none" or cfg.model.lambda_h != 0
    ):
        raise ConfigError(
            "the GUFM (model.layernorm=true) has one weight layer, no bias and no feature "
            "weight decay: set model.depth=1, model.bias='none', model.lambda_h=0"
        )
    _check_unregularised(cfg)
    if cfg.model.relu_features and (
        cfg.model.depth != 1
        or cfg.model.loss != "mse"
        or cfg.model.bias != "none"
        or cfg.model.layernorm
        or cfg.phase.points
        or cfg.bias_sweep.points
        or cfg.fixed_features.ns
    ):
        raise ConfigError(
            "model.relu_features (W σ(H)) is the plain bias-free MSE UFM: set model.depth=1, "
            "model.loss='mse', model.bias='none', model.layernorm=false, and no phase / "
            "bias_sweep / fixed_features"
        )
    if cfg.phase.points < 0 or (cfg.phase.points and not 0 < cfg.phase.lo < cfg.phase.hi):
        raise ConfigError(f"phase needs points >= 0 and 0 < lo < hi, got {cfg.phase}")
    if cfg.phase.points and cfg.model.layernorm:
        raise ConfigError("the GUFM has no collapse threshold: phase.points must be 0")
    if cfg.phase.seeds < 1:
        raise ConfigError(f"phase.seeds must be >= 1, got {cfg.phase.seeds}")
    if cfg.bias_sweep.points:
        _check_bias_sweep(cfg)
    if cfg.fixed_features.ns:
        _check_fixed_features(cfg)
    if cfg.rates.steps_per_decade:
        _check_rates(cfg)


def _check_rates(cfg: UFMConfig) -> None:
    """A sublevel-set run needs the GUFM with MSE and a sensible window and search."""
    r = cfg.rates
    if not (cfg.model.layernorm and cfg.model.loss == "mse") or cfg.phase.points:
        raise ConfigError(
            "rates samples the sublevel sets of the GUFM with MSE: set model.layernorm=true, "
            "model.loss='mse', phase.points=0"
        )
    if cfg.model.d < cfg.model.K + 1:
        raise ConfigError(f"the GUFM-MSE optimum needs d >= K+1, got d={cfg.model.d}")
    if r.steps_per_decade < 0 or not 0 < r.eps_lo < r.eps_hi:
        raise ConfigError(f"rates needs steps_per_decade >= 0 and 0 < eps_lo < eps_hi, got {r}")
    if min(r.iters, r.descent_steps, r.descent_records, r.random_points, r.seeds) < 1:
        raise ConfigError(
            "rates.iters, descent_steps, descent_records, random_points and seeds must be >= 1, "
            f"got {r}"
        )
    if not (r.penalty > 0 and r.kick >= 0 and r.start > 0 and r.t_start > 0):
        raise ConfigError(f"rates needs penalty > 0, kick >= 0, start > 0, t_start > 0, got {r}")


def _check_unregularised(cfg: UFMConfig) -> None:
    """λ_W = λ_H = 0 is allowed for the plain bias-free MSE UFM only (Tirer & Bruna §2: GD
    then converges to an interpolating point, a global minimiser that need not be collapsed);
    one of the two at 0 alone has no minimiser (the loss tends to 0 as W -> 0, H -> ∞ or back)."""
    m = cfg.model
    if m.layernorm or (m.lambda_w != 0 and m.lambda_h != 0):
        return
    if m.lambda_w < 0 or m.lambda_h < 0:
        return  # the solver rejects negative weight decays with its own message
    if not (
        m.lambda_w == 0
        and m.lambda_h == 0
        and m.depth == 1
        and m.loss == "mse"
        and m.bias == "none"
        and not cfg.phase.points
        and not cfg.bias_sweep.points
        and not cfg.fixed_features.ns
    ):
        raise ConfigError(
            "a zero weight decay is allowed only as the unregularised plain UFM: "
            "model.lambda_w = model.lambda_h = 0 with model.depth=1, model.loss='mse', "
            "model.bias='none' and no phase / bias_sweep / fixed_features; got "
            f"lambda_w={m.lambda_w}, lambda_h={m.lambda_h}, depth={m.depth}, loss={m.loss!r}, "
            f"bias={m.bias!r}"
        )


def _check_fixed_features(cfg: UFMConfig) -> None:
    """A fixed-features run (Theorem 5.1) needs the plain bias-free MSE UFM and >= 2 sizes n."""
    ff = cfg.fixed_features
    if (
        cfg.model.depth not in (1, 2)
        or cfg.model.relu
        or cfg.model.relu_features
        or cfg.model.loss != "mse"
        or cfg.model.bias != "none"
        or cfg.model.layernorm
    ):
        raise ConfigError(
            "fixed_features runs the bias-free MSE UFM of Theorem 5.1 (model.depth=1) or the "
            "linear extended UFM (model.depth=2, model.relu=false): set model.loss='mse', "
            "model.bias='none', model.layernorm=false"
        )
    if len(ff.ns) < 2 or min(ff.ns) < 1 or len(set(ff.ns)) != len(ff.ns):
        raise ConfigError(f"fixed_features.ns must list >= 2 distinct n >= 1, got {ff.ns}")
    if not (ff.sigma_e > 0 and ff.seeds >= 1):
        raise ConfigError(f"fixed_features needs sigma_e > 0 and seeds >= 1, got {ff}")


def _check_bias_sweep(cfg: UFMConfig) -> None:
    sw = cfg.bias_sweep
    if (
        cfg.model.bias != "regularized"
        or cfg.model.depth != 1
        or cfg.model.loss != "mse"
        or cfg.phase.points
    ):
        raise ConfigError(
            "bias_sweep runs the plain MSE UFM with a regularised bias: set "
            "model.bias='regularized', model.depth=1, model.loss='mse', phase.points=0"
        )
    if sw.points < 2 or not 0 < sw.lo < sw.hi or sw.seeds < 1:
        raise ConfigError(f"bias_sweep needs points >= 2, 0 < lo < hi and seeds >= 1, got {sw}")
    if cfg.train.lr * (1 + sw.hi) >= 2:
        raise ConfigError(
            f"plain GD on the bias diverges for lr (1 + lambda_b) >= 2: train.lr = {cfg.train.lr}, "
            f"bias_sweep.hi = {sw.hi}; lower hi below {2 / cfg.train.lr - 1:g} or train.lr"
        )


def threshold_lambda(cfg: UFMConfig) -> float:
    """λ* where λ_W = λ_W1 = λ_H = λ* puts the problem on its collapse threshold.

    L = 1 (MSE or CE): K√n λ* = 1. L weight layers: K (n λ^{L+1})^{1/(L+1)} equals the threshold
    of :func:`nclab.theory.extended_ufm.deep_linear_ufm`.

    >>> round(threshold_lambda(UFMConfig(model={'K': 4, 'n': 25})), 6)
    0.05
    """
    L = cfg.model.depth
    crit = 1.0 if L == 1 else (1 / L) * ((L - 1) / L) ** ((L - 1) / (L + 1))
    return crit / (cfg.model.K * cfg.model.n ** (1 / (L + 1)))


def problems(cfg: UFMConfig) -> list[dict[str, Any]]:
    """One dict per batched problem: seed and λ's (phase, bias sweep: λ-major, seed-minor)."""
    lw1 = cfg.model.lambda_w if cfg.model.lambda_w1 is None else cfg.model.lambda_w1
    if cfg.bias_sweep.points:
        sw = cfg.bias_sweep
        seeds = cfg.seeds if cfg.seeds > 1 else sw.seeds
        lam = {"lambda_w": cfg.model.lambda_w, "lambda_w1": lw1, "lambda_h": cfg.model.lambda_h}
        return [
            {"seed": cfg.seed + i, **lam, "lambda_b": float(lb)}
            for lb in np.geomspace(sw.lo, sw.hi, sw.points)
            for i in range(seeds)
        ]
    if not cfg.phase.points:
        return [
            {
                "seed": cfg.seed + i,
                "lambda_w": cfg.model.lambda_w,
                "lambda_w1": lw1,
                "lambda_h": cfg.model.lambda_h,
            }
            for i in range(cfg.seeds)
        ]
    seeds = cfg.seeds if cfg.seeds > 1 else cfg.phase.seeds
    lams = threshold_lambda(cfg) * np.geomspace(cfg.phase.lo, cfg.phase.hi, cfg.phase.points)
    return [
        {
            "seed": cfg.seed + i,
            "lambda_w": float(lam),
            "lambda_w1": float(lam),
            "lambda_h": float(lam),
        }
        for lam in lams
        for i in range(seeds)
    ]


def plain_problem(cfg: UFMConfig) -> dict[str, Any]:
    """The plain UFM's sizes and weight decays as its closed forms take them (``K``, ``n``, ``d``,
    ``lambda_w``, ``lambda_h``: :func:`nclab.theory.ufm.ufm_mse` and its kin).

    >>> plain_problem(UFMConfig())
    {'K': 4, 'n': 50, 'd': 20, 'lambda_w': 0.005, 'lambda_h': 0.005}
    """
    m = cfg.model
    return {"K": m.K, "n": m.n, "d": m.d, "lambda_w": m.lambda_w, "lambda_h": m.lambda_h}


def describe(cfg: UFMConfig) -> str:
    """The model in words, e.g. ``"plain UFM, MSE, bias-free"``.

    >>> describe(UFMConfig(model={'depth': 2, 'relu': True}))
    'extended UFM, ReLU, MSE, bias-free'
    """
    if cfg.model.layernorm:
        return f"GUFM (LayerNorm features), {cfg.model.loss.upper()}"
    if cfg.model.relu_features:
        return "plain UFM, ReLU on the features (W σ(H)), MSE, bias-free"
    kind = {1: "plain UFM", 2: "extended UFM"}.get(
        cfg.model.depth, f"deep UFM (L={cfg.model.depth})"
    )
    act = (", ReLU" if cfg.model.relu else ", linear") if cfg.model.depth > 1 else ""
    bias = {"none": "bias-free", "free": "unregularised bias", "regularized": "regularised bias"}
    return f"{kind}{act}, {cfg.model.loss.upper()}, {bias[cfg.model.bias]}"
