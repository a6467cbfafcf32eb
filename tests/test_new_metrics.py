"""The metrics added for issue 13 against direct float64 computations."""

from __future__ import annotations

import math

import pytest
import torch

from nclab import ClassStats
from nclab._kernels import set_memory_budget
from nclab.metrics.decision_views import DecisionViews
from nclab.metrics.uniformity import hyperspherical_uniformity
from nclab.metrics.variability import cdnv, cdnv_per_class
from nclab.metrics.views import classifier_global_mean, duality_cosines, nc5, unc3

F64 = torch.float64


def _data(k=40, d=12, n=600, seed=0):
    g = torch.Generator().manual_seed(seed)
    mu = 2 * torch.randn(k, d, generator=g, dtype=F64)
    y = torch.arange(n) % k
    x = mu[y] + torch.randn(n, d, generator=g, dtype=F64)
    w = mu + 0.5 * torch.randn(k, d, generator=g, dtype=F64)
    b = torch.randn(k, generator=g, dtype=F64)
    s = ClassStats(k, d, scatter="none")
    s.update(x, y)
    return s, x, y, w, b


def _pairs(s):
    m = s.means - s.means.mean(0)
    u = m / m.norm(dim=1, keepdim=True)
    i, j = torch.triu_indices(len(u), len(u), 1)
    return (u[i] - u[j]).norm(dim=1)


@pytest.mark.parametrize(
    "kernel,fn",
    [
        ("log", lambda d: -torch.log(d)),
        ("riesz", lambda d: d ** (-3.0)),
        ("gaussian", lambda d: torch.exp(-2.0 * d * d)),
        ("dist", lambda d: d),
    ],
)
def test_uniformity_kernels_match_direct_and_tiles(kernel, fn):
    s = _data()[0]
    v = fn(_pairs(s))
    mean, var = hyperspherical_uniformity(s, kernel, s=3.0)
    assert math.isclose(mean, float(v.mean()), rel_tol=1e-12)
    assert math.isclose(var, float(v.var(correction=0)), rel_tol=1e-10)
    old = set_memory_budget(1 << 20)
    try:
        big = _data(k=700, d=8, n=1400, seed=1)[0]
        tiled = hyperspherical_uniformity(big, kernel, s=3.0)
    finally:
        set_memory_budget(old)
    vb = fn(_pairs(big))
    assert math.isclose(tiled[0], float(vb.mean()), rel_tol=1e-12)
    assert math.isclose(tiled[1], float(vb.var(correction=0)), rel_tol=1e-10)


def test_duality_nc5_and_global_logits():
    s, x, y, w, b = _data()
    m = s.means - s.means.mean(0)
    cos = torch.nn.functional.cosine_similarity(w, m, dim=1)
    assert torch.allclose(duality_cosines(s, w), cos, rtol=1e-13, atol=0)
    assert math.isclose(unc3(s, w), float(cos.var(correction=0)), rel_tol=1e-12)
    ood = torch.randn(5, 12, dtype=F64) + 3
    t = ClassStats(1, 12, scatter="none")
    t.update(ood, torch.zeros(5, dtype=torch.long))
    ref = (s.means @ ood.mean(0)).abs() / (s.means.norm(dim=1) * ood.mean(0).norm())
    assert math.isclose(nc5(s, t), float(ref.mean()), rel_tol=1e-13)
    assert math.isclose(nc5(s, ood.mean(0)), float(ref.mean()), rel_tol=1e-13)
    g = s.means.mean(0)
    assert math.isclose(classifier_global_mean(s, w, b), float((w @ g + b).norm()), rel_tol=1e-13)


def test_cdnv_per_class_averages_to_cdnv():
    s = _data()[0]
    assert math.isclose(float(cdnv_per_class(s).mean()), cdnv(s), rel_tol=1e-13)
    m = s.means - s.means.mean(0)
    var = s.class_ss / s.counts.to(F64)
    d2 = torch.cdist(m, m) ** 2
    off = ~torch.eye(len(m), dtype=torch.bool)
    ref = ((var[:, None] + var[None, :]) / (2 * d2**1.5))[off].mean()
    assert math.isclose(cdnv(s, dist_exp=1.5), float(ref), rel_tol=1e-10)


@pytest.mark.parametrize("budget", [None, 1 << 20])
def test_decision_views_match_dense(budget):
    s, x, y, w, b = _data(k=300, d=10, n=3000)
    old = set_memory_budget(budget) if budget else None
    try:
        v = DecisionViews(s, w, b, topk=(1, 5))
        v.update(x[:1700], y[:1700])
        v.update(x[1700:], y[1700:])
    finally:
        if old:
            set_memory_budget(old)
    logits = x @ w.T + b
    pred = logits.argmax(1)
    ncc = torch.cdist(x, s.means).argmin(1)
    k = 300
    assert torch.equal(v.agree, torch.bincount(y[pred == ncc], minlength=k))
    assert torch.equal(v.ncc_correct, torch.bincount(y[ncc == y], minlength=k))
    agree = v.per_class()["agreement"]
    assert 0 < float(agree.mean()) < 1
    assert math.isclose(v.metrics()["nc4_class_mean"], float((1 - agree).mean()), rel_tol=1e-13)
    top5 = logits.topk(5, dim=1).indices
    assert v.metrics()["top5_acc"] == float((top5 == y[:, None]).any(1).double().mean())
    assert v.metrics()["top1_acc"] == float((pred == y).double().mean())
    s.decision_pass(x, y, w, b)  # the per-sample totals agree with the second pass
    assert s.decision.mismatch == int(v.count.sum() - v.agree.sum())


def test_probe_nc5_from_an_ood_loader():
    from torch import nn

    from nclab import CollapseProbe

    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(5, 8), nn.Tanh(), nn.Linear(8, 3))
    ind = [(torch.randn(30, 5), torch.arange(30) % 3) for _ in range(3)]
    ood = [(torch.randn(20, 5) + 2.0, torch.full((20,), 99)) for _ in range(2)]  # labels ignored
    probe = CollapseProbe(model, ["1"], num_classes=3)
    res = probe.run(ind, progress=False)
    got = probe.nc5(ood, progress=False)["1"]
    with torch.no_grad():
        feats = torch.tanh(model[0](torch.cat([x for x, _ in ood]))).double()
    mu = res.stats["1"].means
    g = feats.mean(0)
    ref = ((mu @ g).abs() / (mu.norm(dim=1) * g.norm())).mean()
    assert math.isclose(got, float(ref), rel_tol=1e-12)
