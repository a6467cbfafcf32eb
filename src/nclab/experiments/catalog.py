"""The experiments ``nclab run`` knows, by name, found where they live and imported on first use.

nclab's own are discovered, not listed: every subpackage of :mod:`nclab.experiments` whose
``__init__.py`` assigns ``EXPERIMENT`` is one, named after its folder with ``-`` for ``_``
(``feature_collapse/`` is ``feature-collapse``). The folder is read, not imported (its
``__init__`` is parsed for the assignment), so that naming the experiments loads none of them and
the CLI starts fast; :func:`get_experiment` imports the one asked for and checks that its
``EXPERIMENT.name`` is that name.

Experiments of your own join them in two ways (see docs/adding-an-experiment.md): a distribution's
entry points in the group ``nclab.experiments`` (``name = "package"``), or the environment
variable ``NCLAB_EXPERIMENTS``: ``name=package`` pairs separated by commas, each package
importable and defining ``EXPERIMENT``. Worker processes inherit both. Later ones override
earlier ones of the same name: nclab's, then entry points, then the environment.
"""

from __future__ import annotations

import ast
import functools
import importlib
import importlib.metadata
import os
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import ConfigError

if TYPE_CHECKING:
    from .protocol import Experiment

#: the package whose subpackages are nclab's experiments
PACKAGE = __name__.rpartition(".")[0]
#: the environment variable naming experiments of your own: ``name=package,name=package``
ENV = "NCLAB_EXPERIMENTS"
#: the entry-point group of experiments of installed distributions (``name = "package"``)
ENTRY_POINTS = "nclab.experiments"


def name_of(folder: str) -> str:
    """An experiment's name from its package's folder name.

    >>> name_of("feature_collapse")
    'feature-collapse'
    """
    return folder.replace("_", "-")


def assigns(path: Path, name: str) -> bool:
    """Whether the module at ``path`` assigns ``name`` at its top level (read, not run): how an
    experiment package (``EXPERIMENT``) and a claims module (``CLAIMS``) are found."""
    try:
        tree = ast.parse(path.read_text(), str(path))
    except (OSError, SyntaxError):
        return False
    for node in tree.body:
        targets = node.targets if isinstance(node, ast.Assign) else [getattr(node, "target", None)]
        if any(isinstance(t, ast.Name) and t.id == name for t in targets):
            return True
    return False


@functools.cache
def builtin_modules() -> dict[str, str]:
    """nclab's experiments: name -> package, every subpackage of :mod:`nclab.experiments` that
    declares ``EXPERIMENT``, sorted by name."""
    root = Path(__file__).resolve().parent
    found = {
        name_of(d.name): f"{PACKAGE}.{d.name}"
        for d in root.iterdir()
        if d.is_dir() and d.name.isidentifier() and assigns(d / "__init__.py", "EXPERIMENT")
    }
    return dict(sorted(found.items()))


@functools.cache
def entry_point_modules() -> dict[str, str]:
    """Experiments of installed distributions: entry points of the group ``nclab.experiments``."""
    return {ep.name: ep.value for ep in importlib.metadata.entry_points(group=ENTRY_POINTS)}


def env_modules() -> dict[str, str]:
    """The experiments ``NCLAB_EXPERIMENTS`` names."""
    out = {}
    for item in filter(None, (p.strip() for p in os.environ.get(ENV, "").split(","))):
        name, sep, package = item.partition("=")
        if not sep or not name.strip() or not package.strip():
            raise ConfigError(f"{ENV} holds name=package pairs separated by commas, got {item!r}")
        out[name.strip()] = package.strip()
    return out


def modules() -> dict[str, str]:
    """Every known experiment's package by name: nclab's, then entry points', then those of
    ``NCLAB_EXPERIMENTS``."""
    return {**builtin_modules(), **entry_point_modules(), **env_modules()}


def experiment_names() -> list[str]:
    return list(modules())


def get_experiment(name: str) -> Experiment:
    known = modules()
    if name not in known:
        raise ConfigError(f"unknown experiment {name!r}; experiments: {', '.join(known)}")
    exp = importlib.import_module(known[name]).EXPERIMENT
    if exp.name != name:
        raise ConfigError(
            f"package {known[name]} declares experiment {exp.name!r}, but is registered as "
            f"{name!r}" + (" (its folder's name)" if name in builtin_modules() else "")
        )
    return exp
