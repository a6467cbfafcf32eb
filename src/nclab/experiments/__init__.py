"""Experiments: one package each (config, presets, training, measurement, summary, figures).

``nclab run EXPERIMENT --preset NAME`` resolves the config, creates a run directory and calls the
experiment. Experiments are found in this package (every subpackage that declares
``EXPERIMENT``), and as plugins (:mod:`.catalog`), and imported on first use, so the CLI starts
fast. What several experiments share lives in :mod:`nclab.experiments.common`; no experiment
imports another.
"""

from .catalog import experiment_names, get_experiment, modules
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
    "Experiment",
    "aggregate_summaries",
    "experiment_names",
    "get_experiment",
    "modules",
    "resume_run",
    "run_experiment",
]
