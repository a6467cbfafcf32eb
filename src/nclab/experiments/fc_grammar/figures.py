"""The grammar experiment's figures (the paper's Fig. 11): PCA of each level's segment
representations coloured by the latent symbol that generated them (the first three symbols), of
the trained and of the untrained network, drawn from each unit's ``figure_data.pt``."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch

from ...runs import RunDir
from ..common.latent import pca_figure
from ..protocol import UnitResult
from .config import GrammarConfig
from .train import FIGURE_DATA


def figures(
    cfg: GrammarConfig, run: RunDir, summary: dict[str, Any], units: Sequence[UnitResult]
) -> list[str]:
    """``figures/pca_trained.png`` and ``figures/pca_untrained.png`` of each unit, in its
    directory (the run's own for one seed)."""
    paths = []
    for u in units:
        levels = torch.load(u.run.path / FIGURE_DATA)["levels"]
        for name in ("trained", "untrained"):
            panels = [(f"level {r['level']} ({r['symbol']})", r[name], r["labels"]) for r in levels]
            title = (
                f"{cfg.figure}: {name} network, representations by latent symbol (first 3 symbols)"
            )
            paths.append(pca_figure(u.run.figures / f"pca_{name}.png", panels, title=title))
    return paths
