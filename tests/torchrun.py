"""Run a script under ``torchrun --standalone`` with n CPU processes (gloo), for the tests that check
what users run: ``python -m torch.distributed.run --standalone --nproc-per-node N script.py``."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src"


def torchrun(script: Path, nprocs: int = 2, timeout: int = 300, **env: str):
    """The finished process (stdout and stderr as text); fails the test on a non-zero exit."""
    full_env = {**os.environ, "OMP_NUM_THREADS": "1", "PYTHONPATH": str(SRC), **env}
    cmd = [sys.executable, "-m", "torch.distributed.run", "--standalone"]
    cmd += ["--nproc-per-node", str(nprocs), str(script)]
    run = subprocess.run(
        cmd, capture_output=True, text=True, timeout=timeout, env=full_env, cwd=script.parent
    )
    assert run.returncode == 0, run.stderr[-3000:]
    return run
