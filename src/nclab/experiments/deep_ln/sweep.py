"""The deep-ln run: one unit per (depth, seed) under ``units/`` (finished units are skipped on
``--resume``), aggregated over seeds per depth, then the summary and the figure."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from ...runs import RunDir
from ..common.devices import resolve_device
from ..common.seeds import aggregate_summaries
from .config import DeepLNConfig


def run(cfg: DeepLNConfig, run_dir: RunDir) -> dict[str, Any]:
    from ...errors import ConfigError
    from .data import load_data
    from .figures import draw
    from .summary import summarize

    if not cfg.depths or min(cfg.depths) < 1:
        raise ConfigError(f"depths must be a non-empty list of integers >= 1, got {cfg.depths}")
    t0 = time.perf_counter()
    device = resolve_device(cfg.device)
    data = load_data(cfg)
    if cfg.mode == "monotone":
        from .monotone import run as run_monotone

        out = run_monotone(cfg, run_dir, data, device)
        out["seconds"] = time.perf_counter() - t0
        return out
    if cfg.workers < 1:
        raise ConfigError(f"workers must be an integer >= 1, got {cfg.workers}")
    units = [(d, cfg.seed + i) for d in sorted(set(cfg.depths)) for i in range(max(1, cfg.seeds))]
    todo = [u for u in units if not _unit_dir(run_dir, *u).finished]
    if cfg.workers > 1 and len(todo) > 1:
        _train_in_processes(cfg, run_dir, todo, device)
    per_depth: dict[int, list[dict[str, Any]]] = {}
    histories: dict[int, list[list[dict[str, Any]]]] = {}
    for depth, seed in units:
        unit = _unit(cfg, depth, seed, data, run_dir, device)
        per_depth.setdefault(depth, []).append(unit.read_summary())
        histories.setdefault(depth, []).append(unit.read_metrics())
    by_depth = {d: aggregate_summaries(s) if len(s) > 1 else s[0] for d, s in per_depth.items()}
    out = summarize(cfg, by_depth)
    out["figures"] = [str(p) for p in draw(out, by_depth, histories, run_dir.figures)]
    out["seconds"] = time.perf_counter() - t0
    return out


def _unit_dir(run_dir: RunDir, depth: int, seed: int) -> RunDir:
    return RunDir(Path(run_dir.path) / "units" / f"L{depth}_seed-{seed}")


def _unit(cfg: DeepLNConfig, depth: int, seed: int, data, run_dir: RunDir, device) -> RunDir:
    """The finished unit ``units/L<depth>_seed-<seed>``, trained here unless it already was."""
    from .train import train_unit

    unit = _unit_dir(run_dir, depth, seed)
    if not unit.finished:
        unit.write_config(cfg, depth=depth, unit_seed=seed)
        unit.write_summary(train_unit(cfg, depth, seed, data, unit, device))
        unit.remove_checkpoint()
    return unit


def _train_in_processes(cfg: DeepLNConfig, run_dir: RunDir, todo, device) -> None:
    """Train the units ``todo`` in ``cfg.workers`` spawned processes, the deepest first (the
    longest jobs first pack best), each with its share of the run's torch threads."""
    import multiprocessing as mp
    from concurrent.futures import ProcessPoolExecutor, as_completed

    import torch

    from ...progress import track

    workers = min(cfg.workers, len(todo))
    threads = max(1, (cfg.threads or torch.get_num_threads()) // workers)
    order = sorted(todo, key=lambda u: (-u[0], u[1]))
    ctx = mp.get_context("spawn")
    init = (cfg.model_dump(), threads)
    pool = ProcessPoolExecutor(workers, mp_context=ctx, initializer=_worker_init, initargs=init)
    try:
        futures = [pool.submit(_unit_task, str(run_dir.path), str(device), d, s) for d, s in order]
        for f in track(as_completed(futures), "deep-ln units", total=len(futures)):
            f.result()  # a unit's error stops the run here, with its traceback
    finally:
        pool.shutdown(cancel_futures=True)


_WORKER: dict[str, Any] = {}  # in a worker process: the run's config and data set, loaded once


def _worker_init(cfg_dict: dict, threads: int) -> None:
    import os

    import torch

    from .data import load_data

    os.environ["NCLAB_PROGRESS"] = "0"  # one bar, the parent's, over the units
    torch.set_num_threads(threads)
    cfg = DeepLNConfig.model_validate(cfg_dict)
    _WORKER.update(cfg=cfg, data=load_data(cfg))


def _unit_task(path: str, device: str, depth: int, seed: int) -> None:
    import torch

    _unit(_WORKER["cfg"], depth, seed, _WORKER["data"], RunDir(path), torch.device(device))
