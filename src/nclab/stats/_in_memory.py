"""``ClassStats.from_features``: the statistics of a feature matrix already in memory, in two reads.

Pass 1 (:func:`nclab._kernels.class_means`) gives the counts and means; pass 2 goes over the matrix
in chunks, each handled by one of two functions:

* :func:`_pythagoras_chunk` (``scatter="subspace"``): the chunk is centred on mu_G only (no gather)
  and |x - mu_y|^2 = |x - mu_G|^2 - |P|^2 + |P - mq[y]|^2 (Pythagoras in span(Q), which holds every
  mu_c - mu_G). That loses log2(|x - mu_G|^2 / |x - mu_y|^2) bits, so a chunk where the ratio
  exceeds :data:`CANCEL` (features near collapse) is refused, and it and the rest of the pass go to
* :func:`_explicit_chunk`: the explicit deviations x - mu_y (and the D x D scatter in ``"full"``
  mode).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import torch

from .._kernels import class_means, gram, scratch_f64, sq_norms, workspace
from ..errors import DataError
from ..validation import (
    F64,
    check_features,
    check_labels,
    infer_num_classes,
    input_eps,
)
from . import _classifier
from . import _second_pass as second

if TYPE_CHECKING:
    from ._core import ClassStatsBase, ScatterMode

CANCEL = 64.0  # from_features: most bits its Pythagoras shortcut may lose (log2 64 = 6)


def from_features(
    cls: type[ClassStatsBase],
    features: torch.Tensor,
    labels: torch.Tensor,
    num_classes: int | None,
    weights: torch.Tensor | None,
    bias: torch.Tensor | None,
    scatter: ScatterMode,
    decisions: bool,
    chunk_rows: int | None,
) -> ClassStatsBase:
    """See :meth:`ClassStats.from_features`."""
    check_features(features)
    n, d = features.shape
    if num_classes is None:
        check_labels(labels, n, None)
        num_classes = infer_num_classes(labels)
    check_labels(labels, n, num_classes)
    stats = cls(num_classes, d, device=features.device, scatter=scatter)
    if n == 0:
        return stats
    stats.eps = max(stats.eps, input_eps(features.dtype))
    w = b = None
    if weights is not None:  # recorded: collapse_metrics(stats) measures with it
        w, b = _classifier.record(stats, weights, bias, "from_features", cosines=True)
    elif bias is not None:
        raise DataError("from_features: bias given without weights")
    y = labels.to(features.device)
    rows = chunk_rows or max(64, min(n, (1 << 20) // max(d, 1)))  # ~8 MB float64 chunks
    # pass 1: counts and means (float64 sums: the means are accurate to ~eps |x|, which moves every
    # within-class quantity below only at order eps^2, since sum(x - mu) = 0)
    stats.counts, stats.means = class_means(features, y, num_classes, rows)
    if decisions:
        stats.check_nonempty()
    stats.class_ss = _second_read(stats, features, y, w, b, decisions, rows)
    if decisions and w is not None:
        stats.decision.has_classifier = True
    return stats


def _second_read(
    stats: ClassStatsBase, features, y, w, b, decisions: bool, rows: int
) -> torch.Tensor:
    """Pass 2 over ``features`` in ``rows``-row chunks: returns the per-class sums of squares and
    fills the scatter and the second pass of ``stats``."""
    fast = stats.scatter_mode == "subspace"
    ss = torch.zeros(stats.num_classes, dtype=F64, device=features.device)
    # (a float64 copy then an in-place subtraction is faster than one promoting subtraction)
    for i in range(0, features.shape[0], rows):
        yc = y[i : i + rows]
        x = features[i : i + rows].detach()
        r = scratch_f64(x, "dev")
        if fast:
            fast = _pythagoras_chunk(stats, x, yc, r, ss, w, b, decisions)
            if fast:
                continue
            r.copy_(x)
        _explicit_chunk(stats, x, yc, r, ss, w, b, decisions)
    return ss


def _pythagoras_chunk(stats: ClassStatsBase, x, y, r, ss, w, b, decisions: bool) -> bool:
    """Sums of squares and second pass of one chunk by Pythagoras in span(Q), from ``r``, a float64
    copy of ``x`` (overwritten). False, with nothing added, when that would cancel too many bits."""
    q, g, _, mq = second.frame(stats)
    r.sub_(g)
    a = sq_norms(r)
    p = r @ q
    pdev = p - mq[y]
    rr = a - sq_norms(p) + sq_norms(pdev)
    if not bool((a <= CANCEL * rr).all()):
        return False
    ss.index_add_(0, y, rr)
    second.from_projection(stats, x, y, w, b, p, pdev, decisions)
    return True


def _explicit_chunk(stats: ClassStatsBase, x, y, r, ss, w, b, decisions: bool) -> None:
    """Sums of squares, scatter and second pass of one chunk from the deviations x - mu_y, formed in
    ``r``, a float64 copy of ``x``."""
    gathered = workspace.get("gather", len(y), x.shape[1], x.device)
    r.sub_(torch.index_select(stats.means, 0, y, out=gathered))  # x - mu_y
    ss.index_add_(0, y, sq_norms(r))
    if stats.scatter is not None:
        stats.scatter += gram(r, out=workspace.get("gram", x.shape[1], x.shape[1], x.device))
    if decisions or stats.scatter_mode == "subspace":
        second.from_residuals(stats, x, y, w, b, r, decisions)
