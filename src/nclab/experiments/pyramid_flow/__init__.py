"""Theorem 4.4 of Jacot et al. (ICLR 2025) on a network that meets its hypotheses: the gradient
flow of the λ-regularised square loss, run to the time (10) gives, and NC1 there as ε1 shrinks.

``nclab run pyramid-flow --preset thm44-quick`` draws a Gaussian mixture (unit inputs, so b = 1)
and a network of Assumption 4.1 (n1 >= N, pyramidal after), L1 = 2 layers of the smooth activation
(7) (closed form, :mod:`.activation`) and L2 >= 2 linear ones, initialised to meet Assumption 4.3
(9) (a small second layer, the others large), all in float64. It computes (8)-(10) at θ0
(:mod:`nclab.theory.jacot_flow`, also ``nclab theory jacot-flow``): λ at (10)'s bound for each ε1
of ``sweep.eps1`` (ε2 = ``eps2_per_eps1_sq`` ε1²), (10)'s step η and step count k (astronomical:
η ~ 1e-38, k ~ 1e45 at the quick size), and their product's
limit t* as η → 0, the time of the gradient flow that GD at (10)'s step follows. The flow to t* is
stiff (GD at a stable step would need ~1e13 steps), so a stiff solver integrates it
(:mod:`.train`), checked by a tighter solve and against GD at η and η/2 over a short time. At t*
it measures NC1(Z_(L-1)) (tr Σ_W / tr Σ_B), the interpolation error against (25)'s √2 ε1, the
linear layers' imbalance against ε2, the norms against r (12), and bound (11).

One unit per seed (the seed draws the data and θ0).

* :mod:`.config`: the settings and their checks (Assumptions 4.1-4.2, the range of ε1);
* :mod:`.presets`: the claim's presets;
* :mod:`.activation`: (7) in closed form;
* :mod:`.train`: the network, θ0, its constants (8)-(9), the flow, a unit's summary.
"""

from __future__ import annotations

from ..protocol import Experiment
from .config import PyramidFlowConfig, check
from .presets import PRESETS, SMOKE

EXPERIMENT = Experiment(
    "pyramid-flow",
    __doc__,
    PyramidFlowConfig,
    PRESETS,
    "thm44-quick",
    check,
    smoke=SMOKE,
    docs="docs/linear-head.md",
)

__all__ = ["EXPERIMENT", "PRESETS", "PyramidFlowConfig"]
