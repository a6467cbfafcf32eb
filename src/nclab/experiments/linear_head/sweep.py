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
    per = cfg.model.L2 if cfg.lr_over_linear_depth else 1
    if cfg.sweep == "none":
        return [
            {
                "label": f"seed-{s}",
                "seed": s,
                "L1": cfg.model.L1,
                "L2": cfg.model.L2,
                "weight_decay": cfg.train.weight_decay,
                "lr": cfg.train.lr / per,
            }
            for s in seeds
        ]
    if cfg.sweep == "lr":
        return _lr_units(cfg, seeds, per)
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
                    step = lr / L2 if cfg.lr_over_linear_depth else lr
                    out.append(
                        {
                            "label": f"L1-{L1}_L2-{L2}_wd-{wd:g}_lr-{lr:g}_seed-{s}",
                            "seed": s,
                            "L1": L1,
                            "L2": L2,
                            "weight_decay": eff,
                            "lr": step,
                            "wd_group": wd,
                        }
                    )
    return out


def _lr_units(cfg: LinearHeadConfig, seeds: list[int], per: int) -> list[dict[str, Any]]:
    """A learning-rate sweep at fixed depths: one unit per (lr in sweep_lrs, seed); with
    ``lr_over_linear_depth`` the step is lr / L2 (``lr0`` keeps the sweep's value)."""
    if not cfg.sweep_lrs:
        from ...errors import ConfigError

        raise ConfigError("sweep = 'lr' needs sweep_lrs (the learning rates)")
    m, wd = cfg.model, cfg.train.weight_decay
    return [
        {
            "label": f"lr-{lr:g}_seed-{s}",
            "seed": s,
            "L1": m.L1,
            "L2": m.L2,
            "weight_decay": wd,
            "lr": lr / per,
            "lr0": lr,
            "wd_group": wd,
        }
        for lr in cfg.sweep_lrs
        for s in seeds
    ]


def load_data(cfg: LinearHeadConfig):
    """The training and test data: a real data set (flattened for the MLP) or a Gaussian mixture,
    restricted to the first ``data.num_classes`` classes when set."""
    split = _load_all(cfg)
    k = cfg.data.num_classes
    if k is None or k == split.num_classes:
        return split
    if not 2 <= k <= split.num_classes:
        from ...errors import ConfigError

        raise ConfigError(f"data.num_classes must be in 2..{split.num_classes}, got {k}")
    tr, te = split.y_train < k, split.y_test < k
    split.x_train, split.y_train = split.x_train[tr], split.y_train[tr]
    split.x_test, split.y_test = split.x_test[te], split.y_test[te]
    split.num_classes = k
    return split


def _load_all(cfg: LinearHeadConfig):
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
    split = load_real(d, cfg.seed, flatten=cfg.model.backbone == "none")
    if cfg.model.backbone != "none" and d.name == "digits":  # 1 x 8 x 8 images for the ResNet
        split.x_train = split.x_train.reshape(-1, 1, 8, 8)
        split.x_test = split.x_test.reshape(-1, 1, 8, 8)
    return split


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
