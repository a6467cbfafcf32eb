"""Feature Collapse (ICLR 2024): the networks h / h* on the concept-word sentence task, Fig. 3, K =
50, Fig. 4a-c, no weight decay, learnable LayerNorm.

``nclab run feature-collapse --preset fig3`` trains the network h (or h*) of the paper on the
concept/word sentence task, logs train loss, test accuracy and the embedding-level collapse measures
(:mod:`nclab.collapse.embedding`) every ``log_every`` epochs, checkpoints, and writes a summary with
the theory's prediction (``fc-thm1/2/3``) and the paper's values beside the measurements, plus the
PCA figure of both weight sets coloured by concept (the paper's Fig. 3/4 panels).

One unit per seed (the run directory itself for one seed, ``units/seed-<s>/`` for several), each
keeping its trained state in ``final_state.pt``.

* :mod:`.config`: the settings (``data``, ``model``, ``train``), the weight decays they imply,
  their checks;
* :mod:`.presets`: the paper's figures as presets, and the values the paper reports (``PAPER``);
* :mod:`.train`: the SGD and L-BFGS ``Trainer``, ``train`` (one unit) and ``remeasure`` (a
  finished unit's summary again from its trained state: ``runner.remeasure(RUN_DIR)``);
* :mod:`.measure`: accuracies, objective, norms and collapse measures of a trained network, the
  PCA panels' vectors and singular values;
* :mod:`.summary`: the theorem that applies (``theory_for``) and a unit's summary;
* :mod:`.figures`: the PCA panels, norms against frequency, training curves.
"""

from __future__ import annotations

from ..protocol import Experiment, fits
from .config import FCConfig, check
from .presets import PAPER, PAPER_SETTINGS, PRESETS, SMOKE

EXPERIMENT = Experiment(
    "feature-collapse",
    __doc__,
    FCConfig,
    PRESETS,
    "fig3-quick",
    check,
    remeasure="train:remeasure",
    paper=PAPER_SETTINGS,
    # the paper's networks fit their training sets (100 % in every figure); its collapse
    # statements are about trained networks
    validity=(fits(),),
    smoke=SMOKE,
    docs="docs/feature-collapse.md",
)

__all__ = ["EXPERIMENT", "PAPER", "PRESETS", "FCConfig"]
