"""Runs still going: where a long run stands, kept in the ledger until its record replaces it.

A run of hours a seed (the no-weight-decay presets at paper size) is started in the background,
checkpointed, and resumed (``nclab run --resume RUN_DIR``) until it finishes; until then
``nclab evidence add --running RUN_DIR`` writes where it stands into
``evidence/running/<experiment>/<preset>[-<overrides hash>]-s<seeds>.json``: its experiment,
preset, overrides and seeds, how many of its units (seeds, grid points) have finished, the last
epoch or step each unfinished unit logged (and of how many epochs), when it was last written,
its provenance and the commands that resume it and record it once finished. The reports show it
at that scale ("running: 1/3 units finished, seed-1 at epoch 40 of 100, as of ..."), and
recording the finished run removes it.

The entry also keeps what a lost run directory cannot give back: the run's ``config.toml`` and
``provenance.json`` and, for each finished unit, its config, summary and metrics log (a few KB;
no checkpoint). A machine that loses the run directory (a fresh machine, a wiped disk) then loses
only the unfinished units' progress: ``nclab evidence restore <experiment>/<group>`` (or
:func:`restore_running`) writes the directory back with its finished units, and the same resume
command trains the others.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from ..errors import RunError
from ..experiments.catalog import get_experiment
from ..provenance import PROVENANCE
from ..runs import CONFIG, METRICS, SUMMARY, RunDir, dumps
from .ledger import RUNNING, Ledger, group_key, overrides_of


def progress_of(run_dir: str | Path) -> dict[str, Any]:
    """Where the unfinished run in ``run_dir`` stands (see the module docstring)."""
    run = RunDir(run_dir, create=False)
    if run.finished:
        raise RunError(f"{run.path} has finished: record it with nclab evidence add")
    if not (run.path / "config.toml").is_file():
        raise RunError(f"{run.path} has no config.toml: not a run directory")
    data = run.read_config()
    meta = data.pop("nclab", {})
    if "experiment" not in meta:
        raise RunError(f"{run.path}/config.toml does not name its experiment: not a run directory")
    experiment, preset = meta["experiment"], meta.get("preset")
    exp = get_experiment(experiment)
    cfg = exp.config_cls.from_dict(data)
    units = list(exp.units(cfg))
    where = {u.key or "run": RunDir(u.path(run.path), create=False) for u in units}
    done = [key for key, d in where.items() if d.finished]
    epochs = _epochs(cfg)
    at = {key: _last_logged(d.path, epochs) for key, d in where.items() if not d.finished}
    first, n = int(data.get("seed", 0)), int(data.get("seeds", 1))
    prov_path = run.path / PROVENANCE
    prov = json.loads(prov_path.read_text()) if prov_path.is_file() else {}
    return {
        "experiment": experiment,
        "preset": preset,
        "overrides": overrides_of(experiment, preset, data),
        "seeds": [first + i for i in range(n)],
        "units": len(units),
        "finished": done,
        "at": at,
        "epochs": epochs,
        "updated": _updated(run.path),
        "run_dir": str(run.path.resolve()),
        "resume": _resume(run.path.resolve()),
        "provenance": prov,
        "config_toml": (run.path / CONFIG).read_text(),
        "done": {key: _kept(run.path, where[key].path) for key in done},
    }


def _kept(root: Path, unit: Path) -> dict[str, Any]:
    """What :func:`restore_running` needs of a finished unit: where it lies in the run, its
    config (as written), summary and metrics log."""
    d = RunDir(unit, create=False)
    return {
        "path": unit.relative_to(root).as_posix(),
        "config_toml": (unit / CONFIG).read_text(),
        "summary": d.read_summary(),
        "metrics": d.read_metrics(),
    }


def progress_words(entry: dict[str, Any]) -> str:
    """``"running: 1/3 units finished, seed-1 at epoch 40 of 100, as of 2026-12-01 18:30 UTC"``."""
    parts = [f"{len(entry['finished'])}/{entry['units']} units finished"]
    total = entry.get("epochs")  # absent from entries written before it was kept
    of = f" of {total}" if total else ""
    parts += [
        f"{key} at {where}{of if where.startswith('epoch ') else ''}"
        for key, where in entry["at"].items()
        if where
    ]
    return f"running: {', '.join(parts)}, as of {entry['updated']}"


def _epochs(cfg: Any) -> int | None:
    """The epochs each unit runs (``train.epochs``), if the experiment's config has them."""
    epochs = getattr(getattr(cfg, "train", None), "epochs", None)
    return epochs if isinstance(epochs, int) else None


def _resume(path: Path) -> str:
    """The commands that finish the run and then record it (the report prints them)."""
    return f"nclab run --resume {path} && nclab evidence add {path}"


def _last_logged(path: Path, epochs: int | None = None) -> str:
    """``"epoch 40"`` / ``"step 1200"`` from the unit's last ``metrics.jsonl`` line; ``""``
    when it has logged nothing yet. A step-based run that also logs its fractional epoch says of
    how many steps (``"step 1200 of 10000"``: steps per epoch times the run's ``epochs``)."""
    log = path / "metrics.jsonl"
    if not log.is_file():
        return ""
    last = ""
    for line in log.read_text().splitlines():
        if line.strip():
            last = line
    try:
        row = json.loads(last) if last else {}
    except ValueError:
        return ""
    if "step" in row:  # a step-based run also logs its fractional epoch
        frac = row.get("epoch")
        if epochs and isinstance(frac, (int, float)) and frac > 0:
            return f"step {row['step']} of {round(row['step'] / frac * epochs)}"
        return f"step {row['step']}"
    return f"epoch {row['epoch']}" if "epoch" in row else ""


def _updated(path: Path) -> str:
    """When anything in the run directory was last written (UTC, to the minute)."""
    latest = max((p.stat().st_mtime for p in path.rglob("*") if p.is_file()), default=0.0)
    return time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(latest))


def record_running(ledger: Ledger, run_dir: str | Path) -> Path:
    """Write where the unfinished run in ``run_dir`` stands into the ledger's ``running/``,
    replacing what was written of it before; returns the file."""
    entry = progress_of(run_dir)
    group = group_key(entry["experiment"], entry["preset"], entry["overrides"], len(entry["seeds"]))
    path = ledger.root / RUNNING / f"{group}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(dumps(entry, indent=1) + "\n")
    return path


def running(
    ledger: Ledger, experiment: str, preset: str | None, overrides: dict[str, Any] | None = None
) -> dict[str, Any] | None:
    """Where the run of ``experiment`` / ``preset`` with exactly these overrides stands, if one
    is going (the one with the most seeds), else None."""
    want = dict(overrides or {})
    found = []
    for path in sorted((ledger.root / RUNNING).glob("*/*.json")):
        entry = json.loads(path.read_text())
        same = (entry["experiment"], entry["preset"]) == (experiment, preset)
        if same and dict(entry["overrides"]) == want:
            found.append(entry)
    return max(found, key=lambda e: len(e["seeds"]), default=None)


def running_entry(ledger: Ledger, name: str | Path) -> dict[str, Any]:
    """The running entry ``name``: a file, or its group under the ledger's ``running/``
    (``fc-transformer/a4-lm-s3``: the file's path there without ``.json``)."""
    path = Path(name)
    if not path.is_file():
        path = ledger.root / RUNNING / f"{str(name).removesuffix('.json')}.json"
    if not path.is_file():
        have = sorted(
            p.relative_to(ledger.root / RUNNING).with_suffix("").as_posix()
            for p in (ledger.root / RUNNING).glob("*/*.json")
        )
        raise RunError(
            f"no running entry {name} in {ledger.root}; there are: {', '.join(have) or 'none'}"
        )
    return json.loads(path.read_text())


def restore_running(entry: dict[str, Any], into: str | Path | None = None) -> Path:
    """Write the run directory of a running entry back (to ``into``, default where it was):
    its config, provenance and finished units, so that ``nclab run --resume`` trains only the
    units that had not finished. Refuses a directory that holds anything."""
    if "config_toml" not in entry:
        raise RunError(
            "this running entry was written before nclab kept finished units in it: start the "
            "run again (its finished units are lost with its directory)"
        )
    target = Path(into if into is not None else entry["run_dir"])
    if target.exists() and any(target.iterdir()):
        raise RunError(f"{target} is not empty: resume it with nclab run --resume {target}")
    target.mkdir(parents=True, exist_ok=True)
    (target / CONFIG).write_text(entry["config_toml"])
    (target / PROVENANCE).write_text(json.dumps(entry["provenance"], indent=2) + "\n")
    for unit in entry["done"].values():
        ud = target / unit["path"]
        ud.mkdir(parents=True, exist_ok=True)
        (ud / CONFIG).write_text(unit["config_toml"])
        (ud / METRICS).write_text("".join(dumps(row) + "\n" for row in unit["metrics"]))
        (ud / SUMMARY).write_text(dumps(unit["summary"], indent=1) + "\n")
    return target
