"""The experiments ``nclab run`` knows, by name, imported on first use so the CLI starts fast.

Besides nclab's own (:data:`EXPERIMENT_MODULES`), the environment variable ``NCLAB_EXPERIMENTS``
adds experiments of your own: ``name=package`` pairs separated by commas, each package importable
and defining ``EXPERIMENT`` (see docs/adding-an-experiment.md). Worker processes inherit it.
"""

from __future__ import annotations

import importlib
import os
from typing import TYPE_CHECKING

from ..errors import ConfigError

if TYPE_CHECKING:
    from .protocol import Experiment

#: experiment name -> package defining ``EXPERIMENT`` (imported on first use)
EXPERIMENT_MODULES: dict[str, str] = {
    "demo": "nclab.experiments.demo",
    "ufm": "nclab.experiments.ufm",
    "feature-collapse": "nclab.experiments.feature_collapse",
    "fc-transformer": "nclab.experiments.fc_transformer",
    "fc-grammar": "nclab.experiments.fc_grammar",
    "fc-landscape": "nclab.experiments.fc_landscape",
    "fc-lemmas": "nclab.experiments.fc_lemmas",
    "pyramid-flow": "nclab.experiments.pyramid_flow",
    "linear-head": "nclab.experiments.linear_head",
    "deep-ln": "nclab.experiments.deep_ln",
    "resnet-ufm": "nclab.experiments.resnet_ufm",
}


#: the environment variable naming experiments of your own: ``name=package,name=package``
ENV = "NCLAB_EXPERIMENTS"


def modules() -> dict[str, str]:
    """Every known experiment's package by name: nclab's, then those of ``NCLAB_EXPERIMENTS``."""
    out = dict(EXPERIMENT_MODULES)
    for item in filter(None, (p.strip() for p in os.environ.get(ENV, "").split(","))):
        name, sep, package = item.partition("=")
        if not sep or not name.strip() or not package.strip():
            raise ConfigError(f"{ENV} holds name=package pairs separated by commas, got {item!r}")
        out[name.strip()] = package.strip()
    return out


def experiment_names() -> list[str]:
    return list(modules())


def get_experiment(name: str) -> Experiment:
    known = modules()
    if name not in known:
        raise ConfigError(f"unknown experiment {name!r}; experiments: {', '.join(known)}")
    return importlib.import_module(known[name]).EXPERIMENT
