"""The generated parts of the docs are current, and the docs name what exists."""

import importlib.util
import re
import sys
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


def _evidence_tables():
    spec = importlib.util.spec_from_file_location(
        "evidence_tables", ROOT / "scripts" / "evidence_tables.py"
    )
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod  # its dataclasses look their module up
    spec.loader.exec_module(mod)
    return mod


def test_docs_evidence_tables_are_current_with_the_committed_ledger(capsys):
    """Every ``<!-- evidence: ... -->`` block of docs/*.md is what the repository's ledger
    (evidence/, empty or not) generates: a new record, a changed preset or a hand edit fails."""
    mod = _evidence_tables()
    code = mod.main(["--check", "--ledger", str(ROOT / "evidence")])
    assert code == 0, capsys.readouterr().err + "run: python scripts/evidence_tables.py"


def test_the_docs_evidence_figures_are_kept_to_the_linked_ones(tmp_path):
    """The figures folder is made to hold exactly the claims' figures: a missing, changed or
    left-over file is stale under --check and written, rewritten or removed otherwise."""
    mod = _evidence_tables()
    folder = tmp_path / "evidence"
    folder.mkdir()
    (folder / "a.svg").write_text("<svg>old</svg>\n")
    (folder / "gone.svg").write_text("<svg/>\n")
    want = {"a.svg": "<svg>new</svg>\n", "b.svg": "<svg>b</svg>\n"}
    stale = mod.sync_figures(folder, want, check=True)
    assert sorted(p.name for p in stale) == ["a.svg", "b.svg", "gone.svg"]
    assert (folder / "gone.svg").exists()  # --check writes nothing
    assert mod.sync_figures(folder, want, check=False) == []
    assert {p.name: p.read_text() for p in folder.glob("*.svg")} == want
    assert mod.sync_figures(folder, want, check=True) == []
    linked = set()
    for page in (ROOT / "docs").glob("*.md"):
        linked |= set(re.findall(r"\]\(figures/evidence/([^)]+\.svg)\)", page.read_text()))
    assert linked == {p.name for p in (ROOT / "docs" / "figures" / "evidence").glob("*.svg")}


def test_run_results_in_the_docs_come_from_the_ledger():
    """The pages of run results hold generated blocks, and no sentence counts verdicts by hand
    ("all twelve claims reproduce")."""
    count = re.compile(
        r"\ball (?:\d+|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|thirteen)"
        r"\s+(?:\w+\s+)?claims\b",
        re.I,
    )
    for name in ("ufm.md", "deep-ln.md", "feature-collapse.md", "linear-head.md"):
        text = (ROOT / "docs" / name).read_text()
        assert "<!-- evidence: claim " in text, name
        outside = re.sub(r"<!-- evidence:.*?<!-- /evidence -->", "", text, flags=re.S)
        hits = count.findall(" ".join(outside.split()))
        assert not hits, f"docs/{name} counts claims by hand: {hits}"


def test_every_experiment_names_its_docs_page_and_the_page_names_it():
    """The page that documents an experiment is part of its declaration (``Experiment(docs=)``),
    and says how to run it."""
    from nclab.experiments import experiment_names, get_experiment

    for name in experiment_names():
        page = get_experiment(name).docs
        assert page and (ROOT / page).is_file(), (name, page)
        text = (ROOT / page).read_text()
        assert f"`{name}`" in text or f"nclab run {name}" in text or f"nclab {name}" in text, name


def test_one_command_regenerates_every_generated_part(monkeypatch, capsys):
    """scripts/update_docs.py writes the claim table and the statement inventory, then runs
    the evidence tables of every page (with --check: writes nothing, and says what is stale)."""
    mod = _update_docs()
    assert callable(mod.evidence_tables().main)  # scripts/evidence_tables.py, loaded
    calls = []
    fake = type("M", (), {"main": staticmethod(lambda argv: calls.append(argv) or 0)})
    monkeypatch.setattr(mod, "evidence_tables", lambda: fake)
    assert mod.main(["--check"]) == 0
    assert calls == [["--ledger", str(ROOT / "evidence"), "--check"]]
    monkeypatch.setattr(mod, "statements_doc", lambda: "stale\n")
    assert mod.main(["--check"]) == 1
    assert "statements.md: out of date" in capsys.readouterr().err
