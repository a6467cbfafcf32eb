"""The ledger: finished runs recorded with their provenance, committed beside the code.

::

    evidence/                                  (the repository's; NCLAB_EVIDENCE names another)
      runs/<experiment>/<preset>[-<overrides hash>]-s<seeds>/<started>-<digest>.json
      running/<experiment>/<preset>[-<overrides hash>]-s<seeds>.json    (runs still going)

A record is one finished run: its experiment, preset, ``--set`` overrides (the resolved config's
difference from the preset's), seeds, resolved config, compact summary (the run's ``summary.json``
without figure paths and matrices: what claims and docs read) and provenance (nclab version, git
commit and whether the tree was dirty, the command, torch / numpy / python versions, the device,
wall time in all and per unit, when it started and was recorded). Records are small JSON files, a
few to some tens of kB; recording the same run twice writes nothing new.

>>> compact({"a": 1.0, "figures": ["x.png"], "grams": {"L3": [[1.0, 0.0], [0.0, 1.0]]}})
{'a': 1.0, 'grams': {}}
>>> compact({"std": {"a": 0.0}, "by_seed": [{"a": 1.0, "std": {"a": 0.0, "b": None}}]})
{'std': {'a': 0.0}, 'by_seed': [{'a': 1.0}]}
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

from ..errors import ConfigError, NclabError, RunError
from ..experiments.catalog import get_experiment
from ..experiments.protocol import UNITS
from ..provenance import PROVENANCE, SOURCE, now
from ..runs import RunDir, dumps

LEDGER_VERSION = 1
#: the ledger's folder of runs still going (:mod:`nclab.evidence.progress`)
RUNNING = "running"
#: the environment variable naming another ledger folder
ENV = "NCLAB_EVIDENCE"

#: the ledger's folder of outside sources (an author's notebook outputs), by hand
EXTERNAL = "external"


def default_root() -> Path:
    """The ledger folder: ``$NCLAB_EVIDENCE``, else ``evidence/`` of the source tree."""
    return Path(os.environ.get(ENV) or SOURCE / "evidence")


def existing_root(root: str | Path | None = None) -> Path:
    """The ledger folder ``root`` (default :func:`default_root`) that a verb reads; a
    ConfigError when it is no folder: a mistyped ``--ledger`` would judge or list an empty ledger
    without a word."""
    path = Path(root) if root is not None else default_root()
    if not path.is_dir():
        raise ConfigError(
            f"no ledger at {path}: a ledger is a folder of recorded runs, written by "
            f"`nclab evidence add RUN_DIR` or `nclab reproduce --record`; --ledger DIR (or "
            f"${ENV}) names another"
        )
    return path


def compact(summary: Any, _seed: bool = False) -> Any:
    """``summary`` without what no claim or table reads: figure paths, matrices (lists of lists
    of numbers, e.g. Gram matrices) and, inside a seed's own summary (``by_seed``), ``std`` trees
    that are all zero (a spread over the one network of each sweep point: a sixth of the linear
    sweeps' records)."""
    if isinstance(summary, Mapping):
        return {
            k: compact(v, _seed or k == "by_seed")
            for k, v in summary.items()
            if k != "figures" and not _matrix(v) and not (_seed and k == "std" and _zero(v))
        }
    if isinstance(summary, list):
        return [compact(v, _seed) for v in summary]
    return summary


def _zero(tree: Any) -> bool:
    """Every leaf of ``tree`` is 0 or None (an empty tree too)."""
    if isinstance(tree, Mapping):
        return all(_zero(v) for v in tree.values())
    if isinstance(tree, list):
        return all(_zero(v) for v in tree)
    return tree is None or (
        isinstance(tree, int | float) and not isinstance(tree, bool) and tree == 0
    )


def _matrix(v: Any) -> bool:
    return isinstance(v, list) and bool(v) and all(isinstance(r, list) for r in v)


def overrides_of(experiment: str, preset: str | None, config: Mapping[str, Any]) -> dict:
    """The dotted keys where ``config`` differs from the preset's resolved config, bookkeeping
    keys (seeds, threads, workers, how often to log...) aside: what the run computed differently."""
    exp = get_experiment(experiment)
    base = exp.setting(preset)
    return {k: v for k, v in sorted(exp.flat(config).items()) if base.get(k) != v}


def group_key(experiment: str, preset: str | None, overrides: Mapping[str, Any], seeds: int) -> str:
    """``<experiment>/<preset>[-<overrides hash>]-s<seeds>``: the folder of a run's records."""
    tag = ""
    if overrides:
        tag = (
            "-" + hashlib.sha1(json.dumps(dict(overrides), sort_keys=True).encode()).hexdigest()[:8]
        )
    return f"{experiment}/{preset or 'default'}{tag}-s{seeds}"


def read_record(path: Path) -> dict[str, Any]:
    """A ledger file's JSON object (a run's or a benchmark's record); one that a newer nclab wrote
    (a larger ``ledger_version``) is refused, not misread."""
    data = json.loads(Path(path).read_text())
    if data.get("ledger_version", 0) > LEDGER_VERSION:
        raise RunError(f"{path}: ledger record version {data['ledger_version']} is newer")
    return data


@dataclass(frozen=True)
class LedgerFile:
    """A record file of the ledger read into a frozen dataclass: its fields after ``path`` are
    the file's keys (``KEYS`` renames one, a ``tuple`` field is read from a JSON list)."""

    #: field -> key of the file, where they differ
    KEYS: ClassVar[dict[str, str]] = {}

    @classmethod
    def load(cls, path: Path) -> Any:
        data = read_record(path)
        values = {}
        for f in dataclasses.fields(cls)[1:]:
            value = data[cls.KEYS.get(f.name, f.name)]
            values[f.name] = tuple(value) if str(f.type).startswith("tuple") else value
        return cls(Path(path), **values)

    @property
    def started(self) -> str:
        return self.provenance.get("started") or ""  # type: ignore[attr-defined]


@dataclass(frozen=True)
class Record(LedgerFile):
    """One recorded run (see the module docstring); ``path`` is its file."""

    path: Path
    experiment: str
    preset: str | None
    overrides: Mapping[str, Any]
    seeds: tuple[int, ...]
    config: Mapping[str, Any]
    summary: Mapping[str, Any]
    provenance: Mapping[str, Any]

    def current(self, settings: dict | None = None) -> bool:
        """Whether the record's config is what its preset and overrides resolve to today
        (bookkeeping keys aside): a record of a preset changed since, or of a config this nclab
        no longer reads, is stale and judges nothing. ``settings`` caches the presets' resolved
        settings between records."""
        exp = get_experiment(self.experiment)
        key = (self.experiment, self.preset, json.dumps(dict(self.overrides), sort_keys=True))
        cache = {} if settings is None else settings
        try:
            if key not in cache:
                cache[key] = exp.setting(self.preset, dict(self.overrides))
            return cache[key] == exp.flat(self.config)
        except NclabError:
            return False


class Ledger:
    """The records under ``root`` (default :func:`default_root`), read once (:meth:`records`);
    :meth:`add` adds to them."""

    def __init__(self, root: str | Path | None = None):
        self.root = Path(root) if root is not None else default_root()
        self._records: list[Record] | None = None
        self._settings: dict = {}  # the presets' resolved settings, for Record.current

    def records(self) -> Iterator[Record]:
        """Every record, oldest first within each run's folder."""
        if self._records is None:
            paths = sorted((self.root / "runs").glob("*/*/*.json"))
            self._records = [Record.load(p) for p in paths]
        yield from self._records

    def find(
        self,
        experiment: str,
        preset: str | None,
        overrides: Mapping[str, Any] | None = None,
        current: bool = True,
    ) -> list[Record]:
        """The records of ``experiment`` / ``preset`` with exactly these overrides, the most
        seeds first, then the newest; with ``current`` only those whose config is what the
        preset resolves to today (:meth:`Record.current`). Bookkeeping keys among ``overrides``
        (how often to log, threads...) are dropped, as they are from every record's overrides."""
        skip = set(get_experiment(experiment).bookkeeping_keys())
        want = {k: v for k, v in (overrides or {}).items() if k not in skip}
        found = [
            r
            for r in self.records()
            if r.experiment == experiment
            and r.preset == preset
            and dict(r.overrides) == want
            and (not current or r.current(self._settings))
        ]
        return sorted(found, key=lambda r: (len(r.seeds), r.started), reverse=True)

    def resolve(self, ref: str) -> Path | None:
        """The file behind an evidence reference, or None when the ledger has none:
        ``"external:<name>"`` is ``external/<name>.json`` (an outside source recorded by hand,
        such as the outputs an author's notebook prints); ``"experiment preset"``, with
        ``" | key=value, key=value"`` for ``--set`` overrides (JSON values), is that run's record
        with the most seeds (the one the judge reads; stale ones included).

        >>> Ledger("/nonexistent").resolve("external:x") is None
        True
        """
        if ref.startswith(EXTERNAL + ":"):
            path = self.root / EXTERNAL / f"{ref.split(':', 1)[1]}.json"
            return path if path.is_file() else None
        what, _, over = ref.partition(" | ")
        experiment, _, preset = what.strip().partition(" ")
        overrides = {}
        for item in filter(None, (x.strip() for x in over.split(", "))):
            key, _, value = item.partition("=")
            try:
                overrides[key] = json.loads(value)
            except ValueError:
                overrides[key] = value
        found = self.find(experiment, preset or None, overrides, current=False)
        return found[0].path if found else None

    def add(self, run_dir: str | Path, allow_dirty: bool = False) -> Path:
        """Record the finished run in ``run_dir``; returns the record's path. A run made from a
        dirty tree is refused unless ``allow_dirty`` (then recorded with ``dirty: true``); a run
        without ``provenance.json`` (made before nclab wrote it) is recorded with its commit
        unknown."""
        record = record_of(run_dir)
        prov = record["provenance"]
        if prov.get("dirty") and not allow_dirty:
            raise RunError(
                f"{run_dir} was run from a tree with uncommitted changes (commit "
                f"{prov.get('commit')}); commit first, or record it anyway with --allow-dirty"
            )
        text = dumps(record, indent=1) + "\n"
        digest = _digest(record["summary"])
        group = group_key(
            record["experiment"], record["preset"], record["overrides"], len(record["seeds"])
        )
        folder = self.root / "runs" / group
        (self.root / RUNNING / f"{group}.json").unlink(missing_ok=True)  # it has finished
        for old in folder.glob(f"*-{digest}.json"):
            return old  # the same run, recorded before
        stamp = (prov.get("started") or now()).replace(":", "").replace("-", "")
        path = folder / f"{stamp}-{digest}.json"
        folder.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        self._records = None  # read again with the new record
        return path

    def recompact(self) -> list[tuple[Path, Path]]:
        """Rewrite every record whose summary :func:`compact` now shortens (after it learned to
        drop more), under the name a fresh :meth:`add` of its run would give it, so that
        recording the run again still writes nothing new; returns (old, new) paths. Only what
        :func:`compact` drops changes: the numbers claims and tables read are kept as they are."""
        moved = []
        for path in sorted((self.root / "runs").glob("*/*/*.json")):
            record = json.loads(path.read_text())
            summary = compact(record["summary"])
            if summary == record["summary"]:
                continue
            record["summary"] = summary
            stamp = path.stem.rsplit("-", 1)[0]
            new = path.with_name(f"{stamp}-{_digest(summary)}.json")
            new.write_text(dumps(record, indent=1) + "\n")
            if new != path:
                path.unlink()
            moved.append((path, new))
        self._records = None
        return moved

    def stale(self) -> list[Record]:
        """The records whose config is no longer what their preset and overrides resolve to
        (:meth:`Record.current`): they judge nothing and the reports leave them out."""
        return [r for r in self.records() if not r.current(self._settings)]

    def prune(self, dry_run: bool = False) -> list[Record]:
        """Remove the :meth:`stale` records (unless ``dry_run``) and the folders they leave
        empty; returns them. A committed ledger keeps them in its history (``git log --
        evidence/runs/...``); a variant that still runs an old setting has its own records."""
        gone = self.stale()
        if not dry_run:
            for r in gone:
                r.path.unlink()
                if not any(r.path.parent.iterdir()):
                    r.path.parent.rmdir()
            self._records = None
        return gone


def _digest(summary: Mapping[str, Any]) -> str:
    """The name's digest of a record's (compact) summary: the same run recorded twice has one."""
    return hashlib.sha1(dumps(summary).encode()).hexdigest()[:10]


def record_of(run_dir: str | Path) -> dict[str, Any]:
    """The ledger record of the finished run in ``run_dir`` (not written)."""
    run = RunDir(run_dir, create=False)
    if not run.finished:
        raise RunError(f"{run.path} has no summary.json: the run has not finished")
    data = run.read_config()
    meta = data.pop("nclab", {})
    if "experiment" not in meta:
        raise RunError(f"{run.path}/config.toml does not name its experiment: not a run directory")
    summary = run.read_summary()
    if summary.get("failed"):
        raise RunError(f"{run.path} is a failed run: {summary.get('error')}")
    experiment, preset = meta["experiment"], meta.get("preset")
    first, n = int(data.get("seed", 0)), int(data.get("seeds", 1))
    seeds = summary.get("seeds") or [first + i for i in range(n)]
    prov_path = run.path / PROVENANCE
    if prov_path.is_file():
        prov = json.loads(prov_path.read_text())
    else:
        prov = {"commit": None, "dirty": None, "note": "run before nclab recorded provenance"}
        prov["versions"] = summary.get("versions")
    prov = {**prov, "seconds": summary.get("seconds"), "unit_seconds": _unit_seconds(run)}
    prov["recorded"] = now()
    return {
        "ledger_version": LEDGER_VERSION,
        "experiment": experiment,
        "preset": preset,
        "overrides": overrides_of(experiment, preset, data),
        "seeds": list(seeds),
        "config": data,
        "summary": compact(summary),
        "provenance": prov,
    }


def _unit_seconds(run: RunDir) -> dict[str, float]:
    """Wall time of each unit of the run (``units/<key>/summary.json``), by key."""
    out = {}
    for path in sorted((run.path / UNITS).glob("*/summary.json")):
        seconds = json.loads(path.read_text()).get("seconds")
        if seconds is not None:
            out[path.parent.name] = seconds
    return out
