"""What the feature-collapse appendix experiments share: PCA panels of representations coloured by
the latent symbol that generated them (the paper's Fig. 8 and Fig. 11), the first three symbols
only, as the paper. matplotlib is imported lazily (Agg backend)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import torch

from ...report.figures import pca, plt

COLOURS = ["darkblue", "darkred", "darkgreen", "darkorange", "purple", "teal"]


def panel_points(
    vectors: torch.Tensor, labels: torch.Tensor, shown: int = 3, max_points: int = 6000
) -> tuple[torch.Tensor, torch.Tensor]:
    """The points a PCA panel of ``vectors`` (n, D) labelled ``labels`` (n,) draws: those whose
    label is among the first ``shown``, at most ``max_points`` of them, evenly spaced (what a unit
    saves for its figures; again applied, it changes nothing)."""
    keep = labels < shown
    v, y = vectors.detach()[keep], labels[keep]
    if v.shape[0] > max_points:  # deterministic thinning
        idx = torch.linspace(0, v.shape[0] - 1, max_points).long()
        v, y = v[idx], y[idx]
    return v, y


def pca_figure(
    path: Path,
    panels: Sequence[tuple[str, torch.Tensor, torch.Tensor]],
    title: str = "",
    shown: int = 3,
    max_points: int = 6000,
) -> str:
    """Save one row of PCA scatter plots, one per ``(title, vectors (n, D), labels (n,))``, of the
    items whose label is among the first ``shown`` labels (:func:`panel_points`); returns the
    path."""

    pyplot = plt()
    fig, axes = pyplot.subplots(1, len(panels), figsize=(4.6 * len(panels), 4.4), squeeze=False)
    for ax, (name, vectors, labels) in zip(axes[0], panels, strict=True):
        v, y = panel_points(vectors, labels, shown, max_points)
        v = v.double()
        if v.shape[0] >= 2:
            coords, s = pca(v, 3)
            for a in range(shown):
                sel = y == a
                if coords.shape[1] >= 2 and bool(sel.any()):
                    ax.scatter(coords[sel, 0], coords[sel, 1], s=3, c=COLOURS[a % 6], label=str(a))
            sig = ", ".join(f"σ{i + 1}={x:.3g}" for i, x in enumerate(s))
            ax.set_title(f"{name}\n{sig}", fontsize=9)
            ax.legend(fontsize=7, markerscale=3)
        ax.set_aspect("equal", adjustable="datalim")
    if title:
        fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    pyplot.close(fig)
    return str(path)


#: the per-level / per-layer measures every record keeps (the rest goes to the summary)
KEEP = ("nc1_trace", "dir_nc1", "nc1", "etf", "offset", "equinorm", "norm_cv", "collapse_type")


def brief(m: dict) -> dict:
    """The kept measures of a :func:`~nclab.collapse.latent.latent_collapse` result."""
    return {k: m.get(k) for k in KEEP}
