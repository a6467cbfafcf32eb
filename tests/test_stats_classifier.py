"""Issue 12, item 6: the classifier belongs to the statistics; one default for ``scatter``;
``ClassStats.compute()``; ``Metrics`` keeps ``skipped`` through copies; ``ProbeResult.skipped`` is an
attribute."""

from __future__ import annotations

import copy
import pickle

import pytest
import torch
from torch import nn

from nclab import ClassStats, CollapseProbe, collapse_metrics
from nclab.errors import DataError
from nclab.metrics import Metrics, nc2_w_etf, nc3, nc3_of

K, D = 4, 12
W_KEYS = ("nc2_w_etf", "nc2_w_of", "nc3", "nc3_of")


def data(n: int = 240, seed: int = 0):
    g = torch.Generator().manual_seed(seed)
    y = torch.arange(n) % K
    x = 3 * torch.randn(K, D, generator=g)[y] + torch.randn(n, D, generator=g)
    w = torch.randn(K, D, generator=g)
    b = torch.randn(K, generator=g)
    return x, y, w, b


def test_from_features_records_the_classifier_and_the_metrics_use_it():
    x, y, w, b = data()
    s = ClassStats.from_features(x, y, weights=w, bias=b)
    assert torch.equal(s.weights, w.double()) and torch.equal(s.bias, b.double())
    m = collapse_metrics(s)  # W given once
    assert m["nc3"] == pytest.approx(nc3(s, w), rel=1e-12)
    assert m["nc3_of"] == pytest.approx(nc3_of(s, w), rel=1e-12)
    assert m["nc2_w_etf"] == pytest.approx(nc2_w_etf(w), rel=1e-12)
    assert {"nc3_cos", "nc4", "acc"} <= set(m) and m.skipped == {}


def test_decision_pass_and_the_constructor_record_the_classifier():
    x, y, w, b = data()
    s = ClassStats(K, D)
    s.update(x, y)
    s.decision_pass(x[:100], y[:100], w, b)
    s.decision_pass(x[100:], y[100:])  # later batches use the recorded classifier
    ref = ClassStats.from_features(x, y, weights=w, bias=b)
    m, r = collapse_metrics(s), collapse_metrics(ref)
    assert set(m) == set(r) and all(m[k] == pytest.approx(r[k], rel=1e-10) for k in r)
    t = ClassStats(K, D, weights=w)
    t.update(x, y)
    t.decision_pass(x, y)
    assert set(W_KEYS) | {"nc4"} <= set(t.compute())


def test_a_second_different_classifier_raises_the_same_one_is_accepted():
    x, y, w, b = data()
    s = ClassStats.from_features(x, y, weights=w, bias=b)
    same = collapse_metrics(s, weights=w.clone(), bias=b)
    assert same == collapse_metrics(s)
    assert collapse_metrics(s, weights=w.double())["nc3"] == same["nc3"]
    with pytest.raises(DataError, match="weights differ from the classifier"):
        collapse_metrics(s, weights=w + 1e-3)
    with pytest.raises(DataError, match="bias differ"):
        collapse_metrics(s, weights=w, bias=b + 1)
    with pytest.raises(DataError, match="weights differ"):
        s.decision_pass(x, y, 2 * w, b)
    with pytest.raises(DataError, match="weights differ"):
        s.compute(weights=-w)
    with pytest.raises(DataError, match="weights differ"):
        s.set_classifier(w.flip(0), b)
    # statistics without a recorded classifier take the one given (not recorded by the call)
    bare = ClassStats.from_features(x, y)
    assert "nc3" in collapse_metrics(bare, weights=w) and bare.weights is None


def test_the_classifier_is_saved_merged_and_dropped_with_its_classes(tmp_path):
    x, y, w, b = data()
    s = ClassStats.from_features(x, y, weights=w, bias=b)
    s.save(tmp_path / "s.pt")
    back = ClassStats.load(tmp_path / "s.pt")
    assert torch.equal(back.weights, s.weights) and torch.equal(back.bias, s.bias)
    assert back.compute() == s.compute()
    assert torch.equal(s.state_dict()["tensors"]["weights"], s.weights)
    # merge: one classifier; either side's is kept, two different ones raise
    a = ClassStats(K, D, scatter="full")
    a.update(x[:120], y[:120])
    c = ClassStats(K, D, scatter="full", weights=w, bias=b)
    c.update(x[120:], y[120:])
    a.merge(c)
    assert torch.equal(a.weights, w.double())
    other = ClassStats(K, D, scatter="full", weights=w + 1)
    other.update(x[:10], y[:10])
    with pytest.raises(DataError, match="weights differ"):
        a.merge(other)
    # drop_empty renumbers the classes and the classifier's rows with them
    keep = y != 2
    t = ClassStats.from_features(x[keep], y[keep], num_classes=K, weights=w, decisions=False)
    dropped, gone = t.drop_empty()
    assert gone == [2] and torch.equal(dropped.weights, w.double()[[0, 1, 3]])
    s.reset()
    assert s.weights is None


def test_every_metric_that_needs_the_classifier_is_skipped_with_the_reason():
    x, y, w, _ = data()
    m = collapse_metrics(ClassStats.from_features(x, y))
    for key in (*W_KEYS, "nc3_cos", "nc4", "acc"):
        assert key not in m and "classifier" in m.skipped[key], key
    assert "weights=W" in m.skipped["nc3"]
    only = collapse_metrics(ClassStats.from_features(x, y), keys=("nc1", "nc3"))
    assert set(only) == {"nc1"} and set(only.skipped) == {"nc3"}


def test_one_scatter_default_everywhere():
    x, y, _, _ = data()
    model = nn.Sequential(nn.Linear(D, K))
    probe = CollapseProbe(model, "0", K)
    assert ClassStats(K, D).scatter_mode == "subspace"
    assert ClassStats.from_features(x, y).scatter_mode == "subspace"
    assert probe.scatter == "subspace"
    s = ClassStats(K, D)
    s.update(x, y)
    reason = collapse_metrics(s).skipped["nc1"]
    assert "decision_pass" in reason and "scatter='full'" in reason
    s.decision_pass(x, y)
    full = ClassStats(K, D, scatter="full")
    full.update(x, y)
    assert collapse_metrics(s)["nc1"] == pytest.approx(collapse_metrics(full)["nc1"], rel=1e-10)
    with pytest.raises(DataError, match="needs scatter='full'"):
        ClassStats(K, D, per_class_scatter=True)


def test_compute_is_collapse_metrics():
    x, y, w, b = data()
    s = ClassStats.from_features(x, y, weights=w, bias=b)
    m = s.compute(global_mean="sample")
    assert isinstance(m, Metrics) and m == collapse_metrics(s, global_mean="sample")
    assert s.compute(keys=("nc1",)).keys() == {"nc1"}


def test_metrics_keep_skipped_through_copies():
    x, y, _, _ = data()
    m = collapse_metrics(ClassStats.from_features(x, y))
    assert m.skipped
    copies = [m.copy(), copy.copy(m), copy.deepcopy(m), pickle.loads(pickle.dumps(m))]
    for c in copies:
        assert isinstance(c, Metrics) and c == m and c.skipped == m.skipped
        c.skipped["extra"] = "mine"  # each copy has its own reasons
    assert "extra" not in m.skipped
    d = m.to_dict()
    assert d["metrics"] == dict(m) and d["skipped"] == m.skipped
    back = Metrics.from_dict(d)
    assert back == m and back.skipped == m.skipped


def test_probe_result_skipped_is_an_attribute_and_its_stats_hold_the_classifier():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(D, 16), nn.ReLU(), nn.Linear(16, K))
    x, y, _, _ = data()
    batches = [(x[i : i + 60], y[i : i + 60]) for i in range(0, 240, 60)]
    res = CollapseProbe(model, ["1", "2:input"], K, classifier="2").run(batches, progress=False)
    assert isinstance(res.skipped, dict) and "nc3" in res.skipped["1"]
    assert "classifier=" in res.skipped["1"]["nc3"]
    st = res.stats["2:input"]
    assert torch.equal(st.weights, model[2].weight.detach().double())
    again = st.compute()
    assert again == res.metrics["2:input"]
    one = CollapseProbe(model, ["2:input"], K, classifier="2").run(
        batches, second_pass=False, progress=False
    )
    assert torch.equal(one.stats["2:input"].weights, model[2].weight.detach().double())
    assert one.stats["2:input"].compute()["nc3"] == one.metrics["2:input"]["nc3"]
