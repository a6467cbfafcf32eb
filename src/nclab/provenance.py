"""Where a run comes from: the code (nclab version, git commit, whether the tree was dirty), the
command, the software and the device, and when.

The runner writes ``provenance.json`` into a run directory when the run starts (and adds its wall
time when it ends), so that a run recorded into the ledger later still says which code made it.
The tree is dirty when a tracked file differs from the commit or a file git does not ignore is
untracked (a new experiment not yet committed is code the commit does not hold). An experiment of
your own whose package lives outside the tree (``NCLAB_EXPERIMENTS``) is named with its path and
the SHA-256 of its Python files (:func:`code_source`), since the commit says nothing of it.

>>> p = provenance(["nclab", "run", "demo"])
>>> sorted(p)  # doctest: +NORMALIZE_WHITESPACE
['command', 'commit', 'device', 'dirty', 'started', 'versions']
>>> p["command"]
'nclab run demo'
"""

from __future__ import annotations

import hashlib
import importlib.util
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
#: runs written into the tree, the dependency wheels scripts/gpu_check.sh installs on a GPU host)
NOT_CODE = ("evidence", "runs", ".whl")


def git_state(root: Path | None = None) -> tuple[str | None, bool | None]:
    """(the commit ``root`` (default: :data:`SOURCE`) is checked out at, whether its tree differs
    from it: a tracked file changed, or an untracked file git does not ignore). Changes under
    :data:`NOT_CODE` do not count. Outside a git checkout (or without git): the commit
    ``$NCLAB_SOURCE_COMMIT`` names, else None, and None for the tree's state, which nothing
    checked: a copy of a checkout sent without its ``.git`` to another machine (a GPU host)
    names its commit so."""
    root = SOURCE if root is None else root
    try:
        commit = _git(root, "rev-parse", "HEAD")
        excluded = [f":(exclude){p}" for p in NOT_CODE]
        status = _git(
            root, "status", "--porcelain", "--untracked-files=normal", "--", ".", *excluded
        )
    except (OSError, subprocess.CalledProcessError):
        return os.environ.get("NCLAB_SOURCE_COMMIT") or None, None
    return commit, bool(status)


def code_source(module: str, root: Path | None = None) -> dict[str, str] | None:
    """Where the code of the package (or module) ``module`` lives when it is outside the tree
    ``root`` (default: :data:`SOURCE`), whose commit does not hold it: ``{"module", "path",
    "sha256"}``, the digest over its ``.py`` files (relative path and content, in path order);
    None inside the tree (the commit and the dirty flag cover it) or when it cannot be found.

    >>> code_source("nclab.experiments.demo") is None  # nclab's own: inside the tree
    True
    """
    spec = importlib.util.find_spec(module)
    if spec is None or spec.origin is None or not spec.has_location:
        return None
    origin = Path(spec.origin).resolve()
    base = origin.parent if spec.submodule_search_locations is not None else origin
    if base.is_relative_to((SOURCE if root is None else root).resolve()):
        return None
    files = sorted(base.rglob("*.py")) if base.is_dir() else [base]
    digest = hashlib.sha256()
    for f in files:
        digest.update(f.relative_to(base.parent).as_posix().encode() + b"\0")
        digest.update(f.read_bytes() + b"\0")
    return {"module": module, "path": str(base), "sha256": digest.hexdigest()}


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


def provenance(argv: Sequence[str] | None = None, module: str | None = None) -> dict[str, Any]:
    """The provenance of a run starting now (see the module docstring); ``module``: the package
    of the experiment it runs, recorded as ``source`` (:func:`code_source`) when it lives outside
    the tree."""
    commit, dirty = git_state()
    out = {
        "command": command_line(argv),
        "commit": commit,
        "dirty": dirty,
        "versions": versions(),
        "device": device(),
        "started": now(),
    }
    source = code_source(module) if module else None
    if source:
        out["source"] = source
    return out


def now() -> str:
    """The time now, UTC, ISO 8601 to the second."""
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
