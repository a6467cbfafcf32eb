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
    per_depth: dict[int, list[dict[str, Any]]] = {}
    histories: dict[int, list[list[dict[str, Any]]]] = {}
    for depth in sorted(set(cfg.depths)):
        for i in range(max(1, cfg.seeds)):
            unit = _unit(cfg, depth, cfg.seed + i, data, run_dir, device)
            per_depth.setdefault(depth, []).append(unit.read_summary())
            histories.setdefault(depth, []).append(unit.read_metrics())
    by_depth = {d: aggregate_summaries(s) if len(s) > 1 else s[0] for d, s in per_depth.items()}
    out = summarize(cfg, by_depth)
    out["figures"] = [str(p) for p in draw(out, by_depth, histories, run_dir.figures)]
    out["seconds"] = time.perf_counter() - t0
    return out


def _unit(cfg: DeepLNConfig, depth: int, seed: int, data, run_dir: RunDir, device) -> RunDir:
    """The finished unit ``units/L<depth>_seed-<seed>``, trained here unless it already was."""
    from .train import train_unit

    unit = RunDir(Path(run_dir.path) / "units" / f"L{depth}_seed-{seed}")
    if not unit.finished:
        unit.write_config(cfg, depth=depth, unit_seed=seed)
        unit.write_summary(train_unit(cfg, depth, seed, data, unit, device))
        unit.remove_checkpoint()
    return unit
