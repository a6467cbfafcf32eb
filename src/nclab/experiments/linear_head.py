"""Deep networks with linear heads (Jacot, Súkeník, Wang & Mondelli, ICLR 2025, §6 and App. A).

``nclab run linear-head --preset NAME``: L1 nonlinear layers followed by L2 linear layers, trained
with MSE (or CE) and weight decay, measured layer by layer with :class:`~nclab.CollapseProbe`
every ``measure_every`` epochs from the backbone's output on (NC1 ``nc1_trace``, NC2 ``nc2_kappa``,
NC3 ``nc3_cos`` of Z_{L-1} with W_L, balancedness of consecutive weights, negativity of nonlinear
pre-activations, class-mean Gram matrices of the head), and certified at the end with Theorem 3.1
(:func:`nclab.theory.bounds.jacot_certificate`). Sweeps over the linear depth L2 (Fig. 2) or the
nonlinear depth L1 (Fig. 3) train one network per (depth, weight decay or learning rate, seed).

Runs under ``torchrun --nproc_per_node P`` (gloo on CPU, nccl on GPU): each rank trains on its
shard of every batch (DDP), the probe all-reduces its statistics, every rank reports the same
numbers and rank 0 writes the files. See ``docs/linear-head.md``.
"""

from __future__ import annotations

import math
import os
import time
from pathlib import Path
from typing import Any, Literal

import torch
from pydantic import Field

from ..config import Config
from ..runs import RunDir
from .base import Experiment
from .linear_head_presets import PRESETS

Sweep = Literal["none", "linear_depth", "nonlinear_depth"]


class DataCfg(Config):
    name: Literal["digits", "mnist1d", "mnist", "fashion-mnist", "cifar10", "mixture"] = "mnist1d"
    data_dir: str | None = None
    samples_per_class: int | None = None
    test_samples_per_class: int | None = None
    standardize: bool = True
    mixture_modes: int = 3
    mixture_dim: int = 20
    mixture_separation: float = 3.0
    mixture_noise: float = 0.3


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


class TrainCfg(Config):
    epochs: int = 300
    lr: float = 1e-3
    weight_decay: float = 1.8e-3
    optimizer: Literal["sgd", "adam", "adamw"] = "adam"
    momentum: float = 0.9
    batch_size: int | None = None
    loss: Literal["mse", "ce"] = "mse"
    lr_drop_at: float = 0.8
    lr_drop_factor: float = 0.1


class LinearHeadConfig(Config):
    seed: int = 0
    seeds: int = 1
    data: DataCfg = DataCfg()
    model: ModelCfg = ModelCfg()
    train: TrainCfg = TrainCfg()
    measure_every: int = 10
    measure_from: int = 2
    measure_batch: int = 1024
    sweep: Sweep = "none"
    sweep_values: list[int] = Field(default_factory=list)
    sweep_weight_decays: list[float] = Field(default_factory=list)
    sweep_lrs: list[float] = Field(default_factory=list)
    wd_over_depth: bool = False
    checkpoint_every: int = 50
    device: str = "auto"
    threads: int = 1


# --------------------------------------------------------------------------------------------------
# distributed helpers
# --------------------------------------------------------------------------------------------------


def setup_distributed(device: str) -> tuple[int, int, torch.device]:
    """(rank, world size, device): initialises torch.distributed under torchrun (WORLD_SIZE > 1)."""
    import torch.distributed as dist

    world = int(os.environ.get("WORLD_SIZE", "1"))
    local = int(os.environ.get("LOCAL_RANK", "0"))
    if device == "auto":
        dev = torch.device(f"cuda:{local}" if torch.cuda.is_available() else "cpu")
    else:
        dev = torch.device(device)
    if world > 1 and not dist.is_initialized():
        if dev.type == "cuda":
            torch.cuda.set_device(dev)
        dist.init_process_group("nccl" if dev.type == "cuda" else "gloo")
    if dist.is_available() and dist.is_initialized():
        return dist.get_rank(), dist.get_world_size(), dev
    return 0, 1, dev


class RankView(RunDir):
    """A run directory as seen by a rank other than 0: reads (checkpoints, finished units), never
    writes."""

    def __init__(self, path):
        self.path = Path(path)
        self._t0 = time.perf_counter()

    def log(self, record) -> None:
        pass

    def truncate_metrics(self, keep: int) -> None:
        pass

    def save_checkpoint(self, state) -> None:
        pass

    def remove_checkpoint(self) -> None:
        pass

    def write_summary(self, summary, seconds=None) -> dict:
        from ..runs import to_jsonable

        return to_jsonable(dict(summary))

    def write_config(self, cfg, **meta) -> None:
        pass

    def write_error(self, text: str) -> None:
        pass


def run_dir_for(path, rank: int) -> RunDir:
    return RunDir(path) if rank == 0 else RankView(path)


# --------------------------------------------------------------------------------------------------
# the experiment
# --------------------------------------------------------------------------------------------------


def units(cfg: LinearHeadConfig) -> list[dict[str, Any]]:
    """One training run per (depth, weight decay / learning rate, seed) of the sweep."""
    seeds = [cfg.seed + i for i in range(max(1, cfg.seeds))]
    if cfg.sweep == "none":
        return [
            {
                "label": f"seed-{s}",
                "seed": s,
                "L1": cfg.model.L1,
                "L2": cfg.model.L2,
                "weight_decay": cfg.train.weight_decay,
                "lr": cfg.train.lr,
            }
            for s in seeds
        ]
    if not cfg.sweep_values:
        from ..errors import ConfigError

        raise ConfigError(f"sweep = {cfg.sweep!r} needs sweep_values (the depths)")
    wds = cfg.sweep_weight_decays or [cfg.train.weight_decay]
    lrs = cfg.sweep_lrs or [cfg.train.lr]
    out = []
    for v in cfg.sweep_values:
        L1, L2 = (cfg.model.L1, v) if cfg.sweep == "linear_depth" else (v, cfg.model.L2)
        for wd in wds:
            for lr in lrs:
                for s in seeds:
                    eff = wd / (L1 + L2) if cfg.wd_over_depth else wd
                    out.append(
                        {
                            "label": f"L1-{L1}_L2-{L2}_wd-{wd:g}_lr-{lr:g}_seed-{s}",
                            "seed": s,
                            "L1": L1,
                            "L2": L2,
                            "weight_decay": eff,
                            "lr": lr,
                            "wd_group": wd,
                        }
                    )
    return out


def run(cfg: LinearHeadConfig, run_dir: RunDir) -> dict[str, Any]:
    from ..data.real import load
    from .linear_head_summary import summarize
    from .linear_head_train import train_unit

    t0 = time.perf_counter()
    rank, world, device = setup_distributed(cfg.device)
    if cfg.threads > 0 and device.type == "cpu":
        torch.set_num_threads(cfg.threads)
    data = load_data(cfg, load)
    jobs = units(cfg)
    single = len(jobs) == 1
    results = []
    for job in jobs:
        path = run_dir.path if single else run_dir.path / "units" / job["label"]
        unit_dir = (
            run_dir_for(path, rank)
            if not single
            else (run_dir if rank == 0 else RankView(run_dir.path))
        )
        if not single and rank == 0:
            unit_dir.write_config(cfg, unit=job)
        if not single and (path / "summary.json").is_file():
            results.append((job, unit_dir.read_summary(), unit_dir.read_metrics()))
            continue
        summary, history = train_unit(cfg, job, data, unit_dir, rank, world, device)
        if not single:
            unit_dir.write_summary(summary)
            unit_dir.remove_checkpoint()
        results.append((job, summary, history))
    out = summarize(cfg, results, run_dir if rank == 0 else None)
    out["ddp"] = {"world_size": world}
    if world > 1:
        out["ddp"]["ranks_agree"] = ranks_agree(out)
    out["seconds"] = time.perf_counter() - t0
    return out


def load_data(cfg: LinearHeadConfig, load):
    d = cfg.data
    if d.name == "mixture":
        from ..data.mixtures import gaussian_mixture

        return gaussian_mixture(
            num_classes=10,
            modes_per_class=d.mixture_modes,
            dim=d.mixture_dim,
            samples_per_class=d.samples_per_class or 100,
            test_samples_per_class=d.test_samples_per_class,
            separation=d.mixture_separation,
            noise=d.mixture_noise,
            seed=cfg.seed,
            standardize=d.standardize,
        )
    data_dir = d.data_dir or os.environ.get("NCLAB_DATA_DIR")
    return load(
        d.name,
        data_dir=data_dir,
        seed=cfg.seed,
        samples_per_class=d.samples_per_class,
        test_samples_per_class=d.test_samples_per_class,
        standardize=d.standardize,
        flatten=cfg.model.backbone == "none",
    )


def ranks_agree(summary: dict[str, Any]) -> bool:
    """All-gather a digest of the summary's numbers and check every rank has the same."""
    import torch.distributed as dist

    vals = []

    def walk(v):
        if isinstance(v, dict):
            for k in sorted(v):
                if k not in ("seconds", "ddp"):
                    walk(v[k])
        elif isinstance(v, list):
            for x in v:
                walk(x)
        elif isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v):
            vals.append(float(v))

    walk(summary)
    t = torch.tensor(vals, dtype=torch.float64)
    digest = torch.stack(
        [
            t.sum(),
            (t * torch.arange(1, len(t) + 1, dtype=torch.float64)).sum(),
            torch.tensor(float(len(t)), dtype=torch.float64),
        ]
    )
    gathered = [torch.zeros_like(digest) for _ in range(dist.get_world_size())]
    dist.all_gather(gathered, digest)
    return all(bool(torch.equal(g, gathered[0])) for g in gathered)


EXPERIMENT = Experiment(
    name="linear-head",
    description="MLP/ResNet with deep linear heads (Jacot et al. 2025): layer-wise collapse over "
    "training, linear/nonlinear depth sweeps, Theorem 3.1 certificate",
    config_cls=LinearHeadConfig,
    run=run,
    presets=PRESETS,
    default_preset="fig1-mlp-quick",
    batched_seeds=True,
)
