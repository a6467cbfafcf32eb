"""Feature Collapse on its true risk: many random starts of L-BFGS on the exact true risk of h at
sizes where it is enumerable, against the theorems' global value (App. H, Theorem G; §3.1).

``nclab run fc-landscape --preset no-spurious-quick`` builds the problem of all ``K = nc^L``
latent variables (every sentence enumerated with its probability, so the risk is the paper's true
risk (5), not an empirical one), runs ``search.starts`` local minimisations from random starts at
λ = ``search.lam_factor`` times the threshold λ0 above which (W, U) = (0, 0) is the only
minimiser, and compares every endpoint with the global value the theory gives in the same
convention (:func:`nclab.theory.feature_collapse.regularised_risk`): Theorem 1's H(τ) for uniform
words, Theorem 2's type-III point for Zipf words (conjectured global), log K (the zero solution)
above λ0. The tolerance is derived from the optimiser's stopping rule (max |∇R| <= ``grad_tol``)
and the curvature of the risk at the theory's minimiser. ``search.contrast_d`` (0: none) repeats the starts
with a width outside Theorem G's hypothesis (d <= min(nw, KL)), reported beside it.

One unit per seed (the seed draws the starts; the problem is the same).

* :mod:`.config`: the settings (``problem``, ``search``) and their checks;
* :mod:`.presets`: the claims' presets;
* :mod:`.train`: the true risk, the theory's point, the curvature, the starts, a unit's summary.
"""

from __future__ import annotations

from ..protocol import Experiment
from .config import LandscapeConfig, check
from .presets import PRESETS, SMOKE

EXPERIMENT = Experiment(
    "fc-landscape",
    __doc__,
    LandscapeConfig,
    PRESETS,
    "no-spurious-quick",
    check,
    smoke=SMOKE,
    docs="docs/feature-collapse.md",
)

__all__ = ["EXPERIMENT", "PRESETS", "LandscapeConfig"]
