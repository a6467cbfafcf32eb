"""The results of judging a claim: one scale's (:class:`ScaleResult`) and the claim's at every
scale with its variants (:class:`ClaimResult`); :mod:`.judge` makes them, the reports read them.
Outcomes, reasons and diagnoses are the types of :mod:`nclab.verdicts`.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from ..runs import to_jsonable
from ..verdicts import CheckResult, Diagnosis, Outcome, Reason, Why, reasons_text
from .instance import PAPER_SETTING, Instance, InstanceKind, label

NOT_RUN = Outcome.NOT_RUN


@dataclass
class ScaleResult:
    """A claim judged at one scale: the outcome and its typed reasons (``reason``: their words),
    the diagnosis where it is not reproduced, seeds, the instance judged, where the evidence came
    from (``"this run"`` or ``"ledger"``), the checks with their per-seed outcomes, the seeds that
    are invalid evidence (each with why), the measured and theory values, the runs (run
    directories or ledger records) with their provenance, the presets (alias -> ``"experiment
    preset"``), the figures of runs made here, and ``same_as``: the larger scale whose record this
    rung re-uses (it is then not run on its own)."""

    scale: str
    outcome: Outcome
    reasons: list[Reason] = field(default_factory=list)
    reason: str = ""
    diagnosis: Diagnosis | None = None
    seeds: int = 0
    instance: str = ""
    source: str = ""
    checks: list[CheckResult] = field(default_factory=list)
    invalid: list[str] = field(default_factory=list)
    measured: dict[str, dict[str, Any]] = field(default_factory=dict)
    theory: dict[str, Any] = field(default_factory=dict)
    runs: dict[str, str] = field(default_factory=dict)
    provenance: dict[str, dict[str, Any]] = field(default_factory=dict)
    figures: list[str] = field(default_factory=list)
    command: str = ""
    presets: dict[str, str] = field(default_factory=dict)
    same_as: str = ""
    instance_kind: str = ""

    def __post_init__(self) -> None:
        self.outcome = Outcome(self.outcome)
        if not self.reason:
            self.reason = reasons_text(self.reasons)

    def set_instance(self, instance: Instance) -> ScaleResult:
        """Its instance: the text (``instance``) and its kind (``instance_kind``)."""
        self.instance, self.instance_kind = instance.text, instance.kind.value
        return self

    @property
    def judged(self) -> bool:
        return self.outcome.judged

    @property
    def why(self) -> Why | None:
        """The first reason's kind (why a scale is not run, or why it is not reproduced)."""
        return self.reasons[0].why if self.reasons else None

    def words(self) -> str:
        """``"partial at medium size (embedding-nc1 fails 2/3 seeds)"`` (long details left
        out: the ladder and the diagnosis give them)."""
        text = f"{self.outcome.value} at {scale_words(self.scale)}"
        brief = reasons_text(self.reasons, brief=True) if self.reasons else self.reason
        return text + (f" ({brief})" if brief else "")


@dataclass
class ClaimResult:
    id: str
    paper: str
    where: str
    claim: str
    outcome: Outcome
    paper_values: dict[str, Any] = field(default_factory=dict)
    theory: dict[str, Any] = field(default_factory=dict)
    measured: dict[str, dict[str, Any]] = field(default_factory=dict)  # label -> {mean, std}
    checks: list[CheckResult] = field(default_factory=list)
    runs: dict[str, str] = field(default_factory=dict)  # alias -> run dir or ledger record
    figures: list[str] = field(default_factory=list)
    note: str = ""
    command: str = ""
    instance: str = PAPER_SETTING  # or "smaller: <what differs>", "our instance: <why>"
    instance_kind: str = InstanceKind.PAPER.value  # what kind of instance it is (InstanceKind)
    headline: str = ""
    headline_parts: list[tuple[str, str]] = field(default_factory=list)  # (kind, text)
    scale: str = ""  # the scale of the outcome (the largest judged)
    reasons: list[Reason] = field(default_factory=list)  # the headline scale's
    diagnosis: Diagnosis | None = None  # the headline scale's
    statement: str = ""  # the claim in one sentence (its first)
    scales: dict[str, dict[str, Any]] = field(default_factory=dict)  # scale -> ScaleResult
    variants: dict[str, dict[str, dict[str, Any]]] = field(default_factory=dict)  # label -> scale

    def __post_init__(self) -> None:
        self.outcome = Outcome(self.outcome)

    def to_dict(self) -> dict[str, Any]:
        return to_jsonable(asdict(self))

    @property
    def verdict_text(self) -> str:
        """The outcome as reports show it: ``"reproduced (smaller instance: ...)"`` when it was
        judged on another instance than the paper's setting."""
        if self.outcome.judged and self.instance_kind != InstanceKind.PAPER.value:
            return f"{self.outcome.value} ({label(self.instance, self.instance_kind)})"
        return self.outcome.value


#: one name per scale, everywhere (the full rung runs the paper's setting where a paper preset
#: exists; its instance text says so or says why not)
SCALE_NAMES = {"quick": "quick size", "medium": "medium size", "full": "full size"}


def scale_words(scale: str, instance: str = "") -> str:
    """``"quick size"``, ``"medium size"`` or ``"full size"``: one name per scale (``instance``
    is accepted for callers that pass it; the instance text says whether the full rung is the
    paper's setting)."""
    return SCALE_NAMES.get(scale, f"{scale} size")
