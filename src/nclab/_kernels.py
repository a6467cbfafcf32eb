"""Kernels behind :class:`~nclab.ClassStats`: one batch's statistics, Gram matrices, bases,
class means and classifier sums, with the reusable scratch buffers they share; the decision
searches (float32 GEMMs whose near ties are decided again in float64, :class:`ColumnSearch`).

The per-sample kernels go through a batch in cache-sized row blocks (:func:`block_rows`) dealt to
torch's threads (:func:`nclab.threads.map_blocks`): a block is converted to float64 once, in a
reused buffer, and every pass over it (centring, norms, gathers) then runs from the cache.

Length: the kernels share the scratch buffers (:class:`Workspace`) and the block sizing; split
across modules they would pass both around."""

from __future__ import annotations

import math
import threading

import torch

from .errors import DataError
from .threads import map_blocks
from .validation import F64, check_finite


class Workspace(threading.local):
    """Scratch matrices reused by the per-batch kernels, one set per thread.

    On CPU a fresh multi-megabyte tensor is page-faulted in on first touch, every batch: for a
    1000 x 2048 float64 batch that costs as much as the arithmetic on it. Each named slot (one per
    dtype) keeps its largest buffer (up to ``limit`` bytes) and hands out views of it; a view is only
    valid until the next request for the same slot, so nothing built on one may be kept. On CUDA,
    whose caching allocator already reuses memory, and above ``limit`` it returns fresh tensors.
    """

    limit = 64 << 20

    def __init__(self):
        self.slots: dict[tuple[str, torch.dtype], torch.Tensor] = {}

    def get(
        self, slot: str, rows: int, cols: int, device: torch.device, dtype: torch.dtype = F64
    ) -> torch.Tensor:
        n = rows * cols
        if device.type != "cpu" or n * dtype.itemsize > self.limit:
            return torch.empty(rows, cols, dtype=dtype, device=device)
        buf = self.slots.get((slot, dtype))
        if buf is None or buf.numel() < n:
            buf = self.slots[(slot, dtype)] = torch.empty(n, dtype=dtype)
        return buf[:n].view(rows, cols)

    def clear(self) -> None:
        """Release the buffers (views handed out stay valid)."""
        self.slots.clear()


workspace = Workspace()

#: bytes of one float64 block of rows in the per-sample kernels: small enough that the passes over a
#: block (conversion, centring, norms, gathers) find it in the cache, large enough for full-speed GEMMs
BLOCK_BYTES = 4 << 20


def block_rows(dim: int, device: torch.device) -> int:
    """Rows per block of the per-sample kernels for ``dim``-wide features: ~:data:`BLOCK_BYTES` of
    float64 and at least 256 rows on CPU (GEMMs with fewer rows run below peak); unblocked on
    other devices (their kernels want large launches, their memory no cache blocking)."""
    if device.type != "cpu":
        return 1 << 62
    return max(256, min(8192, BLOCK_BYTES // (8 * max(dim, 1))))


def scratch_f64(x: torch.Tensor, slot: str = "x", device: torch.device | None = None):
    """A float64 copy of the matrix ``x`` (on ``device``, default its own) in the workspace slot
    ``slot``: valid until the next request for that slot."""
    out = workspace.get(slot, x.shape[0], x.shape[1], device or x.device)
    out.copy_(x)
    return out


def batch_stats(x: torch.Tensor, y: torch.Tensor, K: int, want_scatter: bool, per_class: bool):
    """Counts, means, per-class ss, pooled scatter and per-class scatters of one batch.

    Each class is shifted by its first sample in the batch (exact means when features are
    collapsed), summed, and the deviations from the batch's class means squared. Without scatters
    the batch is gone through in cache-sized blocks (:func:`block_rows`, dealt to torch's threads
    by :func:`~nclab.threads.map_blocks`), twice — the shifted class sums, then the squared
    deviations, recomputed from the input — with the same arithmetic, row by row, as one sweep over
    the whole batch: the passes over a block then run from the cache instead of memory."""
    dev = x.device
    n, d = x.shape
    nb = torch.bincount(y, minlength=K)
    first = torch.full((K,), n, dtype=torch.int64, device=dev).scatter_reduce_(
        0, y, torch.arange(n, device=dev), reduce="amin"
    )
    shift = x.index_select(0, first.clamp_max(n - 1)).to(F64)
    if want_scatter or per_class:  # the scatters need the whole batch's deviations at once
        c = _shifted(x, y, shift)
        sums = torch.zeros(K, d, dtype=F64, device=dev).index_add_(0, y, c)
        check_finite(sums, "features")  # a NaN or Inf feature makes its class sum non-finite
        dm = sums / nb.clamp_min(1).to(F64)[:, None]
        c -= torch.index_select(dm, 0, y, out=workspace.get("gather", n, d, dev))
        ssb = torch.zeros(K, dtype=F64, device=dev).index_add_(0, y, sq_norms(c))
        # the scatter lands in a workspace slot: the caller adds it to its own, must not keep it
        sb = gram(c, out=workspace.get("gram", d, d, dev)) if want_scatter else None
        csb = None
        if per_class:
            csb = torch.zeros(K, d, d, dtype=F64, device=dev)
            for k in nb.nonzero().flatten().tolist():
                ck = c[y == k]
                csb[k] = ck.T @ ck
        return nb, shift + dm, ssb, sb, csb
    rows = block_rows(d, dev)

    def add_sums(acc: torch.Tensor, i: int, j: int) -> None:
        acc.index_add_(0, y[i:j], _shifted(x[i:j], y[i:j], shift))

    sums = _summed(map_blocks(n, rows, add_sums, _zeros(K, d, dev), dev, min_rows=K))
    check_finite(sums, "features")  # a NaN or Inf feature makes its class sum non-finite
    dm = sums / nb.clamp_min(1).to(F64)[:, None]

    def add_ss(acc: torch.Tensor, i: int, j: int) -> None:
        c = _shifted(x[i:j], y[i:j], shift)
        c -= torch.index_select(dm, 0, y[i:j], out=workspace.get("gather", j - i, d, dev))
        acc.index_add_(0, y[i:j], sq_norms(c))

    ssb = _summed(map_blocks(n, rows, add_ss, _zeros(K, None, dev), dev, min_rows=K))
    return nb, shift + dm, ssb, None, None


def _zeros(rows: int, cols: int | None, device: torch.device):
    """make_state for :func:`~nclab.threads.map_blocks`: a float64 zero accumulator per thread."""
    shape = (rows,) if cols is None else (rows, cols)
    return lambda t: torch.zeros(shape, dtype=F64, device=device)


def _summed(parts: list[torch.Tensor]) -> torch.Tensor:
    """The threads' accumulators added in thread order (into the first)."""
    for p in parts[1:]:
        parts[0] += p
    return parts[0]


def _shifted(x: torch.Tensor, y: torch.Tensor, shift: torch.Tensor) -> torch.Tensor:
    """x - shift[y] in float64, in the workspace slot "x" (the gather in the slot "gather")."""
    c = scratch_f64(x)
    c -= torch.index_select(shift, 0, y, out=workspace.get("gather", len(y), x.shape[1], x.device))
    return c


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


def thin_svd(a: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """(U, s) of the thin SVD a = U diag(s) V^T, decomposing whichever of ``a`` and ``a.T`` is tall
    (LAPACK's divide and conquer on a wide matrix took 2.3x as long: 1024 x 4000, 1 thread)."""
    if a.shape[0] >= a.shape[1]:
        return torch.linalg.svd(a, full_matrices=False)[:2]
    _, s, vh = torch.linalg.svd(a.T, full_matrices=False)
    return vh.T, s


def svdvals(a: torch.Tensor) -> torch.Tensor:
    """The singular values of ``a``, computed on whichever of ``a`` and ``a.T`` is tall."""
    return torch.linalg.svdvals(a if a.shape[0] >= a.shape[1] else a.T)


def span_basis(vectors: torch.Tensor, svd: tuple[torch.Tensor, torch.Tensor] | None = None):
    """Orthonormal basis (D x r) of the span of the rows of ``vectors`` (K x D), in float64;
    ``svd`` = (U, s) of ``vectors.T`` when already computed."""
    u, s = svd if svd is not None else thin_svd(vectors.T)
    if s.numel() == 0 or float(s[0]) == 0.0:
        return u[:, :1]
    tol = float(s[0]) * max(vectors.shape) * torch.finfo(F64).eps
    return u[:, : max(1, int((s > tol).sum()))]


def class_means(features: torch.Tensor, y: torch.Tensor, K: int, rows: int):
    """Counts and float64 class means of an in-memory feature matrix, summed in ``rows``-row chunks
    dealt to torch's threads (empty classes get zero means); non-finite features are an error."""
    n, d = features.shape
    dev = features.device
    counts = torch.bincount(y, minlength=K)

    def add(acc: torch.Tensor, i: int, j: int) -> None:
        acc.index_add_(0, y[i:j], scratch_f64(features[i:j].detach()))

    sums = _summed(map_blocks(n, rows, add, _zeros(K, d, dev), dev, min_rows=K))
    check_finite(sums, "features")  # a NaN or Inf feature makes its class sum non-finite
    return counts, sums / counts.clamp_min(1).to(F64)[:, None]


def mirror_upper(acc: torch.Tensor) -> None:
    """Copy the upper triangle of the square ``acc`` onto its lower one, in the blocks of
    :func:`add_gram_upper`, so that an accumulator it filled is exactly symmetric."""
    d = acc.shape[0]
    block = max(32, d // 8)
    for i in range(0, d, block):
        j = i + block
        acc[j:, i:j] = acc[i:j, j:].T
        diag = acc[i:j, i:j]
        diag.copy_(torch.triu(diag) + torch.triu(diag, 1).T)


class Classifier:
    """A float64 classifier (W: K x D, b: K) prepared once for many batches: its row norms (for the
    cosines) and, from :data:`FAST_MIN_CLASSES` classes on, its :class:`ColumnSearch` (float32
    copies for the decision search)."""

    def __init__(self, w: torch.Tensor, b: torch.Tensor | None):
        self.w, self.b = w, b
        self.w_norms = torch.linalg.vector_norm(w, dim=1)
        self.search = ColumnSearch(w, b, 1.0, largest=True)

    def sums(
        self,
        x: torch.Tensor,
        y: torch.Tensor,
        x32: torch.Tensor | None = None,
        x_norms: torch.Tensor | None = None,
    ):
        """(sum over the rows of cos(x_i, w_{y_i}), number classified correctly, number of zero
        features, predictions) for float64 features ``x`` (N x D, not centred); ``x32``: ``x`` in
        float32 when the caller has it (the float32 input itself), ``x_norms``: its row norms.

        x_i . w_{y_i} is a float64 dot product of each row with its gathered class row (workspace
        slot "w_rows"), so no N x K matrix is formed for it."""
        w, b = self.w, self.b
        xn = torch.linalg.vector_norm(x, dim=1) if x_norms is None else x_norms
        if self.search.fast:  # float32 search, suspect rows decided in float64
            pred = self.search.best(x, xn, x32)
        elif x.shape[0] * w.shape[0] * 8 * 2 <= _Budget.bytes:
            logits = x @ w.T
            dots = logits.gather(1, y[:, None]).squeeze(1)
            pred = (logits + b if b is not None else logits).argmax(1)
            return self._finish(dots, xn, y, pred)
        else:  # large K: no n x K logits at once
            pred = best_columns(x, w, b, 1.0, largest=True)[0]
        rows = torch.index_select(
            w, 0, y, out=workspace.get("w_rows", len(y), w.shape[1], x.device)
        )
        return self._finish(rows.mul_(x).sum(1), xn, y, pred)

    def _finish(self, dots, xn, y, pred):
        zero = xn == 0
        cos = dots / torch.where(zero, torch.ones_like(xn), xn * self.w_norms[y])
        return float(cos.sum()), int((pred == y).sum()), int(zero.sum()), pred


def classifier_sums(x: torch.Tensor, y: torch.Tensor, w: torch.Tensor, b: torch.Tensor | None):
    """For features ``x`` (N x D, float64) and a float64 classifier: (sum over samples of
    cos(x_i, w_{y_i}), number classified correctly, number of zero features, predictions).
    Zero features contribute 0 to the cosine sum; the caller decides what they mean
    (:meth:`Classifier.sums`, prepared for this one call)."""
    return Classifier(w, b).sums(x, y)


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
_TINY32 = 2.0**-149  # spacing of float32's subnormals: the absolute error of an underflowing result
_TINY64 = 2.0**-1074  # the same for float64
#: float32 scores of a block of rows are searched in column blocks of about this many bytes
_SCORE_BYTES = 4 << 20


def ieee_float32_matmul(device: torch.device) -> bool:
    """Whether float32 matrix products on ``device`` are IEEE float32 arithmetic, which the bound
    of :class:`ColumnSearch` assumes: not after ``torch.set_float32_matmul_precision("high")`` or
    ``"medium"`` (TF32 or bfloat16 products), nor with TF32 allowed on CUDA."""
    if torch.get_float32_matmul_precision() != "highest":
        return False
    backend = torch.backends.cuda if device.type == "cuda" else torch.backends.mkldnn
    return getattr(getattr(backend, "matmul", None), "fp32_precision", "none") in ("none", "ieee")


class ColumnSearch:
    """The best column of S = scale * a b^T + offset for the rows of ``a`` (``b`` K x r and
    ``offset`` K fixed, float64; the largest or the smallest), prepared once for many batches.

    From :data:`FAST_MIN_CLASSES` columns on (``fast``), the scores are searched as float32 GEMMs
    (``b`` and ``offset`` converted once) and only the rows whose float32 gap between the best and
    the runner-up is within twice the rounding bound are decided again in float64
    (:meth:`best`): their decisions are those of float64. Below that every row is decided in
    float64 by :func:`best_columns`.

    The bound, per score of row i: (r + 4) u32 (|scale| ||a_i|| max_c ||b_c|| + max_c |offset_c|)
    for rounding a, b and the offset to float32, the r products and the r - 1 additions (u32 = 2^-24;
    Cauchy-Schwarz bounds every partial sum by ||a_i|| ||b_c||), plus an absolute
    2 (r + 2) 2^-149 (sqrt(r) (|scale| ||a_i|| + max ||b_c||) + 1) for results that underflow into
    float32's subnormals. Where max |scale| ||a_i|| ||b_c|| + |offset| could reach 1e30 (float32
    overflows at 3.4e38) every row is decided in float64.
    """

    def __init__(
        self, b: torch.Tensor, offset: torch.Tensor | None, scale: float, largest: bool
    ) -> None:
        self.b, self.offset, self.scale, self.largest = b, offset, scale, largest
        self.fast = b.shape[0] >= FAST_MIN_CLASSES and ieee_float32_matmul(b.device)
        if not self.fast:
            return
        sign = 1.0 if largest else -1.0  # the float32 search looks for the largest of sign * S
        self.alpha = sign * scale
        self.b32 = b.float()
        self.off32 = (sign * offset).float() if offset is not None else None
        self.b_max = float(torch.linalg.vector_norm(b, dim=1).max())
        self.off_max = float(offset.abs().max()) if offset is not None else 0.0

    def best(
        self, a: torch.Tensor, a_norms: torch.Tensor, a32: torch.Tensor | None = None
    ) -> torch.Tensor:
        """The best column for each row of ``a`` (n x r, float64), given its row norms ``a_norms``
        and, when the caller has it, ``a`` in float32 (``a32``; else converted here)."""
        if not self.fast:
            return best_columns(a, self.b, self.offset, self.scale, self.largest)[0]
        idx, suspect = self.search32(a, a_norms, a32)
        near = suspect.nonzero().flatten()
        if near.numel():
            idx[near] = best_columns(a[near], self.b, self.offset, self.scale, self.largest)[0]
        return idx

    def search32(self, a, a_norms, a32=None) -> tuple[torch.Tensor, torch.Tensor]:
        """(best column in float32, suspect rows): see the class docstring."""
        n, r = a.shape
        scale = abs(self.scale)
        a_max = float(a_norms.max()) if n else 0.0
        if not (
            a_max < 1e30 and self.b_max < 1e30 and scale * a_max * self.b_max + self.off_max < 1e30
        ):
            return (
                torch.zeros(n, dtype=torch.int64, device=a.device),
                torch.ones(n, dtype=torch.bool, device=a.device),
            )
        if a32 is None:
            a32 = workspace.get("a32", n, r, a.device, torch.float32).copy_(a)
        idx, gap = self._top2(a32)
        size = (scale * a_norms) * self.b_max + self.off_max
        bound = (r + 4) * _U32 * size
        bound += 2 * (r + 2) * _TINY32 * ((scale * a_norms + self.b_max) * r**0.5 + 1)
        return idx, gap.double() <= 2.5 * bound

    def _top2(self, a32: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Best column and float32 gap to the runner-up of alpha * a32 b32^T + off32 (the largest),
        over column blocks of about :data:`_SCORE_BYTES` (ties: the gap is 0)."""
        n, k = a32.shape[0], self.b32.shape[0]
        cols = max(64, min(k, _SCORE_BYTES // (4 * max(n, 1))))
        best = second = idx = None
        for j in range(0, k, cols):
            bj = self.b32[j : j + cols]
            s = workspace.get("scores", n, bj.shape[0], a32.device, torch.float32)
            if self.off32 is not None:
                torch.addmm(self.off32[j : j + cols], a32, bj.T, alpha=self.alpha, out=s)
            else:
                torch.mm(a32, bj.T, out=s)
                if self.alpha != 1.0:
                    s.mul_(self.alpha)
            if bj.shape[0] == 1:
                v1, i1, v2 = s[:, 0], torch.zeros_like(s[:, 0], dtype=torch.int64), None
            else:
                v, i = torch.topk(s, 2, dim=1)
                v1, i1, v2 = v[:, 0], i[:, 0], v[:, 1]
            if best is None:
                best, idx = v1, i1 + j
                second = v2 if v2 is not None else torch.full_like(v1, -math.inf)
                continue
            better = v1 > best
            runner = torch.maximum(best, v2) if v2 is not None else best
            second = torch.where(better, runner, torch.maximum(second, v1))
            idx = torch.where(better, i1 + j, idx)
            best = torch.where(better, v1, best)
        return idx, best - second


def nearest_centre(
    p: torch.Tensor,
    centres: torch.Tensor,
    sq: torch.Tensor,
    search: ColumnSearch | None = None,
    p_norms: torch.Tensor | None = None,
) -> torch.Tensor:
    """argmin_c ||p_i - centres_c|| for the rows of ``p`` (n x r, float64), ``sq`` = ||centres_c||^2
    (``search``: the :class:`ColumnSearch` of the scores ||c||^2 - 2 p.c, prepared once by the
    caller; ``p_norms``: the row norms of ``p`` when known).

    From :data:`FAST_MIN_CLASSES` classes on, the scores are searched with float32 GEMMs and only
    the rows whose float32 gap is within its rounding bound go on to :func:`_nearest_f64`, which
    every row takes below that.

    >>> c = torch.tensor([[0.0, 0.0], [1.0, 0.0]], dtype=torch.float64)
    >>> nearest_centre(torch.tensor([[0.9, 5.0], [0.1, -3.0]], dtype=torch.float64), c, (c * c).sum(1)).tolist()
    [1, 0]
    """
    if centres.shape[0] < FAST_MIN_CLASSES:
        return _nearest_f64(p, centres, sq)
    search = search or ColumnSearch(centres, sq, -2.0, largest=False)
    pn = torch.linalg.vector_norm(p, dim=1) if p_norms is None else p_norms
    idx, suspect = search.search32(p, pn)
    near = suspect.nonzero().flatten()
    if near.numel():
        idx[near] = _nearest_f64(p[near], centres, sq)
    return idx


def _nearest_f64(p: torch.Tensor, centres: torch.Tensor, sq: torch.Tensor) -> torch.Tensor:
    """:func:`nearest_centre` in float64: the scores ||c||^2 - 2 p.c (the expansion, one GEMM, blocked by :func:`best_columns`) decide
    every row whose best and second-best scores are further apart than the expansion's rounding
    error bound 2 (r + 2) eps (max ||c||^2 + 2 ||p_i|| max ||c||) (plus, as in
    :class:`ColumnSearch`, an absolute term for results in float64's subnormals); the few rows
    closer than that (near ties, where the expansion can mis-order) are decided again from the
    explicit differences.
    """
    idx, gap = best_columns(p, centres, sq, -2.0, largest=False)
    r = p.shape[1]
    c_max = float(sq.max()) ** 0.5
    pn = torch.linalg.vector_norm(p, dim=1)
    bound = 2 * (r + 2) * torch.finfo(F64).eps * (c_max**2 + 2 * pn * c_max)
    bound += 4 * (r + 2) * _TINY64 * ((2 * pn + c_max) * r**0.5 + 1)
    near = (gap <= bound).nonzero().flatten()
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
