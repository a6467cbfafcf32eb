"""The results of judging a claim: one scale's (:class:`ScaleResult`) and the claim's at every
scale with its variants (:class:`ClaimResult`); :mod:`.judge` makes them, the reports read them.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from ..report.claims_report import instance_label
from ..runs import to_jsonable
from .instance import PAPER_SETTING
from .registry import NOT_REPRODUCED, PARTIAL, REPRODUCED

JUDGED = (REPRODUCED, PARTIAL, NOT_REPRODUCED)
NOT_RUN = "not run"


@dataclass
class ScaleResult:
    """A claim judged at one scale: verdict and reason, seeds, the instance judged, where the
    evidence came from (``"this run"`` or ``"ledger"``), the checks with their per-seed
    outcomes, the measured and theory values, the runs (run directories or ledger records) with
    their provenance, the presets (alias -> ``"experiment preset"``) and the figures of runs made
    here."""

    scale: str
    verdict: str
    reason: str = ""
    seeds: int = 0
    instance: str = ""
    source: str = ""
    checks: list[dict[str, Any]] = field(default_factory=list)
    measured: dict[str, dict[str, Any]] = field(default_factory=dict)
    theory: dict[str, Any] = field(default_factory=dict)
    runs: dict[str, str] = field(default_factory=dict)
    provenance: dict[str, dict[str, Any]] = field(default_factory=dict)
    figures: list[str] = field(default_factory=list)
    command: str = ""
    presets: dict[str, str] = field(default_factory=dict)

    @property
    def judged(self) -> bool:
        return self.verdict in JUDGED

    def words(self) -> str:
        """``"partial at medium size (embedding-nc1 fails 2/3 seeds)"``."""
        text = f"{self.verdict} at {scale_words(self.scale, self.instance)}"
        return text + (f" ({self.reason})" if self.reason else "")


@dataclass
class ClaimResult:
    id: str
    paper: str
    where: str
    claim: str
    verdict: str
    paper_values: dict[str, Any] = field(default_factory=dict)
    theory: dict[str, Any] = field(default_factory=dict)
    measured: dict[str, dict[str, Any]] = field(default_factory=dict)  # label -> {mean, std}
    checks: list[dict[str, Any]] = field(default_factory=list)
    runs: dict[str, str] = field(default_factory=dict)  # alias -> run dir or ledger record
    figures: list[str] = field(default_factory=list)
    note: str = ""
    command: str = ""
    instance: str = PAPER_SETTING  # or "smaller: <what differs>", "our instance: <why>"
    headline: str = ""
    scale: str = ""  # the scale of the verdict (the largest judged)
    scales: dict[str, dict[str, Any]] = field(default_factory=dict)  # scale -> ScaleResult
    variants: dict[str, dict[str, dict[str, Any]]] = field(default_factory=dict)  # label -> scale

    def to_dict(self) -> dict[str, Any]:
        return to_jsonable(asdict(self))

    @property
    def verdict_text(self) -> str:
        """The verdict as reports show it: ``"reproduced (smaller instance: ...)"`` when it was
        judged on another instance than the paper's setting."""
        if self.verdict in JUDGED and not self.instance.startswith(PAPER_SETTING):
            return f"{self.verdict} ({instance_label(self.instance)})"
        return self.verdict


def scale_words(scale: str, instance: str = "") -> str:
    """``"quick size"``, ``"medium size"``, ``"paper size"`` (the full scale on the paper's
    setting) or ``"full size"``."""
    if scale == "full":
        return "paper size" if instance.startswith(PAPER_SETTING) else "full size"
    return f"{scale} size"
