"""Feature Collapse's appendix computed: the lemmas of Apps. C-G evaluated on the enumerated true
risk (every sentence of all K = nc^L latent variables with its probability) and on the presets'
latent sets, each against what it states (written since issue 50).

``nclab run fc-lemmas --preset lemmas-quick`` evaluates: Lemma B's properties of the latent
set and assumption B (Lemma C for K = nc^L, App. C.2's "typically satisfied even for small K" on
the presets' and small random sets); Theorem D and Lemmas D-E (the sharp lower bound on R0) at
random points of N and at type-I points; Lemma F / Claim A's bilinear problem; Lemmas I and P
(collapse configurations are equimargin and in N); Lemmas K and R (the closed-form risks (91),
(123)); Proposition C (the gradient at type-III configurations); Proposition D (one solution of
(7)-(8) from many starts); and, from random starts of L-BFGS on the true risks of h and h*,
Lemmas G, N (minimisers in N), H, O (in E) and Propositions A, B (in Ω^I_c, Ω^II_c).

One unit per seed (the seed draws the random points and starts; the problem is the same).

* :mod:`.config`: the settings and their checks; :mod:`.presets`: the claims' presets;
* :mod:`.compute`: the lemmas' quantities; :mod:`.train`: a unit's summary.
"""

from __future__ import annotations

from ..protocol import Experiment, Smoke
from .config import LemmasConfig, check
from .presets import PRESETS

EXPERIMENT = Experiment(
    "fc-lemmas",
    __doc__,
    LemmasConfig,
    PRESETS,
    "lemmas-quick",
    check,
    # fewer samples, starts and latent sets: the same computations and summary
    smoke=Smoke(
        {
            "points.samples": 4,
            "system.starts": 6,
            "latents.presets": ["k50"],
            "latents.small_k": [4, 6, 10],
            "latents.draws": 2,
            "minimise.starts": 1,
        }
    ),
    docs="docs/feature-collapse.md",
)

__all__ = ["EXPERIMENT", "PRESETS", "LemmasConfig"]
