"""Unconstrained-features models (Tirer & Bruna, Súkeník et al.): batched gradient descent against the
closed-form optimum.

``nclab run ufm --preset NAME [--set key=value] [--seeds S]`` trains every problem of a run (the
seeds, and in the phase diagram the grid of λ's) as one :class:`~nclab.models.ufm.BatchedUFM`,
logs the objective and the collapse metrics of every layer each ``log_every`` steps to
``metrics.jsonl``, and writes a summary with the final objective beside the theory's
(:mod:`nclab.theory`), the relative gap, the metrics (worst seed), the predicted norms / singular
values beside the measured ones, and figures like the paper's panels. Documentation: ``docs/ufm.md``.

* :mod:`.config`: the settings, the problems of a run, the threshold λ*, the model in words;
* :mod:`.presets`: the paper's figures as presets;
* :mod:`.train`: the batched model trained with :func:`nclab.train.fit`;
* :mod:`.measure`: the metrics of every layer and the theory's predictions;
* :mod:`.summary`: the summary of one configuration or of a phase-diagram grid;
* :mod:`.figures`: the paper-like panels;
* :mod:`.bias_sweep`: a sweep over the bias's weight decay λ_b (simplex ETF -> orthogonal frame);
* :mod:`.fixed_features`: Theorem 5.1, the exact classifier of fixed noisy features over n;
* :mod:`.rates`: the GUFM-MSE's ε-sublevel sets (Súkeník et al., Lemma 4.1's deviation rates).
"""

from __future__ import annotations

from ..protocol import Experiment, Unit
from .config import UFMConfig, check
from .presets import PAPER_SETTINGS, PRESETS, SMOKE


def units(cfg: UFMConfig) -> list[Unit]:
    """One unit, the run directory itself: every seed and λ of the run is one batched model."""
    return [Unit("", cfg.seed)]


EXPERIMENT = Experiment(
    "ufm",
    __doc__,
    UFMConfig,
    PRESETS,
    "tb-fig2-nobias",
    check,
    units=units,
    paper=PAPER_SETTINGS,
    smoke=SMOKE,
    docs="docs/ufm.md",
)

__all__ = ["EXPERIMENT", "PRESETS", "UFMConfig"]
