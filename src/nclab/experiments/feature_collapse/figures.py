"""Figures of the feature-collapse experiment: the paper's PCA panels (Fig. 3/4), norms vs
frequency, and training curves, drawn from a run directory (after training, or again with
``nclab report RUN_DIR``). matplotlib is imported lazily (Agg backend)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import torch

from ...models.wordnet import WordNet
from ...report.figures import Panel, curves_from_records, pca, plt, save_panels
from ...runs import RunDir
from ..protocol import UnitResult
from .config import FCConfig
from .measure import pca_panels
from .train import trained_network

COLOURS = ["darkblue", "darkred", "darkgreen", "darkorange", "purple", "teal", "olive", "brown"]


def figures(cfg: FCConfig, run: RunDir, summary: dict, units: Sequence[UnitResult]) -> list[Path]:
    """Each unit's figures in its directory (the run's own for one seed), drawn from its summary,
    its log and its trained network (``final_state.pt``): ``figures/pca.png`` (the paper's Fig. 3/4
    panels), ``figures/norms.png`` and, when it logged records, ``figures/curves.png``."""

    pyplot = plt()
    paths = []
    for u in units:
        net, task = trained_network(cfg, u.unit.seed, u.run)
        s, history = u.summary, u.history()
        paths.append(_pca_figure(pyplot, u.run.figures / "pca.png", net, task, s))
        paths.append(_norms_figure(pyplot, u.run.figures / "norms.png", net, task, s))
        if history:
            paths.append(_curves_figure(u.run.figures / "curves.png", history, s))
    return paths


def _scatter(ax, vectors: torch.Tensor, groups: torch.Tensor, title: str) -> None:
    coords, s = pca(vectors, 3)
    for a in range(min(3, int(groups.max()) + 1)):  # the first three concepts, as the paper
        sel = groups == a
        if coords.shape[1] >= 2:
            ax.scatter(
                coords[sel, 0],
                coords[sel, 1],
                s=2,
                c=COLOURS[a % len(COLOURS)],
                label=f"concept {a}",
            )
    ax.set_aspect("equal", adjustable="datalim")
    sig = ", ".join(f"σ{i + 1}={v:.3g}" for i, v in enumerate(s))
    ax.set_title(f"{title}\n{sig}", fontsize=9)
    ax.legend(fontsize=7, markerscale=4)


def _pca_figure(pyplot, path: Path, net: WordNet, task: Any, summary: dict[str, Any]) -> Path:
    """The paper's Fig. 3/4 panels: PCA of the word vectors and of the u blocks, by concept."""
    fig, axes = pyplot.subplots(1, 2, figsize=(10, 4.8))
    for ax, (title, vectors, groups) in zip(axes, pca_panels(net, task), strict=True):
        _scatter(ax, vectors, groups, title)
    fig.suptitle(
        f"{summary['network']}, {task.nc} concepts, K={task.K}: test acc "
        f"{summary['test_acc']:.1%}, {summary['collapse_type']}"
    )
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    pyplot.close(fig)
    return path


def _norms_figure(pyplot, path: Path, net: WordNet, task: Any, summary: dict[str, Any]) -> Path:
    """Embedding norm against the word's frequency rank, with the theory's norm(s)."""
    fig, ax = pyplot.subplots(1, 1, figsize=(5.5, 4))
    norms = net.W.detach().double().norm(dim=1)
    rank = task.word_rank + 1
    for a in range(min(3, task.nc)):
        sel = task.word_concept == a
        ax.scatter(rank[sel], norms[sel], s=3, c=COLOURS[a], label=f"concept {a}")
    th = summary.get("theory", {})
    if isinstance(th.get("word_norm"), float):
        label = f"{th['which']}: {th['word_norm']:.4g}"
        ax.axhline(th["word_norm"], color="k", ls="--", lw=1, label=label)
    if isinstance(th.get("word_norms"), list):
        xs = range(1, len(th["word_norms"]) + 1)
        ax.plot(xs, th["word_norms"], "k--", lw=1, label=f"{th['which']} r_β")
    ax.set_xscale("log")
    ax.set_xlabel("word rank β within its concept (1 = most frequent)")
    ax.set_ylabel("‖w_(α,β)‖")
    ax.set_title("embedding norm vs word frequency rank", fontsize=9)
    ax.legend(fontsize=7, markerscale=3)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    pyplot.close(fig)
    return path


def _curves_figure(path: Path, history: list[dict[str, Any]], summary: dict[str, Any]) -> Path:
    """Training curves: loss and test error, directional NC1, mean norms against the theory's."""

    th = summary.get("theory", {})

    def curve(key: str) -> tuple[list, list]:
        return curves_from_records(history, "epoch", key)

    panels = [
        Panel(
            "training",
            {"train loss (CE)": curve("train_ce"), "1 - test acc": _one_minus(history, "test_acc")},
            xlabel="epoch",
            logy=True,
        ),
        Panel(
            "directional NC1",
            {"words": curve("words.dir_nc1"), "u": curve("u.dir_nc1")},
            xlabel="epoch",
            logy=True,
        ),
        Panel(
            "norms",
            {"mean ‖w‖": curve("word_norm_mean"), "mean ‖u‖": curve("u_norm_mean")},
            xlabel="epoch",
            hlines=[
                (th[k], f"theory {k}")
                for k in ("word_norm", "u_norm")
                if isinstance(th.get(k), float)
            ],
        ),
    ]
    return save_panels(path, panels, suptitle=f"feature collapse: {summary['network']}")


def _one_minus(history: list[dict[str, Any]], key: str) -> tuple[list, list]:
    xs = [r["epoch"] for r in history if key in r]
    return xs, [max(1.0 - r[key], 1e-6) for r in history if key in r]
