"""The statement inventory (:mod:`nclab.reproduce.statements`): every statement of the four papers
has claims or a reason, every claim it names exists, every registered claim tests a statement (or
the inventory says why it stands outside), the quotes are the papers' words, and the statement
counts a report prints follow from the claims' verdicts."""

from __future__ import annotations

import json
import re
from pathlib import Path
from types import SimpleNamespace

import pytest

from nclab.cli import main
from nclab.reproduce import all_claims, statements
from nclab.reproduce.statements import (
    OUTSIDE,
    PAPER_FILES,
    PAPERS,
    STATEMENTS,
    Statement,
    coverage_counts,
    problems,
    statement_counts,
    statement_status,
)
from nclab.reproduce.statements.base import EXPERIMENT, PROOF, REASONS

PAPERS_DIR = Path(__file__).resolve().parents[1].parent / "shared" / "papers"


def test_the_inventory_is_sound():
    """No statement without a claim or a reason, no unknown claim id, no registered claim that
    tests no statement (except those OUTSIDE, with the reason), no duplicate id."""
    assert problems() == []


def test_every_paper_has_its_theorems_and_observations():
    counts = coverage_counts()
    for paper in PAPERS:
        kinds = {s.kind for s in STATEMENTS if s.paper == paper}
        assert {"observation"} <= kinds or paper == "sukenik", paper  # the fragment: no §6
        assert kinds & {"theorem", "lemma"}, paper
        assert counts[paper]["covered"] > 0, paper
    assert counts["all"]["statements"] == len(STATEMENTS)
    assert counts["all"]["covered"] + counts["all"]["not covered"] == len(STATEMENTS)
    assert sum(counts["all"][r] for r in REASONS) == counts["all"]["not covered"]


def _claim(cid: str):
    return SimpleNamespace(id=cid)


def test_problems_names_each_kind_of_fault():
    claims = [_claim("p/a"), _claim("p/b"), _claim("p/c"), _claim("q/x")]
    good = Statement("p:one", "theorem", "§1", "a quote", claims=("p/a",))
    faults = [
        Statement("p:bare", "theorem", "§1", "a quote"),  # neither claims nor a reason
        Statement("p:ghost", "observation", "§2", "a quote", claims=("p/nope",)),
        Statement("p:other", "observation", "§2", "a quote", claims=("q/x",)),
        Statement("p:mute", "lemma", "§3", "a quote", uncovered=PROOF),  # no why
        Statement("p:odd", "musing", "§3", "a quote", uncovered="bored", why="w"),
        Statement("p:one", "theorem", "§1", "again", claims=("p/a",)),  # duplicate id
    ]
    found = problems([good, *faults], claims, outside={"p/c": "outside: a reason", "p/z": "x"})
    text = "\n".join(found)
    assert "p:bare: neither a claim nor a reason" in text
    assert "p:ghost: claim 'p/nope' is not registered" in text
    assert "p:other: claim 'q/x' is another paper's" in text
    assert "p:mute: says it is not covered" in text
    assert "kind 'musing'" in text and "reason 'bored'" in text
    assert "p:one: the id is used twice" in text
    assert "claim 'p/b' tests no statement" in text  # neither cited nor outside
    assert "p/c" not in text  # outside, with its reason
    assert "OUTSIDE names 'p/z', which is not a registered claim" in text
    assert "paper 'p'" in text  # not one of PAPERS


def test_outside_claims_are_registered_and_say_why():
    ids = {c.id for c in all_claims()}
    assert set(OUTSIDE) <= ids
    assert all(len(why) > 20 for why in OUTSIDE.values())


def _normal(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


@pytest.mark.skipif(not PAPERS_DIR.is_dir(), reason="the papers' texts (shared/papers) are absent")
def test_quotes_are_exact_fragments_of_the_papers():
    """A quote marked exact is a fragment of the extracted text (whitespace aside; ' … ' joins
    two fragments)."""
    texts = {p: _normal((PAPERS_DIR / f).read_text()) for p, f in PAPER_FILES.items()}
    missing = [
        f"{s.id}: {frag[:60]!r}"
        for s in STATEMENTS
        if s.exact
        for frag in s.quote.split(" … ")
        if _normal(frag) not in texts[s.paper]
    ]
    assert missing == []


@pytest.mark.skipif(not PAPERS_DIR.is_dir(), reason="the papers' texts (shared/papers) are absent")
def test_every_quote_identifies_one_place():
    """No exact quote whose every fragment occurs twice in its paper (issue 50: Fig. 4's and
    Fig. 6's captions, Theorem 3.1's and Lemma C.2's openings): it runs on into words of one
    place only."""
    texts = {p: _normal((PAPERS_DIR / f).read_text()) for p, f in PAPER_FILES.items()}
    twice = [
        s.id
        for s in STATEMENTS
        if s.exact and all(texts[s.paper].count(_normal(f)) > 1 for f in s.quote.split(" … "))
    ]
    assert twice == []


def _result(cid: str, outcome: str):
    return SimpleNamespace(id=cid, outcome=outcome)


def test_statement_status_follows_the_claims_outcomes():
    inv = [
        Statement("p:ok", "theorem", "§1", "q", claims=("p/a", "p/b")),
        Statement("p:mixed", "theorem", "§1", "q", claims=("p/a", "p/c")),
        Statement("p:no", "observation", "§2", "q", claims=("p/c",)),
        Statement("p:part", "observation", "§2", "q", claims=("p/d",)),
        Statement("p:gpu", "observation", "§2", "q", claims=("p/e",)),
        Statement("p:bug", "observation", "§2", "q", claims=("p/f", "p/e")),
        Statement("p:split", "observation", "§2", "q", claims=("p/a", "p/f")),
        Statement("p:unrun", "observation", "§2", "q", claims=("p/zz",)),
        Statement("p:none", "lemma", "§3", "q", uncovered=EXPERIMENT, why="w"),
    ]
    results = [
        _result("p/a", "reproduced"),
        _result("p/b", "reproduced"),
        _result("p/c", "contradicted"),
        _result("p/d", "partial"),
        _result("p/e", "not run"),
        _result("p/f", "inconclusive"),
    ]
    assert statement_status(results, inv) == {
        "p:ok": "reproduced",
        "p:mixed": "partial",
        "p:no": "contradicted",
        "p:part": "partial",
        "p:gpu": "not run",
        "p:bug": "inconclusive",
        "p:split": "partial",
        "p:unrun": "not run",
        "p:none": "not covered",
    }
    counts = statement_counts(results, inv)["all"]
    assert counts == {
        "statements": 9,
        "covered": 8,
        "reproduced": 1,
        "partial": 3,
        "contradicted": 1,
        "inconclusive": 1,
        "not run": 2,
        "not covered": 1,
    }


def test_statement_counts_of_the_real_inventory_add_up():
    results = [_result(c.id, "reproduced") for c in all_claims()]
    counts = statement_counts(results)
    for paper, c in counts.items():
        assert c["reproduced"] == c["covered"], paper
        assert c["reproduced"] + c["not covered"] == c["statements"], paper
    assert statement_counts([])["all"]["not run"] == coverage_counts()["all"]["covered"]


def run_cli(args) -> int:
    try:
        main(args)
    except SystemExit as exc:
        return exc.code or 0
    return 0


def test_list_statements_prints_and_emits_the_inventory(capsys):
    assert run_cli(["reproduce", "--list", "--statements", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert [r["id"] for r in data["statements"]] == [s.id for s in STATEMENTS]
    assert data["counts"] == coverage_counts()
    assert data["outside"] == OUTSIDE
    row = next(r for r in data["statements"] if r["id"] == "jacot:fig2-nc1")
    assert row["claims"] == ["jacot/fig2-nc1-depth"] and row["covered"] is True
    assert run_cli(["reproduce", "--list", "--statements"]) == 0
    out = capsys.readouterr().out
    assert "jacot:fig2-nc1  [§6, Fig. 2]" in out
    assert "not covered: proof step" in out
    assert out.rstrip().splitlines()[-2].startswith("all: ")
    # with claim ids: the statements those claims test
    assert run_cli(["reproduce", "jacot/fig3-*", "--list", "--statements"]) == 0
    out = capsys.readouterr().out
    assert "jacot:fig3-last-negativity" in out and "feature-collapse:" not in out
    assert statements.markdown().startswith("# Every statement of the four papers")


def test_a_claim_may_say_itself_why_it_stands_outside_the_inventory():
    from nclab.reproduce.statements import outside_claims

    own = SimpleNamespace(id="toy/x", outside="a claim of an experiment of your own")
    bare = SimpleNamespace(id="toy/y", outside="")
    got = outside_claims([own, bare])
    assert got["toy/x"] == own.outside and "toy/y" not in got
    assert set(OUTSIDE) <= set(got)
    text = "\n".join(problems(STATEMENTS, [*all_claims(), own, bare]))
    assert "'toy/x'" not in text and "claim 'toy/y' tests no statement" in text
    assert "Claim(outside=...)" in text
