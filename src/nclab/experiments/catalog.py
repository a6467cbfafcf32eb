"""The experiments ``nclab run`` knows, by name, imported on first use so the CLI starts fast."""

from __future__ import annotations

import importlib
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
    "linear-head": "nclab.experiments.linear_head",
    "deep-ln": "nclab.experiments.deep_ln",
    "resnet-ufm": "nclab.experiments.resnet_ufm",
}


def experiment_names() -> list[str]:
    return list(EXPERIMENT_MODULES)


def get_experiment(name: str) -> Experiment:
    if name not in EXPERIMENT_MODULES:
        raise ConfigError(
            f"unknown experiment {name!r}; experiments: {', '.join(EXPERIMENT_MODULES)}"
        )
    module = importlib.import_module(EXPERIMENT_MODULES[name])
    return module.EXPERIMENT
