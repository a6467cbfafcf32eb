r"""Per-class views of the second pass: NCC agreement and NC4 per class, top-k accuracy.

:class:`DecisionViews` streams over the features once the class means are final (the same second
pass as :meth:`nclab.ClassStats.decision_pass`, which keeps only the totals) and keeps (K,)
counters, in bounded memory at any K: the decisions are taken in column blocks of the memory budget
(:func:`nclab._kernels.best_columns`; near ties of the nearest-centre rule are decided again from
the explicit differences, :func:`nclab._kernels.nearest_centre`), and the top-k candidates are
merged block by block.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import torch

from .._kernels import memory_budget, nearest_centre, scratch_f64
from ..errors import DataError, DegenerateError
from ..validation import F64, check_batch, check_classifier

if TYPE_CHECKING:
    from ..stats import ClassStatsBase


class DecisionViews:
    r"""Per-class counters of the second pass, for the classifier (W, b) and the class means.

    ``per_class()``: for each true class c (K,) tensors ``count``, ``ncc_acc`` (NCC accuracy),
    ``agreement`` (fraction of samples where argmax(W h + b) = argmin_c' ||h - mu_c'||), ``acc``.
    ``metrics()``: ``nc4_class_mean`` = mean over classes of 1 - agreement (NC4 averaged per class;
    ``nc4`` is the per-sample average), ``ncc_acc_class_mean``, and ``top{k}_acc`` for each k of
    ``topk`` (the true class among the k largest logits).

    >>> import torch
    >>> from nclab import ClassStats
    >>> x = torch.tensor([[1., 0.], [2., 0.], [0., 3.], [0., 1.]]); y = torch.tensor([0, 0, 1, 1])
    >>> s = ClassStats(2, 2, scatter="none"); s.update(x, y)
    >>> v = DecisionViews(s, torch.tensor([[0., 1.], [1., 0.]]), topk=(1, 2)); v.update(x, y)
    >>> v.per_class()["agreement"].tolist(), v.metrics()["top2_acc"]
    ([0.0, 0.0], 1.0)
    """

    def __init__(
        self,
        stats: ClassStatsBase,
        weights: torch.Tensor | None = None,
        bias: torch.Tensor | None = None,
        topk: tuple[int, ...] = (1, 5),
    ):
        stats.check_nonempty()
        k, d = stats.num_classes, stats.dim
        self.num_classes, self.dim = k, d
        self.device = stats.means.device
        self.mu_g = stats.means.mean(0)
        self.centres = stats.means - self.mu_g
        self.sq = (self.centres * self.centres).sum(1)
        self.w = self.b = None
        if weights is not None:
            self.w, self.b = check_classifier(weights, bias, k, d, self.device)
        self.topk = tuple(sorted({int(t) for t in topk if 1 <= int(t) <= k}))
        z = torch.zeros(k, dtype=torch.int64, device=self.device)
        self.count, self.ncc_correct, self.agree, self.clf_correct = (
            z,
            z.clone(),
            z.clone(),
            z.clone(),
        )
        self.topk_correct = {t: 0 for t in self.topk}

    def update(self, features: torch.Tensor, labels: torch.Tensor) -> None:
        """Add a batch (N, D) with labels (N,) of the same features the statistics came from."""
        check_batch(features, labels, self.dim, self.num_classes)
        y = labels.to(self.device)
        x = scratch_f64(features.detach(), "views", self.device)
        k = self.num_classes
        self.count += torch.bincount(y, minlength=k)
        ncc = nearest_centre(x - self.mu_g, self.centres, self.sq)
        self.ncc_correct += torch.bincount(y[ncc == y], minlength=k)
        if self.w is None:
            return
        top = _topk_logits(x, self.w, self.b, max((*self.topk, 1)))
        pred = top[:, 0]
        self.agree += torch.bincount(y[pred == ncc], minlength=k)
        self.clf_correct += torch.bincount(y[pred == y], minlength=k)
        for t in self.topk:
            self.topk_correct[t] += int((top[:, :t] == y[:, None]).any(1).sum())

    def merge(self, other: DecisionViews) -> DecisionViews:
        """Add another's counters (the same statistics and classifier, other samples)."""
        if (other.num_classes, other.topk) != (self.num_classes, self.topk):
            raise DataError("cannot merge DecisionViews of different K or top-k")
        for f in ("count", "ncc_correct", "agree", "clf_correct"):
            setattr(self, f, getattr(self, f) + getattr(other, f).to(self.device))
        for t in self.topk:
            self.topk_correct[t] += other.topk_correct[t]
        return self

    def per_class(self) -> dict[str, torch.Tensor]:
        """(K,) float64 views by true class (a class with no sample in the pass is an error)."""
        if bool((self.count == 0).any()):
            raise DegenerateError("per-class views need every class in the second pass")
        n = self.count.to(F64)
        out = {"count": self.count, "ncc_acc": self.ncc_correct / n}
        if self.w is not None:
            out.update(agreement=self.agree / n, acc=self.clf_correct / n)
        return out

    def metrics(self) -> dict[str, float]:
        """Scalar reductions: class means of the views and top-k accuracies."""
        v = self.per_class()
        out = {"ncc_acc_class_mean": float(v["ncc_acc"].mean())}
        if self.w is not None:
            out["nc4_class_mean"] = float((1 - v["agreement"]).mean())
            n = int(self.count.sum())
            out.update({f"top{t}_acc": self.topk_correct[t] / n for t in self.topk})
        return out


def _topk_logits(x: torch.Tensor, w: torch.Tensor, b, k: int) -> torch.Tensor:
    """Indices (N, k) of the k largest logits x W^T + b, best first, in column blocks of the
    budget (ties: the lowest index first, as argmax)."""
    n, kk = x.shape[0], w.shape[0]
    block = max(k, memory_budget() // (8 * 2 * max(n, 1)))
    vals = idx = None
    for j in range(0, kk, block):
        s = x @ w[j : j + block].T
        if b is not None:
            s += b[j : j + block]
        v, i = torch.topk(s, min(k, s.shape[1]), dim=1, sorted=True)
        i = i + j
        if vals is not None:
            v, i = torch.cat([vals, v], 1), torch.cat([idx, i], 1)
        # stable order: larger value first, lower index first among equals
        order = torch.argsort(i, dim=1)
        v, i = v.gather(1, order), i.gather(1, order)
        order = torch.argsort(v, dim=1, descending=True, stable=True)
        vals, idx = v.gather(1, order)[:, :k], i.gather(1, order)[:, :k]
    return idx
