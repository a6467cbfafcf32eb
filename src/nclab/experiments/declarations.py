"""What an experiment declares beside its presets, for judging and testing its runs:
:class:`Validity` (what makes one seed of a run valid evidence; :func:`fits`), :class:`PaperSetting`
(a preset that runs a paper's own setting) and :class:`Smoke` (its smoke rung: what the tests
run). :class:`~nclab.experiments.protocol.Experiment` takes them; :mod:`.protocol` re-exports
them."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..errors import ConfigError


@dataclass(frozen=True)
class Validity:
    """One condition a run (one seed's summary) must meet to be judged as evidence: the value at
    the summary ``path`` (a dotted key; ``name[*]`` for every entry of a list, all of which must
    meet it) compared by ``op`` (``>=``, ``>``, ``<=``, ``<``) with ``value``; ``why`` says what a
    run that misses it says nothing about (e.g. "a network that does not fit its training set says
    nothing about the collapse of a trained one"). ``finite``: the value must also be finite.

    >>> Validity("train_acc", ">=", 0.99, "fits its training set").describe()
    'train_acc >= 0.99'
    """

    path: str
    op: str
    value: float
    why: str

    def __post_init__(self) -> None:
        if self.op not in (">=", ">", "<=", "<"):
            raise ConfigError(f"validity {self.path!r}: op must be >=, >, <= or <, got {self.op!r}")
        if not self.why:
            raise ConfigError(
                f"validity {self.path!r}: say why (why=) a run that misses it is invalid"
            )

    def describe(self) -> str:
        return f"{self.path} {self.op} {self.value:g}"


#: the level at which a network "fits" its training set, project-wide (the papers say it without a
#: number; 99 % leaves room for a few hard samples of the smaller CPU data)
FITS = 0.99


def fits(path: str = "train_acc", why: str = "") -> Validity:
    """A run is valid evidence when its network fits its training set (train accuracy at
    ``path`` at least :data:`FITS`): the papers' collapse statements are about trained networks.

    >>> fits().describe()
    'train_acc >= 0.99'
    """
    return Validity(
        path,
        ">=",
        FITS,
        why
        or "a network that does not fit its training set says nothing of the collapse of a "
        "trained one",
    )


@dataclass(frozen=True)
class PaperSetting:
    """A preset that runs a paper's own setting, declared beside the presets: ``where`` in the
    paper, the dotted config keys whose values the paper does not state, so that the preset had to
    choose them (``unstated``), the keys whose value the preset's run does not use (``unused``:
    the L-BFGS settings of an SGD run, a weight decay that a sweep of weight decays replaces), and
    how many seeds (runs) the paper reports it over (``seeds``; None: not stated).

    >>> PaperSetting("Fig. 3", unstated=("train.epochs",)).unstated
    ('train.epochs',)
    """

    where: str = ""
    unstated: tuple[str, ...] = ()
    unused: tuple[str, ...] = ()
    seeds: int | None = None


@dataclass(frozen=True)
class Smoke:
    """An experiment's smoke rung: the overrides that cut a run of any of its presets short (fewer
    epochs, steps or samples) while keeping its summary's structure, and the most seeds it runs
    (two keep the structure of a summary over seeds: mean, std). The tests run every claim's
    quick runs at this rung (``tests/test_claim_checks.py``), so it is declared beside the
    presets, by the experiment, never in a table of the tests.

    ``presets`` replaces ``overrides`` for the presets it names (a preset whose summary needs
    more of the run than the default cut leaves: a bound that exists only once the network
    interpolates); ``why`` says why, per preset where it matters.

    >>> smoke = Smoke({"train.epochs": 4}, presets={"big-quick": {"train.epochs": 40}})
    >>> smoke.overrides_for("small-quick"), smoke.overrides_for("big-quick")
    ({'train.epochs': 4}, {'train.epochs': 40})
    """

    overrides: Mapping[str, Any] = field(default_factory=dict)
    presets: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    seeds: int = 2

    def overrides_for(self, preset: str | None) -> dict[str, Any]:
        """The overrides that cut a run of ``preset`` short: its own, else the default."""
        return dict(self.presets.get(preset, self.overrides) if preset else self.overrides)
