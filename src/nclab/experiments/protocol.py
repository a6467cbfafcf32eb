"""The lifecycle every experiment follows: what an experiment declares, and what the runner does.

An experiment package defines ``EXPERIMENT = Experiment(...)`` in its ``__init__.py``. It declares

* its **config** class (a :class:`~nclab.experiments.common.config.ExperimentConfig`: ``seed``,
  ``seeds``, ``threads``, ``workers``) and its named **presets** (nested override dicts);
* ``check(cfg)``: the complete check of a resolved config, run before any work starts;
* ``units(cfg) -> [Unit]``: the units of work a config expands to (default :func:`seed_units`,
  one per seed; a depth × seed grid for a sweep). A unit trains in its own directory
  (``units/<key>/``, or the run directory itself for a run of one unit with ``key=""``);
* ``setup(cfg) -> context``: what every unit of a run shares (a data set, the distributed
  group), built once per process that trains units;
* ``train(cfg, unit, run_dir, context) -> summary``: how one unit trains (through
  :func:`nclab.train.fit`, checkpointing into ``run_dir``) and the unit's summary (a dict, or
  its ``UNIT`` model: :func:`as_summary`);
* ``summarize(cfg, units) -> summary``: the run's summary from the finished units, a dict or its
  ``SUMMARY`` model (default :func:`seed_summary`: the one unit's summary, or the mean over
  seeds, each field as the type declares);
* ``figures(cfg, run_dir, summary, units) -> [paths]``: its figures, drawn from what the run
  directory holds, so that ``nclab report RUN_DIR`` re-draws them for any finished run;
* ``validity``: what makes one run (one seed) valid evidence for judging (:class:`Validity`:
  e.g. it fits its training set, its loss is finite); a claim's run may name its own instead;
* ``paper``: which of its presets run a paper's own setting (:class:`PaperSetting`: the keys the
  paper leaves open and the preset chose), from which a claim's instance text is computed
  (:mod:`nclab.reproduce.instance`);
* ``docs``: the page that documents it (its presets, what it measured, how to rerun it);
* ``smoke``: its smoke rung (:class:`Smoke`), the overrides that cut any of its presets short
  while keeping the summary's structure: what the tests run (``tests/test_claim_checks.py``),
  below the quick / medium / full ladder of :mod:`nclab.reproduce`;
* ``remeasure(cfg, unit) -> dict`` (optional): a finished unit's summary measured again from
  what its directory holds (its trained state), for when the measures change after a long run;
  :func:`nclab.experiments.runner.remeasure` calls it for every unit and writes the summaries.

:mod:`nclab.experiments.runner` owns the rest, once: seeds, the unit grid and its "finished"
marker (a unit's ``summary.json``), resume, timing (``seconds``), torch threads, training units
in a process pool, re-measuring and re-drawing figures, and every ``summary.json``: it is the only
writer, and stamps and validates each summary against the declared structure before writing it
(the figures are drawn after). Functions that need torch are named as
:class:`Lazy` ``"package.module:function"`` so that importing an experiment (its config and
presets, e.g. for ``nclab run --list``) loads no torch.
"""

from __future__ import annotations

import importlib
import importlib.util
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from ..config import Config, apply_overrides, flatten, valid_keys
from ..errors import ConfigError
from ..runs import RunDir
from .common.seeds import aggregate_summaries
from .declarations import FITS, PaperSetting, Smoke, Validity, fits
from .schema import summary_type

UNITS = "units"  # the folder of a run's units


@dataclass(frozen=True)
class Unit:
    """One unit of work of a run: ``key`` names its directory under ``units/`` (``""``: the run
    directory itself), ``seed`` its seed, ``params`` what else sets it apart (a depth, a learning
    rate), ``needs`` the keys of the units that must be finished before it starts and ``cost`` a
    relative cost (a process pool starts the costliest first: they pack best).

    >>> Unit("L3_seed-0", 0, {"depth": 3}).params["depth"]
    3
    """

    key: str
    seed: int
    params: Mapping[str, Any] = field(default_factory=dict)
    needs: tuple[str, ...] = ()
    cost: float = 0.0

    def __getitem__(self, name: str) -> Any:
        return self.params[name]

    def path(self, run_path: str | Path) -> Path:
        """Its directory inside the run directory ``run_path``."""
        return Path(run_path) / UNITS / self.key if self.key else Path(run_path)


@dataclass
class UnitResult:
    """A finished unit: its summary and its directory (``history()`` reads its log)."""

    unit: Unit
    summary: dict[str, Any]
    run: RunDir

    def history(self) -> list[dict[str, Any]]:
        return self.run.read_metrics()


def seed_units(cfg: Any) -> list[Unit]:
    """One unit per seed ``cfg.seed, cfg.seed + 1, ...`` (``cfg.seeds`` of them): the run
    directory itself for one seed, ``units/seed-<s>/`` for several.

    >>> class C: seed, seeds = 3, 2
    >>> [u.key for u in seed_units(C())]
    ['seed-3', 'seed-4']
    """
    seeds = [cfg.seed + i for i in range(max(1, cfg.seeds))]
    if len(seeds) == 1:
        return [Unit("", seeds[0])]
    return [Unit(f"seed-{s}", s) for s in seeds]


def as_summary(value: Mapping[str, Any] | BaseModel) -> dict[str, Any]:
    """A hook's summary as a dict: a mapping as it is, or the typed model an experiment returned
    (its ``SUMMARY`` or ``UNIT`` type, or a record of it) with the fields it set.

    >>> from nclab.experiments.schema import Summary
    >>> class S(Summary):
    ...     nc1: float
    >>> as_summary(S(nc1=0.5)), as_summary({"nc1": 0.5})
    ({'nc1': 0.5}, {'nc1': 0.5})
    """
    if isinstance(value, BaseModel):
        return value.model_dump(exclude_unset=True)
    return dict(value)


def seed_summary(cfg: Any, units: Sequence[UnitResult], model: Any = None) -> dict[str, Any]:
    """The summary of a run of seed units: the unit's own, or over several seeds the mean of
    every numeric value at the same keys, ``std`` and ``per_seed``
    (:func:`~nclab.experiments.common.seeds.aggregate_summaries`, each field as the summary type
    ``model`` declares it to aggregate: the bookkeeping left out) and ``seeds``."""
    if len(units) == 1:
        return dict(units[0].summary)
    out = aggregate_summaries([u.summary for u in units], model)
    out["seeds"] = [u.unit.seed for u in units]
    return out


#: hooks an experiment may name as ``"module:function"`` of its own package
HOOKS = ("train", "setup", "summarize", "figures", "remeasure")


@dataclass
class Experiment:
    """An experiment's declaration (see the module docstring).

    ``doc`` is the package's docstring: its first paragraph is the one-line description
    (``nclab run --list``). A hook given as ``"module:function"`` names a function of the
    experiment's own package (the one its config class is defined in), imported on first use;
    ``train`` defaults to ``"train:train"`` and ``figures`` to ``"figures:figures"`` when the
    package has a ``figures`` module. ``paper`` maps the presets that run a paper's own setting to
    their :class:`PaperSetting`; ``bookkeeping`` names config keys that, beside the config class's
    ``BOOKKEEPING``, say how a run is carried out rather than what it computes; ``smoke`` is
    its smoke rung (:class:`Smoke`); ``docs`` the page that documents it (what it runs, its
    presets, its recorded results: ``docs/<name>.md`` of the repository for nclab's own, a path
    or address for yours). All three are checked here: a preset or key that does not
    exist is a :class:`~nclab.errors.ConfigError`.
    """

    name: str
    doc: str
    config_cls: type[Config]
    presets: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    default_preset: str | None = None
    check: Callable[[Any], None] | None = None
    units: Callable[[Any], list[Unit]] = seed_units
    setup: Callable[[Any], Any] | str | None = None
    summarize: Callable[[Any, Sequence[UnitResult]], Mapping[str, Any]] | str = seed_summary
    train: Callable[..., Mapping[str, Any]] | str = "train:train"
    figures: Callable[..., list[str]] | str | None = "figures:figures"
    remeasure: Callable[[Any, UnitResult], Mapping[str, Any]] | str | None = None
    paper: Mapping[str, PaperSetting] = field(default_factory=dict)
    bookkeeping: tuple[str, ...] = ()
    validity: tuple[Validity, ...] = ()
    smoke: Smoke = field(default_factory=Smoke)
    docs: str = ""

    def __post_init__(self) -> None:
        self._check_declarations()
        package = self.config_cls.__module__.rpartition(".")[0]
        if self.figures == "figures:figures" and not _has_module(package, "figures"):
            self.figures = None
        for hook in HOOKS:
            value = getattr(self, hook)
            if isinstance(value, str):
                setattr(self, hook, Lazy(f"{package}.{value}"))

    @property
    def package(self) -> str:
        """The experiment's package: the one its config class is defined in (that module itself
        when it is top-level)."""
        module = self.config_cls.__module__
        return module.rpartition(".")[0] or module

    @property
    def description(self) -> str:
        """The first paragraph of ``doc``, on one line, without reST markup."""
        text = " ".join(self.doc.split("\n\n")[0].split())
        return re.sub(r":\w+:`~?([^`]+)`", r"\1", text).replace("``", "")

    def summarize_units(self, cfg: Any, units: Sequence[UnitResult]) -> dict[str, Any]:
        """The run's summary from its finished units: the experiment's ``summarize``, or by
        default :func:`seed_summary` over its declared summary type (how each field aggregates
        over seeds: :class:`~nclab.experiments.schema.Agg`)."""
        if self.summarize is seed_summary:
            return seed_summary(cfg, units, summary_type(self.name))
        return as_summary(self.summarize(cfg, units))

    def preset_names(self) -> list[str]:
        return list(self.presets)

    def _check_declarations(self) -> None:
        """Every paper or smoke preset exists, every key they and ``bookkeeping`` name is a
        config key."""
        smoke = self.smoke
        if not (self.paper or self.bookkeeping or smoke.overrides or smoke.presets):
            return
        keys = set(valid_keys(self.config_cls))
        named = [("bookkeeping", k) for k in self.bookkeeping]
        named += [("smoke", k) for k in flatten(smoke.overrides)]
        for what, presets in (("paper", self.paper), ("smoke", smoke.presets)):
            unknown = [p for p in presets if p not in self.presets]
            if unknown:
                raise ConfigError(
                    f"experiment {self.name!r}: {what} preset {unknown[0]!r} is not a preset; "
                    f"presets: {', '.join(self.presets)}"
                )
        for preset, setting in self.paper.items():
            named += [(f"paper preset {preset!r}", k) for k in (*setting.unstated, *setting.unused)]
        for preset, over in smoke.presets.items():
            named += [(f"smoke preset {preset!r}", k) for k in flatten(over)]
        bad = [f"{who}: {k!r}" for who, k in named if k not in keys]
        if bad:
            raise ConfigError(
                f"experiment {self.name!r} names keys its config lacks ({'; '.join(bad)})"
            )

    def bookkeeping_keys(self) -> tuple[str, ...]:
        """The keys :meth:`setting` leaves out: the config class's ``BOOKKEEPING`` and the
        experiment's own ``bookkeeping``."""
        return (*getattr(self.config_cls, "BOOKKEEPING", ()), *self.bookkeeping)

    def setting(
        self, preset: str | None = None, overrides: Sequence[str] | Mapping[str, Any] = ()
    ) -> dict[str, Any]:
        """What a run of ``preset`` (with ``overrides``) computes: its resolved config as dotted
        keys (JSON values), without the bookkeeping keys (:meth:`bookkeeping_keys`)."""
        return self.flat(self.config(preset, overrides))

    def flat(self, config: Any, keep: Sequence[str] = ()) -> dict[str, Any]:
        """``config`` (a config, or the mapping a run's ``config.toml`` or a ledger record holds)
        as :meth:`setting` gives a preset's: dotted keys without the bookkeeping keys, but for
        those in ``keep``; two configs compare key by key. A mapping this nclab cannot read
        raises :class:`~nclab.errors.NclabError`."""
        if isinstance(config, Mapping):
            config = self.config_cls.from_dict(dict(config))
        skip = set(self.bookkeeping_keys()) - set(keep)
        return {k: v for k, v in flatten(config.to_dict()).items() if k not in skip}

    def config(
        self, preset: str | None = None, overrides: Sequence[str] | Mapping[str, Any] = ()
    ) -> Config:
        """The resolved config, checked: defaults, then the preset's values, then ``--set``
        overrides. A bad value fails here, before any work, naming the field."""
        cfg = self.config_cls()
        preset = preset or self.default_preset
        if preset is not None:
            if preset not in self.presets:
                raise ConfigError(
                    f"unknown preset {preset!r} for experiment {self.name!r}; "
                    f"presets: {', '.join(self.presets)}"
                )
            cfg = apply_overrides(cfg, flatten(self.presets[preset]))
        cfg = apply_overrides(cfg, overrides)
        self.validate(cfg)
        return cfg

    def validate(self, cfg: Any) -> None:
        """Every check of ``cfg``: the shared fields', the experiment's and its units'."""
        if cfg.seeds < 1:
            raise ConfigError(f"seeds must be >= 1, got {cfg.seeds}")
        if cfg.workers < 1:
            raise ConfigError(f"workers must be an integer >= 1, got {cfg.workers}")
        if self.check is not None:
            self.check(cfg)
        keys = [u.key for u in self.units(cfg)]
        if len(set(keys)) != len(keys) or ("" in keys and len(keys) > 1):
            raise ConfigError(f"experiment {self.name!r}: unit keys must be unique, got {keys}")


class Lazy:
    """The function ``"package.module:name"``, imported on its first call: an experiment package
    names its torch-using functions this way, so importing it (its config, presets and
    description, e.g. for ``nclab run --list``) loads no torch.

    >>> f = Lazy("math:sqrt")
    >>> f(9.0), f
    (3.0, Lazy('math:sqrt'))
    """

    def __init__(self, target: str):
        self.target = target

    def resolve(self) -> Callable:
        module, _, name = self.target.partition(":")
        return getattr(importlib.import_module(module), name)

    def __call__(self, *args, **kwargs):
        return self.resolve()(*args, **kwargs)

    def __repr__(self) -> str:
        return f"Lazy({self.target!r})"


def _has_module(package: str, name: str) -> bool:
    """Whether ``package`` has a submodule ``name`` (found without importing it)."""
    try:
        return bool(package) and importlib.util.find_spec(f"{package}.{name}") is not None
    except ModuleNotFoundError:
        return False


def lazy_exports(package: str, names: Mapping[str, str]) -> Callable[[str], Any]:
    """A module ``__getattr__`` (PEP 562) giving ``name`` from the submodule ``names[name]`` (e.g.
    ``".train"``) of ``package`` on first access."""

    def __getattr__(name: str) -> Any:
        if name in names:
            return getattr(importlib.import_module(names[name], package), name)
        raise AttributeError(f"module {package!r} has no attribute {name!r}")

    return __getattr__


__all__ = [
    "FITS",
    "HOOKS",
    "UNITS",
    "Experiment",
    "Lazy",
    "PaperSetting",
    "Smoke",
    "Unit",
    "UnitResult",
    "Validity",
    "as_summary",
    "fits",
    "lazy_exports",
    "seed_summary",
    "seed_units",
]
