"""The per-sample kernels in cache-sized blocks dealt to threads, and the exactness arguments of the
float32 decision search (issue 28): equal to one sweep in one thread, decisions those of float64."""

from __future__ import annotations

import pytest
import torch

import nclab._kernels as kernels
from nclab import ClassStats
from nclab.errors import DataError, DegenerateError
from nclab.metrics import collapse_metrics, nc1
from nclab.threads import map_blocks, torch_threads
from reference import metrics as ref_metrics

F64 = torch.float64


@pytest.fixture
def small_blocks(monkeypatch):
    """Blocks of the minimum 256 rows whatever D, so that a test batch spans many blocks."""
    monkeypatch.setattr(kernels, "BLOCK_BYTES", 1)
    assert kernels.block_rows(64, torch.device("cpu")) == 256


def _problem(n=3000, d=48, k=80, seed=0, dtype=torch.float32):
    g = torch.Generator().manual_seed(seed)
    mu = torch.randn(k, d, generator=g, dtype=F64)
    y = torch.arange(n) % k
    y = y[torch.randperm(n, generator=g)]
    x = (mu[y] + 0.7 * torch.randn(n, d, generator=g, dtype=F64)).to(dtype)
    w = mu + 0.3 * torch.randn(k, d, generator=g, dtype=F64)
    b = 0.1 * torch.randn(k, generator=g, dtype=F64)
    return x, y, w, b


def _streamed(x, y, w, b, batch=1000):
    s = ClassStats(w.shape[0], x.shape[1])
    for i in range(0, len(y), batch):
        s.update(x[i : i + batch], y[i : i + batch])
    for i in range(0, len(y), batch):
        s.decision_pass(x[i : i + batch], y[i : i + batch], w, b)
    return s


@pytest.mark.parametrize("threads", [1, 2, 3])
def test_blocks_and_threads_give_the_float64_reference(small_blocks, threads):
    x, y, w, b = _problem()
    ref = ref_metrics(x.double().numpy(), y.numpy(), 80, w.numpy(), b.numpy())
    with torch_threads(threads):
        streamed = _streamed(x, y, w, b)
        memory = ClassStats.from_features(x, y, weights=w, bias=b, chunk_rows=100)
    for s in (streamed, memory):
        m = collapse_metrics(s)
        for key in ("nc1", "nc1_trace", "cdnv", "nc3_cos"):
            assert m[key] == pytest.approx(ref[key], rel=1e-12), key
        for key in ("ncc_acc", "nc4", "acc"):  # decisions: exactly those of float64
            assert m[key] == ref[key], key
        assert torch.equal(s.basis_scatter, s.basis_scatter.T)  # mirrored: exactly symmetric


def test_the_result_depends_on_the_thread_count_only(small_blocks):
    x, y, w, b = _problem(seed=1)
    runs = []
    for threads in (2, 2, 1):
        with torch_threads(threads):
            runs.append(_streamed(x, y, w, b))
    assert torch.equal(runs[0].basis_scatter, runs[1].basis_scatter)  # same T: bit for bit
    assert torch.equal(runs[0].means, runs[1].means)
    torch.testing.assert_close(runs[0].basis_scatter, runs[2].basis_scatter, rtol=1e-12, atol=0)
    assert runs[0].decision == runs[2].decision or abs(
        runs[0].decision.cos_sum - runs[2].decision.cos_sum
    ) <= 1e-12 * abs(runs[2].decision.cos_sum)


def test_first_pass_in_blocks_equals_one_sweep(small_blocks):
    """update() of a batch of many blocks: the same counts, means and sums of squares as the
    float64 two-pass reference, near collapse too (means at 1000, within-class std 1e-4)."""
    g = torch.Generator().manual_seed(3)
    k, d, n = 7, 40, 3000
    y = torch.arange(n) % k
    mu = 1000 + torch.randn(k, d, generator=g, dtype=F64)
    x = (mu[y] + 1e-4 * torch.randn(n, d, generator=g, dtype=F64)).float()
    xd = x.double()
    means = torch.stack([xd[y == c].mean(0) for c in range(k)])
    dev = xd - means[y]
    ss = torch.zeros(k, dtype=F64).index_add_(0, y, (dev * dev).sum(1))
    for threads in (1, 2):
        with torch_threads(threads):
            s = ClassStats(k, d)
            s.update(x, y)
        torch.testing.assert_close(s.means, means, rtol=1e-15, atol=0)
        torch.testing.assert_close(s.class_ss, ss, rtol=1e-10, atol=0)


def test_an_error_in_any_block_is_raised_after_every_thread_stopped(small_blocks):
    x, y, w, b = _problem()
    s = ClassStats(80, x.shape[1])
    s.update(x, y)
    for bad in (float("nan"), float("inf")):
        xb = x.clone()
        xb[2900, 5] = bad  # in the last block
        with torch_threads(2), pytest.raises(DataError, match="finite"):
            s.decision_pass(xb, y, w, b)
        with torch_threads(2), pytest.raises(DataError, match="finite"):
            s.decision_pass(xb, y)  # no classifier: the check is on the rows of P
    big = ClassStats(3, 2)  # finite, but their squares overflow float64
    xs = torch.tensor([[1e200, 0.0], [0.0, 1e200], [1e200, 1e200]], dtype=F64)
    big.update(xs / 1e200, torch.arange(3))
    with pytest.raises(DataError, match="too large"):
        big.decision_pass(xs, torch.arange(3), torch.eye(3, 2, dtype=F64) + 1)

    def fail(state, i, j):
        if i >= 6:
            raise DataError(f"block {i}")
        state.append(i)

    with torch_threads(2), pytest.raises(DataError, match="block 6"):
        map_blocks(10, 2, fail, lambda t: [], torch.device("cpu"))


@pytest.fixture
def small_score_blocks(monkeypatch):
    """Float32 scores searched in column blocks of 64 classes."""
    monkeypatch.setattr(kernels, "_SCORE_BYTES", 1)


def test_column_blocks_keep_ties_and_the_lowest_index(small_score_blocks):
    """Rows of W that are exact copies of each other (in different column blocks): float32 sees a
    tie (gap 0), float64 decides, and the lowest index wins, as argmax."""
    g = torch.Generator().manual_seed(4)
    k, d, n = 300, 12, 600
    w = torch.randn(k, d, generator=g, dtype=F64)
    w[250] = w[10]
    w[140] = w[70] + 1e-10 * torch.randn(d, generator=g, dtype=F64)
    y = torch.arange(n) % k
    x = w[y] + 0.05 * torch.randn(n, d, generator=g, dtype=F64)
    pred = kernels.classifier_sums(x, y, w, None)[3]
    assert torch.equal(pred, (x @ w.T).argmax(1))
    assert (pred == 10).sum() > 0 and (pred == 250).sum() == 0
    sq = (w * w).sum(1)
    assert torch.equal(kernels.nearest_centre(x, w, sq), torch.cdist(x, w).argmin(1))


@pytest.mark.parametrize("scale", [1e-21, 1e-22, 1e-23])
def test_float32_search_below_float32_normals_is_decided_exactly(scale, monkeypatch):
    """Scores of order 1e-44 fall into float32's subnormals, whose rounding error is absolute
    (2^-149), not relative: the bound's absolute term sends these rows to float64. Without it
    (the relative bound alone) some decisions are wrong."""
    g = torch.Generator().manual_seed(5)
    k, d, n = 80, 8, 400
    c = scale * torch.randn(k, d, generator=g, dtype=F64)
    y = torch.arange(n) % k
    x = c[y] + 0.3 * scale * torch.randn(n, d, generator=g, dtype=F64)
    sq = (c * c).sum(1)
    ncc_truth, clf_truth = torch.cdist(x, c).argmin(1), (x @ c.T).argmax(1)
    assert torch.equal(kernels.nearest_centre(x, c, sq), ncc_truth)
    assert torch.equal(kernels.classifier_sums(x, y, c, None)[3], clf_truth)
    if scale == 1e-23:
        monkeypatch.setattr(kernels, "_TINY32", 0.0)
        wrong = (kernels.nearest_centre(x, c, sq) != ncc_truth).sum() + (
            kernels.classifier_sums(x, y, c, None)[3] != clf_truth
        ).sum()
        assert wrong > 0


def test_no_float32_search_when_float32_products_are_not_ieee():
    """After torch.set_float32_matmul_precision("medium") float32 products may run in bfloat16,
    beyond the search's bound: every decision is then made in float64."""
    w = torch.randn(100, 8, dtype=F64)
    assert kernels.ColumnSearch(w, None, 1.0, True).fast
    old = torch.get_float32_matmul_precision()
    torch.set_float32_matmul_precision("medium")
    try:
        search = kernels.ColumnSearch(w, None, 1.0, True)
        assert not search.fast
        x = torch.randn(50, 8, dtype=F64)
        assert torch.equal(search.best(x, x.norm(dim=1)), (x @ w.T).argmax(1))
    finally:
        torch.set_float32_matmul_precision(old)


def test_the_recorded_classifier_is_not_copied_again_but_a_zero_row_is_refused():
    x, y, w, b = _problem(n=400, k=5)
    s = ClassStats(5, x.shape[1])
    s.update(x, y)
    s.decision_pass(x[:200], y[:200], w, b)
    rec = s.weights
    s.decision_pass(x[200:], y[200:], rec, s.bias)  # the recorded pair itself
    assert s.weights is rec and s.decision.n == 400
    z = w.clone()
    z[2] = 0
    t = ClassStats(5, x.shape[1])
    t.update(x, y)
    t.set_classifier(z)  # allowed here (no cosines)
    with pytest.raises(DegenerateError, match="zero"):
        t.decision_pass(x, y, t.weights)


def test_nc1_of_blocks_equals_the_unblocked_value(small_blocks):
    """The in-memory path with many chunks and threads, and the streaming one, agree on nc1 with
    one chunk (the projected scatter accumulated on its upper triangle and mirrored)."""
    x, y, w, b = _problem(n=2000, k=70, seed=9)
    one = ClassStats.from_features(x, y, chunk_rows=2000)
    with torch_threads(2):
        many = ClassStats.from_features(x, y, chunk_rows=64)
    assert nc1(many) == pytest.approx(nc1(one), rel=1e-12)
