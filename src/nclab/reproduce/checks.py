"""The checks a claim is judged by, each reporting the value it read and the threshold it applied.

Three forms, all structured (no opaque callables), so that a report can say why a claim passed and a
test can make every check fail by perturbing the summary paths it declares (:meth:`paths`):

* :class:`Check`: a comparison ``path op value`` or ``path op ref`` (another path), ``op`` in
  ``<=, <, >=, >, ==`` with an optional offset ``margin`` (``a >= b + margin``), or ``op="~"``
  with a relative tolerance (``|a - b| <= rtol |b|``). Reports ``value = a`` and
  ``threshold = b + margin``; for ``~``, ``value = |a - b| / |b|`` and ``threshold = rtol``.
  A ``path`` that selects every entry of a list (``"sweep[*].train_acc"``) compares every value
  with a fixed ``value`` (``<``, ``<=``, ``>``, ``>=``) and reports the worst.
* :class:`Ratio`: ``num / den < below`` with both values > 0. Reports ``value = num / den`` and
  ``threshold = below``.
* :class:`Equals`: every path holds ``expected`` (a string, or a bool compared by identity).
  Reports the value(s) read and ``threshold = expected``.

Checks several papers' claims share are built by :func:`compare`, :func:`at_most`,
:func:`to_precision` and :func:`interpolates`.

A threshold is the paper's number or ours. ``ours`` holds, for a value we chose (a tolerance, a
factor standing for the paper's "significantly", a numerical precision), the reason for the value;
``source`` says where the paper gives the number a check compares with (empty when none does).
The reports print the reason beside the check (:func:`nclab.reproduce.reports.views.threshold_origin`).

Each check is of one of two kinds: the paper's **statement** (the default: it decides the verdict)
or a **sanity** check on our code (an identity, a bound a theorem guarantees, with slack: it can
only fail through a bug; a failing one makes the claim "failed (sanity: <name>)").
:func:`sanity` marks one.

:meth:`evaluate` never raises on a summary: a missing key, a value that is not a number or a
non-finite comparison fails the check with a detail that says so.

Length: the three check forms, what every check declares beside its comparison (role,
dependencies, readings, the principle of a threshold of ours) and the shared helpers are one
vocabulary, read in one place.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, replace
from enum import StrEnum
from typing import Any

from ..errors import ConfigError
from ..verdicts import SCALES, Role
from .summaries import diverged_note, every, lookup

Summaries = Mapping[str, Mapping[str, Any]]
OPS = ("<=", "<", ">=", ">", "==", "~")
STATEMENT, SANITY, BEYOND = Role.STATEMENT.value, Role.SANITY.value, Role.BEYOND.value
KINDS = tuple(r.value for r in Role)


def slug(text: str, limit: int = 48) -> str:
    """A short stable id from a description: lowercase words joined by ``-``, cut at a word.

    >>> slug("test accuracy >= 99 %")
    'test-accuracy-99'
    """
    words = re.sub(r"[^a-z0-9.]+", "-", text.lower()).replace(".", "-").strip("-")
    words = re.sub("-+", "-", words)
    if len(words) <= limit:
        return words
    return words[:limit].rsplit("-", 1)[0]


class Principle(StrEnum):
    """Why a threshold of ours has its value: every ``ours=`` threshold states one."""

    NUMERICAL = "numerical precision"
    THEORY = "derived from the theory or the optimiser's tolerance"
    PRINTED = "the precision of the paper's printed numbers"
    LOG_PLOT = "a clear change on the paper's log-scale figure"
    WORDS = "a level for words the paper gives without a number"
    DESIGN = "the run's design (what a sweep must reach to test anything)"
    FIT = "the uncertainty of a fit to the measurements"


class Ours(str):
    """A threshold's reason (``ours=``) with its :class:`Principle`: a ``str`` for everything
    that prints it, its principle for the reports and the tests.

    >>> t = ours(Principle.NUMERICAL, "1e-6 is float64 slack")
    >>> t, t.principle.value
    ('1e-6 is float64 slack', 'numerical precision')
    """

    principle: Principle

    def __new__(cls, principle: Principle, text: str) -> Ours:
        obj = super().__new__(cls, text)
        obj.principle = Principle(principle)
        return obj

    def __reduce__(self):
        return (Ours, (self.principle, str(self)))

    def __add__(self, more: str) -> Ours:  # a reason extended keeps its principle
        return Ours(self.principle, str(self) + more)


def ours(principle: Principle, text: str) -> Ours:
    """The reason of a threshold we chose, with the principle it follows."""
    return Ours(principle, text)


def principle_of(chk: Any) -> Principle | None:
    """The principle of a check's own threshold (None where the threshold is the paper's or it
    has none)."""
    return getattr(chk.ours, "principle", None)


def outcome(chk: Any, passed: bool, value: Any, threshold: Any, detail: str) -> dict[str, Any]:
    """One check's result, as verdicts, reports and ``--json`` carry it.

    ``check`` repeats the description under the key earlier ``report.json`` files used.
    """
    op = getattr(chk, "op", None)
    return {
        "name": chk.name,
        "description": chk.describe,
        "check": chk.describe,
        "value": value,
        "threshold": threshold,
        # how value compares with threshold to pass ("~" reads its relative error against rtol)
        "op": "<=" if op == "~" else op,
        "passed": bool(passed),
        "detail": detail,
        "kind": chk.kind,
        "ours": chk.ours,
        "principle": getattr(chk.ours, "principle", None),
        "source": chk.source,
        "statement": chk.statement,
        "reading": chk.reading,
    }


@dataclass(frozen=True, kw_only=True)
class _Named:
    """What every check declares beside its comparison (keyword-only):

    ``name`` (default: the slug of the description); ``kind``, its role
    (:class:`~nclab.verdicts.Role`: the paper's statement, a sanity check on our code, or
    ours-beyond); ``ours`` / ``source``, where its threshold comes from; ``depends_on``, the
    settings a failure depends on (glob patterns of dotted config keys, ``"seeds"`` for the seed
    count, ``"instance"`` for a run of our own instance where no preset runs the paper's setting;
    None: every setting, so any deviation from the paper makes a failure inconclusive; ``()``:
    none, a statement that holds for any instance meeting its hypotheses); ``min_scale``, the
    smallest scale that can test it, with ``scale_why`` (below it, a failure is inconclusive);
    ``of``, the statement it is one reading of (checks sharing ``of`` are readings of one
    sentence, ``reading`` says which); ``on_invalid``: judged on every seed, the invalid ones too
    (a check about the runs' validity itself: how many seeds reach the minimiser).
    """

    name: str = ""
    kind: str = STATEMENT
    ours: str = ""
    source: str = ""
    depends_on: tuple[str, ...] | None = None
    min_scale: str = ""
    scale_why: str = ""
    of: str = ""
    reading: str = ""
    on_invalid: bool = False

    def __post_init__(self) -> None:
        if not self.name:
            object.__setattr__(self, "name", slug(self.describe))
        if self.kind not in KINDS:
            raise ConfigError(
                f"check {self.name!r}: kind must be one of {KINDS}, got {self.kind!r}"
            )
        if self.ours and self.source:
            raise ConfigError(
                f"check {self.name!r}: the threshold is ours (ours=...) or the paper's "
                "(source=...), not both"
            )
        if self.min_scale and self.min_scale not in SCALES:
            raise ConfigError(
                f"check {self.name!r}: min_scale must be one of {SCALES}, got {self.min_scale!r}"
            )
        if self.min_scale and not self.scale_why:
            raise ConfigError(
                f"check {self.name!r}: say why (scale_why=) it needs {self.min_scale}"
            )
        if isinstance(self.depends_on, str):
            raise ConfigError(f"check {self.name!r}: depends_on is a tuple of key patterns")

    @property
    def statement(self) -> str:
        """The statement this check is a reading of (its own name when it is the only one)."""
        return self.of or self.name


@dataclass(frozen=True)
class Check(_Named):
    """A comparison of the value at ``path`` with ``value`` or with the value at ``ref``."""

    describe: str
    path: str
    op: str = "<="
    value: float | None = None
    ref: str | None = None
    rtol: float | None = None
    margin: float = 0.0

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.op not in OPS:
            raise ConfigError(f"unknown check operator {self.op!r}; valid: {', '.join(OPS)}")
        if (self.ref is None) == (self.value is None):
            raise ConfigError(f"check {self.describe!r}: give exactly one of value= and ref=")
        if every(self.path) and (self.ref is not None or self.op not in ("<", "<=", ">", ">=")):
            raise ConfigError(
                f"check {self.describe!r}: a path over every entry ({self.path!r}) compares "
                "with a fixed value= by <, <=, > or >="
            )
        if self.ref is not None and every(self.ref):
            raise ConfigError(f"check {self.describe!r}: ref= names one value, not every entry")

    def paths(self) -> tuple[str, ...]:
        return (self.path,) if self.ref is None else (self.path, self.ref)

    def _threshold(self, b: float | None) -> float | None:
        if self.op == "~":
            return self.rtol or 0.0
        return None if b is None else (b if self.op == "==" else b + self.margin)

    def evaluate(self, summaries: Summaries) -> dict[str, Any]:
        """The outcome on ``summaries`` (a missing key fails the check with the key named)."""
        fixed = None if self.value is None else float(self.value)
        try:
            a, n = self._read(summaries)
            b = float(lookup(summaries, self.ref)) if self.ref is not None else fixed
        except KeyError as exc:
            detail = f"{self.describe}: missing {exc.args[0]!r} in the summary"
            return outcome(self, False, None, self._threshold(fixed), detail)
        except (TypeError, ValueError):
            detail = _not_a_number(self.describe, summaries, self.paths())
            return outcome(self, False, None, self._threshold(fixed), detail)
        if not (math.isfinite(a) and math.isfinite(b)):
            return outcome(self, False, a, self._threshold(b), f"{self.describe}: non-finite value")
        ok = _compare(self.op, a, b, self.rtol, self.margin)
        value = a
        if self.op == "~":
            value = abs(a - b) / abs(b) if b != 0 else (0.0 if a == b else None)
        detail = f"{self.describe}: {a:.6g} {self.op} {b:.6g}" + (
            f" (margin {self.margin:g})" if self.margin else ""
        )
        if n is not None:
            detail += f" (the worst of {n} entries)"
        return outcome(self, ok, value, self._threshold(b), detail)

    def _read(self, summaries: Summaries) -> tuple[float, int | None]:
        """(the value at ``path``, None); over every entry (never none: :func:`lookup` raises),
        (the worst for the comparison: the smallest for ``>=``/``>``, the largest for
        ``<=``/``<``, a non-finite entry first; the number of entries)."""
        got = lookup(summaries, self.path)
        if not every(self.path):
            return float(got), None
        values = [float(v) for v in got]  # a None raises TypeError: not a number
        bad = [v for v in values if not math.isfinite(v)]
        worst = min(values) if self.op in (">", ">=") else max(values)
        return (bad[0] if bad else worst), len(values)


def _not_a_number(describe: str, summaries: Summaries, paths: tuple[str, ...]) -> str:
    """The detail of a check whose value is not a number: why, where training diverged."""
    notes = [n for p in paths if (n := diverged_note(summaries, p))]
    return f"{describe}: a value is not a number" + (f" ({'; '.join(notes)})" if notes else "")


def _compare(op: str, a: float, b: float, rtol: float | None, margin: float) -> bool:
    if op == "~":
        return abs(a - b) <= (rtol or 0.0) * abs(b)
    if op == "<=":
        return a <= b + margin
    if op == "<":
        return a < b + margin
    if op == ">=":
        return a >= b + margin
    if op == ">":
        return a > b + margin
    return a == b


@dataclass(frozen=True)
class Ratio(_Named):
    """``num / den < below``, where both values must exist and be > 0."""

    op = "<"  # the ratio against ``below`` (a class attribute, not a field)
    describe: str
    num: str
    den: str
    below: float

    def __post_init__(self) -> None:
        super().__post_init__()
        _one_value(self, self.paths())

    def paths(self) -> tuple[str, ...]:
        return (self.num, self.den)

    def evaluate(self, summaries: Summaries) -> dict[str, Any]:
        try:
            a, b = float(lookup(summaries, self.num)), float(lookup(summaries, self.den))
        except KeyError as exc:
            detail = f"{self.describe}: missing {exc.args[0]!r} in the summary"
            return outcome(self, False, None, self.below, detail)
        except (TypeError, ValueError):
            detail = _not_a_number(self.describe, summaries, self.paths())
            return outcome(self, False, None, self.below, detail)
        ok = a > 0 and b > 0 and a < self.below * b
        ratio = a / b if b != 0 and math.isfinite(a) and math.isfinite(b) else None
        detail = f"{self.describe}: {a:.6g} / {b:.6g}" + (
            f" = {ratio:.6g}" if ratio is not None else ""
        )
        detail += f" < {self.below:g}" + ("" if a > 0 and b > 0 else " (both must be > 0)")
        return outcome(self, ok, ratio, self.below, detail)


@dataclass(frozen=True)
class Equals(_Named):
    """Every path holds ``expected`` (compared with ``is`` for a bool, with ``==`` otherwise)."""

    op = "=="  # a class attribute, not a field
    describe: str
    path: str | tuple[str, ...]
    expected: str | bool

    def __post_init__(self) -> None:
        super().__post_init__()
        _one_value(self, self.paths())

    def paths(self) -> tuple[str, ...]:
        return (self.path,) if isinstance(self.path, str) else tuple(self.path)

    def _holds(self, v: Any) -> bool:
        return v is self.expected if isinstance(self.expected, bool) else v == self.expected

    def evaluate(self, summaries: Summaries) -> dict[str, Any]:
        try:
            values = [lookup(summaries, p) for p in self.paths()]
        except KeyError as exc:
            detail = f"{self.describe}: missing {exc.args[0]!r} in the summary"
            return outcome(self, False, None, self.expected, detail)
        ok = all(self._holds(v) for v in values)
        shown = values[0] if len(values) == 1 else values
        got = ", ".join(f"{p} = {v!r}" for p, v in zip(self.paths(), values, strict=True))
        empty = [p for p, v in zip(self.paths(), values, strict=True) if v is None]
        notes = [n for p in empty if (n := diverged_note(summaries, p))]
        got += f" ({'; '.join(notes)})" if notes else ""
        return outcome(self, ok, shown, self.expected, f"{self.describe}: {got}")


AnyCheck = Check | Ratio | Equals


def _one_value(chk: Any, paths: tuple[str, ...]) -> None:
    """Refuse a path over every entry (``[*]``) where ``chk`` reads one value."""
    many = [p for p in paths if every(p)]
    if many:
        raise ConfigError(
            f"check {chk.name!r}: {type(chk).__name__} reads one value per path, not every "
            f"entry ({', '.join(many)}); a Check with a fixed value compares every entry"
        )


def sanity(chk: AnyCheck) -> AnyCheck:
    """``chk`` as a sanity check on our code (not the paper's statement): it holds by
    construction or by a theorem with slack, so a failure is a bug, not evidence."""
    return replace(chk, kind=SANITY)


def beyond(chk: AnyCheck) -> AnyCheck:
    """``chk`` as ours-beyond: it tests something the paper does not state (how tight a bound
    is, a slope read off a figure, whether plain gradient descent reaches what the paper reaches
    with a tuned scheme). Reported beside the statement checks; it never decides the verdict."""
    return replace(chk, kind=BEYOND)


def compare(path: str, op: str, value: float, what: str | None = None, **declared: Any) -> Check:
    """``path op value`` against a fixed value, described as ``"<what or path> <op> <value>"``
    and named after its path unless ``declared`` names it; ``declared``: the rest of what a check
    declares (``name``, ``ours`` / ``source``, ``depends_on``, ``of``, ``reading``: :class:`Check`).

    >>> chk = compare("slope", ">=", -1.25, "exponent", name="exponent-above")
    >>> chk.describe, chk.name
    ('exponent >= -1.25', 'exponent-above')
    """
    declared.setdefault("name", path)
    return Check(f"{what or path} {op} {value:g}", path=path, op=op, value=value, **declared)


def at_most(path: str, value: float, what: str | None = None, **declared: Any) -> Check:
    """``path <= value``, named after its path, described as ``"<what or path> <= <value>"``;
    ``ours`` / ``source``: where the value comes from (:class:`Check`), and the rest of what a
    check declares (:func:`compare`).

    >>> at_most("objective_gap", 1e-6, "relative objective gap").describe
    'relative objective gap <= 1e-06'
    """
    return compare(path, "<=", value, what, **declared)


def to_precision(
    describe: str, path: str, op: str, value: float, name: str, why: str, **declared: Any
) -> Check:
    """``path op value`` where ``value`` is numerical precision (an exact count, an identity held
    to float64 slack, a solver's tolerance): a threshold of ours on
    :attr:`Principle.NUMERICAL`, ``why`` its reason; ``declared``: the rest of what a check
    declares (:class:`Check`).

    >>> chk = to_precision("spread is 0", "spread", "==", 0, "spread", "an exact count")
    >>> chk.ours, chk.ours.principle.value
    ('an exact count', 'numerical precision')
    """
    why_ours = ours(Principle.NUMERICAL, why)
    return Check(describe, path=path, op=op, value=value, name=name, ours=why_ours, **declared)


def interpolates(path: str = "train_acc") -> Check:
    """The network fits its training set: train accuracy (at ``path``) at least 0.99; over every
    entry of a sweep (``"sweep[*].train_acc"``), every network does."""
    what = "every network of the sweep fits" if every(path) else "the network interpolates"
    return Check(
        f"{what} (train accuracy >= 0.99)",
        path=path,
        op=">=",
        value=0.99,
        name="interpolates",
        ours=INTERPOLATES,
    )


#: why 0.99 stands for "fits the training set" (no paper states a train accuracy)
INTERPOLATES = ours(
    Principle.WORDS,
    "the papers say the network fits (interpolates) its training set without a number; 99 % "
    "leaves room for a few hard samples of the smaller quick data",
)


def fixed_threshold(chk: AnyCheck) -> bool:
    """Whether ``chk`` compares with a number someone chose: a fixed value, a margin, a relative
    tolerance or a ratio bound (not an :class:`Equals` on a category or a flag)."""
    if isinstance(chk, Ratio):
        return True
    if isinstance(chk, Check):
        return chk.value is not None or bool(chk.margin) or chk.op == "~"
    return False
