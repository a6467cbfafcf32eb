"""The linear-head run: one training unit per (depth, weight decay / learning rate, seed) of the
sweep (a single network trains in the run directory itself, several under ``units/``), finished
units reused on resume, then the summary and (rank 0) the figures."""

from __future__ import annotations

import time
from typing import Any

from ...runs import RunDir
from ..common.data import load_real
from ..common.ranks import run_dir_for
from .config import LinearHeadConfig
from .distributed import ranks_agree, setup_distributed


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
        from ...errors import ConfigError

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


def load_data(cfg: LinearHeadConfig):
    """The training and test data: a real data set (flattened for the MLP) or a Gaussian mixture."""
    d = cfg.data
    if d.name == "mixture":
        from ...data.mixtures import gaussian_mixture

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
    return load_real(d, cfg.seed, flatten=cfg.model.backbone == "none")


def run(cfg: LinearHeadConfig, run_dir: RunDir) -> dict[str, Any]:
    from .figures import draw
    from .summary import summarize
    from .train import train_unit

    t0 = time.perf_counter()
    rank, world, device = setup_distributed(cfg.device)
    data = load_data(cfg)
    jobs = units(cfg)
    single = len(jobs) == 1
    results = []
    for job in jobs:
        if single:
            unit_dir = run_dir if rank == 0 else run_dir_for(run_dir.path, rank)
            summary, history = train_unit(cfg, job, data, unit_dir, rank, world, device)
        else:
            unit_dir = run_dir_for(run_dir.path / "units" / job["label"], rank)
            summary, history = _unit(cfg, job, data, unit_dir, rank, world, device)
        results.append((job, summary, history))
    out = summarize(cfg, results)
    if rank == 0:
        out["figures"] = [str(p) for p in draw(cfg, results, out, run_dir)]
    out["ddp"] = {"world_size": world}
    if world > 1:
        out["ddp"]["ranks_agree"] = ranks_agree(out)
    out["seconds"] = time.perf_counter() - t0
    return out


def _unit(cfg, job, data, unit_dir: RunDir, rank: int, world: int, device):
    """(summary, history) of one unit under ``units/``: read back if finished, else trained and
    written."""
    from .train import train_unit

    if rank == 0:
        unit_dir.write_config(cfg, unit=job)
    if (unit_dir.path / "summary.json").is_file():
        return unit_dir.read_summary(), unit_dir.read_metrics()
    summary, history = train_unit(cfg, job, data, unit_dir, rank, world, device)
    unit_dir.write_summary(summary)
    unit_dir.remove_checkpoint()
    return summary, history
