"""Kernels behind :class:`~nclab.stats.ClassStats`: one batch's statistics, Gram matrices, bases,
and the second-pass accumulators."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import torch

from .errors import DataError
from .validation import F64


@dataclass
class DecisionStats:
    """Sums from the second pass: ``nc3_cos`` = cos_sum / n, ``nc4`` = mismatch / n,
    ``ncc_acc`` = ncc_correct / n, ``acc`` = clf_correct / n."""

    n: int = 0
    ncc_correct: int = 0
    cos_sum: float = 0.0
    mismatch: int = 0
    clf_correct: int = 0
    has_classifier: bool = False
    tensor_fields: ClassVar[tuple[str, ...]] = (
        "n",
        "ncc_correct",
        "cos_sum",
        "mismatch",
        "clf_correct",
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
            out.update(
                nc3_cos=self.cos_sum / self.n,
                nc4=self.mismatch / self.n,
                acc=self.clf_correct / self.n,
            )
        return out


# --------------------------------------------------------------------------------------------------


def batch_stats(x: torch.Tensor, y: torch.Tensor, K: int, want_scatter: bool, per_class: bool):
    """Counts, means, per-class ss, pooled scatter and per-class scatters of one batch."""
    dev = x.device
    n = x.shape[0]
    nb = torch.bincount(y, minlength=K)
    # shift each class by its first sample in the batch: exact means when features are collapsed
    first = torch.full((K,), n, dtype=torch.int64, device=dev).scatter_reduce_(
        0, y, torch.arange(n, device=dev), reduce="amin"
    )
    shift = x[first.clamp_max(n - 1)].to(F64)
    c = x.to(F64, copy=True)
    c -= shift[y]
    sums = torch.zeros(K, x.shape[1], dtype=F64, device=dev).index_add_(0, y, c)
    if not torch.isfinite(sums).all():
        raise DataError("features contain NaN or Inf values")
    dm = sums / nb.clamp_min(1).to(F64)[:, None]
    c -= dm[y]
    sb = gram(c) if want_scatter else None
    csb = None
    if per_class:
        csb = torch.zeros(K, x.shape[1], x.shape[1], dtype=F64, device=dev)
        for k in nb.nonzero().flatten().tolist():
            ck = c[y == k]
            csb[k] = ck.T @ ck
    ssb = torch.zeros(K, dtype=F64, device=dev).index_add_(0, y, c.square_().sum(1))  # c is spent
    return nb, shift + dm, ssb, sb, csb


def gram(c: torch.Tensor, block: int = 512) -> torch.Tensor:
    """C^T C computed on the upper block triangle only (the result is symmetric), then mirrored."""
    d = c.shape[1]
    if d <= block:
        return c.T @ c
    out = torch.empty(d, d, dtype=c.dtype, device=c.device)
    for i in range(0, d, block):
        blk = c[:, i : i + block].T @ c[:, i:]
        out[i : i + block, i:] = blk
        out[i:, i : i + block] = blk.T
    return out


def span_basis(vectors: torch.Tensor, svd: tuple[torch.Tensor, torch.Tensor] | None = None):
    """Orthonormal basis (D x r) of the span of the rows of ``vectors`` (K x D), in float64;
    ``svd`` = (U, s) of ``vectors.T`` when already computed."""
    u, s = svd if svd is not None else torch.linalg.svd(vectors.T, full_matrices=False)[:2]
    if s.numel() == 0 or float(s[0]) == 0.0:
        return u[:, :1]
    tol = float(s[0]) * max(vectors.shape) * torch.finfo(F64).eps
    return u[:, : max(1, int((s > tol).sum()))]


def class_means(features: torch.Tensor, y: torch.Tensor, K: int, rows: int):
    """Counts and float64 class means of an in-memory feature matrix, summed in ``rows``-row chunks
    (empty classes get zero means); non-finite features are an error."""
    n, d = features.shape
    dev = features.device
    counts = torch.bincount(y, minlength=K)
    sums = torch.zeros(K, d, dtype=F64, device=dev)
    buf = torch.empty(min(rows, n), d, dtype=F64, device=dev)  # reused: no per-chunk page faults
    for i in range(0, n, rows):
        chunk = features[i : i + rows].detach()
        x = buf[: chunk.shape[0]]
        x.copy_(chunk)
        sums.index_add_(0, y[i : i + rows], x)
    if not torch.isfinite(sums).all():
        raise DataError("features contain NaN or Inf values")
    return counts, sums / counts.clamp_min(1).to(F64)[:, None]


def classifier_sums(x: torch.Tensor, y: torch.Tensor, w: torch.Tensor, b: torch.Tensor | None):
    """For features ``x`` (N x D, float64) and a float64 classifier: (sum over samples of
    cos(x_i, w_{y_i}), number classified correctly, number of zero features, predictions).
    Zero features contribute 0 to the cosine sum; the caller decides what they mean."""
    pred = (x @ w.T + (b if b is not None else 0)).argmax(1)
    wy = w[y]
    xn = x.norm(dim=1)
    zero = xn == 0
    cos = (x * wy).sum(1) / torch.where(zero, torch.ones_like(xn), xn * wy.norm(dim=1))
    return float(cos.sum()), int((pred == y).sum()), int(zero.sum()), pred
