"""Experiments: one package each (config, presets, training, measurement, summary, figures).

``nclab run EXPERIMENT --preset NAME`` resolves the config, creates a run directory and calls the
experiment. Experiments are imported lazily (see :data:`EXPERIMENT_MODULES`), so the CLI starts
fast. What several experiments share lives in :mod:`nclab.experiments.common`; no experiment
imports another.
"""

from .catalog import EXPERIMENT_MODULES, experiment_names, get_experiment
from .protocol import Experiment, lazy_exports

# the runner (and torch) on first use: `nclab run --list` reads configs and presets only
__getattr__ = lazy_exports(
    __name__,
    {
        "aggregate_summaries": ".common.seeds",
        "resume_run": ".runner",
        "run_experiment": ".runner",
    },
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
