"""``ClassStats.from_features``: the statistics of a feature matrix already in memory, in two reads.

Pass 1 (:func:`nclab._kernels.class_means`) gives the counts and means; pass 2 goes over the matrix
in cache-sized chunks, dealt to torch's threads, each chunk handled by one of two functions:

* :func:`_pythagoras_chunk` (``scatter="subspace"``): the chunk is centred on mu_G only (no gather)
  and |x - mu_y|^2 = |x - mu_G|^2 - |P|^2 + |P - mq[y]|^2 (Pythagoras in span(Q), which holds every
  mu_c - mu_G). That loses log2(|x - mu_G|^2 / |x - mu_y|^2) bits, so a chunk where the ratio
  exceeds :data:`CANCEL` (features near collapse) is refused, and it and the rest of its thread's
  chunks go to
* :func:`_explicit_chunk`: the explicit deviations x - mu_y (and the D x D scatter in ``"full"``
  mode).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import torch

from .._kernels import block_rows, class_means, gram, scratch_f64, sq_norms, workspace
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
    # chunks of cache size on CPU (:func:`block_rows`), of ~8 MB of float64 elsewhere
    dev = features.device
    rows = chunk_rows or (
        block_rows(d, dev) if dev.type == "cpu" else max(64, min(n, (1 << 20) // max(d, 1)))
    )
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
    """Pass 2 over ``features`` in ``rows``-row chunks, dealt to threads (:func:`second.run`):
    returns the per-class sums of squares and fills the scatter and the second pass of ``stats``.
    Each thread goes by Pythagoras until a chunk of its own refuses, then explicitly."""
    pythagoras = stats.scatter_mode == "subspace"
    pl = second.plan(stats, w, b) if (decisions or pythagoras) else None
    dev, k = features.device, stats.num_classes
    ss = torch.zeros(k, dtype=F64, device=dev)
    full = stats.scatter

    def body(acc, i: int, j: int) -> None:
        yc = y[i:j]
        x = features[i:j].detach()
        # (a float64 copy then an in-place subtraction is faster than one promoting subtraction)
        r = scratch_f64(x, "dev")
        clf = None
        if decisions and w is not None:  # the classifier sees the features, not centred
            x32 = x if x.dtype == torch.float32 else None
            clf = pl.clf.sums(r, yc, x32, torch.linalg.vector_norm(r, dim=1))
        if acc.fast:
            acc.fast = _pythagoras_chunk(acc, pl, yc, r, clf, decisions)
            if acc.fast:
                return
            r.copy_(x)
        _explicit_chunk(stats, acc, pl, yc, r, clf, decisions)

    accs = second.run(
        stats,
        features.shape[0],
        rows,
        body,
        dev,
        decisions,
        min_rows=max(k, full.shape[0] if full is not None else 0),  # per-thread accumulators
        ss=lambda t: ss if t == 0 else torch.zeros_like(ss),
        fast=lambda t: pythagoras,
        full=lambda t: full if t == 0 or full is None else torch.zeros_like(full),
    )
    for acc in accs[1:]:  # in thread order
        ss += acc.ss
        if full is not None:
            full += acc.full
    return ss


def _pythagoras_chunk(acc, pl, y, r, clf, decisions: bool) -> bool:
    """Sums of squares and second pass of one chunk by Pythagoras in span(Q), from ``r``, a float64
    copy of the chunk (overwritten). False, with nothing added, when that would cancel too many
    bits."""
    dev = r.device
    r.sub_(pl.g)
    a = sq_norms(r)
    p = torch.mm(r, pl.q, out=workspace.get("p", len(y), pl.q.shape[1], dev))
    p2 = sq_norms(p)
    mq_rows = torch.index_select(
        pl.mq, 0, y, out=workspace.get("mq_rows", len(y), pl.mq.shape[1], dev)
    )
    pdev = torch.sub(p, mq_rows, out=mq_rows)
    rr = a - p2 + sq_norms(pdev)
    if not bool((a <= CANCEL * rr).all()):
        return False
    acc.ss.index_add_(0, y, rr)
    second.record(acc, pl, y, p, p2.sqrt_(), pdev, clf, decisions)
    return True


def _explicit_chunk(stats: ClassStatsBase, acc, pl, y, r, clf, decisions: bool) -> None:
    """Sums of squares, scatter and second pass of one chunk from the deviations x - mu_y, formed in
    ``r``, a float64 copy of the chunk."""
    dev, d = r.device, r.shape[1]
    gathered = workspace.get("gather", len(y), d, dev)
    r.sub_(torch.index_select(stats.means, 0, y, out=gathered))  # x - mu_y
    acc.ss.index_add_(0, y, sq_norms(r))
    if acc.full is not None:
        acc.full += gram(r, out=workspace.get("gram", d, d, dev))
    if decisions or stats.scatter_mode == "subspace":
        # (x - mu_G) Q = r Q + ((mu - mu_G) Q)[y]
        pdev = torch.mm(r, pl.q, out=workspace.get("pdev", len(y), pl.q.shape[1], dev))
        p = pn = None
        if decisions:
            mq_rows = workspace.get("mq_rows", len(y), pl.mq.shape[1], dev)
            p = torch.add(pdev, torch.index_select(pl.mq, 0, y, out=mq_rows), out=mq_rows)
            pn = torch.linalg.vector_norm(p, dim=1)
        second.record(acc, pl, y, p, pn, pdev, clf, decisions)
