"""Run directories under ``torch.distributed``: rank 0 writes, every other rank only reads.

Every rank trains and measures (and must read the same checkpoints and finished units to resume in
step), but one process writes the files: :func:`run_dir_for` gives rank 0 a
:class:`~nclab.runs.RunDir` and the others a :class:`RankView` of the same folder.
"""

from __future__ import annotations

import time
from pathlib import Path

from ...runs import RunDir, to_jsonable


class RankView(RunDir):
    """A run directory as seen by a rank other than 0: reads (checkpoints, finished units), never
    writes."""

    def __init__(self, path):
        self.path = Path(path)
        self._t0 = time.perf_counter()

    def log(self, record) -> None:
        pass

    def truncate_metrics(self, keep: int) -> None:
        pass

    def save_checkpoint(self, state) -> None:
        pass

    def remove_checkpoint(self) -> None:
        pass

    def write_summary(self, summary, seconds=None) -> dict:
        return to_jsonable(dict(summary))

    def write_config(self, cfg, **meta) -> None:
        pass

    def write_error(self, text: str) -> None:
        pass


def run_dir_for(path, rank: int) -> RunDir:
    """The run directory at ``path`` as rank ``rank`` uses it (rank 0 writes, the others read)."""
    return RunDir(path) if rank == 0 else RankView(path)
