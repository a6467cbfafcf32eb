"""Kernels behind :class:`~nclab.stats.ClassStats`: one batch's statistics, Gram matrices, bases,
class means and classifier sums, with the reusable float64 scratch buffers they share."""

from __future__ import annotations

import threading

import torch

from .validation import F64, check_finite


class Workspace(threading.local):
    """Float64 scratch matrices reused by the per-batch kernels, one set per thread.

    On CPU a fresh multi-megabyte tensor is page-faulted in on first touch, every batch: for a
    1000 x 2048 float64 batch that costs as much as the arithmetic on it. Each named slot keeps its
    largest buffer (up to ``limit`` bytes) and hands out views of it; a view is only valid until the
    next request for the same slot, so nothing built on one may be kept. On CUDA, whose caching
    allocator already reuses memory, and above ``limit`` it returns fresh tensors.
    """

    limit = 64 << 20

    def __init__(self):
        self.slots: dict[str, torch.Tensor] = {}

    def get(self, slot: str, rows: int, cols: int, device: torch.device) -> torch.Tensor:
        n = rows * cols
        if device.type != "cpu" or n * 8 > self.limit:
            return torch.empty(rows, cols, dtype=F64, device=device)
        buf = self.slots.get(slot)
        if buf is None or buf.numel() < n:
            buf = self.slots[slot] = torch.empty(n, dtype=F64)
        return buf[:n].view(rows, cols)

    def clear(self) -> None:
        """Release the buffers (views handed out stay valid)."""
        self.slots.clear()


workspace = Workspace()


def scratch_f64(x: torch.Tensor, slot: str = "x", device: torch.device | None = None):
    """A float64 copy of the matrix ``x`` (on ``device``, default its own) in the workspace slot
    ``slot``: valid until the next request for that slot."""
    out = workspace.get(slot, x.shape[0], x.shape[1], device or x.device)
    out.copy_(x)
    return out


def batch_stats(x: torch.Tensor, y: torch.Tensor, K: int, want_scatter: bool, per_class: bool):
    """Counts, means, per-class ss, pooled scatter and per-class scatters of one batch."""
    dev = x.device
    n = x.shape[0]
    nb = torch.bincount(y, minlength=K)
    # shift each class by its first sample in the batch: exact means when features are collapsed
    first = torch.full((K,), n, dtype=torch.int64, device=dev).scatter_reduce_(
        0, y, torch.arange(n, device=dev), reduce="amin"
    )
    shift = x.index_select(0, first.clamp_max(n - 1)).to(F64)
    c = scratch_f64(x)
    gathered = workspace.get("gather", n, x.shape[1], dev)
    c -= torch.index_select(shift, 0, y, out=gathered)  # far faster than the gather shift[y]
    sums = torch.zeros(K, x.shape[1], dtype=F64, device=dev).index_add_(0, y, c)
    check_finite(sums, "features")  # a NaN or Inf feature makes its class sum non-finite
    dm = sums / nb.clamp_min(1).to(F64)[:, None]
    c -= torch.index_select(dm, 0, y, out=gathered)
    # the scatter lands in a workspace slot: the caller adds it to its own and must not keep it
    sb = gram(c, out=workspace.get("gram", x.shape[1], x.shape[1], dev)) if want_scatter else None
    csb = None
    if per_class:
        csb = torch.zeros(K, x.shape[1], x.shape[1], dtype=F64, device=dev)
        for k in nb.nonzero().flatten().tolist():
            ck = c[y == k]
            csb[k] = ck.T @ ck
    ssb = torch.zeros(K, dtype=F64, device=dev).index_add_(0, y, sq_norms(c))
    return nb, shift + dm, ssb, sb, csb


def sq_norms(r: torch.Tensor) -> torch.Tensor:
    """Squared row norms in one read (sqrt then square costs ~1 ulp; squaring in a separate pass
    would write and read the rows again)."""
    return torch.linalg.vector_norm(r, dim=1).square_()


def gram(c: torch.Tensor, block: int = 512, out: torch.Tensor | None = None) -> torch.Tensor:
    """C^T C computed on the upper block triangle only (the result is symmetric), then mirrored;
    written into ``out`` (D x D) when given."""
    d = c.shape[1]
    if d <= block:
        return torch.mm(c.T, c, out=out) if out is not None else c.T @ c
    if out is None:
        out = torch.empty(d, d, dtype=c.dtype, device=c.device)
    for i in range(0, d, block):
        torch.mm(c[:, i : i + block].T, c[:, i:], out=out[i : i + block, i:])
        out[i + block :, i : i + block] = out[i : i + block, i + block :].T
    return out


def add_gram_upper(acc: torch.Tensor, c: torch.Tensor) -> None:
    """acc += C^T C on the diagonal blocks and above only (the rest of ``acc`` is not touched): the
    symmetric half of the work, for accumulators read with ``eigvalsh(..., UPLO="U")``."""
    d = c.shape[1]
    block = max(32, d // 8)
    if d <= block:
        acc.addmm_(c.T, c)
        return
    for i in range(0, d, block):
        acc[i : i + block, i:].addmm_(c[:, i : i + block].T, c[:, i:])


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
    for i in range(0, n, rows):
        sums.index_add_(0, y[i : i + rows], scratch_f64(features[i : i + rows].detach()))
    check_finite(sums, "features")  # a NaN or Inf feature makes its class sum non-finite
    return counts, sums / counts.clamp_min(1).to(F64)[:, None]


def classifier_sums(x: torch.Tensor, y: torch.Tensor, w: torch.Tensor, b: torch.Tensor | None):
    """For features ``x`` (N x D, float64) and a float64 classifier: (sum over samples of
    cos(x_i, w_{y_i}), number classified correctly, number of zero features, predictions).
    Zero features contribute 0 to the cosine sum; the caller decides what they mean.

    x_i . w_{y_i} is read off the logits x W^T, so no N x D matrix of gathered rows is formed."""
    logits = x @ w.T
    dots = logits.gather(1, y[:, None]).squeeze(1)
    pred = (logits + b if b is not None else logits).argmax(1)
    xn = torch.linalg.vector_norm(x, dim=1)
    zero = xn == 0
    cos = dots / torch.where(zero, torch.ones_like(xn), xn * w.norm(dim=1)[y])
    return float(cos.sum()), int((pred == y).sum()), int(zero.sum()), pred
