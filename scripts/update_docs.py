"""Regenerate every generated part of the docs, in one command:

* the claim table of docs/reproduce.md (every registered claim),
* docs/statements.md (the statement inventory of nclab.reproduce.statements),
* every ``<!-- evidence: ... -->`` block of docs/*.md and the claims' evidence figures, from the
  ledger (``scripts/evidence_tables.py``, run last: docs/reproduce.md's blocks included).

Usage: .venv/bin/python scripts/update_docs.py [--check] [--ledger DIR]

``--check`` writes nothing and exits 1 when a part is out of date (``tests/test_docs.py`` checks
each). After adding an experiment, a claim or a docs page, or recording a run, run it once.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
START, END = "<!-- claims:start -->", "<!-- claims:end -->"


def claims_block() -> str:
    from nclab.reproduce.registry import all_claims
    from nclab.reproduce.reports.claims_report import claims_markdown

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


def evidence_tables():
    """``scripts/evidence_tables.py`` as a module (the scripts are not a package)."""
    sys.path.insert(0, str(ROOT / "scripts"))
    try:
        import evidence_tables
    finally:
        sys.path.remove(str(ROOT / "scripts"))
    return evidence_tables


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="write nothing; exit 1 when stale")
    ap.add_argument("--ledger", type=Path, default=ROOT / "evidence", help="default: evidence/")
    args = ap.parse_args(argv)
    path = ROOT / "docs" / "reproduce.md"
    pages = {path: updated(path.read_text()), STATEMENTS_DOC: statements_doc()}
    stale = []
    for page, text in pages.items():
        if page.is_file() and page.read_text() == text:
            continue
        if args.check:
            stale.append(page)
        else:
            page.write_text(text)
            print(f"updated {page}")
    for page in stale:
        print(f"{page}: out of date", file=sys.stderr)
    tables = ["--ledger", str(args.ledger)] + (["--check"] if args.check else [])
    code = evidence_tables().main(tables)
    if stale or code:
        print("run: python scripts/update_docs.py", file=sys.stderr)
    return 1 if stale else code


if __name__ == "__main__":
    sys.exit(main())
