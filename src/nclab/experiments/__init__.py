"""Experiments: one package each (config, presets, training, measurement, summary, figures).

``nclab run EXPERIMENT --preset NAME`` resolves the config, creates a run directory and calls the
experiment. Experiments are imported lazily (see :data:`EXPERIMENT_MODULES`), so the CLI starts
fast. What several experiments share lives in :mod:`nclab.experiments.common`; no experiment
imports another.
"""

from .catalog import EXPERIMENT_MODULES, experiment_names, get_experiment
from .common.seeds import aggregate_summaries
from .protocol import Experiment
from .runner import resume_run, run_experiment

__all__ = [
    "EXPERIMENT_MODULES",
    "Experiment",
    "aggregate_summaries",
    "experiment_names",
    "get_experiment",
    "resume_run",
    "run_experiment",
]
