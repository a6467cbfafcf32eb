"""Kernels behind :class:`~nclab.ClassStats`: one batch's statistics, Gram matrices, bases,
class means and classifier sums, with the reusable float64 scratch buffers they share."""

from __future__ import annotations

import math
import threading

import torch

from .errors import DataError
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
    if w.shape[0] >= FAST_MIN_CLASSES:  # float32 search, suspect rows decided in float64
        dots = torch.einsum("nd,nd->n", x, w[y])
        pred, suspect = _fast_best(x, w, b, 1.0, largest=True)
        near = suspect.nonzero().flatten()
        if near.numel():
            pred[near] = best_columns(x[near], w, b, 1.0, largest=True)[0]
    elif x.shape[0] * w.shape[0] * 8 * 2 <= _Budget.bytes:
        logits = x @ w.T
        dots = logits.gather(1, y[:, None]).squeeze(1)
        pred = (logits + b if b is not None else logits).argmax(1)
    else:  # large K: no n x K logits at once
        dots = torch.einsum("nd,nd->n", x, w[y])
        pred = best_columns(x, w, b, 1.0, largest=True)[0]
    xn = torch.linalg.vector_norm(x, dim=1)
    zero = xn == 0
    cos = dots / torch.where(zero, torch.ones_like(xn), xn * w.norm(dim=1)[y])
    return float(cos.sum()), int((pred == y).sum()), int(zero.sum()), pred


# --- the memory budget of tiled (large-K) computations -------------------------------------------
class _Budget:
    """Bytes a tiled computation may use for one tile (a block of K x K or N x K values)."""

    bytes = 512 << 20


def memory_budget() -> int:
    """The budget in bytes for one tile of pairwise or sample-by-class values (default 512 MiB)."""
    return _Budget.bytes


def set_memory_budget(nbytes: int) -> int:
    """Set the tile budget (bytes, at least 1 MiB); returns the previous one.

    >>> old = set_memory_budget(64 << 20); memory_budget() >> 20
    64
    >>> _ = set_memory_budget(old)
    """
    if not isinstance(nbytes, int) or nbytes < (1 << 20):
        raise DataError(f"memory budget must be an integer of at least 1 MiB, got {nbytes!r}")
    old, _Budget.bytes = _Budget.bytes, nbytes
    return old


def tile_size(cols: int, factor: int = 4) -> int:
    """Rows of a (rows x ``cols``) float64 tile such that ``factor`` such tiles fit the budget."""
    return max(1, min(max(cols, 1), _Budget.bytes // (8 * factor * max(cols, 1))))


def best_columns(
    a: torch.Tensor, b: torch.Tensor, offset: torch.Tensor | None, scale: float, largest: bool
) -> tuple[torch.Tensor, torch.Tensor]:
    """Per row of ``a`` (n x r): the best column of S = scale * a b^T + offset (``b`` K x r,
    ``offset`` K; the largest or the smallest) and the gap to the runner-up, computed in blocks of
    columns within the memory budget, never the whole n x K matrix.

    Returns (index, gap); ties go to the lowest index, as ``argmax``/``argmin``. When the n x K
    scores fit the budget this is one block, the same arithmetic as the unblocked expression.

    >>> a = torch.tensor([[1.0, 0.0], [0.0, 1.0]], dtype=torch.float64)
    >>> idx, gap = best_columns(a, a.flip(0), None, 1.0, True)
    >>> idx.tolist(), gap.tolist()
    ([1, 0], [1.0, 1.0])
    """
    n, k = a.shape[0], b.shape[0]
    block = max(1, _Budget.bytes // (8 * 2 * max(n, 1)))
    best = torch.full((n,), -math.inf, dtype=a.dtype, device=a.device)
    second = best.clone()
    idx = torch.zeros(n, dtype=torch.int64, device=a.device)
    rows = torch.arange(n, device=a.device)
    for j in range(0, k, block):
        s = a @ b[j : j + block].T
        if scale != 1.0:
            s.mul_(scale)
        if offset is not None:
            s.add_(offset[j : j + block])
        if not largest:
            s.neg_()
        i1 = s.argmax(1)
        v1 = s[rows, i1]
        s[rows, i1] = -math.inf
        v2 = s.max(1).values if s.shape[1] > 1 else torch.full_like(v1, -math.inf)
        better = v1 > best
        second = torch.where(better, torch.maximum(best, v2), torch.maximum(second, v1))
        idx = torch.where(better, i1 + j, idx)
        best = torch.where(better, v1, best)
    return idx, best - second


#: from this many classes on, decisions are searched with float32 GEMMs and re-checked in float64
FAST_MIN_CLASSES = 64
_U32 = 2.0**-24  # unit roundoff of float32


def _fast_best(a, b, offset, scale: float, largest: bool) -> tuple[torch.Tensor, torch.Tensor]:
    """The best column of scale * a b^T + offset searched in float32 (:func:`best_columns`), and the
    rows whose float32 gap to the runner-up is within twice the rounding bound
    (r + 4) u32 (|scale| ||a_i|| max ||b_c|| + max |offset|): only for them can the float32 order
    differ from the exact one, and they are decided again in float64 by the caller."""
    big = float(a.abs().max()) * float(b.abs().max()) * a.shape[1] * abs(scale)
    if offset is not None:
        big = max(big, float(offset.abs().max()))
    if not big < 1e30:  # the scores could overflow float32: every row is decided in float64
        n = a.shape[0]
        return torch.zeros(n, dtype=torch.int64, device=a.device), torch.ones(
            n, dtype=torch.bool, device=a.device
        )
    idx, gap = best_columns(
        a.float(), b.float(), offset.float() if offset is not None else None, scale, largest
    )
    size = abs(scale) * torch.linalg.vector_norm(a, dim=1) * float(b.norm(dim=1).max())
    if offset is not None:
        size = size + float(offset.abs().max())
    suspect = gap.double() <= 2.5 * (a.shape[1] + 4) * _U32 * size
    return idx, suspect


def nearest_centre(p: torch.Tensor, centres: torch.Tensor, sq: torch.Tensor) -> torch.Tensor:
    """argmin_c ||p_i - centres_c|| for the rows of ``p`` (n x r, float64), ``sq`` = ||centres_c||^2.

    From :data:`FAST_MIN_CLASSES` classes on, the scores are searched with float32 GEMMs and only
    the rows whose float32 gap is within its rounding bound go on to :func:`_nearest_f64`, which
    every row takes below that.

    >>> c = torch.tensor([[0.0, 0.0], [1.0, 0.0]], dtype=torch.float64)
    >>> nearest_centre(torch.tensor([[0.9, 5.0], [0.1, -3.0]], dtype=torch.float64), c, (c * c).sum(1)).tolist()
    [1, 0]
    """
    if centres.shape[0] < FAST_MIN_CLASSES:
        return _nearest_f64(p, centres, sq)
    idx, suspect = _fast_best(p, centres, sq, -2.0, largest=False)
    near = suspect.nonzero().flatten()
    if near.numel():
        idx[near] = _nearest_f64(p[near], centres, sq)
    return idx


def _nearest_f64(p: torch.Tensor, centres: torch.Tensor, sq: torch.Tensor) -> torch.Tensor:
    """:func:`nearest_centre` in float64: the scores ||c||^2 - 2 p.c (the expansion, one GEMM, blocked by :func:`best_columns`) decide
    every row whose best and second-best scores are further apart than the expansion's rounding
    error bound 2 (r + 2) eps (max ||c||^2 + 2 ||p_i|| max ||c||); the few rows closer than that
    (near ties, where the expansion can mis-order) are decided again from the explicit differences.
    """
    idx, gap = best_columns(p, centres, sq, -2.0, largest=False)
    r = p.shape[1]
    scale = float(sq.max()) + 2 * torch.linalg.vector_norm(p, dim=1) * float(sq.max()) ** 0.5
    near = (gap <= 2 * (r + 2) * torch.finfo(F64).eps * scale).nonzero().flatten()
    if near.numel():
        idx[near] = _nearest_explicit(p[near], centres)
    return idx


def _nearest_explicit(p: torch.Tensor, centres: torch.Tensor) -> torch.Tensor:
    """argmin_c ||p_i - c|| from the differences themselves (a few rows; blocked over centres)."""
    n, r = p.shape
    block = max(1, _Budget.bytes // (8 * 2 * max(n * r, 1)))
    best = torch.full((n,), math.inf, dtype=F64, device=p.device)
    idx = torch.zeros(n, dtype=torch.int64, device=p.device)
    for j in range(0, centres.shape[0], block):
        d = (p[:, None, :] - centres[None, j : j + block, :]).square_().sum(2)
        v, i = d.min(1)
        better = v < best
        idx = torch.where(better, i + j, idx)
        best = torch.where(better, v, best)
    return idx
