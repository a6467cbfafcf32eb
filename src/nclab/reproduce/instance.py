"""A claim's instance text, computed from its presets: what a mode runs against the paper's setting.

Each run of a claim has a paper preset (:func:`paper_preset`: ``RunSpec.paper``, else its full
preset when its experiment declares that preset a paper setting,
:class:`~nclab.experiments.protocol.PaperSetting`) or none, with the reason. A mode's run is
compared with it key by key (:meth:`Experiment.setting
<nclab.experiments.protocol.Experiment.setting>`: the resolved config, bookkeeping keys left out):

* no difference: ``"paper setting"``, then the keys the paper does not state and the preset chose,
  ``"; not stated in the paper: train.batch_size 100, model.dropout 0, seeds 3"`` (the seed count
  too, where the paper does not give it);
* differences: ``"smaller: model.d 32 (paper: 100), train.epochs 40 (paper preset: 1200)"``: a key
  the paper does not state shows the paper preset's value as such, a key the paper preset does
  not use (``PaperSetting.unused``) shows ours only, and fewer seeds than the paper's count
  (``PaperSetting.seeds``) are a difference too;
* no paper preset: ``"our instance: no preset runs the paper's setting (<reason>)"``, and in quick
  mode what the quick preset changes from the full one, ``"; quick: train.steps 40000 (full:
  100000)"``.

A claim of several runs names each run's part by its alias. What kind of instance it is travels
with the text as a type (:class:`Instance`, :class:`InstanceKind`: ``instance_kind`` beside
``instance`` in the results), so that no report reads it back from the text's prefix.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..errors import ConfigError
from ..experiments.catalog import get_experiment

if TYPE_CHECKING:
    from ..experiments.protocol import PaperSetting
    from .registry import Claim, RunSpec

PAPER_SETTING = "paper setting"
SMALLER = "smaller: "
OURS = "our instance: "
#: a list longer than this shows its first three values, "…" and its last
LONG_LIST = 8


class InstanceKind(enum.Enum):
    """What a mode of a claim runs against the paper's setting."""

    PAPER = "paper"  #: the paper's setting (with what the paper leaves open)
    SMALLER = "smaller"  #: a smaller instance of it (or a run of ours beside one of the paper's)
    OURS = "ours"  #: our own instance: no preset runs the paper's setting
    NONE = "none"  #: the claim has no preset at this scale


@dataclass(frozen=True)
class Instance:
    """A claim's instance at one scale: its ``kind`` and its ``text`` (the module docstring).

    >>> Instance(InstanceKind.SMALLER, "smaller: model.d 32 (paper: 100)").label
    'smaller instance: model.d 32 (paper: 100)'
    """

    kind: InstanceKind
    text: str

    @property
    def label(self) -> str:
        """The instance as the reports name it: a smaller one reads ``"smaller instance: X"``,
        the others as their text."""
        return label(self.text, self.kind.value)

    @property
    def is_paper(self) -> bool:
        return self.kind is InstanceKind.PAPER


def label(text: str, kind: str) -> str:
    """An instance's ``text`` as the reports name it, by its ``kind`` (an :class:`InstanceKind`
    value, as results hold it): ``"smaller instance: X"`` for a smaller one, else ``text``.

    >>> label("smaller: model.d 32 (paper: 100)", "smaller")
    'smaller instance: model.d 32 (paper: 100)'
    """
    if kind == InstanceKind.SMALLER.value:
        return "smaller instance: " + text.removeprefix(SMALLER)
    return text


def fmt_value(v: Any) -> str:
    """A config value, compactly: ``1e-4`` as ``0.0001``, ``True`` as ``true``, ``None`` as
    ``none``, a long list cut in its middle.

    >>> fmt_value(0.0001), fmt_value(True), fmt_value(None), fmt_value([16, 32])
    ('0.0001', 'true', 'none', '[16, 32]')
    >>> fmt_value([25 * 2**k for k in range(15)])
    '[25, 50, 100, …, 409600] (15 values)'
    """
    if isinstance(v, bool) or v is None:
        return str(v).lower()
    if isinstance(v, float):
        return f"{v:g}"
    if isinstance(v, list | tuple):
        if len(v) > LONG_LIST:
            head = ", ".join(fmt_value(x) for x in v[:3])
            return f"[{head}, …, {fmt_value(v[-1])}] ({len(v)} values)"
        return "[" + ", ".join(fmt_value(x) for x in v) + "]"
    return str(v)


def paper_preset(spec: RunSpec) -> tuple[str | None, str]:
    """(the preset that runs the paper's setting for ``spec``, or None; why there is none)."""
    if spec.no_paper:
        return None, spec.no_paper
    exp = get_experiment(spec.experiment)
    if spec.paper is not None:
        if spec.paper not in exp.paper:
            raise ConfigError(
                f"{spec.experiment} preset {spec.paper!r} is not declared a paper setting; "
                f"paper presets: {', '.join(exp.paper) or '(none)'}"
            )
        return spec.paper, ""
    if spec.full in exp.paper:
        return spec.full, ""
    return None, f"{spec.experiment} declares no paper setting for {spec.full!r}"


def paper_setting(spec: RunSpec) -> PaperSetting | None:
    """The :class:`~nclab.experiments.protocol.PaperSetting` of ``spec``'s paper preset, or None."""
    preset, _ = paper_preset(spec)
    return None if preset is None else get_experiment(spec.experiment).paper[preset]


@dataclass(frozen=True)
class Deviation:
    """One way a run differs from the paper's setting: a dotted config ``key`` (``"seeds"`` for
    the seed count, ``"instance"`` where no preset runs the paper's setting), our value and the
    reference's (``"—"`` where it has none), and what the reference is (``"paper"``, ``"paper
    preset"`` for a value the paper does not state, ``"full"`` for our own instance's full
    preset, ``""`` for a key the paper preset does not use)."""

    key: str
    ours: Any
    ref: Any = "—"
    label: str = "paper"

    def text(self) -> str:
        """``"train.epochs 4800 (paper: 100000)"``."""
        if self.key == "instance":
            return f"no preset runs the paper's setting ({self.ours})"
        if not self.label:
            return f"{self.key} {fmt_value(self.ours)}"
        return f"{self.key} {fmt_value(self.ours)} ({self.label}: {fmt_value(self.ref)})"


@dataclass(frozen=True)
class RunInstance:
    """One run of a mode against the paper: ``kind`` ``"paper"``, ``"smaller"`` or ``"ours"``;
    ``items`` the ``"key value ..."`` parts; ``reason`` why no preset runs the paper's setting;
    ``deviations`` what differs from the paper (for ``"ours"``: the instance itself, then what
    the mode changes from the full preset)."""

    kind: str
    items: tuple[str, ...] = ()
    reason: str = ""
    deviations: tuple[Deviation, ...] = ()


def _differences(
    ours: Mapping[str, Any],
    ref: Mapping[str, Any],
    label: str,
    unstated: tuple[str, ...] = (),
    unused: tuple[str, ...] = (),
) -> tuple[Deviation, ...]:
    """A :class:`Deviation` for each key whose values differ, in the config's order."""
    out = []
    for key in [*ours, *(k for k in ref if k not in ours)]:
        mine, theirs = ours.get(key, "—"), ref.get(key, "—")
        if mine == theirs:
            continue
        if key in unused:
            out.append(Deviation(key, mine, theirs, ""))
        else:
            out.append(Deviation(key, mine, theirs, "paper preset" if key in unstated else label))
    return tuple(out)


def run_instance(spec: RunSpec, mode: str, seeds: int | None = None) -> RunInstance:
    """What the ``mode`` preset of ``spec`` (with its ``set``) runs against the paper's setting;
    ``seeds``: the seed count of the run judged, where it differs from the claim's own (a
    recorded run of the same preset shared with a claim that runs more seeds)."""
    exp = get_experiment(spec.experiment)
    preset = spec.preset(mode)
    ours = exp.setting(preset, dict(spec.set))
    paper, reason = paper_preset(spec)
    if paper is None:
        full = exp.setting(spec.full, dict(spec.set))
        diff = () if preset == spec.full else _differences(ours, full, "full")
        own = (Deviation("instance", reason, "—", ""),)
        return RunInstance("ours", tuple(d.text() for d in diff), reason, own + diff)
    declared = exp.paper[paper]
    ref = exp.setting(paper)
    diff = _differences(ours, ref, "paper", declared.unstated, declared.unused)
    seeds = spec.seeds_at(mode) if seeds is None else seeds
    if declared.seeds is not None and seeds != declared.seeds:
        diff += (Deviation("seeds", seeds, declared.seeds),)
    if diff:
        return RunInstance("smaller", tuple(d.text() for d in diff), deviations=diff)
    unstated = tuple(f"{k} {fmt_value(ref[k])}" for k in declared.unstated)
    return RunInstance("paper", unstated + (() if declared.seeds else (f"seeds {seeds}",)))


def deviations(claim: Claim, mode: str, seeds: Mapping[str, int] | None = None) -> dict:
    """Each run's :class:`Deviation` s from the paper's setting in ``mode``, by alias (empty
    where the run is the paper's setting; ``{}`` when the claim has no ``mode`` preset)."""
    if not claim.runnable(mode):
        return {}
    seeds = seeds or {}
    return {
        alias: run_instance(spec, mode, seeds.get(alias)).deviations
        for alias, spec in claim.runs.items()
    }


def _ours_text(run: RunInstance) -> str:
    text = f"no preset runs the paper's setting ({run.reason})"
    return text + (f"; quick: {', '.join(run.items)}" if run.items else "")


def instance_text(claim: Claim, mode: str, seeds: Mapping[str, int] | None = None) -> str:
    """The claim's instance text in ``mode`` (:func:`instance_of`)."""
    return instance_of(claim, mode, seeds).text


def instance_of(claim: Claim, mode: str, seeds: Mapping[str, int] | None = None) -> Instance:
    """The claim's instance in ``mode`` (see the module docstring); ``"no quick preset"`` when a
    run has none. ``seeds`` maps a run's alias to the seed count of the run judged for it."""
    if not claim.runnable(mode):
        return Instance(InstanceKind.NONE, f"no {mode} preset")
    seeds = seeds or {}
    runs = {alias: run_instance(spec, mode, seeds.get(alias)) for alias, spec in claim.runs.items()}
    several = len(runs) > 1

    def named(alias: str, text: str) -> str:
        return f"{alias}: {text}" if several else text

    if all(r.kind == "paper" for r in runs.values()):
        unstated = [named(a, ", ".join(r.items)) for a, r in runs.items() if r.items]
        said = f"; not stated in the paper: {'; '.join(unstated)}" if unstated else ""
        return Instance(InstanceKind.PAPER, PAPER_SETTING + said)
    if all(r.kind == "ours" for r in runs.values()) and not several:
        return Instance(InstanceKind.OURS, OURS + _ours_text(next(iter(runs.values()))))
    parts = []
    for alias, r in runs.items():
        if r.kind == "paper":
            text = PAPER_SETTING + (f" (not stated: {', '.join(r.items)})" if r.items else "")
        else:
            text = ", ".join(r.items) if r.kind == "smaller" else _ours_text(r)
        parts.append(named(alias, text))
    return Instance(InstanceKind.SMALLER, SMALLER + "; ".join(parts))
