"""The NC metrics of the two feature levels, for the network (through :class:`nclab.CollapseProbe`)
and for the extended UFM (through :meth:`nclab.ClassStats.from_features`), under the same keys.

``first`` is the extended UFM's H1 and the network's ``levels.first`` (default ``layer4.0``, the
output of the last stage's first block); ``second`` is σ(W1 H1) and the classifier's input
(``fc:input``, the average-pooled output of ``layer4.1``). Both carry NC1 and the two NC2 frames
of the features; ``second`` adds those of the classifier W and NC3 (and, for the network, the
training accuracy ``acc`` of W h + b).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import torch
from torch import nn

from ...collapse import ClassStats
from ...metrics import collapse_metrics
from ...probe import CollapseProbe

FEATURE_KEYS = ("nc1", "nc2_etf", "nc2_of")
CLASSIFIER_KEYS = ("nc2_w_etf", "nc2_w_of", "nc3", "nc3_of")
LEVELS = ("first", "second")


def _pick(metrics: Any, keys: Iterable[str]) -> dict[str, float | None]:
    """The values of ``keys`` (None where the metric is undefined, e.g. zero features)."""
    return {k: (float(metrics[k]) if k in metrics else None) for k in keys}


def network_levels(
    model: nn.Module, loader: list[tuple[torch.Tensor, torch.Tensor]], K: int, levels: Any
) -> dict[str, dict[str, float | None]]:
    """The metrics of the two levels of ``model`` on ``loader`` (eval mode, two passes).

    The classifier is the model's ``fc``: its W (and b) apply to ``levels.second`` when that is
    ``"fc:input"``.
    """
    probe = CollapseProbe(
        model, [levels.first, levels.second], K, reduce="avgpool", classifier="fc"
    )
    res = probe.run(loader, progress=False).metrics
    first, second = res[levels.first], res[levels.second]
    out = {"first": _pick(first, FEATURE_KEYS)}
    out["second"] = _pick(second, FEATURE_KEYS + CLASSIFIER_KEYS + ("acc",))
    return out


def ufm_levels(
    feats: dict[str, torch.Tensor], classifier: torch.Tensor, labels: torch.Tensor, K: int
) -> dict[str, dict[str, float | None]]:
    """The metrics of H1 (``first``) and A1 = σ(W1 H1) (``second``, with W = W2) of one extended
    UFM problem: ``feats`` maps the layer names of :meth:`nclab.models.ufm.BatchedUFM.layer_features`
    to (d, N) features of that problem."""
    out = {}
    for level, name, w in (("first", "H1", None), ("second", "A1", classifier)):
        keys = FEATURE_KEYS + (CLASSIFIER_KEYS if w is not None else ())
        stats = ClassStats.from_features(feats[name].T, labels, num_classes=K, decisions=False)
        out[level] = _pick(collapse_metrics(stats, weights=w, keys=keys), keys)
    return out
