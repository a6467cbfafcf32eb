"""Progress bars (rich, on stderr) for anything that takes longer than a second.

Bars appear only when stderr is a terminal, unless ``NCLAB_PROGRESS=1`` forces them (``=0`` hides
them); output on stdout (``--json``) is never touched.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import TypeVar

T = TypeVar("T")


def enabled() -> bool:
    flag = os.environ.get("NCLAB_PROGRESS")
    if flag is not None:
        return flag not in ("0", "", "false", "no")
    return sys.stderr.isatty()


def _progress():
    from rich.console import Console
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    return Progress(
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TimeRemainingColumn(),
        TextColumn("{task.fields[info]}"),
        console=Console(stderr=True),
        transient=False,
    )


def track(
    items: Iterable[T], description: str, total: int | None = None, enabled: bool = True
) -> Iterator[T]:
    """Iterate with a progress bar on stderr (when a terminal is attached)."""
    if not (enabled and globals()["enabled"]()):
        yield from items
        return
    if total is None:
        try:
            total = len(items)  # type: ignore[arg-type]
        except TypeError:
            total = None
    with _progress() as prog:
        task = prog.add_task(description, total=total, info="")
        for item in items:
            yield item
            prog.advance(task)


class Bar:
    """A manually advanced bar: ``bar.update(n, info="loss 0.1")``; a no-op when disabled."""

    def __init__(self, prog, task):
        self._prog, self._task = prog, task

    def update(self, advance: float = 1, info: str | None = None) -> None:
        if self._prog is not None:
            kw = {"info": info} if info is not None else {}
            self._prog.update(self._task, advance=advance, **kw)


@contextmanager
def bar(description: str, total: float | None, enabled: bool = True):
    if not (enabled and globals()["enabled"]()):
        yield Bar(None, None)
        return
    with _progress() as prog:
        yield Bar(prog, prog.add_task(description, total=total, info=""))
