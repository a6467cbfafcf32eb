"""Repeated code cannot grow unseen: pylint's ``symilar`` (the engine of its ``duplicate-code``
check, R0801) over ``src/nclab``, blocks of at least 6 lines, comments and docstrings left out.

The counts it reports are recorded below. A change that adds a repeated block fails here with
the blocks listed: share the code instead (``experiments/common/``, a helper beside both), or, if
the repetition is the right call, raise the counts and say why in the commit. A change that
removes one fails too, so that the counts come down with it: lower them.

Imports and signatures are compared like any line (symilar's ``--ignore-imports`` and
``--ignore-signatures`` parse every file with astroid: about 100 s of CPU over ``src/nclab``,
where this check takes well under a second). For the record, pylint's ``duplicate-code`` with
its defaults (both ignored) found 1 block of 11 lines when these counts were set.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src" / "nclab"
MIN_LINES = 6
#: what symilar reports over src/nclab: similar blocks, and duplicated lines (its TOTAL line)
BLOCKS, DUPLICATED_LINES = 5, 47


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
    found = (len(blocks), int(total[2]))
    recorded = (BLOCKS, DUPLICATED_LINES)
    grew = any(f > r for f, r in zip(found, recorded, strict=True))
    advice = "share the new repetition, or raise the counts and say why" if grew else "lower them"
    assert found == recorded, (
        f"symilar finds {found[0]} repeated blocks, {found[1]} duplicated lines in src/nclab; "
        f"recorded: {BLOCKS}, {DUPLICATED_LINES} (tests/test_duplicate_code.py): {advice}.\n"
        + report
    )
