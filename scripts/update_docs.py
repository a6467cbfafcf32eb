"""Regenerate the generated parts of the docs (the claim table of docs/reproduce.md).

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


def main() -> int:
    path = ROOT / "docs" / "reproduce.md"
    path.write_text(updated(path.read_text()))
    print(f"updated {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
