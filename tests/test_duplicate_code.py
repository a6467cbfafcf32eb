"""Repeated code cannot grow unseen: pylint's ``symilar`` (the engine of its ``duplicate-code``
check, R0801) over ``src/nclab``, blocks of at least 6 lines, comments and docstrings left out.

The number of repeated blocks it reports is recorded below. A change that adds one fails here
with the blocks listed: share the code instead (``experiments/common/``, a helper beside both),
or, if the repetition is the right call, raise the count and say why in the commit. A change that
removes one fails too, so that the count comes down with it: lower it. The duplicated lines are
shown, not held fixed: a line added to an import block two modules share moves them, and every
such edit would fail here.

Imports and signatures are compared like any line (symilar's ``--ignore-imports`` and
``--ignore-signatures`` parse every file with astroid: about 100 s of CPU over ``src/nclab``,
where this check takes well under a second). For the record, pylint's ``duplicate-code`` with
its defaults (both ignored) found 1 block of 11 lines when the count was set.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src" / "nclab"
MIN_LINES = 6
#: the repeated blocks symilar reports over src/nclab (47 duplicated lines when it was set)
BLOCKS = 4


def symilar(capsys) -> str:
    """symilar's report over every Python file of src/nclab."""
    from pylint.checkers.symilar import Run  # the dev extras (pyproject.toml) install pylint

    files = [str(p) for p in sorted(SRC.rglob("*.py"))]
    with pytest.raises(SystemExit) as done:
        Run(["-d", str(MIN_LINES), "--ignore-comments", "--ignore-docstrings", *files])
    assert done.value.code == 0
    return capsys.readouterr().out


def test_repeated_code_does_not_grow_unseen(capsys):
    report = symilar(capsys)
    total = re.search(r"^TOTAL lines=(\d+) duplicates=(\d+) percent=", report, re.M)
    assert total is not None, report[-500:]
    assert int(total[1]) > 10_000  # it read the whole package
    blocks = re.findall(r"^(\d+) similar lines in (\d+) files$", report, re.M)
    advice = (
        "share the new repetition, or raise BLOCKS and say why"
        if len(blocks) > BLOCKS
        else "lower BLOCKS"
    )
    assert len(blocks) == BLOCKS, (
        f"symilar finds {len(blocks)} repeated blocks ({total[2]} duplicated lines) in src/nclab; "
        f"recorded: {BLOCKS} (tests/test_duplicate_code.py): {advice}.\n" + report
    )
