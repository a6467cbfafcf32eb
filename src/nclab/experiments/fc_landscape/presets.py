"""Presets of the fc-landscape experiment (the paper runs none: its statements are theorems).

* ``no-spurious``: Theorem G (App. H) with Theorem 1's value: uniform words, d > nw, λ at 0.3 λ0
  (the paper's λ / λ0 at its Fig. 3 size is 0.28), with the contrast d = 2 <= min(nw, KL).
* ``thm2-zero`` / ``thm2-nonzero``: §3.1 after Theorem 2, Zipf words (sc = 3), λ at 1.2 and 0.8
  times Theorem 2's bound (which is the exact threshold λ0 for K = nc^L, see the docs).

``-quick``: nc = 3, L = 3 (K = 27); the full presets: nc = 3, L = 4 (K = 81) with more starts.
"""

from __future__ import annotations

from typing import Any

from ..protocol import Smoke

_SMALL = {"problem.nc": 3, "problem.L": 3}
_LARGER = {"problem.nc": 3, "problem.L": 4}
_UNIFORM = {"problem.sc": 2, "problem.freq": "uniform", "search.d": 8, "search.lam_factor": 0.3}
_ZIPF = {
    "problem.sc": 3,
    "problem.freq": "zipf",
    "search.d": 10,
    "search.contrast_d": 0,
    "search.starts": 10,
}

PRESETS: dict[str, dict[str, Any]] = {
    "no-spurious-quick": {**_SMALL, **_UNIFORM, "search.starts": 20, "search.contrast_starts": 20},
    "no-spurious": {**_LARGER, **_UNIFORM, "search.starts": 50, "search.contrast_starts": 50},
    "thm2-zero-quick": {**_SMALL, **_ZIPF, "search.lam_factor": 1.2},
    "thm2-nonzero-quick": {**_SMALL, **_ZIPF, "search.lam_factor": 0.8},
    "thm2-zero": {**_LARGER, **_ZIPF, "search.lam_factor": 1.2, "search.starts": 30},
    "thm2-nonzero": {**_LARGER, **_ZIPF, "search.lam_factor": 0.8, "search.starts": 30},
}
PRESETS = {name: {"threads": 1, **over} for name, over in PRESETS.items()}


#: the smoke rung (what the tests run): training cut short, the summary's structure kept
SMOKE = Smoke({"search.starts": 2, "search.contrast_starts": 2})
