"""Presets of the pyramid-flow experiment (the paper runs none: Theorem 4.4 is proved, not run).

* ``thm44-quick``: N = 9 (K = 3, 3 per class) in d = 12, widths 12, 6, 4, 3 (L1 = 2 nonlinear,
  L2 = 2 linear), γ = 1/2, β = 2, ε1 in {0.5, 0.25, 0.125}: minutes on one core for 3 seeds.
* ``thm44``: N = 16 (K = 4, 4 per class) in d = 20, widths 20, 8, 6, 4, ε1 from 0.5 down to
  1/32 (five halvings), tolerances 10x tighter.
"""

from __future__ import annotations

from typing import Any

from ..protocol import Smoke

PRESETS: dict[str, dict[str, Any]] = {
    "thm44-quick": {},
    "thm44": {
        "data.num_classes": 4,
        "data.samples_per_class": 4,
        "data.dim": 20,
        "model.widths": [20, 8, 6],
        "sweep.eps1": [0.5, 0.25, 0.125, 0.0625, 0.03125],
        "solve.rtol": 1e-9,
        "solve.atol": 1e-11,
    },
}
PRESETS = {name: {"threads": 1, **over} for name, over in PRESETS.items()}


#: the smoke rung (what the tests run): training cut short, the summary's structure kept
# three larger eps1 (shorter flows) at looser tolerances: the same summary (three, as the
# phase-1 time's local exponent needs two intervals of log(1/lambda))
SMOKE = Smoke(
    {
        "sweep.eps1": [0.5, 0.42, 0.35],
        "solve.rtol": 1e-6,
        "solve.atol": 1e-8,
        "solve.gd_steps": 50,
    }
)
