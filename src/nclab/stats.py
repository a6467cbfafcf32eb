"""Streaming per-class statistics of features, exact in float64.

:class:`ClassStats` is the state every collapse metric is computed from. It holds, in float64
whatever the input dtype and on the device of the features:

* ``counts`` (K,): samples per class,
* ``means`` (K, D): class means,
* ``scatter`` (D, D): the pooled within-class scatter :math:`\\sum_i (h_i-\\mu_{y_i})(h_i-\\mu_{y_i})^\\top`
  (not divided by N),
* ``class_ss`` (K,): per-class within-class sums of squares :math:`\\sum_{i: y_i=c}\\|h_i-\\mu_c\\|^2`,
* optionally ``class_scatter`` (K, D, D) with ``per_class_scatter=True``.

Batches are merged with Chan et al.'s pairwise update (batch statistics are centred on the batch's
own class means, then combined with a rank-one correction), never as E[xx^T] - mu mu^T, so the
statistics stay exact when features are nearly collapsed (class means far from the origin, tiny
within-class spread).

The features of a batch are read once by :meth:`ClassStats.update`. When the whole feature matrix is
already in memory, :meth:`ClassStats.from_features` reads it twice instead and keeps the within-class
scatter only inside the span of the class means (``scatter="subspace"``), which is all ``nc1`` needs and
avoids the O(N D^2) product.

>>> import torch
>>> g = torch.Generator().manual_seed(0)
>>> x = torch.randn(100, 5, generator=g); y = torch.arange(100) % 4
>>> s = ClassStats(4, 5)
>>> s.update(x[:50], y[:50]); s.update(x[50:], y[50:])
>>> t = ClassStats(4, 5); t.update(x, y)
>>> torch.allclose(s.scatter, t.scatter) and torch.allclose(s.means, t.means)
True
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar, Literal

import torch

from .errors import DataError, DegenerateError

F64 = torch.float64
ScatterMode = Literal["full", "subspace", "none"]

# --------------------------------------------------------------------------------------------------
# input validation (the public boundary)
# --------------------------------------------------------------------------------------------------


def check_features(features: torch.Tensor, dim: int | None = None, name: str = "features") -> None:
    if not isinstance(features, torch.Tensor):
        raise DataError(f"{name} must be a torch.Tensor, got {type(features).__name__}")
    if features.ndim != 2:
        raise DataError(
            f"expected 2D {name} of shape (N, D), got {features.ndim}D shape {tuple(features.shape)}; "
            "flatten or pool feature maps first (CollapseProbe(reduce=...))"
        )
    if not features.is_floating_point():
        raise DataError(f"{name} must be floating point, got dtype {features.dtype}")
    if dim is not None and features.shape[1] != dim:
        raise DataError(f"{name} have dimension {features.shape[1]}, expected {dim}")


def check_labels(labels: torch.Tensor, n: int, num_classes: int | None) -> None:
    if not isinstance(labels, torch.Tensor):
        raise DataError(f"labels must be a torch.Tensor, got {type(labels).__name__}")
    if labels.ndim != 1 or labels.shape[0] != n:
        raise DataError(f"labels must have shape ({n},), got {tuple(labels.shape)}")
    if labels.is_floating_point() or labels.is_complex() or labels.dtype == torch.bool:
        raise DataError(f"labels must be an integer tensor, got dtype {labels.dtype}")
    if n and num_classes is not None:
        lo, hi = int(labels.min()), int(labels.max())
        if lo < 0 or hi >= num_classes:
            raise DataError(
                f"labels must lie in [0, {num_classes}), got values in [{lo}, {hi}]"
            )


def input_eps(dtype: torch.dtype) -> float:
    """Unit roundoff of the precision features arrived in (float64 stats can't beat their input)."""
    return torch.finfo(dtype).eps if dtype.is_floating_point else torch.finfo(F64).eps


# --------------------------------------------------------------------------------------------------
# second-pass (decision) accumulators
# --------------------------------------------------------------------------------------------------


@dataclass
class DecisionStats:
    """Sums from a second pass over the features with the final class means (and classifier).

    ``nc3_cos`` = cos_sum / n, ``nc4`` = mismatch / n, ``ncc_acc`` = ncc_correct / n,
    ``acc`` = clf_correct / n.
    """

    n: int = 0
    ncc_correct: int = 0
    cos_sum: float = 0.0
    mismatch: int = 0
    clf_correct: int = 0
    has_classifier: bool = False
    tensor_fields: ClassVar[tuple[str, ...]] = ("n", "ncc_correct", "cos_sum", "mismatch", "clf_correct")

    def as_tensor(self, device) -> torch.Tensor:
        return torch.tensor([float(getattr(self, f)) for f in self.tensor_fields], dtype=F64,
                            device=device)

    def load_tensor(self, t: torch.Tensor) -> None:
        for f, v in zip(self.tensor_fields, t.tolist(), strict=True):
            setattr(self, f, v if f == "cos_sum" else int(round(v)))

    def metrics(self) -> dict[str, float]:
        if self.n == 0:
            return {}
        out = {"ncc_acc": self.ncc_correct / self.n}
        if self.has_classifier:
            out.update(
                nc3_cos=self.cos_sum / self.n, nc4=self.mismatch / self.n, acc=self.clf_correct / self.n
            )
        return out


# --------------------------------------------------------------------------------------------------
# ClassStats
# --------------------------------------------------------------------------------------------------


class ClassStats:
    """Per-class counts, means and within-class scatter, streamed in float64.

    Args:
        num_classes: K.
        dim: feature dimension D.
        device: where the statistics live; ``None`` adopts the device of the first batch.
        per_class_scatter: also keep the K x D x D per-class scatter matrices.
        track_scatter: keep the pooled D x D scatter (needed by ``nc1``). ``False`` makes updates
            O(N D) and leaves every other metric available.
    """

    def __init__(
        self,
        num_classes: int,
        dim: int,
        device: torch.device | str | None = None,
        per_class_scatter: bool = False,
        track_scatter: bool = True,
    ):
        if not isinstance(num_classes, int) or num_classes < 1:
            raise DataError(f"num_classes must be a positive integer, got {num_classes!r}")
        if not isinstance(dim, int) or dim < 1:
            raise DataError(f"dim must be a positive integer, got {dim!r}")
        self.num_classes = num_classes
        self.dim = dim
        self.per_class_scatter = per_class_scatter
        self.scatter_mode: ScatterMode = "full" if track_scatter else "none"
        self.device = torch.device(device) if device is not None else None
        self.eps = torch.finfo(F64).eps  # precision of the inputs seen so far
        self.decision = DecisionStats()
        # subspace mode (from_features): within-class scatter restricted to span(means)
        self.basis: torch.Tensor | None = None
        self.basis_scatter: torch.Tensor | None = None
        self._alloc(self.device or torch.device("cpu"))
        if device is None:
            self.device = None

    # --- state -------------------------------------------------------------------------------
    def _alloc(self, device: torch.device) -> None:
        K, D = self.num_classes, self.dim
        self.device = device
        self.counts = torch.zeros(K, dtype=torch.int64, device=device)
        self.means = torch.zeros(K, D, dtype=F64, device=device)
        self.class_ss = torch.zeros(K, dtype=F64, device=device)
        self.scatter = torch.zeros(D, D, dtype=F64, device=device) if self.scatter_mode == "full" else None
        self.class_scatter = (
            torch.zeros(K, D, D, dtype=F64, device=device) if self.per_class_scatter else None
        )

    def reset(self) -> None:
        """Forget every sample (keeps K, D, device and options)."""
        self.eps = torch.finfo(F64).eps
        self.decision = DecisionStats()
        self.basis = self.basis_scatter = None
        if self.scatter_mode == "subspace":
            self.scatter_mode = "full"
        self._alloc(self.device or torch.device("cpu"))

    @property
    def num_samples(self) -> int:
        return int(self.counts.sum())

    @property
    def within_trace(self) -> torch.Tensor:
        """tr of the pooled within-class scatter (sum of all squared deviations)."""
        return self.class_ss.sum()

    def nonempty(self) -> torch.Tensor:
        return self.counts > 0

    def check_nonempty(self) -> None:
        """Raise :class:`DegenerateError` naming the classes with no samples."""
        empty = (self.counts == 0).nonzero().flatten().tolist()
        if empty:
            shown = ", ".join(map(str, empty[:10])) + (" ..." if len(empty) > 10 else "")
            raise DegenerateError(
                f"{len(empty)} of {self.num_classes} classes have no samples (classes {shown}); "
                "collapse metrics need every class: drop them with stats.drop_empty() "
                "(nclab measure --drop-empty)"
            )

    # --- updates -----------------------------------------------------------------------------
    def _prepare(self, features: torch.Tensor, labels: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        check_features(features, self.dim)
        check_labels(labels, features.shape[0], self.num_classes)
        if self.scatter_mode == "subspace":
            raise DataError(
                "these statistics were built by from_features(scatter='subspace') and keep the "
                "within-class scatter only in the class-mean subspace; they cannot take more "
                "samples. Build with scatter='full' to stream or merge."
            )
        if self.device is None:
            self._alloc(features.device)
        self.eps = max(self.eps, input_eps(features.dtype))
        return features.to(self.device), labels.to(self.device)

    def update(self, features: torch.Tensor, labels: torch.Tensor) -> None:
        """Add a batch of features (N, D) of any float dtype with integer labels (N,) in [0, K).

        Raises :class:`~nclab.errors.DataError` on wrong shapes, non-integer or out-of-range labels and
        non-finite features.
        """
        x, y = self._prepare(features, labels)
        if x.shape[0] == 0:
            return
        part = _batch_stats(x, y, self.num_classes, self.scatter_mode == "full", self.per_class_scatter)
        self._combine(*part)
        self.decision = DecisionStats()  # means changed: a second pass must be redone

    def _combine(self, nb, mb, ssb, sb, csb) -> None:
        """Chan et al. pairwise merge of (counts, means, class_ss, scatter, class_scatter)."""
        na = self.counts.to(F64)
        nbf = nb.to(F64)
        n = na + nbf
        present = nb > 0
        safe_n = torch.where(n > 0, n, torch.ones_like(n))
        delta = mb - self.means  # (K, D); zero weight where a class is absent from either side
        w = torch.where(present, na * nbf / safe_n, torch.zeros_like(n))
        self.means = torch.where(present[:, None], self.means + delta * (nbf / safe_n)[:, None],
                                 self.means)
        dn2 = (delta * delta).sum(1)
        self.class_ss = self.class_ss + ssb + w * dn2
        if self.scatter is not None and sb is not None:
            dw = delta * w[:, None]
            self.scatter = self.scatter + sb + dw.T @ delta
        if self.class_scatter is not None and csb is not None:
            self.class_scatter = self.class_scatter + csb + w[:, None, None] * (
                delta[:, :, None] * delta[:, None, :]
            )
        self.counts = self.counts + nb

    def merge(self, other: ClassStats) -> ClassStats:
        """Merge another ``ClassStats`` of the same shape into this one (in place); returns self."""
        if not isinstance(other, ClassStats):
            raise DataError(f"can only merge ClassStats, got {type(other).__name__}")
        if (other.num_classes, other.dim) != (self.num_classes, self.dim):
            raise DataError(
                f"cannot merge statistics of shape (K={other.num_classes}, D={other.dim}) into "
                f"(K={self.num_classes}, D={self.dim})"
            )
        if "subspace" in (self.scatter_mode, other.scatter_mode):
            raise DataError("statistics built with scatter='subspace' cannot be merged; "
                            "use scatter='full'")
        if self.device is None:
            self._alloc(other.device or torch.device("cpu"))
        dev = self.device
        sb = other.scatter.to(dev) if (other.scatter is not None and self.scatter is not None) else None
        if self.scatter is not None and other.scatter is None and other.num_samples:
            raise DataError("cannot merge statistics without a scatter matrix into ones with it")
        csb = None
        if self.class_scatter is not None:
            if other.class_scatter is None and other.num_samples:
                raise DataError("cannot merge: the other statistics have no per-class scatter")
            csb = other.class_scatter.to(dev) if other.class_scatter is not None else None
        self.eps = max(self.eps, other.eps)
        self._combine(other.counts.to(dev), other.means.to(dev), other.class_ss.to(dev), sb, csb)
        self.decision = DecisionStats()
        return self

    # --- in-memory fast path -------------------------------------------------------------------
    @classmethod
    def from_features(
        cls,
        features: torch.Tensor,
        labels: torch.Tensor,
        num_classes: int | None = None,
        scatter: ScatterMode = "subspace",
        chunk_rows: int | None = None,
    ) -> ClassStats:
        """Statistics of a feature matrix already in memory, reading it twice.

        Pass 1 computes the class means; pass 2 the deviations from them, their per-class sums of
        squares and their projection on the span of the class means (``scatter="subspace"``, the
        default: O(N D K) instead of O(N D^2)), or the full D x D scatter (``scatter="full"``).
        Subspace statistics give every metric but cannot be merged or updated further.

        >>> import torch
        >>> x = torch.randn(300, 16); y = torch.arange(300) % 3
        >>> a = ClassStats.from_features(x, y)
        >>> b = ClassStats(3, 16); b.update(x, y)
        >>> from nclab.metrics import nc1
        >>> abs(nc1(a) - nc1(b)) < 1e-10
        True
        """
        check_features(features)
        n, d = features.shape
        if num_classes is None:
            check_labels(labels, n, None)
            if n == 0:
                raise DataError("from_features needs at least one sample")
            num_classes = int(labels.max()) + 1
        check_labels(labels, n, num_classes)
        if scatter not in ("full", "subspace", "none"):
            raise DataError(f"scatter must be 'full', 'subspace' or 'none', got {scatter!r}")
        self = cls(num_classes, d, device=features.device, track_scatter=scatter == "full")
        if n == 0:
            return self
        self.eps = max(self.eps, input_eps(features.dtype))
        K, dev = num_classes, features.device
        y = labels.to(dev)
        rows = chunk_rows or max(64, min(n, (1 << 20) // max(d, 1)))  # ~8 MB float64 chunks
        counts = torch.bincount(y, minlength=K)
        # pass 1: shifted sums (shift = first sample of each class) for exact means
        first = torch.full((K,), n, dtype=torch.int64, device=dev).scatter_reduce_(
            0, y, torch.arange(n, device=dev), reduce="amin")
        shift = torch.zeros(K, d, dtype=F64, device=dev)
        has = counts > 0
        shift[has] = features[first[has]].to(F64)
        sums = torch.zeros(K, d, dtype=F64, device=dev)
        for i in range(0, n, rows):
            yc = y[i : i + rows]
            sums.index_add_(0, yc, features[i : i + rows].to(F64) - shift[yc])
        if not torch.isfinite(sums).all():
            raise DataError("features contain NaN or Inf values")
        means = shift + sums / counts.clamp_min(1).to(F64)[:, None]
        # pass 2: deviations
        ss = torch.zeros(K, dtype=F64, device=dev)
        basis = None
        if scatter == "subspace":
            basis = _span_basis(means[has], self.eps)
            gram = torch.zeros(basis.shape[1], basis.shape[1], dtype=F64, device=dev)
        full = torch.zeros(d, d, dtype=F64, device=dev) if scatter == "full" else None
        for i in range(0, n, rows):
            yc = y[i : i + rows]
            c = features[i : i + rows].to(F64)
            c -= means[yc]
            ss.index_add_(0, yc, (c * c).sum(1))
            if basis is not None:
                p = c @ basis
                gram.addmm_(p.T, p)
            elif full is not None:
                full.addmm_(c.T, c)
        self.counts, self.means, self.class_ss = counts, means, ss
        if full is not None:
            self.scatter = full
        if basis is not None:
            self.scatter_mode = "subspace"
            self.basis, self.basis_scatter = basis, gram
        return self

    # --- the within-class scatter seen through a basis ------------------------------------------
    def projected_scatter(self, q: torch.Tensor) -> torch.Tensor:
        """Q^T S_W Q for a D x r matrix Q whose columns lie in the span of the class means."""
        if self.scatter_mode == "full":
            return q.T @ self.scatter @ q
        if self.scatter_mode == "subspace":
            a = self.basis.T @ q
            return a.T @ self.basis_scatter @ a
        raise DegenerateError(
            "nc1 needs the within-class scatter; these statistics were built with "
            "track_scatter=False (or scatter='none')"
        )

    # --- second pass -----------------------------------------------------------------------------
    def decision_pass(
        self,
        features: torch.Tensor,
        labels: torch.Tensor,
        weights: torch.Tensor | None = None,
        bias: torch.Tensor | None = None,
    ) -> None:
        """Second pass over the features, with the final class means (and classifier).

        Accumulates what ``nc3_cos``, ``nc4``, ``ncc_acc`` (and ``acc``) need: these depend on each
        sample and the *final* means, so they cannot come from the first pass. Call after all
        ``update`` calls; a later ``update`` or ``merge`` clears them.
        """
        check_features(features, self.dim)
        check_labels(labels, features.shape[0], self.num_classes)
        self.check_nonempty()
        dev = self.device or features.device
        x = features.to(dev, F64)
        y = labels.to(dev)
        w = b = None
        if weights is not None:
            w = _check_classifier(weights, bias, self.num_classes, self.dim, dev)
            b = bias.to(dev, F64) if bias is not None else None
            self.decision.has_classifier = True
        elif self.decision.n and self.decision.has_classifier:
            raise DataError("decision_pass: earlier batches used a classifier, this one has none")
        if not torch.isfinite(x).all():
            raise DataError("features contain NaN or Inf values")
        # distances to class means, shifted by the global mean for accuracy near collapse
        g = self.means.mean(0)
        xc, mc = x - g, self.means - g
        d2 = (mc * mc).sum(1)[None, :] - 2 * xc @ mc.T
        ncc = d2.argmin(1)
        dec = self.decision
        dec.n += int(x.shape[0])
        dec.ncc_correct += int((ncc == y).sum())
        if w is not None:
            logits = x @ w.T + (b if b is not None else 0)
            pred = logits.argmax(1)
            wy = w[y]
            xn = x.norm(dim=1)
            wn = wy.norm(dim=1)
            if bool((xn == 0).any()):
                raise DegenerateError("nc3_cos is undefined: some features are exactly zero")
            dec.cos_sum += float(((x * wy).sum(1) / (xn * wn)).sum())
            dec.mismatch += int((pred != ncc).sum())
            dec.clf_correct += int((pred == y).sum())

    # --- distributed -----------------------------------------------------------------------------
    def all_reduce(self, group=None) -> ClassStats:
        """Merge the statistics of every ``torch.distributed`` rank, in place, on every rank.

        Exact: ranks first agree on the global counts and means, then each rank moves its scatter to
        the global means with a Chan correction before the sums are reduced. A no-op when
        ``torch.distributed`` is not initialised.
        """
        import torch.distributed as dist

        if not (dist.is_available() and dist.is_initialized()):
            return self
        if self.scatter_mode == "subspace":
            raise DataError("subspace statistics cannot be all-reduced; use scatter='full'")
        if self.device is None:
            self._alloc(torch.device("cpu"))
        n_local = self.counts.to(F64)
        counts = n_local.clone()
        sums = self.means * n_local[:, None]
        dist.all_reduce(counts, group=group)
        dist.all_reduce(sums, group=group)
        means = sums / counts.clamp_min(1)[:, None]
        delta = self.means - means
        ss = self.class_ss + n_local * (delta * delta).sum(1)
        dist.all_reduce(ss, group=group)
        if self.scatter is not None:
            sc = self.scatter + (delta * n_local[:, None]).T @ delta
            dist.all_reduce(sc, group=group)
            self.scatter = sc
        if self.class_scatter is not None:
            cs = self.class_scatter + n_local[:, None, None] * (delta[:, :, None] * delta[:, None, :])
            dist.all_reduce(cs, group=group)
            self.class_scatter = cs
        eps = torch.tensor([self.eps], dtype=F64, device=self.device)
        dist.all_reduce(eps, op=dist.ReduceOp.MAX, group=group)
        self.counts = counts.round().to(torch.int64)
        self.means, self.class_ss, self.eps = means, ss, float(eps.item())
        return self.all_reduce_decision(group)

    def all_reduce_decision(self, group=None) -> ClassStats:
        """Sum the second-pass (decision) accumulators over ranks; a no-op without torch.distributed.

        Use after a distributed second pass whose moments were already all-reduced.
        """
        import torch.distributed as dist

        if not (dist.is_available() and dist.is_initialized()):
            return self
        dev = self.device or torch.device("cpu")
        dec = self.decision.as_tensor(dev)
        flag = torch.tensor([float(self.decision.has_classifier)], dtype=F64, device=dev)
        dist.all_reduce(dec, group=group)
        dist.all_reduce(flag, op=dist.ReduceOp.MAX, group=group)
        self.decision.load_tensor(dec)
        self.decision.has_classifier = bool(flag.item())
        return self

    # --- persistence -----------------------------------------------------------------------------
    def state_dict(self) -> dict:
        tensors = {
            "counts": self.counts, "means": self.means, "class_ss": self.class_ss,
            "scatter": self.scatter, "class_scatter": self.class_scatter,
            "basis": self.basis, "basis_scatter": self.basis_scatter,
        }
        meta = {
            "num_classes": self.num_classes, "dim": self.dim, "eps": self.eps,
            "scatter_mode": self.scatter_mode, "per_class_scatter": self.per_class_scatter,
            "decision": {f: getattr(self.decision, f) for f in self.decision.tensor_fields}
            | {"has_classifier": self.decision.has_classifier},
            "format": 1,
        }
        return {"tensors": {k: (v.cpu() if v is not None else None) for k, v in tensors.items()},
                "meta": meta}

    def save(self, path: str | Path) -> None:
        """Save to a ``.pt`` file (tensors on CPU); :meth:`load` restores it exactly."""
        torch.save(self.state_dict(), Path(path))

    @classmethod
    def load(cls, path: str | Path, device: torch.device | str | None = None) -> ClassStats:
        path = Path(path)
        if not path.is_file():
            raise DataError(f"statistics file not found: {path}")
        try:
            state = torch.load(path, map_location="cpu", weights_only=True)
            meta, tensors = state["meta"], state["tensors"]
        except Exception as exc:  # noqa: BLE001 - any unreadable file is the same user error
            raise DataError(f"{path} is not a saved ClassStats file ({exc})") from None
        self = cls(meta["num_classes"], meta["dim"], device=device or "cpu",
                   per_class_scatter=meta["per_class_scatter"],
                   track_scatter=meta["scatter_mode"] != "none")
        dev = self.device
        for k, v in tensors.items():
            setattr(self, k, v.to(dev) if v is not None else None)
        self.scatter_mode = meta["scatter_mode"]
        self.eps = meta["eps"]
        dec = dict(meta["decision"])
        self.decision = DecisionStats(has_classifier=dec.pop("has_classifier"), **dec)
        return self

    def to(self, device: torch.device | str) -> ClassStats:
        """Move the statistics to another device (in place); returns self."""
        dev = torch.device(device)
        for k in ("counts", "means", "class_ss", "scatter", "class_scatter", "basis", "basis_scatter"):
            v = getattr(self, k)
            if v is not None:
                setattr(self, k, v.to(dev))
        self.device = dev
        return self

    def drop_empty(self) -> tuple[ClassStats, list[int]]:
        """Statistics restricted to the classes that have samples, and the dropped class indices.

        The remaining classes are renumbered in order; the decision pass is not kept.
        """
        keep = self.nonempty()
        dropped = (~keep).nonzero().flatten().tolist()
        k = int(keep.sum())
        if k == 0:
            raise DegenerateError("no class has any sample")
        out = ClassStats(k, self.dim, device=self.device, per_class_scatter=self.per_class_scatter,
                         track_scatter=self.scatter_mode != "none")
        out.counts, out.means, out.class_ss = self.counts[keep], self.means[keep], self.class_ss[keep]
        out.scatter = self.scatter
        out.class_scatter = self.class_scatter[keep] if self.class_scatter is not None else None
        out.scatter_mode, out.basis, out.basis_scatter = self.scatter_mode, self.basis, self.basis_scatter
        out.eps = self.eps
        return out, dropped

    def __repr__(self) -> str:
        return (f"ClassStats(num_classes={self.num_classes}, dim={self.dim}, "
                f"samples={self.num_samples}, scatter={self.scatter_mode!r}, device={self.device})")


# --------------------------------------------------------------------------------------------------
# helpers
# --------------------------------------------------------------------------------------------------


def _batch_stats(x: torch.Tensor, y: torch.Tensor, K: int, want_scatter: bool, per_class: bool):
    """Counts, means, per-class ss, pooled scatter and per-class scatter of one batch."""
    dev = x.device
    nb = torch.bincount(y, minlength=K)
    x64 = x.to(F64)
    sums = torch.zeros(K, x.shape[1], dtype=F64, device=dev).index_add_(0, y, x64)
    if not torch.isfinite(sums).all():
        raise DataError("features contain NaN or Inf values")
    mb = sums / nb.clamp_min(1).to(F64)[:, None]
    c = x64 if x64.data_ptr() != x.data_ptr() else x64.clone()
    c -= mb[y]
    ssb = torch.zeros(K, dtype=F64, device=dev).index_add_(0, y, (c * c).sum(1))
    sb = _gram(c) if want_scatter else None
    csb = None
    if per_class:
        csb = torch.zeros(K, x.shape[1], x.shape[1], dtype=F64, device=dev)
        for k in nb.nonzero().flatten().tolist():
            ck = c[y == k]
            csb[k] = ck.T @ ck
    return nb, mb, ssb, sb, csb


def _gram(c: torch.Tensor, block: int = 512) -> torch.Tensor:
    """C^T C computed on the upper block triangle only (symmetric result), then mirrored."""
    d = c.shape[1]
    if d <= block:
        return c.T @ c
    out = torch.empty(d, d, dtype=c.dtype, device=c.device)
    starts = list(range(0, d, block))
    for i in starts:
        ci = c[:, i : i + block]
        right = c[:, i:]
        blk = ci.T @ right  # (bi, d - i)
        out[i : i + block, i:] = blk
        out[i:, i : i + block] = blk.T
    return out


def _span_basis(vectors: torch.Tensor, eps: float) -> torch.Tensor:
    """Orthonormal basis (D x r) of the span of the rows of ``vectors`` (K x D)."""
    u, s, _ = torch.linalg.svd(vectors.T, full_matrices=False)
    if s.numel() == 0 or float(s[0]) == 0.0:
        return u[:, :1]
    tol = float(s[0]) * max(vectors.shape) * torch.finfo(F64).eps
    r = max(1, int((s > tol).sum()))
    return u[:, :r]


def _check_classifier(weights, bias, K: int, D: int, dev) -> torch.Tensor:
    if not isinstance(weights, torch.Tensor) or weights.shape != (K, D):
        shape = tuple(weights.shape) if isinstance(weights, torch.Tensor) else type(weights).__name__
        raise DataError(f"weights must have shape (K, D) = ({K}, {D}), got {shape}")
    if bias is not None and (not isinstance(bias, torch.Tensor) or bias.shape != (K,)):
        shape = tuple(bias.shape) if isinstance(bias, torch.Tensor) else type(bias).__name__
        raise DataError(f"bias must have shape (K,) = ({K},), got {shape}")
    w = weights.detach().to(dev, F64)
    if not torch.isfinite(w).all() or (bias is not None and not torch.isfinite(bias).all()):
        raise DataError("classifier weights or bias contain NaN or Inf values")
    if bool((w.norm(dim=1) == 0).any()):
        raise DegenerateError("a classifier row is zero: cosines with it are undefined")
    return w


def rank_rtol(stats: ClassStats, rows: int, cols: int) -> float:
    """Relative singular-value tolerance for the class-mean matrix: max(rows, cols) * eps_input.

    The statistics are float64, but they cannot be more precise than the features they came from,
    so ``eps`` is the unit roundoff of the lowest input precision seen (numpy's matrix_rank rule).
    """
    return max(rows, cols) * stats.eps if math.isfinite(stats.eps) else 0.0
