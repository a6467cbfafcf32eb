"""What both ways of measuring share, :meth:`CollapseProbe.run` (the probe reads the loader) and
:class:`~nclab.probe.ProbeSession` (a training framework runs the forward passes): the first pass of
one batch's features, the merge over ranks, the second pass from cached features, and the
classifier recorded on its input's statistics.

Every function takes the probe and works on its taps; the order in which batches reach ``update``
and ``decision_pass`` is the same on both routes, so they give the same numbers bit for bit.
"""

from __future__ import annotations

import torch

from .._kernels import classifier_sums, scratch_f64
from ..collapse import ClassStats
from ..progress import track
from . import _guards as guards
from ._cache import FeatureCache


def new_stats(probe, feats: list[tuple], scatter: str, why: str) -> None:
    """Statistics for the taps that have none yet (D from their first features), within the
    memory limit of a full scatter."""
    new = [(t, x) for t, x, _ in feats if t.stats is None]
    if scatter == "full":
        dims = {t.name: x.shape[1] for t, x in new}
        guards.check_scatter_memory(dims, probe.max_scatter_bytes, guards.SCATTER_ADVICE[why])
    for t, x in new:
        t.stats = ClassStats(probe.num_classes, x.shape[1], device=x.device, scatter=scatter)


def first_pass(probe, feats: list[tuple], index: int, scatter: str, why: str) -> None:
    """Add one batch's features to every tap's statistics."""
    new_stats(probe, feats, scatter, why)
    for tap, x, y in feats:
        with guards.naming(tap, index):
            tap.stats.update(x, y)


def classifier_params(probe):
    """W, b of the classifier (after dropped classes: the rows of the classes kept)."""
    if probe._clf is None:
        return None, None
    b = getattr(probe._clf, "bias", None)
    b = b.detach() if isinstance(b, torch.Tensor) else None
    return probe.classes.rows(probe._clf.weight.detach(), b)


def classify_first_pass(probe, feats: list[tuple]) -> None:
    """Without a second pass: ``nc3_cos`` and ``acc`` of the classifier input, which need each
    sample and W (not the final class means), accumulated in float64 during the first pass."""
    w, b = classifier_params(probe)
    for tap, feat, labels in feats:
        if w is None or not tap.is_classifier:
            continue
        x = scratch_f64(feat)
        y = labels.to(x.device)
        b64 = b.to(x.device, torch.float64) if b is not None else None
        cos_sum, correct, zeros, _ = classifier_sums(x, y, w.to(x.device, torch.float64), b64)
        part = torch.tensor([cos_sum, correct, len(y), zeros], dtype=torch.float64, device=x.device)
        tap.clf_sums = part if tap.clf_sums is None else tap.clf_sums + part


def decide(probe, feats: list[tuple], index: int, check: guards.PassCheck | None) -> None:
    """The second pass of one batch's features (the classifier's W, b on its input tap)."""
    w, b = classifier_params(probe)
    for tap, x, y in feats:
        y = probe.classes.renumber(y, index)
        with guards.naming(tap, index):
            clf = tap.is_classifier
            tap.stats.decision_pass(x, y, w if clf else None, b if clf else None)
        if check is not None and check.name == tap.name:
            check.add(tap.stats, x, y)


def merge_first_pass(probe, distributed: bool) -> None:
    """After the first pass: the statistics merged over the ranks, the classes settled."""
    if distributed:
        for tap in probe.taps:
            tap.stats.all_reduce()
            if tap.clf_sums is not None:
                guards.all_reduce_sum(tap.clf_sums)
    probe.classes.settle(probe.taps)


def cached_second_pass(
    probe, cache: FeatureCache, distributed: bool, progress: bool = False
) -> None:
    """The second pass over the features kept in memory (or spilled to disk), then merged over
    the ranks; ``probe.cached``: the bytes the cache held in memory and in its spill file."""
    probe.cached = {"memory_bytes": cache.nbytes, "spilled_bytes": cache.spilled}
    batches = track(cache.read(), "probe: decisions (cached)", len(cache.batches), progress)
    for i, feats in enumerate(batches):
        decide(probe, feats, i, None)
    cache.clear()
    if distributed:
        for tap in probe.taps:
            tap.stats.all_reduce_second_pass()


def record_classifier(probe) -> None:
    """The classifier's W, b recorded on its input tap's statistics (the second pass already
    did; without it, here), so that ``result.stats[layer].compute()`` gives the same metrics."""
    w, b = classifier_params(probe)
    for tap in probe.taps:
        if w is not None and tap.is_classifier and tap.stats.weights is None:
            tap.stats.set_classifier(w, b)
