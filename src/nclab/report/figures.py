"""Figures (matplotlib, imported only here, with the non-interactive Agg backend) and what prepares
their data (:func:`curves_from_records`, :func:`pca`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import torch

from ..validation import F64, check_2d


def plt():
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as pyplot

    return pyplot


def save_figure(fig, path: str | Path, suptitle: str = "") -> Path:
    """Title, lay out and save ``fig`` as a PNG (110 dpi, folders made), then close it; returns the
    path."""
    if suptitle:
        fig.suptitle(suptitle)
    fig.tight_layout()
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt().close(fig)
    return path


@dataclass
class Panel:
    """One subplot: ``series`` maps a label to (x, y) or to (x, y, y_std) for a ±1 std band."""

    title: str
    series: Mapping[str, tuple] = field(default_factory=dict)
    xlabel: str = ""
    ylabel: str = ""
    logy: bool = False
    logx: bool = False
    hlines: Sequence[tuple[float, str]] = ()  # (y, label) reference lines
    vlines: Sequence[tuple[float, str]] = ()
    xticks: Sequence[float] = ()  # tick positions labelled with their values (e.g. depths)


def _draw_panel(ax, p: Panel) -> None:
    """One panel: its series (with ± std bands), reference lines, scales, labels."""
    for label, s in p.series.items():
        x, y = s[0], s[1]
        pts = [(a, b) for a, b in zip(x, y, strict=True) if b is not None]
        if not pts:
            continue
        xs, ys = zip(*pts, strict=True)
        if p.logy:
            keep = [(a, b) for a, b in zip(xs, ys, strict=True) if b > 0]
            if not keep:
                continue
            xs, ys = zip(*keep, strict=True)
        (line,) = ax.plot(xs, ys, label=label, marker="." if len(xs) < 40 else None)
        if len(s) > 2 and s[2] is not None:
            sd = s[2]
            lo = [b - e for b, e in zip(y, sd, strict=True) if b is not None]
            hi = [b + e for b, e in zip(y, sd, strict=True) if b is not None]
            if p.logy:
                lo = [max(v, 1e-300) for v in lo]
            ax.fill_between(x[: len(lo)], lo, hi, alpha=0.2, color=line.get_color())
    for yv, lab in p.hlines:
        ax.axhline(yv, color="k", ls="--", lw=1, label=lab)
    for xv, lab in p.vlines:
        ax.axvline(xv, color="gray", ls=":", lw=1.2, label=lab)
    if p.logy:
        ax.set_yscale("log")
    if p.logx:
        ax.set_xscale("log")
    if p.xticks:
        from matplotlib.ticker import NullLocator

        ax.set_xticks(list(p.xticks), [f"{t:g}" for t in p.xticks])
        ax.xaxis.set_minor_locator(NullLocator())
    ax.set_title(p.title, fontsize=10)
    ax.set_xlabel(p.xlabel)
    ax.set_ylabel(p.ylabel)
    if p.series or p.hlines:
        ax.legend(fontsize=7)
    ax.grid(alpha=0.3)


def save_panels(
    path: str | Path,
    panels: Sequence[Panel],
    suptitle: str = "",
    ncols: int | None = None,
    width: float = 4.2,
    height: float = 3.3,
) -> Path:
    """Draw panels side by side (wrapping after ``ncols``) and save a PNG; returns the path."""
    import math

    pyplot = plt()
    n = len(panels)
    ncols = ncols or min(n, 4)
    nrows = math.ceil(n / ncols)
    fig, axes = pyplot.subplots(
        nrows, ncols, figsize=(width * ncols, height * nrows), squeeze=False
    )
    for ax, p in zip(axes.flat, panels, strict=False):
        _draw_panel(ax, p)
    for ax in list(axes.flat)[n:]:
        ax.axis("off")
    return save_figure(fig, path, suptitle)


def curves_from_records(records: Sequence[Mapping], x_key: str, y_key: str) -> tuple[list, list]:
    """(x, y) lists from logged records, skipping records without ``y_key`` (nested keys: 'a.b')."""
    xs, ys = [], []
    for r in records:
        v = r
        for part in y_key.split("."):
            v = v.get(part) if isinstance(v, Mapping) else None
            if v is None:
                break
        if v is not None and x_key in r:
            xs.append(r[x_key])
            ys.append(v)
    return xs, ys


def pca(vectors: torch.Tensor, k: int = 3) -> tuple[torch.Tensor, list[float]]:
    """Coordinates on the first ``k`` principal components and the singular values σ1..σk of the
    centred data (sklearn's ``singular_values_``), float64.

    >>> import torch
    >>> x = torch.tensor([[1., 0.], [-1., 0.], [0., 0.5], [0., -0.5]])
    >>> coords, s = pca(x, 2)
    >>> [round(v, 6) for v in s]
    [1.414214, 0.707107]
    """
    check_2d(vectors, "vectors", min_rows=2)
    v = vectors.detach().to(F64)
    c = v - v.mean(0)
    uu, s, _ = torch.linalg.svd(c, full_matrices=False)
    k = min(k, s.numel())
    return uu[:, :k] * s[:k], s[:k].tolist()


def heatmaps(path: str | Path, mats: Mapping[str, object], suptitle: str = "") -> Path:
    """Side-by-side heatmaps of square matrices (e.g. class-mean Gram matrices)."""
    import numpy as np

    pyplot = plt()
    n = len(mats)
    fig, axes = pyplot.subplots(1, n, figsize=(3.4 * n, 3.2), squeeze=False)
    for ax, (title, m) in zip(axes.flat, mats.items(), strict=True):
        im = ax.imshow(np.asarray(m), cmap="viridis")
        ax.set_title(title, fontsize=9)
        fig.colorbar(im, ax=ax, fraction=0.046)
    return save_figure(fig, path, suptitle)
