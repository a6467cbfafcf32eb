"""A torchmetrics ``Metric`` of neural collapse over streamed features, with an exact distributed sync.

``pip install nclab[torchmetrics]``.

:class:`CollapseMetric` accumulates the float64 statistics of :class:`~nclab.ClassStats` (per-class
counts, means, within-class sums of squares and, with ``scatter="full"``, the D x D within-class
scatter), merged batch by batch with Chan's update; ``compute()`` returns
:func:`~nclab.collapse_metrics` as a dict of floats.

**Exact sync.** The whole state is one float64 vector whose ``dist_reduce_fx`` is a Chan merge of the
ranks' vectors (:meth:`Layout.merge`): counts and means first, then each rank's sums of squares and
scatter moved to the merged means, never E[xx^T] - mu mu^T. The same merge serves ``forward()``
and ``merge_state``. One process over all the data and W ranks over its shards agree to rounding
(1e-12 relative, tested with two gloo processes).

**What one pass gives.** A Metric sees every batch once, before the class means are final:

* from the first-pass statistics: ``nc1`` (needs ``scatter="full"``), ``nc1_trace``, ``cdnv``,
  ``nc2_*`` and, with ``classifier``, ``nc2_w_*``, ``nc3``, ``nc3_of`` (with the classifier's W, b at
  ``compute()``);
* accumulated per sample with the classifier's W, b *at each update*: ``nc3_cos`` and ``acc``;
* not computed, listed in ``metric.skipped``: ``nc4`` and ``ncc_acc`` (they compare every sample with
  the *final* class means: a second pass, :meth:`nclab.CollapseProbe.run` or
  :meth:`nclab.ClassStats.decision_pass`), and ``nc1`` with ``scatter="none"``.
  ``scatter="subspace"`` (the probe's default) needs that second pass too and is refused.

>>> import torch
>>> from nclab.integrations.torchmetrics import CollapseMetric
>>> g = torch.Generator().manual_seed(0)
>>> x, y = torch.randn(300, 5, generator=g), torch.arange(300) % 3
>>> metric = CollapseMetric(num_classes=3, dim=5, classifier=torch.nn.Linear(5, 3))
>>> for i in range(0, 300, 100):
...     metric.update(x[i : i + 100], y[i : i + 100])
>>> out = metric.compute()
>>> from nclab import ClassStats, collapse_metrics
>>> ref = ClassStats(3, 5, scatter="full"); ref.update(x, y)
>>> abs(out["nc1"] - collapse_metrics(ref)["nc1"]) < 1e-10, sorted(metric.skipped)
(True, ['nc4', 'ncc_acc'])
"""

from __future__ import annotations

from typing import Any, Literal

import torch
from torch import nn

from .._kernels import classifier_sums
from ..collapse import ClassStats
from ..errors import DataError
from ..metrics import collapse_metrics
from ..validation import F64, check_batch
from ._common import require

tm = require("torchmetrics", "torchmetrics")

_SECOND_PASS = (
    "{key} needs a second pass over the features with the final class means, which a streaming "
    "Metric does not make: use CollapseProbe.run(loader) or ClassStats.decision_pass"
)
_NO_CLASSIFIER = (
    "{key} needs the classifier: CollapseMetric(..., classifier=the nn.Linear whose weights apply "
    "to these features, or (W, b))"
)
_NEEDS_W = ("nc2_w_etf", "nc2_w_of", "nc3", "nc3_of", "nc3_cos", "acc")
#: the decision sums kept per sample with a classifier: sum of cos(h_i, w_y), correct, n, zeros
_DECISIONS = 4


class Layout:
    """Where each part of the statistics sits in the flat float64 state vector."""

    def __init__(self, num_classes: int, dim: int, full_scatter: bool):
        k, d = num_classes, dim
        self.num_classes, self.dim, self.full = k, d, full_scatter
        sizes = {
            "counts": k,
            "means": k * d,
            "class_ss": k,
            "scatter": d * d if full_scatter else 0,
        }
        sizes.update(decisions=_DECISIONS, eps=1)
        self.slices, start = {}, 0
        for name, size in sizes.items():
            self.slices[name] = slice(start, start + size)
            start += size
        self.size = start

    def empty(self) -> torch.Tensor:
        v = torch.zeros(self.size, dtype=F64)
        v[self.slices["eps"]] = torch.finfo(F64).eps
        return v

    def unpack(self, v: torch.Tensor) -> tuple[ClassStats, torch.Tensor]:
        """The ClassStats a state vector holds (copies), and its decision sums."""
        k, d, s = self.num_classes, self.dim, self.slices
        stats = ClassStats(k, d, device=v.device, scatter="full" if self.full else "none")
        stats.counts = v[s["counts"]].round().to(torch.int64)
        stats.means = v[s["means"]].reshape(k, d).clone()
        stats.class_ss = v[s["class_ss"]].clone()
        if self.full:
            stats.scatter = v[s["scatter"]].reshape(d, d).clone()
        stats.eps = float(v[s["eps"]])
        return stats, v[s["decisions"]].clone()

    def pack(self, stats: ClassStats, decisions: torch.Tensor) -> torch.Tensor:
        s = self.slices
        v = torch.empty(self.size, dtype=F64, device=stats.means.device)
        v[s["counts"]] = stats.counts.to(F64)
        v[s["means"]] = stats.means.flatten()
        v[s["class_ss"]] = stats.class_ss
        if self.full:
            v[s["scatter"]] = stats.scatter.flatten()
        v[s["decisions"]] = decisions
        v[s["eps"]] = stats.eps
        return v

    def merge(self, stacked: torch.Tensor) -> torch.Tensor:
        """Chan merge of the state vectors stacked as rows (R, L) -> (L,)."""
        stats, decisions = self.unpack(stacked[0])
        for row in stacked[1:]:
            other, dec = self.unpack(row)
            stats.merge(other)
            decisions += dec
        return self.pack(stats, decisions)


class CollapseMetric(tm.Metric):
    """Collapse metrics of streamed (features, labels), exact in float64 and across processes.

    Args:
        num_classes: K.
        dim: the feature dimension D.
        classifier: the classifier whose W (K, D) and b apply to the features: an ``nn.Module`` with
            ``weight`` (and ``bias``) read at every ``update`` (``nc3_cos``, ``acc``) and at
            ``compute`` (``nc3``, ``nc2_w_*``), a tensor W, or a tuple (W, b). Not a submodule: its
            parameters stay out of this metric's ``state_dict``.
        scatter: ``"full"`` (default: the D x D scatter, ``nc1``; D^2 floats per process) or
            ``"none"`` (no ``nc1``). ``"subspace"`` needs a second pass and is refused.
        global_mean: ``"class"`` (mean of class means) or ``"sample"``.
        **kwargs: torchmetrics ``Metric`` options (``process_group``, ``sync_on_compute``, ...).

    ``compute()`` returns ``{metric: float}``; the metrics it could not compute are in
    ``metric.skipped`` with the reason, and the caveats of those it computed in ``metric.notes``
    (``nc1`` when rank(Sigma_B) < K - 1: compare ``nc1_rank_norm`` and ``cdnv``). ``metric(features, labels)`` (``forward``) also returns the
    metrics of that batch alone, which needs every class in the batch: with small batches call
    ``update`` and ``compute`` once per epoch.
    """

    is_differentiable = False
    higher_is_better = None
    full_state_update = False

    def __init__(
        self,
        num_classes: int,
        dim: int,
        classifier: nn.Module | torch.Tensor | tuple | None = None,
        scatter: Literal["full", "none"] = "full",
        global_mean: Literal["class", "sample"] = "class",
        **kwargs: Any,
    ):
        super().__init__(**kwargs)
        if scatter not in ("full", "none"):
            raise DataError(
                f"CollapseMetric(scatter={scatter!r}): a Metric sees each batch once; 'subspace' "
                "needs a second pass over the data (CollapseProbe.run): use 'full' or 'none'"
            )
        for name, v in (("num_classes", num_classes), ("dim", dim)):
            if not isinstance(v, int) or v < 1:
                raise DataError(f"{name} must be a positive integer, got {v!r}")
        self.num_classes, self.dim, self.global_mean = num_classes, dim, global_mean
        self._classifier = _Classifier(classifier)
        self._layout = Layout(num_classes, dim, scatter == "full")
        self.add_state("state", default=self._layout.empty(), dist_reduce_fx=self._layout.merge)
        self.skipped: dict[str, str] = {}
        self.notes: dict[str, str] = {}

    def update(self, features: torch.Tensor, labels: torch.Tensor) -> None:
        """Add a batch: ``features`` (N, D) of any float dtype, integer ``labels`` (N,) in [0, K)."""
        check_batch(features, labels, self.dim, self.num_classes)
        stats, decisions = self._layout.unpack(self.state)
        stats.update(features, labels)
        w, b = self._classifier.params(self.num_classes, self.dim)
        if w is not None and len(labels):
            x = features.detach().to(self.state.device, F64)
            y = labels.to(x.device)
            cos, correct, zeros, _ = classifier_sums(
                x, y, w.to(x.device, F64), None if b is None else b.to(x.device, F64)
            )
            decisions += torch.tensor([cos, correct, len(y), zeros], dtype=F64, device=x.device)
        self.state = self._layout.pack(stats, decisions)

    def compute(self) -> dict[str, float]:
        stats, decisions = self._layout.unpack(self.state)
        if stats.num_samples == 0:
            raise DataError("CollapseMetric.compute() before any update()")
        w, b = self._classifier.params(self.num_classes, self.dim)
        m = collapse_metrics(stats, w, b, global_mean=self.global_mean)
        out = {k: float(v) for k, v in m.items()}
        skipped = dict(m.skipped)
        cos, correct, n, zeros = decisions.tolist()
        if w is not None and n > 0:
            out["acc"] = correct / n
            skipped.pop("acc", None)
            if zeros:
                skipped["nc3_cos"] = "nc3_cos is undefined: some features are exactly zero"
            else:
                out["nc3_cos"] = cos / n
                skipped.pop("nc3_cos", None)
        for key in skipped:
            if key in ("nc4", "ncc_acc"):
                skipped[key] = _SECOND_PASS.format(key=key)
            elif w is None and key in _NEEDS_W:
                skipped[key] = _NO_CLASSIFIER.format(key=key)
        self.skipped = skipped
        self.notes = dict(m.notes)
        return out


class _Classifier:
    """The classifier's W, b, read when needed (a plain holder: the module is not registered)."""

    def __init__(self, ref: nn.Module | torch.Tensor | tuple | None):
        if not (ref is None or isinstance(ref, nn.Module | torch.Tensor | tuple)):
            raise DataError(
                "classifier must be an nn.Module with a weight, a tensor W or a tuple (W, b), "
                f"got {type(ref).__name__}"
            )
        self.ref = ref

    def params(self, k: int, d: int) -> tuple[torch.Tensor | None, torch.Tensor | None]:
        ref = self.ref
        if ref is None:
            return None, None
        if isinstance(ref, nn.Module):
            w, b = getattr(ref, "weight", None), getattr(ref, "bias", None)
        elif isinstance(ref, tuple):
            w, b = (*ref, None)[:2]
        else:
            w, b = ref, None
        if not isinstance(w, torch.Tensor) or tuple(w.shape) != (k, d):
            got = tuple(w.shape) if isinstance(w, torch.Tensor) else type(w).__name__
            raise DataError(f"the classifier's weight must be (K, D) = {(k, d)}, got {got}")
        return w.detach(), (b.detach() if isinstance(b, torch.Tensor) else None)
