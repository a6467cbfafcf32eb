"""ClassStats: streaming exactness, merges, persistence, dtypes, the collapsed regime, bad input."""

import pytest
import torch

from nclab import ClassStats, collapse_metrics
from nclab.errors import DataError, DegenerateError
from nclab.metrics import nc1
from reference import metrics as ref_metrics
from reference import stats as ref_stats


def problem(seed=0, n=500, d=16, k=6):
    g = torch.Generator().manual_seed(seed)
    y = torch.randint(0, k, (n,), generator=g)
    x = 2 * torch.randn(k, d, generator=g, dtype=torch.float64)[y] + torch.randn(
        n, d, generator=g, dtype=torch.float64
    )
    return x, y


def assert_same(a: ClassStats, b: ClassStats, rtol=1e-12):
    assert torch.equal(a.counts, b.counts)
    torch.testing.assert_close(a.means, b.means, rtol=rtol, atol=1e-12)
    torch.testing.assert_close(a.class_ss, b.class_ss, rtol=rtol, atol=1e-12)
    if a.scatter is not None:
        torch.testing.assert_close(a.scatter, b.scatter, rtol=rtol, atol=1e-10)


def test_matches_reference_moments():
    x, y = problem()
    s = ClassStats(6, 16, scatter="full")
    for i in range(0, 500, 64):
        s.update(x[i : i + 64], y[i : i + 64])
    mu, _, _, sw, _ = ref_stats(x.numpy(), y.numpy(), 6)
    torch.testing.assert_close(s.means, torch.from_numpy(mu), rtol=1e-12, atol=1e-12)
    torch.testing.assert_close(s.scatter / 500, torch.from_numpy(sw), rtol=1e-11, atol=1e-12)
    assert s.num_samples == 500


def test_merge_of_two_halves_equals_one_pass():
    x, y = problem(1)
    whole = ClassStats(6, 16, per_class_scatter=True, scatter="full")
    whole.update(x, y)
    a, b = (
        ClassStats(6, 16, per_class_scatter=True, scatter="full"),
        ClassStats(6, 16, per_class_scatter=True, scatter="full"),
    )
    a.update(x[:180], y[:180])
    b.update(x[180:], y[180:])
    a.merge(b)
    assert_same(a, whole)
    torch.testing.assert_close(a.class_scatter, whole.class_scatter, rtol=1e-11, atol=1e-10)
    # per-class scatters sum to the pooled one; their traces are the per-class sums of squares
    torch.testing.assert_close(whole.class_scatter.sum(0), whole.scatter, rtol=1e-11, atol=1e-10)
    torch.testing.assert_close(
        torch.diagonal(whole.class_scatter, dim1=1, dim2=2).sum(1),
        whole.class_ss,
        rtol=1e-11,
        atol=1e-10,
    )


def test_merge_with_missing_classes_and_empty():
    x, y = problem(2)
    a = ClassStats(6, 16, scatter="full")
    a.update(x[y < 3], y[y < 3])
    b = ClassStats(6, 16, scatter="full")
    b.update(x[y >= 3], y[y >= 3])
    a.merge(b).merge(ClassStats(6, 16, scatter="full"))
    whole = ClassStats(6, 16, scatter="full")
    whole.update(x, y)
    assert_same(a, whole)


def test_from_features_equals_streaming():
    x, y = problem(3)
    stream = ClassStats(6, 16, scatter="full")
    stream.update(x, y)
    full = ClassStats.from_features(x, y, scatter="full", chunk_rows=37)
    assert_same(full, stream)
    sub = ClassStats.from_features(x, y, chunk_rows=37)
    assert sub.scatter_mode == "subspace"
    assert nc1(sub) == pytest.approx(nc1(stream), rel=1e-11)
    with pytest.raises(DataError, match="scatter='subspace'"):
        ClassStats(6, 16, scatter="full").merge(sub)
    # more data clears the second pass: nc1 then says it needs one
    sub.update(x[:10], y[:10])
    with pytest.raises(DegenerateError, match="second pass"):
        nc1(sub)


def test_from_features_falls_back_to_explicit_deviations_near_collapse():
    """The in-memory pass gets |x - mu_y|^2 by Pythagoras from x - mu_G; where that would cancel
    (samples far closer to their class mean than to mu_G) it must switch to x - mu_y itself."""
    g = torch.Generator().manual_seed(11)
    k, d, n = 4, 24, 800
    y = torch.cat([torch.arange(400) % 2, 2 + torch.arange(400) % 2])  # classes 2, 3 come last
    mu = 100 * torch.randn(k, d, generator=g, dtype=torch.float64)
    std = torch.tensor([100.0, 100.0, 1e-3, 1e-3], dtype=torch.float64)[y, None]
    x = mu[y] + std * torch.randn(n, d, generator=g, dtype=torch.float64)
    dev = x - torch.stack([x[y == c].mean(0) for c in range(k)])[y]
    ss_ref = torch.zeros(k, dtype=torch.float64).index_add_(0, y, (dev * dev).sum(1))
    ref = ref_metrics(x.numpy(), y.numpy(), k)
    s = ClassStats.from_features(x, y, chunk_rows=50)
    # the Pythagoras shortcut would be off by ~eps * 1e10 relative on classes 2 and 3
    torch.testing.assert_close(s.class_ss, ss_ref, rtol=1e-12, atol=0)
    assert nc1(s) == pytest.approx(ref["nc1"], rel=1e-10)
    assert collapse_metrics(s)["cdnv"] == pytest.approx(ref["cdnv"], rel=1e-10)


def test_streaming_subspace_two_passes():
    x, y = problem(10)
    full = ClassStats(6, 16, scatter="full")
    sub = ClassStats(6, 16, scatter="subspace")
    for i in range(0, 500, 100):
        full.update(x[i : i + 100], y[i : i + 100])
        sub.update(x[i : i + 100], y[i : i + 100])
    assert sub.scatter is None
    for i in range(0, 500, 100):
        sub.decision_pass(x[i : i + 100], y[i : i + 100])
    assert nc1(sub) == pytest.approx(nc1(full), rel=1e-11)
    none = ClassStats(6, 16, scatter="none")
    none.update(x, y)
    m = collapse_metrics(none)
    assert "nc1" in m.skipped and m["nc1_trace"] == pytest.approx(
        collapse_metrics(full)["nc1_trace"]
    )


def test_save_load_round_trip(tmp_path):
    x, y = problem(4)
    s = ClassStats(6, 16, per_class_scatter=True, scatter="full")
    s.update(x, y)
    s.decision_pass(x, y, torch.randn(6, 16, dtype=torch.float64))
    s.save(tmp_path / "s.pt")
    t = ClassStats.load(tmp_path / "s.pt")
    assert_same(s, t, rtol=0)
    assert torch.equal(s.class_scatter, t.class_scatter)
    assert collapse_metrics(s) == collapse_metrics(t)
    sub = ClassStats.from_features(x, y)
    sub.save(tmp_path / "sub.pt")
    assert nc1(ClassStats.load(tmp_path / "sub.pt")) == nc1(sub)
    (tmp_path / "bad.pt").write_text("nope")
    with pytest.raises(DataError, match="not a saved ClassStats"):
        ClassStats.load(tmp_path / "bad.pt")


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16, torch.float32, torch.float64])
def test_every_input_dtype_is_accumulated_in_float64(dtype):
    x, y = problem(5)
    xq = x.to(dtype)
    s = ClassStats(6, 16, scatter="full")
    s.update(xq, y)
    assert s.means.dtype == s.scatter.dtype == s.class_ss.dtype == torch.float64
    # exact for the values as stored in the low precision
    ref = ref_metrics(xq.double().numpy(), y.numpy(), 6)
    assert collapse_metrics(s)["nc1"] == pytest.approx(ref["nc1"], rel=1e-9)
    assert s.eps == max(torch.finfo(dtype).eps, torch.finfo(torch.float64).eps)


def test_collapsed_regime_stays_exact():
    """Means offset by 1000, within-class std 1e-4, stored in float32 (issue 2's case (c))."""
    g = torch.Generator().manual_seed(6)
    k, d, n = 5, 32, 4000
    y = torch.arange(n) % k
    mu = 1000 + torch.randn(k, d, generator=g, dtype=torch.float64)
    x32 = (mu[y] + 1e-4 * torch.randn(n, d, generator=g, dtype=torch.float64)).float()
    exact = ref_metrics(x32.double().numpy(), y.numpy(), k)["nc1"]  # float64 truth of stored values
    s = ClassStats(k, d, scatter="full")
    for i in range(0, n, 500):
        s.update(x32[i : i + 500], y[i : i + 500])
    assert nc1(s) == pytest.approx(exact, rel=1e-6)
    assert nc1(ClassStats.from_features(x32, y)) == pytest.approx(exact, rel=1e-6)
    # the textbook E[xx^T] - mu mu^T in float32 is far off here
    naive = (
        sum(
            x32[y == c].T @ x32[y == c] / (n // k)
            - torch.outer(x32[y == c].mean(0), x32[y == c].mean(0))
            for c in range(k)
        )
        / k
    )
    assert not torch.allclose(naive.double(), s.scatter / n, rtol=1e-2)


def test_reset_and_repr():
    x, y = problem(7)
    s = ClassStats(6, 16, scatter="full")
    s.update(x, y)
    s.reset()
    assert s.num_samples == 0 and float(s.scatter.abs().sum()) == 0.0
    assert "ClassStats(num_classes=6" in repr(s)


def test_device_is_adopted_from_first_batch():
    x, y = problem(8)
    s = ClassStats(6, 16, scatter="full")
    assert s.device is None
    s.update(x, y)
    assert s.device == x.device and s.means.device == x.device


@pytest.mark.parametrize(
    "features,labels,match",
    [
        (torch.randn(10), torch.zeros(10, dtype=torch.long), "2D"),
        (torch.randn(10, 5), torch.zeros(10, dtype=torch.long), "dimension 5, expected 4"),
        (torch.randn(10, 4), torch.zeros(9, dtype=torch.long), r"shape \(10,\)"),
        (torch.randn(10, 4), torch.zeros(10), "integer"),
        (torch.randn(10, 4), torch.full((10,), 3), r"\[0, 3\)"),
        (torch.randn(10, 4), torch.full((10,), -1), r"\[0, 3\)"),
        (torch.full((10, 4), float("nan")), torch.zeros(10, dtype=torch.long), "NaN"),
        (torch.full((10, 4), float("inf")), torch.zeros(10, dtype=torch.long), "NaN or Inf"),
        (torch.ones(10, 4, dtype=torch.long), torch.zeros(10, dtype=torch.long), "floating"),
    ],
)
def test_bad_input_is_a_clear_error(features, labels, match):
    s = ClassStats(3, 4, scatter="full")
    with pytest.raises(DataError, match=match):
        s.update(features, labels)


def test_from_features_without_samples_needs_num_classes():
    x, y = torch.randn(0, 4), torch.zeros(0, dtype=torch.long)
    assert ClassStats.from_features(x, y, num_classes=3).num_samples == 0
    with pytest.raises(DataError, match="num_classes"):
        ClassStats.from_features(x, y)


def test_bad_constructor_and_merge():
    with pytest.raises(DataError):
        ClassStats(0, 3, scatter="full")
    with pytest.raises(DataError, match="cannot merge"):
        ClassStats(3, 4, scatter="full").merge(ClassStats(3, 5, scatter="full"))


def test_decision_pass_requires_final_means_and_is_cleared_by_update():
    x, y = problem(9)
    s = ClassStats(6, 16, scatter="full")
    s.update(x, y)
    s.decision_pass(x, y)
    assert "ncc_acc" in collapse_metrics(s)
    s.update(x[:5], y[:5])
    m = collapse_metrics(s)
    assert "ncc_acc" not in m and "second pass" in m.skipped["ncc_acc"]
    empty = ClassStats(7, 16, scatter="full")
    empty.update(x, y)
    with pytest.raises(DegenerateError, match="no samples"):
        empty.decision_pass(x, y)


def test_in_place_accumulation_keeps_objects_apart():
    """Scatters are updated in place and batches go through shared scratch buffers: statistics
    fed alternately, or split off by drop_empty, must not see each other's data."""
    x, y = problem(12)
    a, b = (
        ClassStats(6, 16, per_class_scatter=True, scatter="full"),
        ClassStats(6, 16, per_class_scatter=True, scatter="full"),
    )
    for i in range(0, 500, 50):  # alternate: both use the same workspace slots
        a.update(x[i : i + 50], y[i : i + 50])
        b.update(2 * x[i : i + 50] + 1, y[i : i + 50])
    ref_a, ref_b = (
        ClassStats(6, 16, per_class_scatter=True, scatter="full"),
        ClassStats(6, 16, per_class_scatter=True, scatter="full"),
    )
    ref_a.update(x, y)
    ref_b.update(2 * x + 1, y)
    assert_same(a, ref_a)
    assert_same(b, ref_b)
    torch.testing.assert_close(a.class_scatter, ref_a.class_scatter, rtol=1e-11, atol=1e-10)
    c = ClassStats(8, 16, scatter="full")
    c.update(x, y)  # classes 6 and 7 empty
    kept, dropped = c.drop_empty()
    assert dropped == [6, 7]
    before = kept.scatter.clone()
    c.update(x[:100], y[:100])
    assert torch.equal(kept.scatter, before)


def test_workspace_reuses_cpu_buffers_per_slot_and_thread():
    import threading

    from nclab._kernels import Workspace

    ws = Workspace()
    cpu = torch.device("cpu")
    u = ws.get("x", 10, 20, cpu)
    v = ws.get("x", 5, 20, cpu)  # smaller request: a view of the same buffer
    assert v.data_ptr() == u.data_ptr() and v.shape == (5, 20) and v.dtype == torch.float64
    assert ws.get("other", 5, 20, cpu).data_ptr() != u.data_ptr()
    assert ws.get("x", 100, 20, cpu).numel() == 2000  # grows
    big = ws.limit // 8 + 1
    assert ws.get("x", big, 1, cpu).data_ptr() != ws.get("x", big, 1, cpu).data_ptr()
    seen = []
    t = threading.Thread(target=lambda: seen.append(ws.get("x", 5, 20, cpu).data_ptr()))
    t.start()
    t.join()
    assert seen[0] != ws.get("x", 5, 20, cpu).data_ptr()  # each thread has its own buffers


def test_a_zero_feature_skips_nc3_cos_but_keeps_the_other_decisions(tmp_path):
    """A sample whose feature is exactly zero (e.g. after a ReLU) has no cosine with w: nc3_cos is
    skipped with the count, nc4 / acc / ncc_acc are still measured, and the count survives
    save/load and the in-memory path."""
    x = torch.tensor([[1.0, 0.0], [2.0, 0.0], [0.0, 3.0], [0.0, 0.0]], dtype=torch.float64)
    y = torch.tensor([0, 0, 1, 1])
    w = torch.eye(2, dtype=torch.float64)
    s = ClassStats(2, 2, scatter="full")
    s.update(x, y)
    s.decision_pass(x, y, w)
    m = collapse_metrics(s, weights=w)
    assert "nc3_cos" not in m and "1 of 4 features are exactly zero" in m.skipped["nc3_cos"]
    assert m["acc"] == 0.75 and "nc4" in m and "ncc_acc" in m  # the zero sample is a tie
    path = tmp_path / "s.pt"
    s.save(path)
    assert ClassStats.load(path).decision.zero_features == 1
    mem = collapse_metrics(ClassStats.from_features(x, y, weights=w), weights=w)
    assert "nc3_cos" in mem.skipped and mem["acc"] == 0.75
    with pytest.raises(DegenerateError, match="exactly zero"):
        from nclab.metrics import nc3_cos

        nc3_cos(s)
