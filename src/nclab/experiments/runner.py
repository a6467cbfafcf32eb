"""Running one experiment into a run directory, with seeds, and resuming an interrupted run.

Seeds: with ``seeds=S`` the experiment runs S times with seeds ``cfg.seed + i`` in ``seed-<s>/``
subdirectories and the top-level summary holds the mean of every numeric value (same keys), ``std``
(same structure) and ``per_seed`` (:func:`~nclab.experiments.common.seeds.aggregate_summaries`).
An experiment that batches seeds itself sets ``batched_seeds=True`` and gets a config whose
``seeds`` field is S. Torch's thread count is set here, once per run, from the config's
``threads`` field (0: torch's setting), and restored when the run ends.
"""

from __future__ import annotations

import time
import traceback
from pathlib import Path
from typing import Any

from ..config import Config
from ..errors import ConfigError, RunError
from ..runs import RunDir
from ..threads import torch_threads
from .catalog import get_experiment
from .common.seeds import aggregate_summaries
from .protocol import Experiment


def run_experiment(
    exp: Experiment,
    cfg: Config,
    out: str | Path,
    seeds: int = 1,
    preset: str | None = None,
    record_errors: bool = False,
) -> dict[str, Any]:
    """Run ``exp`` with ``cfg`` into the directory ``out`` and return its summary.

    With ``record_errors=True`` an exception is written to ``error.txt`` (with its traceback) and a
    summary ``{"failed": True, "error": ...}`` is returned instead of raising.
    """
    if seeds < 1:
        raise ConfigError(f"seeds must be >= 1, got {seeds}")
    if not hasattr(cfg, "seed"):
        raise ConfigError(f"experiment {exp.name!r} config has no 'seed' field")
    run = RunDir(out)
    if exp.batched_seeds and "seeds" in type(cfg).model_fields:
        cfg = cfg.replace(seeds=seeds)  # before the comparison: config.toml holds this value
        seeds = 1
    if run.finished:
        return _finished_summary(run, cfg)
    run.write_config(cfg, experiment=exp.name, preset=preset, seeds=seeds)
    t0 = time.perf_counter()
    try:
        with torch_threads(getattr(cfg, "threads", 0)):
            summary = _run_seeds(exp, cfg, run, seeds, preset)
    except Exception as exc:
        if not record_errors:
            raise
        run.write_error(traceback.format_exc())
        return {"failed": True, "error": f"{type(exc).__name__}: {exc}", "run_dir": str(run.path)}
    summary["experiment"], summary["preset"] = exp.name, preset
    out_summary = run.write_summary(summary, time.perf_counter() - t0)
    run.remove_checkpoint()
    return out_summary


def _finished_summary(run: RunDir, cfg: Config) -> dict[str, Any]:
    """The summary of a finished run of the same config; refuses a run of another config."""
    old = run.read_config()
    old.pop("nclab", None)
    if old != _toml_view(cfg):
        raise RunError(f"{run.path} holds a finished run of another config; choose another --out")
    return run.read_summary()


def _run_seeds(
    exp: Experiment, cfg: Config, run: RunDir, seeds: int, preset: str | None
) -> dict[str, Any]:
    """One run in ``run``, or one per seed in ``seed-<s>/`` aggregated (finished seeds reused)."""
    if seeds == 1:
        summary = dict(exp.run(cfg, run))
        summary.setdefault("seed", cfg.seed)
        return summary
    subs = []
    for i in range(seeds):
        s = cfg.seed + i
        sub = RunDir(run.path / f"seed-{s}")
        sub_cfg = cfg.replace(seed=s)
        sub.write_config(sub_cfg, experiment=exp.name, preset=preset, seeds=1)
        if sub.finished:
            subs.append(sub.read_summary())
            continue
        t1 = time.perf_counter()
        subs.append(sub.write_summary(dict(exp.run(sub_cfg, sub)), time.perf_counter() - t1))
        sub.remove_checkpoint()
    summary = aggregate_summaries(subs)
    summary["seeds"] = [cfg.seed + i for i in range(seeds)]
    return summary


def _toml_view(cfg: Config) -> dict[str, Any]:
    """The config as it reads back from config.toml (None dropped, JSON types)."""
    import tomllib

    return tomllib.loads(cfg.to_toml())


def resume_run(path: str | Path) -> dict[str, Any]:
    """Continue an interrupted run from its directory (config.toml + checkpoint.pt)."""
    run = RunDir(path, create=False)
    data = run.read_config()
    meta = data.pop("nclab", {})
    if "experiment" not in meta:
        raise RunError(
            f"{path}/config.toml does not name its experiment ([nclab] experiment = ...)"
        )
    exp = get_experiment(meta["experiment"])
    cfg = exp.config_cls.from_dict(data)
    seeds = int(meta.get("seeds", 1))
    if exp.batched_seeds and "seeds" in exp.config_cls.model_fields:
        seeds = int(cfg.seeds)  # batched: the count lives in the config, not in the metadata
    return run_experiment(exp, cfg, run.path, seeds=seeds, preset=meta.get("preset"))
