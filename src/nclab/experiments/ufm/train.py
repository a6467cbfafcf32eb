"""The unconstrained-features laboratory: batched GD on the UFM family against the closed forms.

``nclab run ufm --preset NAME [--set key=value] [--seeds S]`` trains every problem of a run (the
seeds, and in the phase diagram the grid of λ's) as one :class:`~nclab.models.ufm.BatchedUFM`,
logs the objective and the collapse metrics of every layer each ``log_every`` steps to
``metrics.jsonl``, and writes a summary with the final objective beside the theory's
(:mod:`nclab.theory`), the relative gap, the metrics (worst seed), the predicted norms / singular
values beside the measured ones, and figures like the paper's panels. Presets:
:mod:`nclab.experiments.ufm_presets`; documentation: ``docs/ufm.md``.
"""

from __future__ import annotations

import math
from typing import Any, Literal

import numpy as np
import pydantic
import torch

from ..config import Config
from ..errors import ConfigError
from ..models.ufm import BatchedUFM, UFMSpec, lr_factor
from ..progress import bar
from ..runs import RunDir
from . import ufm_measure as M
from .base import Experiment
from .ufm_presets import PRESETS


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


class UFMConfig(Config):
    seed: int = 0
    seeds: int = 1
    # the model
    K: int = 4
    n: int = 50
    d: int = 20
    depth: int = 1
    relu: bool = False
    loss: Literal["mse", "ce"] = "mse"
    bias: Literal["none", "free", "regularized"] = "none"
    layernorm: bool = False
    lambda_w: float = 0.005  # classifier W (W_2, W_L)
    lambda_w1: float | None = None  # hidden layers W_1..W_{L-1} (default lambda_w)
    lambda_h: float = 0.005  # features H (H_1); 0 for the GUFM
    lambda_b: float = 0.0  # bias="regularized"
    init: InitConfig = InitConfig()
    # the solver
    lr: float = 0.1
    lr_h_scale: float = 1.0
    momentum: float = 0.0
    schedule: Literal["constant", "step", "cosine"] = "constant"
    milestones: list[int] = pydantic.Field(default_factory=list)
    gamma: float = 0.1
    steps: int = 60_000
    log_every: int = 5_000
    checkpoint_every: int = 50_000
    dtype: Literal["float64", "float32"] = "float64"
    device: str = "cpu"
    # torch CPU threads during the run: these small batched products run fastest on one thread
    # (parallel kernels are slower, and far slower on a busy machine); 0 leaves torch's setting
    threads: int = 1
    phase: PhaseConfig = PhaseConfig()


# --------------------------------------------------------------------------------------------------
# the problems of a run
# --------------------------------------------------------------------------------------------------


def _check(cfg: UFMConfig) -> None:
    if cfg.steps < 1 or cfg.log_every < 1 or cfg.checkpoint_every < 0:
        raise ConfigError("steps and log_every must be >= 1 and checkpoint_every >= 0, got "
                          f"{cfg.steps}, {cfg.log_every}, {cfg.checkpoint_every}")
    if cfg.layernorm and (cfg.depth != 1 or cfg.bias != "none" or cfg.lambda_h != 0):
        raise ConfigError("the GUFM (layernorm=true) has one weight layer, no bias and no feature "
                          "weight decay: set depth=1, bias='none', lambda_h=0")
    if cfg.phase.points < 0 or (cfg.phase.points and not 0 < cfg.phase.lo < cfg.phase.hi):
        raise ConfigError(f"phase needs points >= 0 and 0 < lo < hi, got {cfg.phase}")
    if cfg.phase.points and cfg.layernorm:
        raise ConfigError("the GUFM has no collapse threshold: phase.points must be 0")
    if cfg.phase.seeds < 1:
        raise ConfigError(f"phase.seeds must be >= 1, got {cfg.phase.seeds}")


def threshold_lambda(cfg: UFMConfig) -> float:
    """λ* where λ_W = λ_W1 = λ_H = λ* puts the problem on its collapse threshold.

    L = 1 (MSE or CE): K√n λ* = 1. L weight layers: K (n λ^{L+1})^{1/(L+1)} equals the threshold
    of :func:`nclab.theory.extended_ufm.deep_linear_ufm`.
    """
    L = cfg.depth
    crit = 1.0 if L == 1 else (1 / L) * ((L - 1) / L) ** ((L - 1) / (L + 1))
    return crit / (cfg.K * cfg.n ** (1 / (L + 1)))


def problems(cfg: UFMConfig) -> list[dict[str, Any]]:
    """One dict per batched problem: seed and λ's (phase: λ-major, seed-minor)."""
    lw1 = cfg.lambda_w if cfg.lambda_w1 is None else cfg.lambda_w1
    if not cfg.phase.points:
        return [{"seed": cfg.seed + i, "lambda_w": cfg.lambda_w, "lambda_w1": lw1,
                 "lambda_h": cfg.lambda_h} for i in range(cfg.seeds)]
    seeds = cfg.seeds if cfg.seeds > 1 else cfg.phase.seeds
    lams = threshold_lambda(cfg) * np.geomspace(cfg.phase.lo, cfg.phase.hi, cfg.phase.points)
    return [{"seed": cfg.seed + i, "lambda_w": float(lam), "lambda_w1": float(lam),
             "lambda_h": float(lam)} for lam in lams for i in range(seeds)]


def build(cfg: UFMConfig, probs: list[dict[str, Any]]) -> BatchedUFM:
    spec = UFMSpec(K=cfg.K, n=cfg.n, d=cfg.d, depth=cfg.depth, relu=cfg.relu, loss=cfg.loss,
                   bias=cfg.bias, layernorm=cfg.layernorm)
    return BatchedUFM(
        spec, seeds=[p["seed"] for p in probs], lambda_w=[p["lambda_w"] for p in probs],
        lambda_w1=[p["lambda_w1"] for p in probs], lambda_h=[p["lambda_h"] for p in probs],
        lambda_b=cfg.lambda_b, lr=cfg.lr, momentum=cfg.momentum, lr_h_scale=cfg.lr_h_scale,
        init=cfg.init.to_dict(), dtype=getattr(torch, cfg.dtype), device=cfg.device,
    )


def describe(cfg: UFMConfig) -> str:
    if cfg.layernorm:
        return f"GUFM (LayerNorm features), {cfg.loss.upper()}"
    kind = {1: "plain UFM", 2: "extended UFM"}.get(cfg.depth, f"deep UFM (L={cfg.depth})")
    act = (", ReLU" if cfg.relu else ", linear") if cfg.depth > 1 else ""
    bias = {"none": "bias-free", "free": "unregularised bias", "regularized": "regularised bias"}
    return f"{kind}{act}, {cfg.loss.upper()}, {bias[cfg.bias]}"


# --------------------------------------------------------------------------------------------------
# measuring
# --------------------------------------------------------------------------------------------------


def _gap(f: float, t: float | None) -> float | None:
    return None if t is None else abs(f - t) / abs(t)


def record(model: BatchedUFM, step: int, theory_obj: list[float | None], factor: float) -> dict:
    """One ``metrics.jsonl`` line: per-problem lists of the objective, its gap and every metric."""
    obj = model.objective().tolist()
    if not all(math.isfinite(f) for f in obj):
        raise ConfigError(f"gradient descent diverged by step {step} (objective {obj}); "
                          "lower lr (or the init scales)")
    feats = {k: v.detach() for k, v in model.layer_features().items()}
    labels = torch.arange(model.spec.N, device=model.device) // model.spec.n
    per = [M.layer_metrics(model, feats, b, labels) for b in range(model.B)]
    metrics = {layer: {k: [p[layer][k] for p in per] for k in per[0][layer]} for layer in per[0]}
    return {"step": step, "lr_factor": factor, "objective": obj,
            "objective_gap": [_gap(f, t) for f, t in zip(obj, theory_obj, strict=True)],
            "metrics": metrics}


def _worst(values: list[float | None]) -> float | None:
    vals = [v for v in values if v is not None]
    return max(vals) if vals else None


def _flat(metrics: dict[str, dict[str, Any]], depth: int) -> dict[str, Any]:
    return metrics["H"] if depth == 1 else metrics


# --------------------------------------------------------------------------------------------------
# the run
# --------------------------------------------------------------------------------------------------


def run(cfg: UFMConfig, run_dir: RunDir) -> dict[str, Any]:
    _check(cfg)
    old_threads = torch.get_num_threads()
    if cfg.threads:
        torch.set_num_threads(cfg.threads)
    try:
        return _run(cfg, run_dir)
    finally:
        torch.set_num_threads(old_threads)


def _run(cfg: UFMConfig, run_dir: RunDir) -> dict[str, Any]:
    probs = problems(cfg)
    cache: dict[tuple, tuple] = {}
    for p in probs:  # theory first: parameters outside a theorem fail before any training
        key = (p["lambda_w"], p["lambda_w1"], p["lambda_h"])
        if key not in cache:
            cache[key] = M.theory_for(cfg, *key)
        p["pred"], p["note"] = cache[key]
    model = build(cfg, probs)
    theory_obj = [p["pred"].objective if p["pred"] is not None else None for p in probs]
    history: list[dict] = []
    start = 0
    ckpt = run_dir.load_checkpoint()
    if ckpt is not None:
        model.load_state_dict(ckpt["model"])
        start = ckpt["step"]
        run_dir.truncate_metrics(ckpt["logged"])
        history = run_dir.read_metrics()
    else:
        history.append(record(model, 0, theory_obj, 1.0))
        run_dir.log(history[-1])
    chunk = max(1, cfg.steps // 200)
    with bar(f"ufm: {describe(cfg)}", total=cfg.steps) as pbar:
        pbar.update(start)
        for t in range(start, cfg.steps):
            factor = lr_factor(t, cfg.schedule, cfg.milestones, cfg.gamma, cfg.steps)
            model.step(factor)
            done = t + 1
            if done % cfg.log_every == 0 or done == cfg.steps:
                history.append(record(model, done, theory_obj, factor))
                run_dir.log(history[-1])
            if cfg.checkpoint_every and done % cfg.checkpoint_every == 0 and done < cfg.steps:
                run_dir.save_checkpoint({"model": model.state_dict(), "step": done,
                                         "logged": len(history)})
            if done % chunk == 0:
                pbar.update(chunk)
    from .ufm_summary import phase_summary, single_summary

    summary = (phase_summary if cfg.phase.points else single_summary)(cfg, model, probs, history)
    summary["figures"] = render(cfg, run_dir, history, summary)
    return summary


def render(cfg: UFMConfig, run_dir: RunDir, history: list[dict], summary: dict) -> list[str]:
    from . import ufm_figures

    if cfg.phase.points:
        return [str(ufm_figures.phase_figure(run_dir.figures / "phase_diagram.png", cfg, summary))]
    return [str(ufm_figures.training_figure(run_dir.figures / "collapse.png", cfg, history,
                                            summary))]


def rerender(run_dir: RunDir) -> None:
    """Re-draw the figures of a finished run from its config, metrics.jsonl and summary.json."""
    data = run_dir.read_config()
    data.pop("nclab", None)
    cfg = UFMConfig.from_dict(data)
    render(cfg, run_dir, run_dir.read_metrics(), run_dir.read_summary())


EXPERIMENT = Experiment(
    name="ufm",
    description="unconstrained-features models (Tirer & Bruna, Súkeník et al.): batched GD vs "
                "the closed-form optimum",
    config_cls=UFMConfig,
    run=run,
    presets=PRESETS,
    default_preset="tb-fig2-nobias",
    batched_seeds=True,
    figures=rerender,
)
