"""The second pass of :class:`~nclab.ClassStats`: what needs each sample *and* the final means.

It accumulates the nearest-class-centre decisions (``ncc_acc``), with a classifier ``nc3_cos``,
``nc4`` and ``acc`` (:class:`DecisionStats`), and in ``scatter="subspace"`` mode the within-class
scatter projected on the span of the class means.

Everything is computed from P = (x - mu_G) Q, with mu_G the mean of the class means and Q an
orthonormal basis of their span: subtracting mu_G removes any common offset before the product (near
collapse the deviations stay accurate to ~eps times the spread of the means), and since every
mu_c - mu_G lies in span(Q), the nearest-centre scores (x - mu_G).(mu_c - mu_G) = P (Q^T (mu_c - mu_G))
and the projected deviations (x - mu_y) Q = P - ((mu - mu_G) Q)[y] both come from this one
N x D x K product. A batch comes in one of three forms, one function each, all ending in
:func:`_record`:

* :func:`from_batch`: raw features (any float dtype), as :meth:`ClassStats.decision_pass` gets them;
* :func:`from_residuals`: the deviations r = x - mu_y of features already checked for NaN/Inf;
* :func:`from_projection`: (P, P - ((mu - mu_G) Q)[y]) already formed by the caller.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

import torch

from .._kernels import classifier_sums, nearest_centre, scratch_f64, span_basis
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


# --- one function per form of the batch ---------------------------------------------------------
def from_batch(stats: ClassStatsBase, x, y, w, b) -> None:
    """Raw features ``x`` (any float dtype, trusted shape; every product is float64: subtracting a
    float64 vector promotes the chunk), with the classifier ``w``, ``b`` (float64) or None."""
    q, g, _, _ = frame(stats)
    xa = scratch_f64(x)
    clf = classifier_sums(xa, y, w, b) if w is not None else None  # needs the uncentred features
    p = xa.sub_(g) @ q
    check_finite(p, "features")  # a NaN or Inf entry of x reaches its row of P
    _record(stats, x, y, w, b, p, None, clf)


def from_residuals(stats: ClassStatsBase, x, y, w, b, resid, decisions: bool = True) -> None:
    """The deviations ``resid`` = x - mu_y of features ``x`` checked for NaN/Inf:
    (x - mu_G) Q = r Q + ((mu - mu_G) Q)[y]. ``decisions=False``: only the projected scatter."""
    q, _, _, mq = frame(stats)
    pdev = resid @ q
    p = pdev + mq[y] if decisions else None
    _record(stats, x, y, w, b, p, pdev, None, decisions)


def from_projection(stats: ClassStatsBase, x, y, w, b, p, pdev, decisions: bool = True) -> None:
    """P = (x - mu_G) Q and ``pdev`` = P - ((mu - mu_G) Q)[y], formed by the caller from features
    ``x`` checked for NaN/Inf."""
    _record(stats, x, y, w, b, p, pdev, None, decisions)


# --- shared accumulation ------------------------------------------------------------------------
def _record(stats: ClassStatsBase, x, y, w, b, p, pdev, clf, decisions: bool = True) -> None:
    """Add the decisions (from P) and the projected scatter (from ``pdev``, formed from P when
    None) of one batch."""
    _, _, mc, mq = frame(stats)
    if decisions:
        _decide(stats, x, y, w, b, p, mc, mq, clf)
    if stats.scatter_mode == "subspace" and stats.pass2_count < stats.num_samples:
        _add_projected_scatter(stats, pdev if pdev is not None else p - mq[y], x.device)


def _decide(stats: ClassStatsBase, x, y, w, b, p, mc, mq, clf) -> None:
    """Nearest-class-centre decisions from P, and the classifier's (``clf`` = classifier_sums of the
    float64 features, computed here when None)."""
    dec = stats.decision
    ncc = nearest_centre(p, mq, (mc * mc).sum(1))  # blocked within the memory budget
    dec.n += int(x.shape[0])
    dec.ncc_correct += int((ncc == y).sum())
    if w is None:
        return
    cos_sum, correct, zeros, pred = clf or classifier_sums(scratch_f64(x), y, w, b)
    dec.zero_features += zeros  # nc3_cos is then undefined; nc4 and acc are not
    dec.cos_sum += cos_sum
    dec.mismatch += int((pred != ncc).sum())
    dec.clf_correct += correct


def _add_projected_scatter(stats: ClassStatsBase, pdev: torch.Tensor, device) -> None:
    """basis_scatter += pdev^T pdev (Q^T S_W Q, one batch of projected deviations)."""
    if stats.basis_scatter is None:
        r = stats.basis.shape[1]
        stats.basis_scatter = torch.zeros(r, r, dtype=F64, device=device)
    stats.basis_scatter.addmm_(pdev.T, pdev)
    stats.pass2_count += int(pdev.shape[0])
