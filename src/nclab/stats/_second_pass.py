"""The second pass of :class:`~nclab.ClassStats`: what needs each sample *and* the final means.

It accumulates the nearest-class-centre decisions (``ncc_acc``), with a classifier ``nc3_cos``,
``nc4`` and ``acc`` (:class:`DecisionStats`), and in ``scatter="subspace"`` mode the within-class
scatter projected on the span of the class means.

Everything is computed from P = (x - mu_G) Q, with mu_G the mean of the class means and Q an
orthonormal basis of their span: subtracting mu_G removes any common offset before the product (near
collapse the deviations stay accurate to ~eps times the spread of the means), and since every
mu_c - mu_G lies in span(Q), the nearest-centre scores (x - mu_G).(mu_c - mu_G) = P (Q^T (mu_c - mu_G))
and the projected deviations (x - mu_y) Q = P - ((mu - mu_G) Q)[y] both come from this one
N x D x K product.

What every batch of a pass shares — the frame, ||mu_c - mu_G||^2, the float32 copies of the
searches — is prepared once (:class:`Plan`, cached on the statistics). A batch is gone through in
cache-sized blocks of rows (:func:`nclab._kernels.block_rows`), dealt to torch's threads
(:func:`run`): each block is converted to float64 once, in a reused buffer; its row norms serve the
cosines, the finiteness check and the rounding bounds of the float32 searches. :func:`from_batch`
takes raw features, as :meth:`ClassStats.decision_pass` gets them; ``from_features``
(:mod:`._in_memory`) forms P itself and hands each block to :func:`record`. Each thread accumulates
the projected scatter on its upper block triangle (half the work); :func:`run` adds the threads'
sums in order and mirrors it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

import torch

from .._kernels import (
    Classifier,
    ColumnSearch,
    add_gram_upper,
    block_rows,
    mirror_upper,
    nearest_centre,
    scratch_f64,
    span_basis,
    workspace,
)
from ..errors import DataError
from ..threads import map_blocks
from ..validation import F64, check_finite

if TYPE_CHECKING:
    from ._core import ClassStatsBase


@dataclass
class DecisionStats:
    """Sums from the second pass: ``nc3_cos`` = cos_sum / n (undefined when a feature is exactly
    zero), ``nc4`` = mismatch / n, ``ncc_acc`` = ncc_correct / n, ``acc`` = clf_correct / n."""

    n: int = 0
    ncc_correct: int = 0
    cos_sum: float = 0.0
    mismatch: int = 0
    clf_correct: int = 0
    zero_features: int = 0  # features exactly zero: their cosine with w is undefined
    has_classifier: bool = False
    tensor_fields: ClassVar[tuple[str, ...]] = (
        "n",
        "ncc_correct",
        "cos_sum",
        "mismatch",
        "clf_correct",
        "zero_features",
    )

    def as_tensor(self, device) -> torch.Tensor:
        return torch.tensor(
            [float(getattr(self, f)) for f in self.tensor_fields], dtype=F64, device=device
        )

    def load_tensor(self, t: torch.Tensor) -> None:
        for f, v in zip(self.tensor_fields, t.tolist(), strict=True):
            setattr(self, f, v if f == "cos_sum" else int(round(v)))

    def metrics(self) -> dict[str, float]:
        if self.n == 0:
            return {}
        out = {"ncc_acc": self.ncc_correct / self.n}
        if self.has_classifier:
            out.update(nc4=self.mismatch / self.n, acc=self.clf_correct / self.n)
            if not self.zero_features:
                out["nc3_cos"] = self.cos_sum / self.n
        return out


def frame(stats: ClassStatsBase) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """(Q, mu_G, mu - mu_G, (mu - mu_G) Q), fixed for the whole second pass (cached on ``stats``)."""
    if stats.basis is None or stats._frame is None:
        g, mc, u, sv = stats.centred_svd()
        if stats.basis is None:  # the centred means span every difference of class means
            stats.basis = span_basis(mc, (u, sv))
        stats._frame = (g, mc, mc @ stats.basis)
    return (stats.basis, *stats._frame)


class Plan:
    """What every batch of one second pass shares, prepared once: the frame (Q, mu_G,
    M = mu - mu_G, M Q), ||mu_c - mu_G||^2, the nearest-centre search on M Q and the classifier
    (float32 copies for the searches, row norms for the cosines)."""

    def __init__(self, stats: ClassStatsBase, w, b) -> None:
        self.q, self.g, self.mc, self.mq = frame(stats)
        self.sq = (self.mc * self.mc).sum(1)
        self.centres = ColumnSearch(self.mq, self.sq, -2.0, largest=False)
        self.w, self.b = w, b
        self.clf = Classifier(w, b) if w is not None else None


def plan(stats: ClassStatsBase, w, b) -> Plan:
    """The :class:`Plan` of the second pass of ``stats`` with the classifier ``w``, ``b`` (cached
    on the statistics until their means change; the recorded classifier is the same object for
    every batch)."""
    p = stats._plan
    if p is None or p.w is not w or p.b is not b or p.q is not frame(stats)[0]:
        p = stats._plan = Plan(stats, w, b)
    return p


def from_batch(stats: ClassStatsBase, x, y, w, b) -> None:
    """Raw features ``x`` (any float dtype, trusted shape) with the classifier ``w``, ``b``
    (float64) or None: every product is float64, but for the float32 decision searches."""
    pl = plan(stats, w, b)
    n, d = x.shape

    def body(acc: Sums, i: int, j: int) -> None:
        xb, yb = x[i:j], y[i:j]
        xa = scratch_f64(xb)
        clf = None
        if pl.clf is not None:  # the classifier sees the features themselves, not centred
            xn = torch.linalg.vector_norm(xa, dim=1)
            _finite(xn, xb)
            clf = pl.clf.sums(xa, yb, xb if xb.dtype == torch.float32 else None, xn)
        p = torch.mm(xa.sub_(pl.g), pl.q, out=workspace.get("p", j - i, pl.q.shape[1], x.device))
        pn = torch.linalg.vector_norm(p, dim=1)
        if pl.clf is None:
            _finite(pn, xb)  # a NaN or Inf entry of x reaches its row of P
        record(acc, pl, yb, p, pn, None, clf)

    run(stats, n, block_rows(d, x.device), body, x.device)


def run(
    stats: ClassStatsBase,
    n: int,
    rows: int,
    body,
    device,
    decisions: bool = True,
    min_rows: int = 0,
    **extra,
):
    """Run ``body(sums, i, j)`` over the row blocks of a batch of ``n`` samples, dealt to threads
    (:func:`nclab.threads.map_blocks`; ``min_rows``: at least so many rows per thread), then add
    every thread's :class:`Sums` to ``stats`` in thread order and return them; ``extra``: further
    accumulators of :class:`Sums` (name: make(thread)), which the caller adds up."""
    scatter = stats.scatter_mode == "subspace" and stats.pass2_count < stats.num_samples
    if scatter and stats.basis_scatter is None:
        r = stats.basis.shape[1]
        stats.basis_scatter = torch.zeros(r, r, dtype=F64, device=device)
    r = stats.basis.shape[1] if stats.basis is not None else 0

    def make(t: int) -> Sums:
        acc = Sums()
        if scatter:  # thread 0 adds into the statistics' own matrix
            acc.scatter = stats.basis_scatter if t == 0 else torch.zeros_like(stats.basis_scatter)
        for name, new in extra.items():
            setattr(acc, name, new(t))
        return acc

    accs = map_blocks(n, rows, body, make, device, max(min_rows, r if scatter else 0))
    dec = stats.decision
    for acc in accs:
        if decisions:
            dec.n += acc.n
            dec.ncc_correct += acc.ncc_correct
            dec.zero_features += acc.zero_features
            dec.cos_sum += acc.cos_sum
            dec.mismatch += acc.mismatch
            dec.clf_correct += acc.clf_correct
        if scatter and acc is not accs[0]:
            stats.basis_scatter += acc.scatter
    if scatter:
        mirror_upper(stats.basis_scatter)  # every thread filled the upper block triangle only
        stats.pass2_count += n
    return accs


class Sums:
    """One thread's sums over its blocks of a batch: the decisions (as :class:`DecisionStats`) and
    the upper block triangle of the projected scatter ``scatter`` (None when not accumulated)."""

    def __init__(self) -> None:
        self.n = self.ncc_correct = self.zero_features = self.mismatch = self.clf_correct = 0
        self.cos_sum = 0.0
        self.scatter: torch.Tensor | None = None


def _finite(norms: torch.Tensor, x: torch.Tensor) -> None:
    """Raise unless the row norms ``norms`` of (a product of) ``x`` are finite: a NaN or Inf
    feature makes its row's norm non-finite; finite features whose squares overflow are refused too."""
    if not bool(torch.isfinite(norms).all()):
        check_finite(x, "features")
        raise DataError(
            "features are too large: the squares of their norms overflow float64 "
            "(entries above ~1e150); rescale them"
        )


def record(acc: Sums, pl: Plan, y, p, p_norms, pdev, clf, decisions: bool = True) -> None:
    """Add one block's decisions (from P = (x - mu_G) Q, its row norms and ``clf``, the
    :meth:`~nclab._kernels.Classifier.sums` of the block) and its projected scatter (from ``pdev``
    = P - (M Q)[y], formed from P when None) to ``acc``."""
    if decisions:
        ncc = nearest_centre(p, pl.mq, pl.sq, pl.centres, p_norms)  # blocked within the budget
        acc.n += int(y.shape[0])
        acc.ncc_correct += int((ncc == y).sum())
        if clf is not None:
            cos_sum, correct, zeros, pred = clf
            acc.zero_features += zeros  # nc3_cos is then undefined; nc4 and acc are not
            acc.cos_sum += cos_sum
            acc.mismatch += int((pred != ncc).sum())
            acc.clf_correct += correct
    if acc.scatter is not None:
        if pdev is None:
            rows = torch.index_select(
                pl.mq, 0, y, out=workspace.get("mq_rows", len(y), pl.mq.shape[1], p.device)
            )
            pdev = torch.sub(p, rows, out=rows)
        add_gram_upper(acc.scatter, pdev)  # Q^T S_W Q, upper block triangle
