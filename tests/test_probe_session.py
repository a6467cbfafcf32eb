"""``probe.session()``: collapse measured on forward passes that something else runs (a framework's
validation loop). The numbers are those of ``probe.run`` over the same batches, bit for bit; the
padding at the end of a rank's shard is left out; beyond the cache budget, one pass."""

import pytest
import torch
from torch import nn

from nclab import CollapseProbe
from nclab.errors import DataError
from nclab.probe import Tap

K = 3


def cnn():
    torch.manual_seed(0)
    return nn.Sequential(
        nn.Conv2d(1, 4, 3), nn.ReLU(), nn.Flatten(), nn.Linear(4 * 16, 12), nn.Tanh(),
        nn.Linear(12, K),
    )  # fmt: skip


def images(batches=4, bs=20, seed=0):
    g = torch.Generator().manual_seed(seed)
    return [(torch.randn(bs, 1, 6, 6, generator=g), torch.arange(bs) % K) for _ in range(batches)]


def loop(model, session, data):
    """A framework's loop: its own forward pass, then the session reads the batch."""
    session.attach()
    with torch.no_grad():
        for x, y in data:
            session.clear()
            model(x)
            session.add((x, y))
    return session


def test_the_numbers_of_run_bit_for_bit():
    model, data = cnn(), images()
    probe = CollapseProbe(model, ["1", "5:input", "5"], K, reduce="avgpool", classifier="5")
    in_loop = loop(model, probe.session(), data).finish()
    for second_pass in (True, "cache"):
        ref = probe.run(data, second_pass=second_pass, progress=False)
        assert in_loop.to_dict() == ref.to_dict()  # equal, not approximately
    assert {"nc1", "nc3_cos", "nc4", "ncc_acc", "acc"} <= set(in_loop.to_dict()["5:input"])
    one_pass = loop(model, probe.session(second_pass=False), data).finish()
    assert one_pass.to_dict() == probe.run(data, second_pass=False, progress=False).to_dict()


def test_rows_leave_out_the_padding_at_the_end_of_a_shard():
    """A DistributedSampler repeats samples at the end of a rank's shard: finish(rows=n) keeps the
    first n rows (within the last batch)."""
    model, data = cnn(), images()
    padded = [*data, (data[0][0][:7], data[0][1][:7])]  # 5 real rows, then 2 repeated
    real = [*data, (data[0][0][:5], data[0][1][:5])]
    probe = CollapseProbe(model, ["5:input"], K, classifier="5")
    got = loop(model, probe.session(), padded).finish(rows=4 * 20 + 5)
    assert got.to_dict() == probe.run(real, progress=False).to_dict()
    assert got.stats["5:input"].num_samples == 85
    with pytest.raises(DataError, match="only the last batch"):
        loop(model, probe.session(), padded).finish(rows=60)


def test_token_rows_are_trimmed_by_sequence():
    """Token mode: the padding rows' tokens are left out with them."""
    torch.manual_seed(0)
    emb = nn.Embedding(10, 6)
    ids = torch.randint(0, 10, (5, 4))
    labels = torch.randint(0, K, (5, 4))
    labels[:, 0] = -100
    batch = {"input_ids": ids, "labels": labels}
    probe = CollapseProbe(emb, [""], K, tokens=True)
    session = probe.session(second_pass=False)
    session.attach()
    with torch.no_grad():
        emb(ids)
    session.add(batch)
    got = session.finish(rows=3)
    assert got.stats[""].num_samples == int((labels[:3] != -100).sum()) == 9


def test_beyond_the_cache_budget_the_numbers_of_one_pass():
    model, data = cnn(), images()
    probe = CollapseProbe(model, ["1", "5:input"], K, reduce="avgpool", classifier="5")
    session = loop(model, probe.session(cache_budget=1500), data)
    got = session.finish()
    assert "outgrew cache_budget" in session.degraded and "nc1 from the full" in session.degraded
    assert got.to_dict() == probe.run(data, second_pass=False, progress=False).to_dict()
    assert "nc4" not in got.to_dict()["5:input"]


def test_named_layers_max_batches_and_a_layer_not_called():
    model, data = cnn(), images()
    probe = CollapseProbe(model, {"conv": "1", "penultimate": "5:input"}, K, reduce="avgpool")
    session = probe.session(max_batches=2)
    got = loop(model, session, data).finish()
    assert sorted(got.to_dict()) == ["conv", "penultimate"]
    assert got.stats["conv"].num_samples == 40
    probe = CollapseProbe(model, [Tap("3", name="fc")], K)
    session = probe.session()
    session.attach()
    with pytest.raises(DataError, match="module '3' was not called in the forward of this batch"):
        session.add(data[0])  # no forward ran
    with pytest.raises(DataError, match="cannot read the data again"):
        probe.session(second_pass="reread")
