"""Presets of the fc-lemmas experiment (the paper runs none: its statements are lemmas).

``lemmas-quick``: nc = 3, L = 3 (K = 27), 2 uniform or 3 Zipf words per concept, d = 8;
``lemmas``: the same lemmas at L = 4 (K = 81), more points, starts and small latent sets.
"""

from __future__ import annotations

from typing import Any

PRESETS: dict[str, dict[str, Any]] = {
    "lemmas-quick": {},
    "lemmas": {
        "problem.L": 4,
        "problem.d": 6,
        "points.samples": 40,
        "system.starts": 200,
        "latents.draws": 50,
        "minimise.starts": 6,
    },
}
PRESETS = {name: {"threads": 1, **over} for name, over in PRESETS.items()}
