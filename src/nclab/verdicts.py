"""What a verdict on a paper's claim means: the outcomes, their typed reasons and the rules.

One module owns the vocabulary; the judge (:mod:`nclab.reproduce.outcomes`), the reports, the
``--json`` output, ``report.json`` and the statement inventory read these types, never the
prefix of a string.

Outcomes (:class:`Outcome`) of a claim at one scale:

* **reproduced**: every statement check holds (on the mean and on every valid seed);
* **partial**: some statement checks hold and others do not, or a check's seeds split;
* **contradicted**: a statement check *fails* -- on valid runs of a preset faithful in every
  setting the check depends on, at a scale able to test it, on most seeds and on the mean, under
  every reading of the paper's words the claim tests -- and none holds;
* **inconclusive**: a statement check does not hold, but no failure here can be evidence about
  the paper: a run failed or is invalid, the scale is too small for the check, the preset deviates
  in a setting the check depends on, the readings split, or a sanity check on our code failed;
* **not run**: no evidence at this scale (no preset, needs a GPU, not in the ledger, running,
  the record predates a check, or the same run as a larger rung).

A check's role (:class:`Role`): the paper's **statement** (decides the outcome), a **sanity**
check on our code (a failure is a bug: inconclusive), or **ours-beyond**, something the paper does
not state (how tight a bound is, a slope read off a figure): reported beside the statement
checks, it never changes the outcome. A check's status at a scale is :class:`Status`; when it does
not hold but cannot be evidence, its ``blocked`` :class:`Reason` says why.

Readings: checks that share a ``statement`` (``Check(of=...)``) are readings of one sentence of
the paper; the sentence holds when every reading holds, fails when every reading fails, and is
untestable (readings split) when one holds and another does not.

:func:`decide` applies the rules; :class:`Diagnosis` is the one line that says why a claim is
not reproduced, backed by recorded runs.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

#: the scales a claim is judged at, smallest first: minutes on a CPU, about an hour on a 2-core
#: machine, the paper's setting (CPU or GPU)
SCALES = ("quick", "medium", "full")


class Outcome(StrEnum):
    """A claim's outcome at one scale, and its headline outcome."""

    REPRODUCED = "reproduced"
    PARTIAL = "partial"
    CONTRADICTED = "contradicted"
    INCONCLUSIVE = "inconclusive"
    NOT_RUN = "not run"

    @property
    def judged(self) -> bool:
        """Whether evidence was judged (every outcome but not run)."""
        return self is not Outcome.NOT_RUN


class Role(StrEnum):
    """What a check tests: the paper's statement, our code, or something beyond the paper."""

    STATEMENT = "statement"
    SANITY = "sanity"
    BEYOND = "ours-beyond"


class Status(StrEnum):
    """A check (or a statement's readings together) at one scale.

    ``holds``: on the mean and every valid seed; ``fails``: on the mean and most valid seeds
    (every valid seed where some are invalid), and nothing blocks it; ``mixed``: the seeds split;
    ``untestable``: it does not hold, but cannot be evidence here (``blocked`` says why)."""

    HOLDS = "holds"
    FAILS = "fails"
    MIXED = "mixed"
    UNTESTABLE = "untestable"


class Why(StrEnum):
    """The kind of a :class:`Reason`."""

    # why a judged outcome is not "reproduced"
    FAILS = "fails"  # a statement check fails on valid, faithful runs
    SEEDS_SPLIT = "seeds split"  # a statement check holds on some seeds only
    RUN_FAILED = "run failed"
    SANITY = "sanity check failed"  # a bug in nclab, not evidence about the paper
    INVALID = "invalid runs"
    TOO_SMALL = "scale too small"
    DEVIATION = "deviation"
    READINGS = "readings split"
    BEYOND = "ours-beyond"  # a check beyond the paper did not hold (reported, never decisive)
    # why a scale is not run
    NO_PRESET = "no preset"
    NEEDS_GPU = "needs a GPU"
    NOT_IN_LEDGER = "not in the ledger"
    NO_LEDGER = "no ledger judged"
    RUNNING = "running"
    PREDATES = "the record predates a check"
    SAME_RUN = "same run"  # the rung's record is a larger rung's record


#: the reasons that make a failing check untestable (never evidence against the paper)
BLOCKERS = (Why.INVALID, Why.TOO_SMALL, Why.DEVIATION, Why.READINGS, Why.PREDATES)


@dataclass(frozen=True)
class Reason:
    """Why an outcome is what it is: its kind, the checks concerned and what the words say.

    >>> Reason(Why.DEVIATION, ("loss",), "train.epochs 4800 (paper: 100000)").text()
    'loss: deviation: train.epochs 4800 (paper: 100000)'
    >>> Reason(Why.FAILS, ("a",), "3/3 seeds").text()
    'a fails 3/3 seeds'
    """

    why: Why
    checks: tuple[str, ...] = ()
    detail: str = ""

    def brief(self, limit: int = 60) -> str:
        """:meth:`text` with a long detail left out (the headline's form; the ladder and the
        diagnosis carry the whole).

        >>> Reason(Why.DEVIATION, ("a", "b"), "x" * 80).brief()
        'a, b: deviation'
        """
        if len(self.detail) <= limit:
            return self.text()
        return Reason(self.why, self.checks).text()

    def text(self) -> str:
        names = ", ".join(self.checks)
        if self.why in (Why.FAILS, Why.SEEDS_SPLIT, Why.BEYOND):
            verb = {Why.FAILS: "fails", Why.SEEDS_SPLIT: "fails", Why.BEYOND: "(ours-beyond) fails"}
            return " ".join(x for x in (names, verb[self.why], self.detail) if x)
        head = f"{names}: {self.why.value}" if names else self.why.value
        return f"{head}: {self.detail}" if self.detail else head


def reasons_text(reasons: Sequence[Reason], brief: bool = False) -> str:
    """The reasons as one line, ``"; "``-joined (``brief``: long details left out)."""
    return "; ".join(r.brief() if brief else r.text() for r in reasons)


def merged(reasons: Sequence[Reason]) -> tuple[Reason, ...]:
    """The reasons with those of the same kind and words joined into one naming every check
    (three checks blocked by the same deviation read once).

    >>> merged([Reason(Why.DEVIATION, ("a",), "x"), Reason(Why.DEVIATION, ("b",), "x")])
    (Reason(why=<Why.DEVIATION: 'deviation'>, checks=('a', 'b'), detail='x'),)
    """
    out: dict[tuple[Why, str], list[str]] = {}
    for r in reasons:
        out.setdefault((r.why, r.detail), []).extend(r.checks)
    return tuple(Reason(why, tuple(dict.fromkeys(c)), d) for (why, d), c in out.items())


class DiagnosisKind(StrEnum):
    """Why a claim is not reproduced, in one of a few words a reviewer can weigh."""

    PAPER_FAILS = "the paper's statement fails"
    TOO_SHORT = "our run is too short"
    DEVIATES = "our preset deviates"
    READINGS_SPLIT = "the readings split"
    INVALID = "the run is invalid"
    SEEDS_SPLIT = "optimisation differs across seeds"
    OUR_READING = "our quantitative reading is stricter than the paper's words"
    OPTIMISER = "our optimiser does not reach what the statement is about"
    PREDATES = "the recorded run predates the check"
    BUG = "a bug in nclab"


@dataclass(frozen=True)
class Diagnosis:
    """One line that says why a claim is not reproduced at a scale, and the evidence behind it:
    ``evidence`` names ledger records (``"experiment preset"``, with ``--set`` overrides after
    ``" | "``) or files of the repository (an external comparison) that a test finds.

    >>> Diagnosis(DiagnosisKind.TOO_SHORT, "5 M steps needed; medium runs 240 k").line()
    'our run is too short: 5 M steps needed; medium runs 240 k'
    """

    kind: DiagnosisKind
    text: str
    evidence: tuple[str, ...] = ()
    derived: bool = field(default=False, compare=False)  # made from the reasons, not declared

    def line(self) -> str:
        return f"{self.kind.value}: {self.text}"


@dataclass
class CheckResult:
    """One check judged at one scale: what it compared (``value`` against ``threshold`` by
    ``op``, on the mean), its role and status, the statement it reads (``statement``, with the
    ``reading`` where it is one of several), the seeds (``per_seed``: True, False, or None where a
    seed could not be judged or is invalid; ``seed_values``), and ``blocked``: why a check that
    does not hold cannot be evidence here."""

    name: str
    description: str
    kind: Role
    status: Status
    passed: bool
    value: Any = None
    threshold: Any = None
    op: str | None = None
    detail: str = ""
    ours: str = ""
    principle: str = ""  # the principle of a threshold of ours
    source: str = ""
    statement: str = ""
    reading: str = ""
    per_seed: list[bool | None] = field(default_factory=list)
    seed_values: list[float | None] = field(default_factory=list)
    seeds_passed: int = 0
    seeds_judged: int = 0
    blocked: Reason | None = None

    def seeds_text(self) -> str:
        """``"2/3 seeds"`` (failing over judged) or ``"on the mean"``."""
        n, ok = self.seeds_judged, self.seeds_passed
        if n > 1:
            return f"{n - ok}/{n} seeds"
        return "on the mean" if not n and self.status is Status.MIXED else ""

    def judged(self) -> Judged:
        return Judged(self.name, self.status, self.blocked, self.seeds_text())


@dataclass(frozen=True)
class Judged:
    """One statement (its readings together) as :func:`decide` sees it: a name, a status, the
    reason a non-holding status cannot be evidence (``blocked``) and the seeds text."""

    name: str
    status: Status
    blocked: Reason | None = None
    seeds: str = ""


def decide(
    statements: Sequence[Judged],
    *,
    run_failed: str = "",
    sanity: Sequence[str] = (),
    beyond: Sequence[Judged] = (),
) -> tuple[Outcome, tuple[Reason, ...]]:
    """The outcome of a claim at one scale from its statements' statuses (module docstring).

    >>> ok = Judged("a", Status.HOLDS)
    >>> bad = Judged("b", Status.FAILS, seeds="3/3 seeds")
    >>> decide([ok])[0], decide([bad])[0], decide([ok, bad])[0]
    (<Outcome.REPRODUCED: 'reproduced'>, <Outcome.CONTRADICTED: 'contradicted'>, <Outcome.PARTIAL: 'partial'>)
    >>> short = Judged("c", Status.UNTESTABLE, Reason(Why.TOO_SMALL, ("c",), "needs full"))
    >>> decide([ok, short])
    (<Outcome.INCONCLUSIVE: 'inconclusive'>, (Reason(why=<Why.TOO_SMALL: 'scale too small'>, checks=('c',), detail='needs full'),))
    """
    if run_failed:
        return Outcome.INCONCLUSIVE, (Reason(Why.RUN_FAILED, (), run_failed),)
    if sanity:
        return Outcome.INCONCLUSIVE, (Reason(Why.SANITY, tuple(sanity), "a bug in nclab"),)
    by = {s: [j for j in statements if j.status is s] for s in Status}
    hold, fail, mixed, untest = (by[s] for s in Status)
    reasons = [Reason(Why.FAILS, (j.name,), j.seeds) for j in fail]
    reasons += [Reason(Why.SEEDS_SPLIT, (j.name,), j.seeds) for j in mixed]
    reasons += merged([j.blocked or Reason(Why.INVALID, (j.name,)) for j in untest])
    reasons += [Reason(Why.BEYOND, (j.name,), j.seeds) for j in beyond if j.status != Status.HOLDS]
    if not (fail or mixed or untest):
        outcome = Outcome.REPRODUCED
    elif fail and not hold:
        outcome = Outcome.CONTRADICTED
    elif fail or mixed:
        outcome = Outcome.PARTIAL
    else:
        outcome = Outcome.INCONCLUSIVE
    return outcome, tuple(reasons)


def combine_readings(name: str, readings: Sequence[Judged]) -> Judged:
    """One statement's status from its readings: every reading holds -> holds; one holds and
    another fails or splits -> untestable (the readings split); a reading untestable here (and
    none failing against a holding one) -> untestable, for its reason; every one fails -> fails;
    else mixed."""
    if len(readings) == 1:
        return readings[0]
    statuses = [r.status for r in readings]
    parts = (" ".join(x for x in (r.name, r.status.value, r.seeds) if x) for r in readings)
    seeds = "(" + ", ".join(parts) + ")"
    if all(s is Status.HOLDS for s in statuses):
        return Judged(name, Status.HOLDS, seeds=seeds)
    against = [r for r in readings if r.status in (Status.FAILS, Status.MIXED)]
    if Status.HOLDS in statuses and against:
        split = ", ".join(f"{r.name} {r.status.value}" for r in readings)
        return Judged(name, Status.UNTESTABLE, Reason(Why.READINGS, (name,), split), seeds)
    blocked = [r for r in readings if r.status is Status.UNTESTABLE]
    if blocked:
        return Judged(name, Status.UNTESTABLE, blocked[0].blocked, seeds)
    if all(s is Status.FAILS for s in statuses):
        return Judged(name, Status.FAILS, seeds=seeds)
    return Judged(name, Status.MIXED, seeds=seeds)


#: the diagnosis a reason gives when a claim declares none (inconclusive outcomes)
DERIVED = {
    Why.RUN_FAILED: DiagnosisKind.INVALID,
    Why.INVALID: DiagnosisKind.INVALID,
    Why.TOO_SMALL: DiagnosisKind.TOO_SHORT,
    Why.DEVIATION: DiagnosisKind.DEVIATES,
    Why.READINGS: DiagnosisKind.READINGS_SPLIT,
    Why.SANITY: DiagnosisKind.BUG,
    Why.PREDATES: DiagnosisKind.PREDATES,
}


def derived_diagnosis(reasons: Sequence[Reason]) -> Diagnosis | None:
    """The diagnosis the reasons of an inconclusive outcome give by themselves (the first
    blocking reason's kind, with every blocking reason's words), or None."""
    blocking = [r for r in reasons if r.why in DERIVED]
    if not blocking:
        return None
    return Diagnosis(DERIVED[blocking[0].why], reasons_text(blocking), derived=True)
