"""Feature collapse (Laurent, von Brecht & Bresson, ICLR 2024): Fig. 3, K = 50, Fig. 4a–c, A.1, A.2.

``nclab run feature-collapse --preset fig3`` trains the network h (or h*) of the paper on the
concept/word sentence task, logs train loss, test accuracy and the embedding-level collapse measures
(:mod:`nclab.collapse.embedding`) every ``log_every`` epochs, checkpoints, and writes a summary with
the theory's prediction (``fc-thm1/2/3``) and the paper's values beside the measurements, plus the
PCA figure of both weight sets coloured by concept (the paper's Fig. 3/4 panels).

* :mod:`.config`: the settings, the weight decays they imply, their checks;
* :mod:`.presets`: the paper's figures as presets, and the values the paper reports;
* :mod:`.train`: the SGD and L-BFGS trainers in :func:`nclab.train.fit`, and :func:`remeasure`;
* :mod:`.measure`: accuracies, objective, norms and collapse measures of a trained network;
* :mod:`.summary`: the theorem that applies (:func:`theory_for`) and the run's summary;
* :mod:`.figures`: the PCA panels, norms against frequency, training curves.
"""

from __future__ import annotations

from ..protocol import Experiment, Lazy, lazy_exports
from .config import FCConfig, validate, weight_decays
from .presets import PAPER, PRESETS

EXPERIMENT = Experiment(
    name="feature-collapse",
    description="Feature Collapse (ICLR 2024): networks h / h* on the concept-word sentence task; "
    "Fig. 3, K=50, Fig. 4a-c, no weight decay, learnable LayerNorm",
    config_cls=FCConfig,
    run=Lazy(f"{__name__}.train:run"),
    presets=PRESETS,
    default_preset="fig3-quick",
)
# torch on first use
__getattr__ = lazy_exports(
    __name__,
    {
        "Trainer": ".train",
        "remeasure": ".train",
        "run": ".train",
        "summarize": ".summary",
        "theory_for": ".summary",
    },
)

__all__ = [
    "EXPERIMENT",
    "PAPER",
    "PRESETS",
    "FCConfig",
    "Trainer",
    "remeasure",
    "run",
    "summarize",
    "theory_for",
    "validate",
    "weight_decays",
]
