"""nclab.integrations.torchmetrics.CollapseMetric in one process: the statistics of ClassStats in
one pass, forward and merge_state through the exact merge (its sync over two gloo processes is in
test_integrations_distributed.py)."""

import importlib
import sys

import pytest
import torch
from torch import nn

from nclab import ClassStats, collapse_metrics
from nclab.errors import DataError
from nclab.integrations.torchmetrics import CollapseMetric


def _data(n=401, k=4, d=6, seed=0):
    g = torch.Generator().manual_seed(seed)
    y = torch.randint(0, k, (n,), generator=g)
    x = (50 + 3 * torch.randn(k, d, generator=g))[y] + 0.1 * torch.randn(n, d, generator=g)
    clf = nn.Linear(d, k).double()
    with torch.no_grad():
        clf.weight.copy_(torch.randn(k, d, generator=g, dtype=torch.float64))
        clf.bias.copy_(torch.randn(k, generator=g, dtype=torch.float64))
    return x, y, clf


def _reference(x, y, clf):
    """One process: ClassStats with both passes (nc3_cos, acc from the second pass)."""
    s = ClassStats(4, x.shape[1], scatter="full")
    s.update(x, y)
    s.decision_pass(x, y, clf.weight.detach(), clf.bias.detach())
    return collapse_metrics(s, clf.weight.detach(), clf.bias.detach())


def test_one_process_matches_classstats_and_skips_the_second_pass():
    x, y, clf = _data()
    metric = CollapseMetric(4, 6, classifier=clf)
    for i in range(0, len(y), 64):
        metric.update(x[i : i + 64].float(), y[i : i + 64])
    out = metric.compute()
    ref = _reference(x.float(), y, clf)
    assert set(out) | {"nc4", "ncc_acc"} == set(ref)
    for key, value in out.items():
        assert value == pytest.approx(ref[key], rel=1e-10, abs=1e-12), key
    assert sorted(metric.skipped) == ["nc4", "ncc_acc"]
    assert "second pass" in metric.skipped["nc4"]
    metric.reset()
    with pytest.raises(DataError, match="before any update"):
        metric.compute()


def test_without_classifier_the_reasons_name_the_argument():
    x, y, _ = _data()
    metric = CollapseMetric(4, 6, scatter="none")
    metric.update(x, y)
    out = metric.compute()
    assert "nc1" not in out and "nc2_etf" in out
    assert "classifier=" in metric.skipped["nc3"] and "nc1" in metric.skipped


def test_forward_and_merge_state_use_the_exact_merge():
    x, y, clf = _data()
    a = CollapseMetric(4, 6, classifier=clf)
    for lo, hi in ((0, 100), (100, 200), (200, 300), (300, 401)):
        batch = a(x[lo:hi], y[lo:hi])  # forward: this batch's metrics, and accumulate
        assert batch["nc1"] > 0
    b1, b2 = CollapseMetric(4, 6, classifier=clf), CollapseMetric(4, 6, classifier=clf)
    b1.update(x[:150], y[:150])
    b2.update(x[150:], y[150:])
    b1.merge_state(b2)
    ref = _reference(x, y, clf)
    for m in (a.compute(), b1.compute()):
        for key, value in m.items():
            assert value == pytest.approx(ref[key], rel=1e-10), key


def test_bad_arguments_are_refused():
    with pytest.raises(DataError, match="second pass"):
        CollapseMetric(3, 4, scatter="subspace")
    with pytest.raises(DataError, match="classifier"):
        CollapseMetric(3, 4, classifier="fc")
    metric = CollapseMetric(3, 4, classifier=torch.randn(3, 5))
    with pytest.raises(DataError, match=r"\(K, D\)"):
        metric.update(torch.randn(6, 4), torch.arange(6) % 3)
    with pytest.raises(DataError):
        CollapseMetric(3, 4).update(torch.randn(6, 5), torch.arange(6) % 3)


def test_missing_torchmetrics_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "torchmetrics", None)
    monkeypatch.delitem(sys.modules, "nclab.integrations.torchmetrics")
    with pytest.raises(ImportError, match=r"pip install nclab\[torchmetrics\]"):
        importlib.import_module("nclab.integrations.torchmetrics")
