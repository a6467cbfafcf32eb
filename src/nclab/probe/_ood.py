"""NC5 of a probed model: the features of an out-of-distribution loader against the ID class means.

:func:`ood_statistics` streams an OOD loader through the probe's hooks (its labels are ignored: every
sample counts as one class) and keeps one :class:`~nclab.ClassStats` per layer, whose sample
mean is the OOD global mean; :func:`nc5_per_layer` compares it with each layer's in-distribution
class means (:func:`nclab.metrics.views.nc5`, Ammar et al. 2024).
"""

from __future__ import annotations

from collections.abc import Iterable

import torch

from ..collapse import ClassStats
from ..errors import DataError
from ..metrics.views import nc5
from ..progress import track
from . import _guards as guards


def ood_statistics(
    probe, loader: Iterable, device=None, max_batches: int | None = None, progress: bool = True
) -> dict[str, ClassStats]:
    """{layer: statistics (one class) of its features over the OOD ``loader``}."""
    out: dict[str, ClassStats] = {}
    probe._attach()
    try:
        with guards.Modes(probe.model, probe.eval_mode), torch.no_grad():
            for i, batch in enumerate(track(loader, "probe: OOD features", enabled=progress)):
                if max_batches is not None and i >= max_batches:
                    break
                for tap, x, _ in probe._features(batch, None, i, device):
                    s = out.setdefault(tap.name, ClassStats(1, x.shape[1], scatter="none"))
                    s.update(x, torch.zeros(x.shape[0], dtype=torch.long, device=x.device))
    finally:
        probe._detach()
    if not out:
        raise DataError("the OOD loader yielded no batches")
    return out


def nc5_per_layer(probe, loader: Iterable, centre: bool = False, **kwargs) -> dict[str, float]:
    """{layer: NC5} for a probe whose :meth:`run` is done (its class means are the ID ones)."""
    ood = ood_statistics(probe, loader, **kwargs)
    res = {}
    for tap in probe.taps:
        if tap.stats is None:
            raise DataError(f"layer {tap.name!r} has no in-distribution statistics: run() first")
        res[tap.name] = nc5(tap.stats, ood[tap.name], centre=centre)
    return res
