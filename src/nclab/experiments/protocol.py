"""The experiment protocol shared by every paper's experiments.

An experiment package defines ``EXPERIMENT = Experiment(...)`` in its ``__init__.py``: a config
class (a :class:`nclab.config.Config` with at least a ``seed: int`` field), named presets (nested
override dicts applied to the default config) and ``run(cfg, run_dir) -> summary``. The summary is
a JSON-able dict; :func:`nclab.experiments.runner.run_experiment` writes it to ``summary.json``.
A config with a ``threads`` field gets that many torch threads for the run (restored after).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..config import Config, apply_overrides, flatten
from ..errors import ConfigError
from ..runs import RunDir


@dataclass
class Experiment:
    name: str
    description: str
    config_cls: type[Config]
    run: Callable[[Any, RunDir], Mapping[str, Any]]
    presets: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    default_preset: str | None = None
    batched_seeds: bool = False
    figures: Callable[[RunDir], None] | None = None  # re-render figures of a finished run

    def preset_names(self) -> list[str]:
        return list(self.presets)

    def config(
        self, preset: str | None = None, overrides: Sequence[str] | Mapping[str, Any] = ()
    ) -> Config:
        """The resolved config: defaults, then the preset's values, then ``--set`` overrides."""
        cfg = self.config_cls()
        preset = preset or self.default_preset
        if preset is not None:
            if preset not in self.presets:
                raise ConfigError(
                    f"unknown preset {preset!r} for experiment {self.name!r}; "
                    f"presets: {', '.join(self.presets)}"
                )
            cfg = apply_overrides(cfg, flatten(self.presets[preset]))
        return apply_overrides(cfg, overrides)


class Lazy:
    """The function ``"package.module:name"``, imported on its first call: an experiment package
    names its ``run`` and ``figures`` this way, so importing it (its config, presets and
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


def lazy_exports(package: str, names: Mapping[str, str]) -> Callable[[str], Any]:
    """A module ``__getattr__`` (PEP 562) giving ``name`` from the submodule ``names[name]`` (e.g.
    ``".train"``) of ``package`` on first access."""

    def __getattr__(name: str) -> Any:
        if name in names:
            return getattr(importlib.import_module(names[name], package), name)
        raise AttributeError(f"module {package!r} has no attribute {name!r}")

    return __getattr__
