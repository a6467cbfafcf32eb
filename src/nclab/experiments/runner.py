"""The runner: an experiment's config into a run directory, through the lifecycle of
:mod:`nclab.experiments.protocol`.

::

    run_dir/
      config.toml        the resolved config, [nclab] experiment and preset
      summary.json       the run's summary (written last: the run is finished when it exists)
      provenance.json    the code (commit, dirty), command, versions and device it ran with
      metrics.jsonl, checkpoint.pt, figures/ of a run of one unit (key "")
      units/<key>/       one directory per unit of a run of several: config.toml (with the unit),
                         metrics.jsonl, checkpoint.pt while training, summary.json when finished

The runner checks the config, refuses a finished run of another config, trains the units not yet
finished (in this process, or ``cfg.workers`` spawned processes each with its share of the run's
torch threads, a unit only after the units it ``needs``), times each, reduces the finished units
to the run's summary (``experiment``, ``preset``, ``seconds``, ``versions`` added) and draws the
figures. :func:`resume_run` continues an interrupted run from its directory (the units'
checkpoints and finished units); :func:`redraw` re-draws the figures of a finished run;
:func:`remeasure` measures a finished run again through the experiment's ``remeasure`` hook.

The runner is the only writer of ``summary.json``: every unit and run summary is stamped with its
schema version and checked against the structure the experiment declares (:func:`checked`)
before it is written, and the figures are drawn after the check.

Length: the one writer of summaries: running, resuming, re-measuring and re-drawing a run share
its summary assembly and checks, which splitting would spread over modules.
"""

from __future__ import annotations

import contextlib
import json
import os
import time
import traceback
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..config import Config
from ..errors import ConfigError, NclabError, RunError
from ..provenance import PROVENANCE, provenance
from ..runs import SUMMARY, RunDir, dumps
from ..threads import limit_blas, run_threads
from ..workers import run_tasks
from .catalog import get_experiment
from .protocol import Experiment, Unit, UnitResult, as_summary, seed_summary
from .schema import read_summary_versioned, stamp, validate_summary

#: set in a spawned worker: its experiment, config and context (loaded once per process)
_WORKER: dict[str, Any] = {}


def rank() -> int:
    """This process's rank under ``torchrun`` (``RANK``; 0 otherwise): only rank 0 writes files."""
    return int(os.environ.get("RANK", "0"))


def run_experiment(
    exp: Experiment,
    cfg: Config,
    out: str | Path,
    seeds: int | None = None,
    preset: str | None = None,
    record_errors: bool = False,
) -> dict[str, Any]:
    """Run ``exp`` with ``cfg`` (``seeds`` replaces ``cfg.seeds`` when given) into ``out`` and
    return its summary.

    With ``record_errors=True`` an exception is written to ``error.txt`` (with its traceback) and a
    summary ``{"failed": True, "error": ...}`` is returned instead of raising.
    """
    if seeds is not None:
        if seeds < 1:
            raise ConfigError(f"seeds must be >= 1, got {seeds}")
        cfg = cfg.replace(seeds=seeds)
    exp.validate(cfg)
    run = RunDir.for_rank(out, rank())
    if run.finished:
        return _finished_summary(exp, run, cfg)
    try:
        changed = config_changes(exp, cfg, run)
        if changed:  # its finished units and checkpoints would be taken for this config's
            raise RunError(
                f"{run.path} holds an unfinished run of another config ({_keys(changed)} "
                "differ); choose another --out, or remove it"
            )
        lock = hold_run(run)
    except RunError as exc:
        if not record_errors:
            raise
        return {"failed": True, "error": str(exc), "run_dir": str(run.path)}
    with lock:
        return _run_locked(exp, cfg, run, preset, record_errors)


def _run_locked(exp, cfg, run: RunDir, preset, record_errors: bool) -> dict[str, Any]:
    run.write_config(cfg, experiment=exp.name, preset=preset)
    write_provenance(run, exp)
    t0 = time.perf_counter()
    try:
        with run_threads(cfg.threads):
            results = train_units(exp, cfg, run)
            summary = run_summary(exp, cfg, results, preset)
            draw_figures(exp, cfg, run, summary, results)
    except Exception as exc:
        if not record_errors:
            raise
        run.write_error(traceback.format_exc())
        return {"failed": True, "error": f"{type(exc).__name__}: {exc}", "run_dir": str(run.path)}
    out_summary = run.write_summary(summary, time.perf_counter() - t0)
    run.remove_checkpoint()
    return out_summary


def run_summary(
    exp: Experiment, cfg: Config, results: list[UnitResult], preset: str | None
) -> dict[str, Any]:
    """The run's summary from its finished units (``summarize``, each seed's for a grid, the
    seeds, the experiment and preset; ``seconds`` is the run's, added when it is written),
    stamped and checked against the structure the experiment declares."""
    summary = exp.summarize_units(cfg, results)
    summary.update(seed_summaries(exp, cfg, results))
    summary.setdefault("seed", cfg.seed)
    if cfg.seeds > 1:
        summary.setdefault("seeds", [cfg.seed + i for i in range(cfg.seeds)])
    summary["experiment"], summary["preset"] = exp.name, preset
    summary.pop("seconds", None)
    return checked(exp, summary)


def checked(exp: Experiment, summary: Mapping[str, Any], unit: bool = False) -> dict[str, Any]:
    """``summary`` stamped with the schema version this nclab writes, if it has the structure
    ``exp`` declares (a unit's of a grid: ``unit``); else :class:`~nclab.errors.RunError` naming
    the bad field. Every summary the runner writes passes here first."""
    summary = stamp(exp.name, summary)
    if unit:
        return validate_summary(exp.name, summary, unit=True)
    read_summary_versioned(exp.name, summary)  # one run's, or aggregated over seeds
    return summary


def draw_figures(
    exp: Experiment, cfg: Config, run: RunDir, summary: dict[str, Any], results: list[UnitResult]
) -> None:
    """Draw the figures of a run whose ``summary`` has been checked (:func:`checked`), and list
    them in it as ``figures``; nothing on a rank other than 0 or with ``NCLAB_FIGURES=0``."""
    if exp.figures is not None and rank() == 0 and figures_wanted():
        summary["figures"] = [str(p) for p in exp.figures(cfg, run, summary, results)]


#: ``NCLAB_FIGURES=0``: runs write their summaries but draw no figures (a large sweep, a test
#: that reads summaries only); ``nclab report RUN_DIR`` draws them later from the run directory
FIGURES_ENV = "NCLAB_FIGURES"


def figures_wanted() -> bool:
    """Whether runs draw their figures: unless ``$NCLAB_FIGURES`` is ``0``."""
    return os.environ.get(FIGURES_ENV, "1").strip() != "0"


LOCK = ".running.lock"  # held (flock) by the process training a run directory


def hold_run(run: RunDir):
    """An exclusive hold on the run directory while this process trains it (a file lock, released
    when the returned file is closed or the process ends): two processes training the same
    directory (two reproduce calls sharing ``--out``) would write each other's checkpoints. Raises
    :class:`~nclab.errors.RunError` when another process holds it. Without ``fcntl`` (Windows) or
    on a rank other than 0, nothing is held."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - not POSIX
        return contextlib.nullcontext()
    if rank() != 0:
        return contextlib.nullcontext()
    f = open(run.path / LOCK, "a+")  # held until the run ends
    try:
        fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        f.seek(0)
        who = f.read().strip() or "?"
        f.close()
        raise RunError(f"{run.path} is being run by another process (pid {who})") from None
    f.seek(0)
    f.truncate()
    f.write(str(os.getpid()))
    f.flush()
    return f


def seed_summaries(exp: Experiment, cfg: Config, results: list[UnitResult]) -> dict[str, Any]:
    """``{"by_seed": [...]}``: for a run whose units span several seeds and whose summary is not
    simply their mean (a grid: deep-ln, linear-head), the summary of each seed's units alone, of
    the run summary's own structure (claims are judged on each seed as well as on the mean); else
    ``{}`` (seed units already keep each seed's summary in ``per_seed``)."""
    seeds = sorted({r.unit.seed for r in results})
    if len(seeds) < 2 or exp.summarize is seed_summary:
        return {}
    out = []
    for s in seeds:
        mine = [r for r in results if r.unit.seed == s]
        one = exp.summarize_units(cfg.replace(seed=s, seeds=1), mine)
        out.append(validate_summary(exp.name, {**one, "seed": s}))
    return {"by_seed": out}


def write_provenance(run: RunDir, exp: Experiment) -> None:
    """``provenance.json`` of the run of ``exp`` starting now
    (:func:`nclab.provenance.provenance`: with the source of an experiment outside the tree); a
    run resumed keeps its first and lists each resumption's commit, dirty flag, source and time."""
    if rank() != 0:
        return
    path = run.path / PROVENANCE
    now = provenance(module=exp.package)
    if path.is_file():
        first = json.loads(path.read_text())
        keys = ("command", "commit", "dirty", "source", "started")
        first.setdefault("resumed", []).append({k: now[k] for k in keys if k in now})
        now = first
    path.write_text(dumps(now, indent=2) + "\n")


def unit_dir(run: RunDir, unit: Unit) -> RunDir:
    """The directory of ``unit`` in the run ``run`` (the same kind: a rank's view stays one)."""
    return run if not unit.key else RunDir.for_rank(unit.path(run.path), rank())


def train_units(exp: Experiment, cfg: Config, run: RunDir) -> list[UnitResult]:
    """Train every unit of the run not yet finished and return all of them, finished, in order.

    A unit is finished when its directory has a ``summary.json``; the unit of a one-unit run
    (``key=""``) is the run directory itself, whose ``summary.json`` the run writes last, so it
    trains unless the run finished."""
    units = exp.units(cfg)
    todo = [u for u in units if not u.key or not unit_dir(run, u).finished]
    if cfg.workers > 1 and len(todo) > 1:
        _train_in_processes(exp, cfg, run, todo)
        todo = [u for u in todo if not u.key]
    context = None
    results: dict[str, UnitResult] = {}
    for u in units:
        ud = unit_dir(run, u)
        if u in todo:
            if context is None:
                context = exp.setup(cfg) if exp.setup is not None else ()
            summary = _train_unit(exp, cfg, u, ud, context)
        else:
            summary = ud.read_summary()
        results[u.key] = UnitResult(u, summary, ud)
    return [results[u.key] for u in units]


def _train_unit(exp: Experiment, cfg: Config, unit: Unit, ud: RunDir, context: Any) -> dict:
    """Train one unit into ``ud``; a unit of several writes its config and its summary (with its
    ``seconds``) there, the one unit of a run returns its summary to the run."""
    if unit.key:
        ud.write_config(cfg, unit={"key": unit.key, "seed": unit.seed, **unit.params})
    t0 = time.perf_counter()
    summary = as_summary(exp.train(cfg, unit, ud, context))
    if not unit.key:
        return summary
    summary.pop("seconds", None)
    out = ud.write_summary(checked(exp, summary, unit=True), time.perf_counter() - t0)
    ud.remove_checkpoint()
    return out


def _train_in_processes(exp: Experiment, cfg: Config, run: RunDir, todo: list[Unit]) -> None:
    """Train the units ``todo`` (those with a directory of their own) in ``cfg.workers`` spawned
    processes, each with its share of the run's threads and the experiment's context built once,
    a unit only once the units it needs are finished; a unit's error stops the run."""
    import torch

    todo = [u for u in todo if u.key]
    workers = min(cfg.workers, len(todo))
    threads = max(1, (cfg.threads or torch.get_num_threads()) // workers)
    finished = {u.key for u in exp.units(cfg) if unit_dir(run, u).finished}
    pending = list(todo)
    while pending:
        ready = [u for u in pending if all(n in finished for n in u.needs)]
        ready.sort(key=lambda u: -u.cost)
        if not ready:
            keys = ", ".join(u.key for u in pending)
            raise ConfigError(f"units {keys} need units that are not part of the run")
        run_tasks(
            _unit_task,
            [(str(run.path), u) for u in ready],
            workers=workers,
            initializer=_worker_init,
            initargs=(exp.name, cfg.to_dict(), threads),
            description=f"{exp.name} units",
        )
        finished.update(u.key for u in ready)
        pending = [u for u in pending if u.key not in finished]


def _worker_init(name: str, cfg_dict: dict, threads: int) -> None:
    import torch

    os.environ["NCLAB_PROGRESS"] = "0"  # one bar, the parent's, over the units
    torch.set_num_threads(threads)
    limit_blas(threads)
    exp = get_experiment(name)
    cfg = exp.config_cls.from_dict(cfg_dict)
    _WORKER.update(exp=exp, cfg=cfg, context=None)


def _unit_task(path: str, unit: Unit) -> None:
    exp, cfg = _WORKER["exp"], _WORKER["cfg"]
    if _WORKER["context"] is None:
        _WORKER["context"] = exp.setup(cfg) if exp.setup is not None else ()
    run = RunDir(path)
    _train_unit(exp, cfg, unit, unit_dir(run, unit), _WORKER["context"])


def _finished_summary(exp: Experiment, run: RunDir, cfg: Config) -> dict[str, Any]:
    """The summary of a finished run of the same config; refuses a run of another config."""
    changed = config_changes(exp, cfg, run, finished=True)
    if changed:
        raise RunError(
            f"{run.path} holds a finished run of another config ({_keys(changed)} differ); "
            "choose another --out"
        )
    return run.read_summary()


def config_changes(exp: Experiment, cfg: Config, run: RunDir, finished: bool = False) -> list[str]:
    """The dotted keys whose value in the config ``run`` holds differs from ``cfg``'s; [] when
    the directory holds no config yet. How the run is carried out (threads, workers, how often
    it logs: :meth:`~.protocol.Experiment.bookkeeping_keys`) is not compared, nor for an
    unfinished run the number of seeds (its units are per seed); a config this nclab cannot read
    any more differs as a whole (``["config"]``).

    A preset changed between sessions resolves to another config in the same run directory: the
    directory's finished units and checkpoints are then not this config's.
    """
    if not (run.path / "config.toml").is_file():
        return []
    old = run.read_config()
    old.pop("nclab", None)
    keep = ("seed", "seeds") if finished else ("seed",)
    try:
        then = exp.flat(old, keep)
    except NclabError:
        return ["config"]
    now = exp.flat(cfg, keep)
    return sorted(k for k in now.keys() | then.keys() if now.get(k) != then.get(k))


def _keys(keys: list[str]) -> str:
    return ", ".join(keys[:6]) + (f" and {len(keys) - 6} more" if len(keys) > 6 else "")


def load_run(path: str | Path) -> tuple[Experiment, Config, dict[str, Any]]:
    """(the experiment, the config, the ``[nclab]`` metadata) of the run directory ``path``."""
    run = RunDir(path, create=False)
    data = run.read_config()
    meta = data.pop("nclab", {})
    if "experiment" not in meta:
        raise RunError(
            f"{path}/config.toml does not name its experiment ([nclab] experiment = ...)"
        )
    exp = get_experiment(meta["experiment"])
    return exp, exp.config_cls.from_dict(data), meta


def resume_run(path: str | Path) -> dict[str, Any]:
    """Continue an interrupted run from its directory (config.toml, finished units, checkpoints)."""
    exp, cfg, meta = load_run(path)
    return run_experiment(exp, cfg, path, preset=meta.get("preset"))


def finished_units(exp: Experiment, cfg: Config, run: RunDir) -> list[UnitResult]:
    """The units of a finished run, read back (the one unit of a one-unit run is the run)."""
    out = []
    for u in exp.units(cfg):
        ud = unit_dir(run, u)
        out.append(UnitResult(u, ud.read_summary(), ud))
    return out


def redraw(path: str | Path) -> list[str]:
    """Re-draw the figures of the finished run at ``path`` from what its directory holds; returns
    their paths. ``summary.json`` gets the new ``figures`` only: it must be a summary this nclab
    reads (:func:`~.schema.read_summary_versioned`), and keeps the version it was written with."""
    exp, cfg, _ = load_run(path)
    run = RunDir(path, create=False)
    summary = read_summary_versioned(exp.name, run.read_summary(), str(run.path / SUMMARY))
    if exp.figures is None:
        return []
    with run_threads(cfg.threads):
        figs = [str(p) for p in exp.figures(cfg, run, summary, finished_units(exp, cfg, run))]
    run.write_summary({**summary, "figures": figs})
    return figs


#: what re-measuring a summary cannot recompute, kept from the summary it replaces
KEPT = ("seconds", "versions", "seed", "experiment", "preset", "figures")


def remeasure(path: str | Path, figures: bool = True) -> dict[str, Any]:
    """Measure the finished run at ``path`` again, through its experiment's ``remeasure`` hook
    (e.g. feature-collapse's units from their ``final_state.pt``), for when the measures change
    after a long run; returns the run's new summary, marked ``remeasured``.

    Each unit's summary is recomputed and, for a unit of several, written (its ``seconds`` and
    ``versions`` kept); the run's is reduced from them again as a run reduces it (its ``seconds``
    kept). Each is stamped and validated before it is written (:func:`checked`), and the figures
    (``figures``) are drawn after the run's summary is checked.
    """
    exp, cfg, meta = load_run(path)
    if exp.remeasure is None:
        raise RunError(f"experiment {exp.name!r} cannot re-measure a run: it declares no remeasure")
    run = RunDir(path, create=False)
    old = run.read_summary()
    results = finished_units(exp, cfg, run)
    with run_threads(cfg.threads):
        for r in results:
            new = _kept(r.summary, as_summary(exp.remeasure(cfg, r)))
            r.summary = r.run.write_summary(checked(exp, new, unit=True)) if r.unit.key else new
        summary = _kept(old, run_summary(exp, cfg, results, meta.get("preset")))
        summary = checked(exp, summary)
        if figures:
            draw_figures(exp, cfg, run, summary, results)
    return run.write_summary(summary)


def _kept(old: Mapping[str, Any], new: dict[str, Any]) -> dict[str, Any]:
    """``new`` with what re-measuring cannot recompute (:data:`KEPT`) from ``old``, marked
    ``remeasured``."""
    for key in KEPT:
        if key in old and key not in new:
            new[key] = old[key]
    return new | {"remeasured": True}
