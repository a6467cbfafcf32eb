"""What ``nclab measure`` reports: the canonical metrics and the extra ones, from statistics."""

from __future__ import annotations

from typing import Any

import torch

from ..collapse import ClassStats
from ..errors import DegenerateError
from ..metrics import collapse_metrics, nc3_wh
from ..metrics.uniformity import gnc2
from ..metrics.variability import cdnv_per_class
from ..metrics.views import classifier_global_mean, duality_cosines, mean_norms, unc3

#: why a metric is missing without a classifier, in the API's terms and in the command line's
NO_CLASSIFIER = {
    "api": "{key} needs the classifier: pass weights= (K x D) and bias= (K) with the features",
    "cli": "{key} needs the classifier: add `weights` (K x D) and `bias` (K) arrays to the feature "
    "file or the shards",
}


def report(stats: ClassStats, weights, bias, global_mean: str = "class") -> dict[str, Any]:
    """{"metrics": the canonical metrics and the extra ones (``nc3_wh``, ``gnc2``, ``unc3``,
    ``logits_global_mean`` = ||W mu_G + b||), "skipped": why a key is missing, "notes": the caveat
    of a key computed where it means little (``nc1`` when rank(Sigma_B) < K - 1), sizes}."""
    m = collapse_metrics(stats, weights, bias, global_mean=global_mean)
    metrics, skipped = dict(m), dict(m.skipped)
    if weights is None:  # ClassStats' advice (set_classifier, ...) is not what a caller here does
        for key, why in skipped.items():
            if "needs the classifier" in why:
                skipped[key] = NO_CLASSIFIER["api"].format(key=key)
    extra = {"gnc2": lambda: gnc2(stats, global_mean)}
    if weights is not None:
        extra.update(
            nc3_wh=lambda: nc3_wh(stats, weights, global_mean),
            unc3=lambda: unc3(stats, weights, global_mean),
            logits_global_mean=lambda: classifier_global_mean(stats, weights, bias),
        )
    for key, fn in extra.items():
        try:
            metrics[key] = fn()
        except DegenerateError as exc:
            skipped[key] = str(exc)
    out: dict[str, Any] = {"metrics": metrics, "num_classes": stats.num_classes, "dim": stats.dim}
    if skipped:
        out["skipped"] = skipped
    if m.notes:
        out["notes"] = dict(m.notes)
    return out


def renumber(dropped: list[int], num_classes: int, labels, weights, bias):
    """Labels, classifier rows and bias restricted to the kept classes, renumbered in order (as
    ``ClassStats.drop_empty`` renumbers the statistics)."""
    if not dropped:
        return labels, weights, bias
    keep, remap = kept_classes(dropped, num_classes)
    weights = weights[keep] if weights is not None else None
    bias = bias[keep] if bias is not None else None
    return remap[labels], weights, bias


def kept_classes(dropped: list[int], num_classes: int) -> tuple[torch.Tensor, torch.Tensor]:
    """(mask of the kept classes, map from old to new class numbers) after dropping ``dropped``."""
    keep = torch.ones(num_classes, dtype=torch.bool)
    keep[dropped] = False
    return keep, torch.cumsum(keep.long(), 0) - 1


def per_class_views(stats: ClassStats, weights, views) -> dict[str, list]:
    """The per-class views for plots (``--per-class``): {name: K values}; a view that is undefined
    for these statistics is left out."""
    out: dict[str, list] = {}
    fns = {
        "mean_norm": lambda: mean_norms(stats),
        "cdnv": lambda: cdnv_per_class(stats),
    }
    if weights is not None:
        fns["duality_cos"] = lambda: duality_cosines(stats, weights)
    for key, fn in fns.items():
        try:
            out[key] = fn().tolist()
        except DegenerateError:
            continue
    if views is not None:
        out.update({k: v.tolist() for k, v in views.per_class().items()})
    return out


def cli_terms(skipped: dict[str, str]) -> dict[str, str]:
    """The reasons of ``skipped`` as the command line says them (arrays in the files, not
    arguments).

    >>> cli_terms({"nc3": NO_CLASSIFIER["api"].format(key="nc3")})["nc3"]
    'nc3 needs the classifier: add `weights` (K x D) and `bias` (K) arrays to the feature file or the shards'
    """
    api = {NO_CLASSIFIER["api"].format(key=k): k for k in skipped}
    return {
        k: NO_CLASSIFIER["cli"].format(key=api[why]) if why in api else why
        for k, why in skipped.items()
    }
