"""Large K in bounded memory: the D x D forms and the tiles against the dense computation."""

from __future__ import annotations

import pytest
import torch

from nclab import ClassStats
from nclab._kernels import best_columns, memory_budget, nearest_centre, set_memory_budget

F64 = torch.float64


@pytest.fixture
def small_budget():
    """A 1 MiB budget: every tiled path runs in many tiles."""
    old = set_memory_budget(1 << 20)
    yield memory_budget()
    set_memory_budget(old)


def test_blocked_decisions_equal_one_block(small_budget):
    g = torch.Generator().manual_seed(0)
    k, d, n = 3000, 40, 400
    mu = torch.randn(k, d, generator=g, dtype=F64)
    y = torch.arange(n) % k
    x = mu[y] + 0.3 * torch.randn(n, d, generator=g, dtype=F64)
    w, b = torch.randn(k, d, generator=g, dtype=F64), torch.randn(k, generator=g, dtype=F64)
    # blocked (1 MiB: 400 x 3000 scores do not fit) against the dense decisions
    sq = (mu * mu).sum(1)
    dense = ((x * x).sum(1)[:, None] + sq[None, :] - 2 * x @ mu.T).argmin(1)
    assert torch.equal(nearest_centre(x, mu, sq), dense)
    counts = torch.bincount(y, minlength=k)
    s = ClassStats(int(counts.gt(0).sum()), d, scatter="none")
    keep = counts > 0
    s.update(x, y)
    s.decision_pass(x, y, w[keep], b[keep])
    pred = (x @ w[keep].T + b[keep]).argmax(1)
    assert s.decision.clf_correct == int((pred == y).sum())


def test_near_ties_are_decided_exactly():
    # two centres far from the origin whose expanded scores tie in float64: the explicit
    # differences decide (the point is 1e-9 closer to centre 1)
    c = torch.tensor([[1e8, 0.0], [1e8, 1.0]], dtype=F64)
    p = torch.tensor([[1e8 + 3.0, 0.5 + 1e-9]], dtype=F64)
    sq = (c * c).sum(1)
    assert best_columns(p, c, sq, -2.0, largest=False)[0].tolist() == [0]  # the expansion errs
    assert nearest_centre(p, c, sq).tolist() == [1]


def _dense_frame(a, b, kind):
    g = a @ b.T
    k = a.shape[0]
    eye = torch.eye(k, dtype=F64)
    t = (eye - 1 / k) / (k - 1) ** 0.5 if kind == "etf" else eye / k**0.5
    return float(torch.linalg.matrix_norm(g / torch.linalg.matrix_norm(g) - t))


def _stats(k, d, seed=0, spread=1.0, per_class=3):
    g = torch.Generator().manual_seed(seed)
    mu = torch.randn(k, d, generator=g, dtype=F64)
    y = torch.arange(k * per_class) % k
    x = mu[y] + spread * torch.randn(len(y), d, generator=g, dtype=F64)
    s = ClassStats(k, d, scatter="none")
    s.update(x, y)
    return s


@pytest.mark.parametrize("d", [64, pytest.param(2100, marks=pytest.mark.slow)])
def test_large_k_forms_match_dense_at_k2000(small_budget, d):
    from nclab import metrics

    k = 2000
    s = _stats(k, d)
    w = torch.randn(k, d, generator=torch.Generator().manual_seed(1), dtype=F64)
    m = s.means - s.means.mean(0)
    u = m / m.norm(dim=1, keepdim=True)
    i, j = torch.triu_indices(k, k, 1)
    cos = (u @ u.T)[i, j]
    var = s.class_ss / s.counts.to(F64)
    sq = (m * m).sum(1)
    d2 = sq[:, None] + sq[None, :] - 2 * m @ m.T
    off = ~torch.eye(k, dtype=torch.bool)
    ratio = ((var[:, None] + var[None, :]) / (2 * d2))[off]
    dense = {
        "nc2_etf": _dense_frame(m, m, "etf"),
        "nc2_of": _dense_frame(s.means, s.means, "of"),
        "nc2_w_etf": _dense_frame(w, w, "etf"),
        "nc2_w_of": _dense_frame(w, w, "of"),
        "nc3_wh": _dense_frame(w, m, "etf"),
        "nc2_equiangle": float(cos.std(correction=0)),
        "cdnv": float(ratio.mean()),
    }
    ours = {
        "nc2_etf": metrics.nc2_etf(s),
        "nc2_of": metrics.nc2_of(s),
        "nc2_w_etf": metrics.nc2_w_etf(w),
        "nc2_w_of": metrics.nc2_w_of(w),
        "nc3_wh": metrics.nc3_wh(s, w),
        "nc2_equiangle": metrics.nc2_equiangle(s),
        "cdnv": metrics.cdnv(s),
    }
    for key, ref in dense.items():
        assert abs(ours[key] - ref) <= 1e-12 * abs(ref), (key, ours[key], ref)


@pytest.mark.parametrize("eps", [1e-9, 1e-6, 1e-3])
def test_near_a_perfect_frame_the_tiles_take_over(small_budget, eps):
    """A simplex ETF perturbed by eps: where the D x D forms would cancel the tiles take over; every
    value within 1e-9 relative of the dense one."""
    from nclab import metrics
    from nclab.metrics import large_k

    k = 600
    g = torch.Generator().manual_seed(3)
    etf = torch.eye(k, dtype=F64) - 1 / k + eps * torch.randn(k, k, generator=g, dtype=F64)
    s = ClassStats(k, k, scatter="none")
    s.update(etf + 5.0, torch.arange(k))
    m = s.means - s.means.mean(0)
    ref = _dense_frame(m, m, "etf")
    assert 0 < ref < 1e3 * eps
    assert abs(metrics.nc2_etf(s) - ref) <= 1e-9 * ref
    u = m / m.norm(dim=1, keepdim=True)
    i, j = torch.triu_indices(k, k, 1)
    ref_eq = float((u @ u.T)[i, j].std(correction=0))
    assert abs(large_k.cosine_moments(u)[1] ** 0.5 - ref_eq) <= 1e-9 * ref_eq


def test_tiled_equals_untiled():
    """The same metric under a budget that tiles and one that does not: equal to rounding."""
    from nclab import metrics

    s = _stats(700, 30, seed=5)
    w = torch.randn(700, 30, generator=torch.Generator().manual_seed(6), dtype=F64)
    fns = {
        "cdnv": lambda: metrics.cdnv(s),
        "cdnv_p2": lambda: metrics.cdnv(s, dist_exp=2.0),
        "nc2_etf": lambda: metrics.nc2_etf(s),
        "nc2_equiangle": lambda: metrics.nc2_equiangle(s),
        "nc3_wh": lambda: metrics.nc3_wh(s, w),
    }
    untiled = {k: f() for k, f in fns.items()}
    old = set_memory_budget(1 << 20)
    try:
        tiled = {k: f() for k, f in fns.items()}
    finally:
        set_memory_budget(old)
    for key in fns:
        assert abs(tiled[key] - untiled[key]) <= 1e-13 * abs(untiled[key]), key


def test_float32_search_defers_near_ties_to_float64():
    """K >= FAST_MIN_CLASSES: decisions searched in float32; rows the float32 scores cannot order
    (classifier rows 1e-9 apart, centres 1e-9 apart) are decided in float64, as the dense code."""
    from nclab._kernels import FAST_MIN_CLASSES, classifier_sums

    g = torch.Generator().manual_seed(7)
    k, d, n = max(FAST_MIN_CLASSES, 100), 16, 500
    w = torch.randn(k, d, generator=g, dtype=F64)
    w[1] = w[0] + 1e-9 * torch.randn(d, generator=g, dtype=F64)  # float32 cannot tell them apart
    x = w[torch.arange(n) % k] + 0.1 * torch.randn(n, d, generator=g, dtype=F64)
    y = torch.arange(n) % k
    b = torch.zeros(k, dtype=F64)
    pred = classifier_sums(x, y, w, b)[3]
    assert torch.equal(pred, (x @ w.T + b).argmax(1))
    c = w.clone()
    sq = (c * c).sum(1)
    dense = torch.cdist(x, c).argmin(1)
    assert torch.equal(nearest_centre(x, c, sq), dense)


def test_scores_beyond_float32_range_are_decided_in_float64():
    from nclab._kernels import FAST_MIN_CLASSES

    g = torch.Generator().manual_seed(8)
    k = FAST_MIN_CLASSES + 6
    c = 1e25 * torch.randn(k, 4, generator=g, dtype=F64)
    x = c[torch.arange(200) % k] + 1e23 * torch.randn(200, 4, generator=g, dtype=F64)
    assert torch.equal(nearest_centre(x, c, (c * c).sum(1)), torch.cdist(x, c).argmin(1))


@pytest.mark.parametrize("scatter", ["subspace", "full"])
def test_a_batch_of_few_classes_updates_only_their_rows(monkeypatch, scatter):
    """K >= COMPACT_MIN_CLASSES: a batch holding few of the classes (tokens of a vocabulary)
    updates their rows in place, with the arithmetic of the dense update, bit for bit."""
    import nclab.stats._rows as rows

    g = torch.Generator().manual_seed(0)
    k, d = 3000, 16
    y = torch.randint(0, 400, (4000,), generator=g) * 7  # 400 of the 3000 classes
    x = 3 * torch.randn(k, d, generator=g)[y] + torch.randn(4000, d, generator=g)

    def stream():
        s = ClassStats(k, d, scatter=scatter)
        for xb, yb in zip(x.split(500), y.split(500), strict=True):
            s.update(xb, yb)
        return s

    compact = stream()
    monkeypatch.setattr(rows, "COMPACT_MIN_CLASSES", 10**9)
    dense = stream()
    assert torch.equal(compact.counts, dense.counts)
    assert torch.equal(compact.means, dense.means)
    assert torch.equal(compact.class_ss, dense.class_ss)
    if scatter == "full":
        assert torch.equal(compact.scatter, dense.scatter)
    ref = ClassStats.from_features(x, y, num_classes=k, scatter="none", decisions=False)
    ref = ref.drop_empty()[0]
    got = compact.drop_empty()[0]
    torch.testing.assert_close(got.means, ref.means, rtol=1e-12, atol=1e-12)
    torch.testing.assert_close(got.class_ss, ref.class_ss, rtol=1e-12, atol=1e-12)
