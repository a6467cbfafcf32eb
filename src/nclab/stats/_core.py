"""The :class:`ClassStatsBase` container: its state, the first pass (``update``, ``merge``), the
views the metrics read (``centred_svd``, ``projected_scatter``), distributed reduction and
persistence. The public :class:`nclab.ClassStats` (:mod:`nclab.collapse`) is this class with
``compute()``, which needs the metrics: ``stats`` never imports :mod:`nclab.metrics`.

The second pass lives in :mod:`._second_pass`, ``from_features`` in :mod:`._in_memory`, the file
format in :mod:`._persist`; the docstring of :mod:`nclab.stats` describes the statistics.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal, Self

import torch

from .._kernels import batch_stats, thin_svd
from ..errors import DataError, DegenerateError
from ..validation import F64, check_batch, input_eps
from . import _classifier, _in_memory, _persist, _ranks, _rows
from . import _second_pass as second

ScatterMode = Literal["full", "subspace", "none"]
SCATTER_MODES = ("full", "subspace", "none")


class ClassStatsBase:
    """Per-class counts, means and within-class scatter, streamed in float64: everything of
    :class:`nclab.ClassStats` but ``compute()`` (the metrics are a layer above the statistics).

    Constructors (``from_features``, ``load``, ``drop_empty``) build the class they are called on,
    so that ``nclab.ClassStats.from_features(...)`` is a ``nclab.ClassStats``.
    """

    def __init__(
        self,
        num_classes: int,
        dim: int,
        device: torch.device | str | None = None,
        scatter: ScatterMode = "subspace",
        per_class_scatter: bool = False,
        weights: torch.Tensor | None = None,
        bias: torch.Tensor | None = None,
    ):
        """Empty statistics of ``num_classes`` classes of ``dim``-dimensional features.

        Args:
            num_classes: K.
            dim: feature dimension D.
            device: where the statistics live; ``None`` adopts the device of the first batch.
            scatter: ``"subspace"`` (default, everywhere: the scatter projected on the class
                means, filled by the second pass, O(N D K)), ``"full"`` (D x D, one pass,
                O(N D^2): for data read only once) or ``"none"``; see :mod:`nclab.stats`.
            per_class_scatter: also keep the K x D x D per-class scatter matrices (``"full"``
                only).
            weights, bias: the classifier (K x D, K) the statistics are measured with, recorded
                (see :meth:`set_classifier`); also recorded when given to ``from_features`` or
                ``decision_pass``.
        """
        if not isinstance(num_classes, int) or num_classes < 1:
            raise DataError(f"num_classes must be a positive integer, got {num_classes!r}")
        if not isinstance(dim, int) or dim < 1:
            raise DataError(f"dim must be a positive integer, got {dim!r}")
        if scatter not in SCATTER_MODES:
            raise DataError(f"scatter must be one of {SCATTER_MODES}, got {scatter!r}")
        if per_class_scatter and scatter != "full":
            raise DataError(
                "per_class_scatter=True needs scatter='full' (the default is 'subspace')"
            )
        self.num_classes = num_classes
        self.dim = dim
        self.scatter_mode: ScatterMode = scatter
        self.per_class_scatter = per_class_scatter
        self.eps = torch.finfo(F64).eps  # precision of the inputs seen so far
        self.weights: torch.Tensor | None = None  # the classifier (see set_classifier)
        self.bias: torch.Tensor | None = None
        self._alloc(torch.device(device) if device is not None else torch.device("cpu"))
        if device is None:
            self.device = None  # adopt the first batch's device
        if weights is not None or bias is not None:
            self.set_classifier(weights, bias)

    # --- state -------------------------------------------------------------------------------
    def _alloc(self, device: torch.device) -> None:
        K, D = self.num_classes, self.dim
        self.device = device
        self.counts = torch.zeros(K, dtype=torch.int64, device=device)
        self.means = torch.zeros(K, D, dtype=F64, device=device)
        self.class_ss = torch.zeros(K, dtype=F64, device=device)
        full = self.scatter_mode == "full"
        self.scatter = torch.zeros(D, D, dtype=F64, device=device) if full else None
        self.class_scatter = (
            torch.zeros(K, D, D, dtype=F64, device=device) if self.per_class_scatter else None
        )
        if self.weights is not None:  # the classifier follows the statistics' device
            self.weights = self.weights.to(device)
            self.bias = self.bias.to(device) if self.bias is not None else None
        self._clear_second_pass()

    def _clear_second_pass(self) -> None:
        self.decision = second.DecisionStats()
        self.basis: torch.Tensor | None = None  # D x r, orthonormal, spans the class means
        self.basis_scatter: torch.Tensor | None = None  # r x r: Q^T S_W Q
        self.pass2_count = 0
        self._frame = None  # (mu_G, mu - mu_G, (mu - mu_G) Q), cached during the second pass
        self._plan = None  # second.Plan: the frame, searches and classifier of the second pass
        self._svd = None  # see centred_svd()

    def reset(self) -> None:
        """Forget every sample and the classifier (keeps K, D, device and options)."""
        self.eps = torch.finfo(F64).eps
        self.weights = self.bias = None
        self._alloc(self.device or torch.device("cpu"))

    @property
    def num_samples(self) -> int:
        return int(self.counts.sum())

    @property
    def within_trace(self) -> torch.Tensor:
        """Trace of the pooled within-class scatter (sum of all squared deviations)."""
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

    # --- first pass ----------------------------------------------------------------------------
    def _prepare(self, features, labels) -> tuple[torch.Tensor, torch.Tensor]:
        check_batch(features, labels, self.dim, self.num_classes)
        if self.device is None:
            self._alloc(features.device)
        self.eps = max(self.eps, input_eps(features.dtype))
        return features.detach().to(self.device), labels.to(self.device)

    def update(self, features: torch.Tensor, labels: torch.Tensor) -> None:
        """Add a batch of features (N, D) of any float dtype with integer labels (N,) in [0, K).

        Clears the second pass (the means change). Raises :class:`~nclab.errors.DataError` on
        wrong shapes, non-integer or out-of-range labels and non-finite features.
        """
        x, y = self._prepare(features, labels)
        if x.shape[0] == 0:
            return
        if _rows.update_rows(self, x, y):  # vocabulary-sized K: the batch's classes only
            return
        part = batch_stats(
            x, y, self.num_classes, self.scatter is not None, self.class_scatter is not None
        )
        self._combine(*part)

    def _combine(self, nb, mb, ssb, sb, csb) -> None:
        """Chan et al. pairwise merge of (counts, means, class_ss, scatter, class_scatter)."""
        na, nbf = self.counts.to(F64), nb.to(F64)
        n = na + nbf
        present = nb > 0
        safe_n = torch.where(n > 0, n, torch.ones_like(n))
        delta = torch.where(present[:, None], mb - self.means, torch.zeros_like(mb))
        w = na * nbf / safe_n  # zero where either side is empty
        self.means = self.means + delta * (nbf / safe_n)[:, None]
        self.class_ss = self.class_ss + ssb + w * (delta * delta).sum(1)
        # the D x D (and K x D x D) scatters are updated in place: no new matrices per batch
        if self.scatter is not None:
            self.scatter.add_(sb).addmm_((delta * w[:, None]).T, delta)
        if self.class_scatter is not None:
            self.class_scatter.add_(csb).baddbmm_(
                (delta * w[:, None])[:, :, None], delta[:, None, :]
            )
        self.counts = self.counts + nb
        self._clear_second_pass()

    def merge(self, other: ClassStatsBase) -> Self:
        """Merge another ``ClassStats`` of the same shape into this one (in place); returns self.

        The second pass is cleared (it depends on the final means) and must be redone. A classifier
        recorded on either side is kept; recorded on both, it must be the same (else DataError).
        """
        if not isinstance(other, ClassStatsBase):
            raise DataError(f"can only merge ClassStats, got {type(other).__name__}")
        if (other.num_classes, other.dim) != (self.num_classes, self.dim):
            raise DataError(
                f"cannot merge statistics of shape (K={other.num_classes}, D={other.dim}) into "
                f"(K={self.num_classes}, D={self.dim})"
            )
        _classifier.merge(self, other)  # one classifier: the same on both sides, or one side's
        if other.num_samples == 0:
            return self
        if self.scatter is not None and other.scatter is None:
            raise DataError(
                f"cannot merge statistics with scatter={other.scatter_mode!r} into "
                "scatter='full' ones"
            )
        if self.class_scatter is not None and other.class_scatter is None:
            raise DataError("cannot merge: the other statistics have no per-class scatter")
        if self.device is None:
            self._alloc(other.device)
        dev = self.device
        sb = other.scatter.to(dev) if self.scatter is not None else None
        csb = other.class_scatter.to(dev) if self.class_scatter is not None else None
        self.eps = max(self.eps, other.eps)
        self._combine(other.counts.to(dev), other.means.to(dev), other.class_ss.to(dev), sb, csb)
        return self

    # --- second pass ---------------------------------------------------------------------------
    def decision_pass(
        self,
        features: torch.Tensor,
        labels: torch.Tensor,
        weights: torch.Tensor | None = None,
        bias: torch.Tensor | None = None,
    ) -> None:
        """Second pass over (a batch of) the same features, once every ``update`` is done.

        Accumulates what needs each sample and the *final* means: the nearest-class-centre decision
        (``ncc_acc``), with a classifier (``weights`` K x D, ``bias`` K) also ``nc3_cos``, ``nc4`` and
        ``acc``, and in ``scatter="subspace"`` mode the within-class scatter projected on the span
        of the class means (for ``nc1``). Call it over all N samples; a later ``update`` or ``merge``
        clears it. The classifier is recorded on the first batch that has one (and checked on
        every later one); once recorded, batches without ``weights`` use it.
        """
        check_batch(features, labels, self.dim, self.num_classes)
        self.check_nonempty()
        dev = self.device
        dec = self.decision
        w = b = None
        if weights is not None or self.weights is not None:
            if dec.n and not dec.has_classifier:
                raise DataError(
                    "decision_pass: earlier batches had no classifier, this one has one"
                )
            if self.weights is not None:  # what is not given is the recorded classifier's
                weights = self.weights if weights is None else weights
                bias = self.bias if bias is None else bias
            w, b = _classifier.record(self, weights, bias, "decision_pass", cosines=True)
            dec.has_classifier = True
        elif bias is not None:
            raise DataError("decision_pass: bias given without weights")
        second.from_batch(self, features.detach().to(dev), labels.to(dev), w, b)

    def set_classifier(self, weights: torch.Tensor, bias: torch.Tensor | None = None) -> None:
        """Record the classifier (W: K x D, b: K) these statistics are measured with.

        Kept as float64 copies and used by ``compute()`` / ``collapse_metrics`` and the second
        pass, so W is given once. Setting the same pair again is a no-op; a different one raises
        :class:`~nclab.errors.DataError` (one ClassStats, one classifier).
        """
        _classifier.record(self, weights, bias)

    def resolve_classifier(self, weights=None, bias=None) -> tuple[torch.Tensor | None, ...]:
        """(W, b) to measure with: the recorded pair, else the given one (not recorded); given and
        recorded must be equal (else :class:`~nclab.errors.DataError`)."""
        return _classifier.resolve(self, weights, bias)

    def centred_svd(self) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
        """(mu_G, M, U, s): the mean of the class means, the K x D centred means M = mu - mu_G and
        the thin SVD M^T = U diag(s) V^T, cached until the means change (the second pass's basis
        and ``nc1`` share it)."""
        m = self.means
        c = self._svd
        if c is None or c[0] is not m or c[1] != m._version:
            g = m.mean(0)
            mc = m - g
            u, sv = thin_svd(mc.T)
            c = self._svd = (m, m._version, g, mc, u, sv)
        return c[2:]

    # --- the within-class scatter seen through a basis ------------------------------------------
    def projected_scatter(self, q: torch.Tensor) -> torch.Tensor:
        """Q^T S_W Q for a D x r matrix Q whose columns lie in the span of the class means."""
        if self.scatter_mode == "full":
            return q.T @ self.scatter @ q
        if self.scatter_mode == "subspace":
            if self.pass2_count != self.num_samples:
                raise DegenerateError(
                    "nc1 with scatter='subspace' needs the second pass over all samples: call "
                    f"stats.decision_pass(features, labels) (it has seen {self.pass2_count} of "
                    f"{self.num_samples}), or measure with scatter='full' to get nc1 in one pass"
                )
            b = self.basis
            r = q.shape[1]
            if q.shape[0] == b.shape[0] and r <= b.shape[1] and torch.equal(q, b[:, :r]):
                # Q = the basis' leading columns (nc1's): Q^T S_W Q is a corner of its matrix
                return self.basis_scatter[:r, :r].clone()
            a = b.T @ q
            return a.T @ self.basis_scatter @ a
        raise DegenerateError(
            "nc1 needs the within-class scatter; these statistics were built with scatter='none'"
        )

    # --- in-memory fast path -------------------------------------------------------------------
    @classmethod
    def from_features(
        cls,
        features: torch.Tensor,
        labels: torch.Tensor,
        num_classes: int | None = None,
        weights: torch.Tensor | None = None,
        bias: torch.Tensor | None = None,
        scatter: ScatterMode = "subspace",
        decisions: bool = True,
        chunk_rows: int | None = None,
    ) -> Self:
        """Statistics of a feature matrix already in memory, reading it twice, in chunks.

        Pass 1 computes the counts and means; pass 2 the per-class sums of squares of the
        deviations x - mu_y and the second pass of :meth:`decision_pass` (with
        ``weights``/``bias`` if given). With the default
        ``scatter="subspace"`` the within-class scatter is only formed in the span of the class
        means: O(N D K) instead of O(N D^2). ``decisions=False`` skips the second pass when the
        scatter does not need it (``"full"``/``"none"``).

        >>> import torch
        >>> from nclab import ClassStats
        >>> x = torch.randn(300, 16); y = torch.arange(300) % 3
        >>> a = ClassStats.from_features(x, y)
        >>> b = ClassStats(3, 16, scatter="full"); b.update(x, y)  # one pass
        >>> from nclab.metrics import nc1
        >>> abs(nc1(a) - nc1(b)) < 1e-10
        True
        """
        return _in_memory.from_features(
            cls, features, labels, num_classes, weights, bias, scatter, decisions, chunk_rows
        )

    # --- distributed -----------------------------------------------------------------------------
    def all_reduce(self, group=None) -> Self:
        """Merge the first-pass statistics of every ``torch.distributed`` rank, in place.

        Exact: ranks agree on the global counts and means, then each rank moves its sums of squares
        and scatter to the global means with a Chan correction before they are summed. Call it
        after the last ``update`` and before the second pass; reduce the second pass with
        :meth:`all_reduce_second_pass`. A no-op when ``torch.distributed`` is not initialised.
        """
        return _ranks.all_reduce(self, group)

    def all_reduce_second_pass(self, group=None) -> Self:
        """Sum the second-pass accumulators (decisions, projected scatter) over ranks.

        Every rank must have run :meth:`all_reduce` before its second pass, so that all ranks used
        the same means (and hence the same basis). A no-op without ``torch.distributed``.
        """
        return _ranks.all_reduce_second_pass(self, group)

    # --- persistence -----------------------------------------------------------------------------
    _TENSORS = _persist.TENSORS

    def state_dict(self) -> dict:
        """{"meta": sizes, options, eps and decision sums; "tensors": the tensors, on CPU}."""
        return _persist.state_dict(self)

    def save(self, path: str | Path) -> None:
        """Save to a ``.pt`` file (tensors on CPU); :meth:`load` restores it exactly."""
        torch.save(self.state_dict(), Path(path))

    @classmethod
    def load(cls, path: str | Path, device: torch.device | str | None = None) -> Self:
        """The statistics saved by :meth:`save`, on ``device`` (default CPU)."""
        return _persist.load(cls, path, device)

    def to(self, device: torch.device | str) -> Self:
        """Move the statistics to another device (in place); returns self."""
        dev = torch.device(device)
        for k in self._TENSORS:
            v = getattr(self, k)
            if v is not None:
                setattr(self, k, v.to(dev))
        self.device = dev
        self._frame = self._plan = None
        return self

    def drop_empty(self) -> tuple[Self, list[int]]:
        """Statistics restricted to the classes that have samples, and the dropped class indices.

        The remaining classes are renumbered in order (and the rows of a recorded classifier with
        them). The projected scatter of a completed second pass is kept (it does not depend on the
        class numbering); the decisions are not.
        """
        return _persist.drop_empty(self)

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(num_classes={self.num_classes}, dim={self.dim}, "
            f"samples={self.num_samples}, scatter={self.scatter_mode!r}, device={self.device})"
        )
