"""One statement of a paper, as the inventory (:mod:`nclab.reproduce.statements`) records it.

A :class:`Statement` is a theorem, proposition, lemma, corollary, claim of a proof, conjecture,
remark or an observation of an experiments section, with its quote, where it is, and either the
ids of the claims (:mod:`nclab.reproduce.claims`) that test it or why none does (``uncovered``, one
of :data:`REASONS`, with ``why`` in words).

Quotes are short and exact (a substring of the extracted text in ``papers/``, whitespace aside;
``" … "`` joins two exact fragments) unless ``exact=False``: where the extraction lost the
statement (Tirer & Bruna's theorem environments, garbled formulas) the quote says it in words and
``note`` says so.
"""

from __future__ import annotations

from dataclasses import dataclass

#: what a statement is (``summary``: the paper's own summary of a result, e.g. in its introduction)
KINDS = (
    "theorem",
    "proposition",
    "lemma",
    "corollary",
    "claim",
    "conjecture",
    "remark",
    "observation",
    "summary",
)

PROOF, EXPERIMENT, NOT_TESTABLE, DATA, REPAIR = (
    "proof step",
    "needs a new experiment",
    "not testable",
    "needs data we cannot ship",
    "claim to repair",
)
#: why a statement has no claim: the reason's key and what it means
REASONS: dict[str, str] = {
    PROOF: "a step of a proof or a technical lemma: it holds by the argument and serves a theorem "
    "that a run tests; it makes no separate prediction about a run",
    EXPERIMENT: "testable numerically, but no nclab experiment measures it yet (or none writes "
    "the quantity into its summary)",
    NOT_TESTABLE: "no numerical content a run could test: a remark about mathematics, an "
    "explanation, a generalisation without a setting",
    DATA: "needs a data set nclab cannot ship and no preset reads from the user's files",
    REPAIR: "a registered claim names it, but none of its checks tests it (issue 26's repairs)",
}


@dataclass(frozen=True)
class Statement:
    """One statement: ``id`` (``"<paper>:<name>"``, the paper key as in the claim ids), ``kind``
    (:data:`KINDS`), ``where`` (section, figure, equation), ``quote``, and ``claims`` (claim ids)
    or ``uncovered`` (:data:`REASONS`) with ``why``."""

    id: str
    kind: str
    where: str
    quote: str
    claims: tuple[str, ...] = ()
    uncovered: str = ""
    why: str = ""
    note: str = ""
    exact: bool = True

    @property
    def paper(self) -> str:
        """The paper key (``"jacot"``, ``"feature-collapse"``, ...)."""
        return self.id.partition(":")[0]

    @property
    def covered(self) -> bool:
        return bool(self.claims)

    def problems(self) -> list[str]:
        """What is wrong with the record alone (an unknown kind or reason, neither claims nor a
        reason, both, a reason without words); claim ids are checked against the registry by
        :func:`nclab.reproduce.statements.problems`."""
        out = []
        if ":" not in self.id:
            out.append(f"{self.id}: the id must be '<paper>:<name>'")
        if self.kind not in KINDS:
            out.append(f"{self.id}: kind {self.kind!r} is not one of {', '.join(KINDS)}")
        if not self.quote.strip() or not self.where.strip():
            out.append(f"{self.id}: needs a quote and a location")
        if not self.claims and not self.uncovered:
            out.append(f"{self.id}: neither a claim nor a reason why none tests it")
        if self.claims and self.uncovered:
            out.append(f"{self.id}: both claims and a reason for having none")
        if self.uncovered and self.uncovered not in REASONS:
            out.append(f"{self.id}: reason {self.uncovered!r} is not one of {', '.join(REASONS)}")
        if self.uncovered and not self.why.strip():
            out.append(f"{self.id}: says it is not covered ({self.uncovered}) but not why")
        return out


def claim_ids(paper: str, *names: str) -> tuple[str, ...]:
    """The ids of the claims ``names`` of ``paper`` (``"<paper>/<name>"``), as statements cite them.

    >>> claim_ids("jacot", "fig1-mlp", "ntk-bound")
    ('jacot/fig1-mlp', 'jacot/ntk-bound')
    """
    return tuple(f"{paper}/{name}" for name in names)


def covered(
    id: str, kind: str, where: str, quote: str, *claims: str, note: str = "", exact: bool = True
) -> Statement:
    """A statement that the claims ``claims`` test."""
    return Statement(id, kind, where, quote, claims=claims, note=note, exact=exact)


def uncovered(
    id: str,
    kind: str,
    where: str,
    quote: str,
    reason: str,
    why: str,
    note: str = "",
    exact: bool = True,
) -> Statement:
    """A statement that no claim tests, with the reason (:data:`REASONS`) and why."""
    return Statement(id, kind, where, quote, uncovered=reason, why=why, note=note, exact=exact)
