"""Regenerate the generated parts of the docs (the claim table of docs/reproduce.md, and
docs/statements.md: the statement inventory of nclab.reproduce.statements).

Usage: .venv/bin/python scripts/update_docs.py   (tests/test_docs.py checks they are current)
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
START, END = "<!-- claims:start -->", "<!-- claims:end -->"


def claims_block() -> str:
    from nclab.report.claims_report import claims_markdown
    from nclab.reproduce.registry import all_claims

    return f"{START}\n{claims_markdown(all_claims())}{END}"


def updated(text: str) -> str:
    return re.sub(
        re.escape(START) + ".*?" + re.escape(END), lambda _: claims_block(), text, flags=re.S
    )


STATEMENTS_DOC = ROOT / "docs" / "statements.md"


def statements_doc() -> str:
    """docs/statements.md, the whole page: every statement of the four papers and its claims."""
    from nclab.reproduce.statements import markdown

    return markdown()


def main() -> int:
    path = ROOT / "docs" / "reproduce.md"
    path.write_text(updated(path.read_text()))
    print(f"updated {path}")
    STATEMENTS_DOC.write_text(statements_doc())
    print(f"updated {STATEMENTS_DOC}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
