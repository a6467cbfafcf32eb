"""The generated parts of the docs are current, and the docs name what exists."""

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _update_docs():
    spec = importlib.util.spec_from_file_location(
        "update_docs", ROOT / "scripts" / "update_docs.py"
    )
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_reproduce_doc_claim_table_is_current():
    mod = _update_docs()
    text = (ROOT / "docs" / "reproduce.md").read_text()
    assert mod.updated(text) == text, "run: .venv/bin/python scripts/update_docs.py"


def test_statements_doc_is_current():
    """docs/statements.md is the statement inventory as nclab.reproduce.statements renders it."""
    mod = _update_docs()
    assert mod.STATEMENTS_DOC.read_text() == mod.statements_doc(), (
        "run: .venv/bin/python scripts/update_docs.py"
    )


def test_readme_quick_start_has_two_commands():
    readme = (ROOT / "README.md").read_text()
    block = readme.split("## Quick start", 1)[1].split("```bash", 1)[1].split("```", 1)[0]
    commands = [ln.split("#")[0].strip() for ln in block.strip().splitlines()]
    assert commands == ["./nclab reproduce", "./test"]
    ci = (ROOT / ".ci" / "run").read_text()
    assert "./test" in ci
