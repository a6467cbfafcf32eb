"""The experiment protocol shared by every paper's experiments.

An experiment module defines ``EXPERIMENT = Experiment(...)``: a config class (a
:class:`nclab.config.Config` with at least a ``seed: int`` field), named presets (nested override
dicts applied to the default config) and ``run(cfg, run_dir) -> summary``. The summary is a JSON-able
dict; :func:`run_experiment` writes it to ``summary.json`` with the wall time and versions.

Seeds: with ``seeds=S`` the experiment runs S times with seeds ``cfg.seed + i`` in ``seed-<s>/``
subdirectories and the top-level summary holds the mean of every numeric value (same keys), ``std``
(same structure) and ``per_seed``. An experiment that batches seeds itself sets ``batched_seeds=True``
and gets a config whose ``seeds`` field is S.
"""

from __future__ import annotations

import importlib
import math
import time
import traceback
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..config import Config, apply_overrides, flatten
from ..errors import ConfigError, RunError
from ..runs import RunDir, to_jsonable

#: experiment name -> module defining ``EXPERIMENT`` (imported on first use)
EXPERIMENT_MODULES: dict[str, str] = {
    "demo": "nclab.experiments.demo",
    "ufm": "nclab.experiments.ufm",
    "feature-collapse": "nclab.experiments.feature_collapse",
    "linear-head": "nclab.experiments.linear_head",
    "deep-ln": "nclab.experiments.deep_ln",
}


@dataclass
class Experiment:
    name: str
    description: str
    config_cls: type[Config]
    run: Callable[[Any, RunDir], Mapping[str, Any]]
    presets: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    default_preset: str | None = None
    batched_seeds: bool = False
    figures: Callable[[RunDir], None] | None = None  # re-render figures of a finished run

    def preset_names(self) -> list[str]:
        return list(self.presets)

    def config(
        self, preset: str | None = None, overrides: Sequence[str] | Mapping[str, Any] = ()
    ) -> Config:
        """The resolved config: defaults, then the preset's values, then ``--set`` overrides."""
        cfg = self.config_cls()
        preset = preset or self.default_preset
        if preset is not None:
            if preset not in self.presets:
                raise ConfigError(
                    f"unknown preset {preset!r} for experiment {self.name!r}; "
                    f"presets: {', '.join(self.presets)}"
                )
            cfg = apply_overrides(cfg, flatten(self.presets[preset]))
        return apply_overrides(cfg, overrides)


def experiment_names() -> list[str]:
    return list(EXPERIMENT_MODULES)


def get_experiment(name: str) -> Experiment:
    if name not in EXPERIMENT_MODULES:
        raise ConfigError(
            f"unknown experiment {name!r}; experiments: {', '.join(EXPERIMENT_MODULES)}"
        )
    module = importlib.import_module(EXPERIMENT_MODULES[name])
    return module.EXPERIMENT


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
        old = run.read_config()
        old.pop("nclab", None)
        if old != _toml_view(cfg):
            raise RunError(
                f"{run.path} holds a finished run of another config; choose another --out"
            )
        return run.read_summary()
    run.write_config(cfg, experiment=exp.name, preset=preset, seeds=seeds)
    t0 = time.perf_counter()
    try:
        if seeds == 1:
            summary = dict(exp.run(cfg, run))
            summary.setdefault("seed", cfg.seed)
        else:
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
                subs.append(
                    sub.write_summary(dict(exp.run(sub_cfg, sub)), time.perf_counter() - t1)
                )
                sub.remove_checkpoint()
            summary = aggregate_summaries(subs)
            summary["seeds"] = [cfg.seed + i for i in range(seeds)]
    except Exception as exc:
        if not record_errors:
            raise
        tb = traceback.format_exc()
        run.write_error(tb)
        return {"failed": True, "error": f"{type(exc).__name__}: {exc}", "run_dir": str(run.path)}
    summary["experiment"], summary["preset"] = exp.name, preset
    out_summary = run.write_summary(summary, time.perf_counter() - t0)
    run.remove_checkpoint()
    return out_summary


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


# --------------------------------------------------------------------------------------------------
# aggregation over seeds
# --------------------------------------------------------------------------------------------------


def _is_num(v: Any) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool) and v is not None


def aggregate_summaries(summaries: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Mean over seeds of every numeric leaf (same structure), ``std`` of each, and ``per_seed``.

    Non-numeric leaves keep the first seed's value when all seeds agree; otherwise a list.

    >>> agg = aggregate_summaries([{"acc": 1.0, "m": {"nc1": 0.1}}, {"acc": 0.5, "m": {"nc1": 0.3}}])
    >>> agg["acc"], agg["std"]["acc"], round(agg["m"]["nc1"], 6)
    (0.75, 0.25, 0.2)
    """
    summaries = [to_jsonable(s) for s in summaries]
    mean = _combine([s for s in summaries], _mean)
    std = _combine([s for s in summaries], _std)
    out = dict(mean) if isinstance(mean, dict) else {"value": mean}
    out["std"] = std
    out["per_seed"] = summaries
    return out


def _mean(vals: list[float]) -> float:
    return sum(vals) / len(vals)


def _std(vals: list[float]) -> float:
    m = _mean(vals)
    return math.sqrt(sum((v - m) ** 2 for v in vals) / len(vals))


def _combine(items: list[Any], fn: Callable[[list[float]], float]) -> Any:
    first = items[0]
    if all(isinstance(i, dict) for i in items):
        keys = [k for k in first if all(k in i for i in items)]
        out = {}
        for k in keys:
            v = _combine([i[k] for i in items], fn)
            if v is not None:
                out[k] = v
        return out
    if all(_is_num(i) for i in items):
        return fn([float(i) for i in items])
    if (
        all(isinstance(i, list) for i in items)
        and len({len(i) for i in items}) == 1
        and first
        and all(all(_is_num(x) for x in i) for i in items)
    ):
        return [fn([float(i[j]) for i in items]) for j in range(len(first))]
    if fn is _mean:
        return first if all(i == first for i in items) else items
    return None
