"""Where a run comes from: the code (nclab version, git commit, whether the tree was dirty), the
command, the software and the device, and when.

The runner writes ``provenance.json`` into a run directory when the run starts (and adds its wall
time when it ends), so that a run recorded into the ledger later still says which code made it.

>>> p = provenance(["nclab", "run", "demo"])
>>> sorted(p)  # doctest: +NORMALIZE_WHITESPACE
['command', 'commit', 'device', 'dirty', 'started', 'versions']
>>> p["command"]
'nclab run demo'
"""

from __future__ import annotations

import os
import platform
import shlex
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from .runs import versions

#: the file of a run directory holding its provenance
PROVENANCE = "provenance.json"

#: the folder of the source tree nclab runs from (a git checkout, or an installed package)
SOURCE = Path(__file__).resolve().parents[2]
#: paths of the source tree whose changes do not make a run's code dirty (the ledger itself, the
#: runs written into the tree)
NOT_CODE = ("evidence", "runs")


def git_state(root: Path = SOURCE) -> tuple[str | None, bool | None]:
    """(the commit ``root`` is checked out at, whether tracked files differ from it). Changes
    under :data:`NOT_CODE` do not count. Outside a git checkout (or without git): the commit
    ``$NCLAB_SOURCE_COMMIT`` names, else None, and None for the tree's state, which nothing
    checked: a copy of a checkout sent without its ``.git`` to another machine (a GPU host)
    names its commit so."""
    try:
        commit = _git(root, "rev-parse", "HEAD")
        excluded = [f":(exclude){p}" for p in NOT_CODE]
        status = _git(root, "status", "--porcelain", "--untracked-files=no", "--", ".", *excluded)
    except (OSError, subprocess.CalledProcessError):
        return os.environ.get("NCLAB_SOURCE_COMMIT") or None, None
    return commit, bool(status)


def _git(root: Path, *args: str) -> str:
    out = subprocess.run(
        ["git", "-C", str(root), *args], capture_output=True, text=True, check=True, timeout=20
    )
    return out.stdout.strip()


def device() -> dict[str, Any]:
    """The device runs compute on: the CPU (model, cores, torch threads) and the GPU if any."""
    import torch

    out: dict[str, Any] = {
        "cpu": _cpu_model(),
        "cores": len(os.sched_getaffinity(0))
        if hasattr(os, "sched_getaffinity")
        else os.cpu_count(),
        "threads": torch.get_num_threads(),
        "gpu": torch.cuda.get_device_name(0) if torch.cuda.is_available() else None,
    }
    return out


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def command_line(argv: Sequence[str] | None = None) -> str:
    """The command that made the run, as a user would type it (``nclab ...`` for the CLI)."""
    argv = list(sys.argv if argv is None else argv)
    if argv and (Path(argv[0]).name in ("nclab", "__main__.py") or argv[0].endswith("-m")):
        argv = ["nclab", *argv[1:]]
    return shlex.join(argv)


def provenance(argv: Sequence[str] | None = None) -> dict[str, Any]:
    """The provenance of a run starting now (see the module docstring)."""
    commit, dirty = git_state()
    return {
        "command": command_line(argv),
        "commit": commit,
        "dirty": dirty,
        "versions": versions(),
        "device": device(),
        "started": now(),
    }


def now() -> str:
    """The time now, UTC, ISO 8601 to the second."""
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
