"""Experiments: typed configs, named presets and a ``run`` function per experiment.

``nclab run EXPERIMENT --preset NAME`` resolves the config, creates a run directory and calls the
experiment. Experiments are imported lazily (see :data:`EXPERIMENT_MODULES`), so the CLI starts fast.
"""

from .base import (
    EXPERIMENT_MODULES,
    Experiment,
    aggregate_summaries,
    experiment_names,
    get_experiment,
    resume_run,
    run_experiment,
)

__all__ = [
    "EXPERIMENT_MODULES",
    "Experiment",
    "aggregate_summaries",
    "experiment_names",
    "get_experiment",
    "resume_run",
    "run_experiment",
]
