"""The inventory of what the four papers state, and which claims test it.

One module per paper (:mod:`.feature_collapse_statements`, :mod:`.tirer_bruna_statements`,
:mod:`.sukenik_statements`, :mod:`.jacot_statements`) lists its :class:`~.base.Statement` records: every theorem, proposition, lemma,
corollary and claim of a proof the extracted text in ``papers/`` states, and every sentence of its
experiments sections that states an observation, each with its quote, where it is, and the claim ids
that test it, or why none does (:data:`~.base.REASONS`). A registered claim that tests none of them
is listed in :data:`OUTSIDE` with the reason (the Súkeník et al. main text is not in ``papers/``).

:func:`problems` is what ``tests/test_statements.py`` requires to be empty: a statement with
neither a claim nor a reason, a claim id that is not registered, a registered claim that tests no
statement and is not in :data:`OUTSIDE`. :func:`rows` and :func:`markdown` are the inventory view
(``nclab reproduce --list --statements``, ``docs/statements.md``); :func:`statement_counts` counts
statements covered, reproduced, partial, not reproduced and not run from a reproduce's claim
results (what the report prints at the end).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from ...verdicts import Outcome
from ..registry import Claim, all_claims
from . import (
    feature_collapse_statements,
    jacot_statements,
    sukenik_statements,
    tirer_bruna_statements,
)
from .base import KINDS, REASONS, Statement

__all__ = [
    "KINDS",
    "OUTSIDE",
    "PAPERS",
    "REASONS",
    "STATEMENTS",
    "Statement",
    "coverage_counts",
    "markdown",
    "outside_claims",
    "problems",
    "rows",
    "statement_counts",
    "statement_status",
]

#: the papers, by the key their statement and claim ids start with, in the order of papers/
PAPERS: dict[str, str] = {
    "feature-collapse": "Laurent, von Brecht & Bresson, Feature Collapse (ICLR 2024)",
    "tirer-bruna": "Tirer & Bruna, Extended Unconstrained Features Model (ICML 2022)",
    "sukenik": "Súkeník, Lampert & Mondelli, Neural Collapse is Globally Optimal in Deep "
    "Regularized ResNets and Transformers (appendix fragment)",
    "jacot": "Jacot, Súkeník, Wang & Mondelli, Wide Neural Networks Trained with Weight Decay "
    "Provably Exhibit Neural Collapse (ICLR 2025)",
}
#: the text file of each paper in papers/ (the quotes are exact fragments of it)
PAPER_FILES: dict[str, str] = {
    "feature-collapse": "000_b6da5189c62ae581.txt",
    "tirer-bruna": "001_fef387e7d9c3df05.txt",
    "sukenik": "002_b5b6c029051a0db4.txt",
    "jacot": "004_9ba4ea23ea7ac53f.txt",
}
STATEMENTS: list[Statement] = [
    *feature_collapse_statements.STATEMENTS,
    *tirer_bruna_statements.STATEMENTS,
    *sukenik_statements.STATEMENTS,
    *jacot_statements.STATEMENTS,
]
#: registered claims that test no statement of the inventory, and why (besides the claims that
#: say so themselves, ``Claim.outside``: :func:`outside_claims`)
OUTSIDE: dict[str, str] = {**sukenik_statements.OUTSIDE}


def outside_claims(claims: Sequence[Claim] | None = None) -> dict[str, str]:
    """Every registered claim that tests no statement of the inventory, and why: :data:`OUTSIDE`
    and the claims that declare it themselves (``Claim.outside``), sorted by id."""
    claims = all_claims() if claims is None else claims
    own = {c.id: c.outside for c in claims if getattr(c, "outside", "")}
    return dict(sorted({**OUTSIDE, **own}.items()))


#: a statement's status from its claims' outcomes: an outcome, or not covered
NOT_COVERED, NOT_RUN = "not covered", Outcome.NOT_RUN.value
STATUSES = (*(o.value for o in Outcome), NOT_COVERED)


def problems(
    statements: Sequence[Statement] | None = None,
    claims: Sequence[Claim] | None = None,
    outside: Mapping[str, str] | None = None,
) -> list[str]:
    """Everything wrong with the inventory (empty when it is sound): each statement's own problems
    (:meth:`~.base.Statement.problems`), duplicate ids, a paper key not in :data:`PAPERS`, a claim
    id that is not registered or belongs to another paper, a registered claim that tests no
    statement and is not in ``outside`` (with a reason), an ``outside`` entry that is not a
    registered claim or that a statement cites."""
    statements = STATEMENTS if statements is None else statements
    claims = all_claims() if claims is None else claims
    outside = outside_claims(claims) if outside is None else outside
    ids = {c.id for c in claims}
    out = [p for s in statements for p in s.problems()]
    dup = [i for i, n in Counter(s.id for s in statements).items() if n > 1]
    out += [f"{i}: the id is used twice" for i in dup]
    for s in statements:
        if s.paper not in PAPERS:
            out.append(f"{s.id}: paper {s.paper!r} is not one of {', '.join(PAPERS)}")
        for cid in s.claims:
            if cid not in ids:
                out.append(f"{s.id}: claim {cid!r} is not registered")
            elif not cid.startswith(s.paper + "/"):
                out.append(f"{s.id}: claim {cid!r} is another paper's")
    cited = {cid for s in statements for cid in s.claims}
    for cid in sorted(ids - cited):
        if not outside.get(cid, "").strip():
            out.append(
                f"claim {cid!r} tests no statement of the inventory (cite it from one, or "
                "say why it stands outside: Claim(outside=...) or OUTSIDE)"
            )
    for cid in sorted(outside):
        if cid not in ids:
            out.append(f"OUTSIDE names {cid!r}, which is not a registered claim")
        elif cid in cited:
            out.append(f"OUTSIDE names {cid!r}, which a statement cites")
    return out


def by_paper(statements: Iterable[Statement] | None = None) -> dict[str, list[Statement]]:
    """The statements grouped by paper, in the order of :data:`PAPERS`."""
    out: dict[str, list[Statement]] = {p: [] for p in PAPERS}
    for s in STATEMENTS if statements is None else statements:
        out.setdefault(s.paper, []).append(s)
    return out


def short(text: str, limit: int = 90) -> str:
    """``text`` on one line, cut at a word to at most ``limit`` characters (``…`` marks a cut)."""
    text = " ".join(text.split())
    if len(text) <= limit:
        return text
    return text[: limit - 1].rsplit(" ", 1)[0] + " …"


def tested_by(s: Statement) -> str:
    """``"claim, claim"`` or ``"not covered: <reason> (<why>)"``."""
    if s.claims:
        return ", ".join(s.claims)
    return f"not covered: {s.uncovered} ({s.why})"


def rows(statements: Iterable[Statement] | None = None) -> list[dict[str, Any]]:
    """The inventory as data (``nclab reproduce --list --statements --json``): one dict per
    statement, with its paper, whether a claim covers it and the reason when none does."""
    return [
        {
            "id": s.id,
            "paper": s.paper,
            "kind": s.kind,
            "where": s.where,
            "quote": s.quote,
            "exact": s.exact,
            "note": s.note,
            "claims": list(s.claims),
            "covered": s.covered,
            "uncovered": s.uncovered or None,
            "why": s.why or None,
        }
        for s in (STATEMENTS if statements is None else statements)
    ]


def coverage_counts(statements: Iterable[Statement] | None = None) -> dict[str, dict[str, int]]:
    """Per paper (and ``"all"``): statements, covered, not covered, and not covered by reason."""
    groups = by_paper(statements)
    groups["all"] = [s for group in list(groups.values()) for s in group]
    out = {}
    for paper, group in groups.items():
        counts = {
            "statements": len(group),
            "covered": sum(s.covered for s in group),
            NOT_COVERED: sum(not s.covered for s in group),
        }
        counts |= {r: sum(s.uncovered == r for s in group) for r in REASONS}
        out[paper] = counts
    return out


def statement_status(
    results: Iterable[Any], statements: Iterable[Statement] | None = None
) -> dict[str, str]:
    """Each statement's status from the claim results (:class:`~nclab.reproduce.judge.ClaimResult`
    or anything with ``id`` and ``outcome``): ``not covered`` without claims; ``not run`` when no
    claim of it was judged; the outcome when every judged claim has the same one; ``partial``
    otherwise."""
    outcomes = {r.id: Outcome(r.outcome) for r in results}
    out = {}
    for s in STATEMENTS if statements is None else statements:
        if not s.claims:
            out[s.id] = NOT_COVERED
            continue
        got = {outcomes.get(cid, Outcome.NOT_RUN) for cid in s.claims} - {Outcome.NOT_RUN}
        if not got:
            out[s.id] = NOT_RUN
        elif len(got) == 1:
            out[s.id] = got.pop().value
        else:
            out[s.id] = Outcome.PARTIAL.value
    return out


def statement_counts(
    results: Iterable[Any], statements: Iterable[Statement] | None = None
) -> dict[str, dict[str, int]]:
    """Per paper (and ``"all"``): how many statements there are, how many a claim covers, and how
    many are reproduced, partial, not reproduced, failed, not run and not covered on ``results``
    (a reproduce's claim results; :func:`statement_status`)."""
    statements = list(STATEMENTS if statements is None else statements)
    status = statement_status(results, statements)
    groups = by_paper(statements)
    groups["all"] = statements
    out = {}
    for paper, group in groups.items():
        counts = {"statements": len(group), "covered": sum(s.covered for s in group)}
        counts |= {k: sum(status[s.id] == k for s in group) for k in STATUSES}
        out[paper] = counts
    return out


def counts_line(counts: Mapping[str, int]) -> str:
    """``"118 statements: 80 covered (60 reproduced, 5 partial, ...), 38 not covered"``."""
    judged = ", ".join(f"{counts[k]} {k}" for k in STATUSES[:-1] if counts.get(k))
    return (
        f"{counts['statements']} statements: {counts['covered']} covered"
        + (f" ({judged})" if judged else "")
        + f", {counts[NOT_COVERED]} not covered"
    )


def markdown(statements: Iterable[Statement] | None = None) -> str:
    """``docs/statements.md``: the counts per paper and reason, then one table per paper."""
    statements = list(STATEMENTS if statements is None else statements)
    counts = coverage_counts(statements)
    lines = [
        "# Every statement of the four papers, and the claims that test it",
        "",
        "<!-- generated by scripts/update_docs.py from src/nclab/reproduce/statements/: "
        "do not edit -->",
        "",
        "The inventory lists every theorem, proposition, lemma, corollary and claim of a proof "
        "that the extracted papers (`papers/`) state, and every sentence of their experiments "
        "sections that states an observation: its quote (exact fragments of the extracted text "
        "joined by ` … `, unless marked *in words*), where it is, and the claims "
        "(`nclab reproduce ID`) that test it, or why none does. `nclab reproduce --list "
        "--statements` prints it (`--json`: as data); `tests/test_statements.py` fails on a "
        "statement with neither a claim nor a reason, on a claim id that does not exist and on "
        "a registered claim that tests no statement (unless the inventory says why it stands "
        "outside it).",
        "",
        "Why a statement is not covered:",
        "",
        *[f"- **{k}**: {v}." for k, v in REASONS.items()],
        "",
        "| paper | statements | covered | not covered | " + " | ".join(REASONS) + " |",
        "|---|---|---|---|" + "---|" * len(REASONS),
    ]
    for paper, c in counts.items():
        name = "all" if paper == "all" else f"`{paper}`"
        cells = [c["statements"], c["covered"], c[NOT_COVERED], *(c[r] for r in REASONS)]
        lines.append(f"| {name} | " + " | ".join(str(v) for v in cells) + " |")
    lines += ["", "Claims that test no statement of the inventory:", ""]
    lines += [f"- `{cid}`: {why}" for cid, why in outside_claims().items()]
    for paper, group in by_paper(statements).items():
        lines += ["", f"## {PAPERS[paper]}", "", "| statement | where | quote | tested by |"]
        lines.append("|---|---|---|---|")
        for s in group:
            quote = _cell(s.quote) + ("" if s.exact else " *(in words)*")
            if s.note:
                quote += f" <br>*{_cell(s.note)}*"
            tested = (
                ", ".join(f"`{c}`" for c in s.claims)
                if s.claims
                else f"not covered: **{s.uncovered}**: {_cell(s.why)}"
            )
            lines.append(f"| `{s.id}` ({s.kind}) | {_cell(s.where)} | {quote} | {tested} |")
    return "\n".join(lines) + "\n"


def _cell(text: str) -> str:
    """``text`` fit for a Markdown table cell (one line, ``|`` escaped)."""
    return " ".join(text.split()).replace("|", "\\|")
