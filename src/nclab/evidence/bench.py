"""Benchmark runs in the ledger: what a docs table of timings relies on, recorded, not retyped.

::

    evidence/benchmarks/<script name>/<started>-<digest>.json

``nclab evidence bench benchmarks/bench_ufm.py --label "idle" -- --repeats 5`` runs the script in a
fresh Python process (its output shown as it goes), reads the one JSON object its last line prints
(every script in ``benchmarks/`` ends so) and records it with a label and the provenance of a run:
nclab version, git commit and whether the tree was dirty (refused unless asked), the command,
torch / numpy / python versions, the device, the load average of the machine before and after
(a timing on a busy machine is not a timing of the code), the wall time and the date.
``scripts/evidence_tables.py`` draws the docs' benchmark tables from these records
(``<!-- evidence: bench NAME ... -->``).

>>> _last_json(["(a) 1.2 s", '{"ratio": 3.5, "ok": true}', ""])
{'ratio': 3.5, 'ok': True}
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

from ..errors import RunError
from ..provenance import SOURCE, device, git_state, now
from ..runs import dumps, versions
from .ledger import LEDGER_VERSION, LedgerFile, default_root

#: the ledger's folder of benchmark records
BENCHMARKS = "benchmarks"


@dataclass(frozen=True)
class BenchRecord(LedgerFile):
    """One recorded benchmark run; ``name`` is the script's stem (``bench_ufm``)."""

    KEYS: ClassVar[dict[str, str]] = {"name": "benchmark"}

    path: Path
    name: str
    label: str
    args: tuple[str, ...]
    result: dict[str, Any]
    provenance: dict[str, Any]


def benchmark_records(root: str | Path | None = None, name: str | None = None) -> list[BenchRecord]:
    """The benchmark records under the ledger ``root`` (of script ``name`` only, if given),
    oldest first."""
    base = Path(root) if root is not None else default_root()
    paths = sorted((base / BENCHMARKS).glob(f"{name or '*'}/*.json"))
    return sorted((BenchRecord.load(p) for p in paths), key=lambda r: (r.name, r.started))


def record_benchmark(
    script: str | Path,
    args: Sequence[str] = (),
    label: str = "",
    root: str | Path | None = None,
    allow_dirty: bool = False,
    echo: bool = True,
) -> Path:
    """Run the benchmark ``script`` with ``args`` and record its result (see the module
    docstring); returns the record's path. A script that fails, or whose last line is not a
    JSON object, records nothing."""
    script = Path(script)
    if not script.is_file():
        raise RunError(f"{script}: no such benchmark script")
    commit, dirty = git_state()
    if dirty and not allow_dirty:
        raise RunError(
            f"the tree has uncommitted changes (commit {commit}): commit first, or record the "
            "benchmark anyway with --allow-dirty"
        )
    shown = _shown_path(script)
    prov: dict[str, Any] = {
        "command": " ".join(["python", shown, *args]),
        "commit": commit,
        "dirty": dirty,
        "versions": versions(),
        "device": device(),
        "started": now(),
        "load_before": _load(),
    }
    t0 = time.perf_counter()
    lines = list(_run(script, args, echo))
    prov["seconds"] = round(time.perf_counter() - t0, 3)
    prov["load_after"] = _load()
    result = _last_json(lines)
    record = {
        "ledger_version": LEDGER_VERSION,
        "benchmark": script.stem,
        "label": label,
        "args": list(args),
        "result": result,
        "provenance": prov,
    }
    digest = hashlib.sha1(dumps(result).encode()).hexdigest()[:10]
    stamp = prov["started"].replace(":", "").replace("-", "")
    base = Path(root) if root is not None else default_root()
    path = base / BENCHMARKS / script.stem / f"{stamp}-{digest}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(dumps(record, indent=1) + "\n")
    return path


def _run(script: Path, args: Sequence[str], echo: bool) -> Iterator[str]:
    """The script's output lines (stdout and stderr), shown as they come when ``echo``."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(_pythonpath())}
    cmd = [sys.executable, str(script), *args]
    with subprocess.Popen(
        cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env
    ) as proc:
        assert proc.stdout is not None
        for line in proc.stdout:
            if echo:
                print(line, end="", flush=True)
            yield line.rstrip("\n")
    if proc.returncode:
        raise RunError(f"{script} failed (exit {proc.returncode}): nothing recorded")


def _pythonpath() -> list[str]:
    """nclab's own source first (the benchmark times this checkout), then the caller's path."""
    here = str(Path(__file__).resolve().parents[2])
    rest = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p and p != here]
    return [here, *rest]


def _last_json(lines: Sequence[str]) -> dict[str, Any]:
    """The JSON object of the last non-empty line."""
    text = next((x for x in reversed(lines) if x.strip()), "")
    try:
        out = json.loads(text)
    except json.JSONDecodeError:
        out = None
    if not isinstance(out, dict):
        raise RunError(f"the benchmark's last line is not a JSON object: {text[:200]!r}")
    return out


def _load() -> float | None:
    return round(os.getloadavg()[0], 2) if hasattr(os, "getloadavg") else None


def _shown_path(script: Path) -> str:
    """The script as the command shows it: relative to the source tree when inside it."""
    try:
        return str(script.resolve().relative_to(SOURCE))
    except ValueError:
        return str(script)
