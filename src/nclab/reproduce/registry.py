"""The registry of the papers' claims that ``nclab reproduce`` runs and judges.

A :class:`Claim` names one or more runs (an experiment and a preset, quick and full), the quantities
read from their ``summary.json``, what the paper reports, what the theory predicts (a key of the
summary, since every experiment writes the theory's values beside its measurements) and a list of
checks (:mod:`nclab.reproduce.checks`). Each paper's claims live in
``nclab/reproduce/claims/<paper>.py`` as a list ``CLAIMS``; one experiment serves several papers.

Paths into a summary are dotted keys, optionally prefixed by the run alias: ``"main:metrics.nc1"``,
``"h_star:test_acc"``, list entries selected by a field, ``"levels[level=1].nc1_trace"``
(:mod:`nclab.reproduce.summaries`). A bare path refers to the alias ``"main"``. Every path a claim
reads is checked against the declared summary type of its run's experiment
(:func:`nclab.experiments.schema.check_path`) when the claim is built: a misspelled or removed
field fails the import of the claims module, naming the claim, the run, the path and the fields
valid where it goes wrong.

Outcomes and their rules are :mod:`nclab.verdicts`'; a claim may declare, per scale, the
:class:`~nclab.verdicts.Diagnosis` of a miss (``diagnosis``), backed by recorded runs.
"""

from __future__ import annotations

import fnmatch
import functools
import importlib
import importlib.metadata
import os
import pkgutil
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import ConfigError
from ..experiments.catalog import assigns, get_experiment
from ..experiments.protocol import Validity
from ..experiments.schema import check_path, summary_type
from ..verdicts import SCALES, Diagnosis
from .checks import STATEMENT, AnyCheck
from .instance import Instance, instance_of, instance_text, paper_setting
from .summaries import split

#: the package whose modules hold nclab's claims
CLAIMS_PACKAGE = "nclab.reproduce.claims"


@dataclass(frozen=True)
class RunSpec:
    """One run a claim needs: an experiment and its preset at each scale (``quick``, ``medium``,
    ``full``; None where the claim has no run at that scale).

    ``set`` adds ``--set`` overrides common to every scale; ``full_needs_gpu`` marks full presets
    that are GPU work (quick and medium presets run on a CPU). ``seeds`` is the number of seeds at
    the quick and medium scales (at least 3 where the verdict depends on training); ``full_seeds``
    at full scale (default: the paper's seed count, :attr:`PaperSetting.seeds
    <nclab.experiments.protocol.PaperSetting.seeds>`, else ``seeds``).
    ``validity``: what makes one seed of this run valid evidence (None: the experiment's
    declared validity, :meth:`valid_if`).
    ``paper`` names the preset that runs the paper's setting for this run (a preset its experiment
    declares a :class:`~nclab.experiments.protocol.PaperSetting`; default: ``full`` when it is
    one); ``no_paper`` says why no preset runs it instead. The claim's instance text is computed
    from them (:mod:`nclab.reproduce.instance`).
    """

    experiment: str
    quick: str | None
    full: str
    medium: str | None = None
    set: Mapping[str, Any] = field(default_factory=dict)
    full_needs_gpu: bool = False
    seeds: int = 3
    full_seeds: int | None = None
    paper: str | None = None
    no_paper: str = ""
    validity: tuple[Validity, ...] | None = None

    def __post_init__(self) -> None:
        if self.paper is not None and self.no_paper:
            raise ConfigError(
                f"RunSpec({self.experiment!r}): name the paper preset ({self.paper!r}) or say "
                "why there is none (no_paper), not both"
            )

    def preset(self, scale: str) -> str | None:
        """The preset of ``scale`` (``quick``, ``medium`` or ``full``)."""
        if scale not in SCALES:
            raise ConfigError(f"scale must be one of {', '.join(SCALES)}, got {scale!r}")
        return {"quick": self.quick, "medium": self.medium, "full": self.full}[scale]

    def valid_if(self) -> tuple[Validity, ...]:
        """What makes one seed of this run valid evidence: the run's own ``validity``, else its
        experiment's declared :attr:`~nclab.experiments.protocol.Experiment.validity`."""
        if self.validity is not None:
            return self.validity
        return tuple(get_experiment(self.experiment).validity)

    def seeds_at(self, scale: str) -> int:
        """The number of seeds the claim runs at ``scale``."""
        if scale != "full":
            return self.seeds
        if self.full_seeds is not None:
            return self.full_seeds
        paper = paper_setting(self)
        return paper.seeds if paper is not None and paper.seeds else self.seeds


@dataclass(frozen=True)
class Variant:
    """Another setting of a claim's runs, judged by the same checks and reported beside the
    claim's own ladder (never instead of it): e.g. the paper's weight decay where the claim's
    presets use a larger one. ``set`` maps a run alias to the ``--set`` overrides added to that
    run's (``RunSpec.set``); ``scales`` are the scales it is run and judged at. ``nclab reproduce
    --variants`` runs them; the ledger's records of them are judged like the claim's own."""

    label: str
    set: Mapping[str, Mapping[str, Any]]
    scales: tuple[str, ...] = ("medium",)

    def __post_init__(self) -> None:
        bad = [s for s in self.scales if s not in SCALES]
        if bad or not self.scales:
            raise ConfigError(f"variant {self.label!r}: scales must be among {', '.join(SCALES)}")

    def overrides(self, alias: str, spec: RunSpec) -> dict[str, Any]:
        """The overrides of run ``alias`` in this variant: the run's own, then the variant's."""
        return {**dict(spec.set), **dict(self.set.get(alias, {}))}


def paper_overrides(experiment: str, preset: str, keys: Sequence[str]) -> dict[str, Any]:
    """The values of ``keys`` (dotted config keys) in ``experiment``'s ``preset`` (its paper
    setting): a variant's overrides read from the preset, never typed twice."""
    setting = get_experiment(experiment).setting(preset)
    return {k: setting[k] for k in keys}


@dataclass(frozen=True)
class Claim:
    """One claim of a paper, as ``nclab reproduce`` runs and judges it.

    ``measured`` / ``theory`` map a label to a summary path; ``paper`` maps a label to the paper's
    value (a number or a short text). ``quick_seconds`` / ``medium_seconds`` / ``full_seconds``
    are runtime estimates of its runs at each scale, each on one CPU core as ``nclab reproduce``
    schedules them on 2 cores (full: on the hardware it needs); :meth:`seconds` gives them by
    scale. What a scale's presets change from the paper's setting is computed (:meth:`instance`),
    never typed.

    Every path the claim reads (:meth:`paths`) must name a field of its run's summary type
    (:func:`~nclab.experiments.schema.summary_type`), else :class:`~nclab.errors.ConfigError`.
    ``check_paths=False`` skips that, for claims on fabricated summaries in tests only.

    ``diagnosis`` maps a scale (``"quick"``, ``"medium"``, ``"full"``; ``"*"`` for any) to the
    one line that says why the claim is not reproduced there (:class:`~nclab.verdicts.Diagnosis`),
    with the ledger records or files behind it; a key ``"<scale>:<outcome>"`` applies only to that
    outcome. Inconclusive outcomes without one get the diagnosis their reasons give.

    ``outside`` says why the claim tests no statement of the papers' inventory
    (:mod:`nclab.reproduce.statements`), where it does not: a claim of an experiment of your own,
    of a paper outside the inventory. A claim that tests a statement is named by it instead.
    """

    id: str
    paper: str
    where: str
    claim: str
    runs: Mapping[str, RunSpec]
    measured: Mapping[str, str]
    checks: Sequence[AnyCheck]
    paper_values: Mapping[str, Any] = field(default_factory=dict)
    theory: Mapping[str, str] = field(default_factory=dict)
    quick_seconds: float = 60.0
    full_seconds: float = 600.0
    note: str = ""
    medium_seconds: float = 3600.0
    variants: Sequence[Variant] = ()
    diagnosis: Mapping[str, Diagnosis] = field(default_factory=dict)
    outside: str = ""
    check_paths: bool = field(default=True, repr=False, compare=False)

    def __post_init__(self) -> None:
        if not any(chk.kind == STATEMENT for chk in self.checks):
            raise ConfigError(
                f"claim {self.id!r} has no statement check: at least one check must test the "
                "paper's statement (the others may be sanity checks on our code)"
            )
        for v in self.variants:
            unknown = set(v.set) - set(self.runs)
            if unknown:
                raise ConfigError(
                    f"claim {self.id!r}, variant {v.label!r}: no run {sorted(unknown)}; runs: "
                    + ", ".join(self.runs)
                )
        bad = [k for k in self.diagnosis if k.split(":")[0] not in (*SCALES, "*")]
        if bad:
            raise ConfigError(
                f"claim {self.id!r}: diagnosis keys are scales ({', '.join(SCALES)}) or '*', "
                f"optionally ':<outcome>'; got {bad}"
            )
        if self.check_paths:
            self.check_summary_paths()

    @property
    def sentence(self) -> str:
        """The claim's first sentence: what it states, in one line."""
        text = " ".join(self.claim.split())
        cut = text.find(". ")
        return text if cut < 0 else text[: cut + 1]

    def diagnosis_at(self, scale: str, outcome: str) -> Diagnosis | None:
        """The declared diagnosis at ``scale`` for ``outcome`` (``"<scale>:<outcome>"``, then
        ``"<scale>"``, then ``"*:<outcome>"``, then ``"*"``), or None."""
        for key in (f"{scale}:{outcome}", scale, f"*:{outcome}", "*"):
            if key in self.diagnosis:
                return self.diagnosis[key]
        return None

    def check_summary_paths(self) -> None:
        """Raise :class:`~nclab.errors.ConfigError` unless every path the claim reads names a field
        its run's experiment declares (:func:`~nclab.experiments.schema.check_path`), its runs'
        validity conditions' included."""
        for path in [*self.paths(), *self.validity_paths()]:
            alias, key = split(path)
            spec = self.runs.get(alias)
            if spec is None:
                raise ConfigError(
                    f"claim {self.id!r}: path {path!r} names run {alias!r}; runs: "
                    + ", ".join(self.runs)
                )
            try:
                check_path(summary_type(spec.experiment), key)
            except ConfigError as exc:
                raise ConfigError(
                    f"claim {self.id!r}, run {alias!r} ({spec.experiment} summary): {exc}"
                ) from None

    def instance(self, mode: str, seeds: Mapping[str, int] | None = None) -> str:
        """What ``mode`` runs, computed from the presets (:func:`~.instance.instance_text`):
        ``"paper setting[; not stated in the paper: ...]"``, ``"smaller: <what differs>"`` or
        ``"our instance: no preset runs the paper's setting (<why>)[; quick: ...]"``; ``seeds``:
        the seed counts of the runs judged, by alias, where they are not the claim's own."""
        return instance_text(self, mode, seeds)

    def instance_of(self, mode: str, seeds: Mapping[str, int] | None = None) -> Instance:
        """:meth:`instance` with its kind (:class:`~.instance.Instance`)."""
        return instance_of(self, mode, seeds)

    def paths(self) -> list[str]:
        """Every summary path the claim reads: measured, theory and its checks' paths (its runs'
        validity conditions are :meth:`validity_paths`: a summary of another mode may lack them)."""
        out = [*self.measured.values(), *self.theory.values()]
        out += [p for chk in self.checks for p in chk.paths()]
        return list(dict.fromkeys(out))

    def validity_paths(self) -> list[str]:
        """The summary paths its runs' validity conditions read (held where a summary has them)."""
        return [f"{a}:{v.path}" for a, spec in self.runs.items() for v in spec.valid_if()]

    def seconds(self, scale: str) -> float:
        """The runtime estimate at ``scale``."""
        return {"quick": self.quick_seconds, "medium": self.medium_seconds}.get(
            scale, self.full_seconds
        )

    def needs_gpu(self, mode: str) -> bool:
        return mode == "full" and any(r.full_needs_gpu for r in self.runs.values())

    def runnable(self, mode: str) -> bool:
        return all(r.preset(mode) is not None for r in self.runs.values())


#: the environment variable naming claim modules of your own (each defining ``CLAIMS``), separated
#: by commas: they join the registry after nclab's (see docs/adding-an-experiment.md)
ENV = "NCLAB_CLAIMS"
#: the entry-point group of claim modules of installed distributions (``name = "module"``)
ENTRY_POINTS = "nclab.claims"


@functools.cache
def builtin_claim_modules() -> tuple[str, ...]:
    """nclab's claim modules: every module of :mod:`nclab.reproduce.claims` that defines
    ``CLAIMS``, in the order of their names (a new module never reorders the others)."""
    package = importlib.import_module(CLAIMS_PACKAGE)
    found = [
        f"{CLAIMS_PACKAGE}.{m.name}"
        for m in pkgutil.iter_modules(package.__path__)
        if not m.ispkg and assigns(Path(m.module_finder.path) / f"{m.name}.py", "CLAIMS")
    ]
    return tuple(sorted(found))


def claim_modules() -> list[str]:
    """nclab's claim modules (:func:`builtin_claim_modules`), then those of installed
    distributions (entry points of the group ``nclab.claims``, sorted by name), then those of
    ``NCLAB_CLAIMS``; each once."""
    eps = sorted(importlib.metadata.entry_points(group=ENTRY_POINTS), key=lambda e: e.name)
    extra = [m.strip() for m in os.environ.get(ENV, "").split(",") if m.strip()]
    return list(dict.fromkeys([*builtin_claim_modules(), *(e.value for e in eps), *extra]))


def all_claims() -> list[Claim]:
    """Every registered claim (from the modules of :func:`claim_modules` that exist)."""
    claims: list[Claim] = []
    for mod in claim_modules():
        try:
            module = importlib.import_module(mod)
        except ModuleNotFoundError as exc:
            if exc.name == mod:
                raise ConfigError(
                    f"claim module {mod!r} not found (check {ENV} and the {ENTRY_POINTS!r} "
                    "entry points)"
                ) from None
            raise
        claims.extend(module.CLAIMS)
    ids = [c.id for c in claims]
    dup = {i for i in ids if ids.count(i) > 1}
    if dup:
        raise ConfigError(f"duplicate claim ids: {sorted(dup)}")
    return claims


def select(patterns: Sequence[str], claims: Sequence[Claim] | None = None) -> list[Claim]:
    """Claims whose id matches any of the glob patterns (all claims when none is given)."""
    claims = list(claims if claims is not None else all_claims())
    if not patterns:
        return claims
    out = [c for c in claims if any(fnmatch.fnmatchcase(c.id, p) for p in patterns)]
    if not out:
        raise ConfigError(
            f"no claim matches {', '.join(patterns)}; claims: " + ", ".join(c.id for c in claims)
        )
    return out
