"""The transformer experiments' figure: PCA of the word embeddings (before positional embeddings)
of the untrained and the trained network, coloured by concept (the paper's Fig. 8), drawn from
each unit's ``figure_data.pt``."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch

from ...runs import RunDir
from ..common.latent import pca_figure
from ..protocol import UnitResult
from .config import TransformerConfig
from .train import FIGURE_DATA


def figures(
    cfg: TransformerConfig, run: RunDir, summary: dict[str, Any], units: Sequence[UnitResult]
) -> list[str]:
    """``figures/pca.png`` of each unit, in its directory (the run's own for one seed)."""
    paths = []
    for u in units:
        data = torch.load(u.run.path / FIGURE_DATA)
        concept = data["concept"]
        paths.append(
            pca_figure(
                u.run.figures / "pca.png",
                [
                    ("untrained word embeddings", data["untrained"], concept),
                    ("trained word embeddings", data["trained"], concept),
                ],
                title=f"{cfg.figure or cfg.task}: word embeddings (before positions) by concept, "
                f"{u.summary['collapse_type']}",
            )
        )
    return paths
