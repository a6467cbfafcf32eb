"""CollapseProbe batches as users have them: ``(x, y)``, ``(x, y, *rest)``, dicts (``model(**batch)``,
labels from a key) and a ``forward=`` callable for anything else."""

import warnings
from types import SimpleNamespace

import pytest
import torch
from torch import nn

from nclab import CollapseProbe
from nclab.errors import DataError


def model():
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Linear(16, 3))


class KwModel(nn.Module):
    """forward(features=..., scale=...) like a Hugging Face model called as model(**batch)."""

    def __init__(self):
        super().__init__()
        self.net = model()

    def forward(self, features, scale=1.0):
        return self.net(features * scale)


def pairs(batches=3, bs=30, seed=0):
    g = torch.Generator().manual_seed(seed)
    out = []
    for _ in range(batches):
        y = torch.arange(bs) % 3
        out.append((torch.randn(bs, 6, generator=g) + y[:, None].float(), y))
    return out


def reference(layer="2:input", classifier="2"):
    return CollapseProbe(model(), [layer], 3, classifier=classifier).run(pairs()).to_dict()[layer]


def test_triples_x_y_index():
    """Issue 12, item 1: a loader yielding (x, y, idx) failed with a raw ValueError."""
    data = [(x, y, torch.arange(len(y))) for x, y in pairs()]
    res = CollapseProbe(model(), ["2:input"], 3, classifier="2").run(data).to_dict()["2:input"]
    assert res == pytest.approx(reference())


def test_dict_batches_call_model_with_keywords_and_read_labels():
    data = [{"features": x, "labels": y} for x, y in pairs()]
    net = KwModel()
    res = CollapseProbe(net, ["net.2:input"], 3, classifier="net.2").run(data)
    assert res.to_dict()["net.2:input"] == pytest.approx(reference())


def test_dict_batches_with_another_label_key_and_extra_inputs():
    data = [{"features": x, "scale": 1.0, "target": y} for x, y in pairs()]
    res = CollapseProbe(KwModel(), ["net.2:input"], 3, classifier="net.2", labels="target").run(
        data
    )
    assert res.to_dict()["net.2:input"] == pytest.approx(reference())


def test_tuple_with_a_dict_of_inputs():
    data = [({"features": x}, y) for x, y in pairs()]
    res = CollapseProbe(KwModel(), ["net.2:input"], 3, classifier="net.2").run(data)
    assert res.to_dict()["net.2:input"] == pytest.approx(reference())


def test_forward_and_labels_callables_for_anything_else():
    data = [SimpleNamespace(inp=x, target=y) for x, y in pairs()]
    probe = CollapseProbe(
        model(),
        ["2:input"],
        3,
        classifier="2",
        forward=lambda m, batch: m(batch.inp),
        labels=lambda batch: batch.target,
    )
    assert probe.run(data).to_dict()["2:input"] == pytest.approx(reference())


def test_a_dict_batch_without_labels_names_its_keys():
    data = [{"features": x, "y": y} for x, y in pairs()]
    with pytest.raises(DataError, match=r"'labels'.*'features', 'y'.*labels="):
        CollapseProbe(KwModel(), ["net.0"], 3).run(data)


def test_an_unreadable_batch_points_to_forward():
    data = [SimpleNamespace(inp=x, target=y) for x, y in pairs()]
    with pytest.raises(DataError, match=r"SimpleNamespace.*forward=.*labels="):
        CollapseProbe(model(), ["0"], 3).run(data)


def test_observe_takes_a_whole_batch_or_inputs_and_labels():
    data = [{"features": x, "labels": y} for x, y in pairs()]
    net = KwModel()
    with CollapseProbe(net, ["net.2:input"], 3) as probe:
        for b in data:
            probe.observe(b)
    a = probe.result().to_dict()["net.2:input"]["nc1"]
    with CollapseProbe(net, ["net.2:input"], 3) as probe:
        for b in data:
            probe.observe({"features": b["features"]}, b["labels"])
    assert probe.result().to_dict()["net.2:input"]["nc1"] == pytest.approx(a)


def test_observe_outside_a_with_block_attaches_its_hooks_for_the_call():
    net = model()
    probe = CollapseProbe(net, ["0"], 3)
    for x, y in pairs():
        probe.observe(x, y)
    assert probe.result().stats["0"].num_samples == 90 and not net[0]._forward_hooks


def test_unused_tuple_elements_warn_once_naming_forward_and_labels():
    """Issue 27: (x, y, extra) batches ran model(x) and dropped extra without a word."""
    data = [(x, y, torch.zeros(len(y))) for x, y in pairs()]
    with pytest.warns(
        UserWarning, match=r"tuples of 3 elements.*batch\[2\].*forward=.*labels="
    ) as w:
        CollapseProbe(model(), ["2:input"], 3).run(data, progress=False)
    assert sum("tuples of 3" in str(m.message) for m in w) == 1  # once, over both passes
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # said otherwise: no warning
        probe = CollapseProbe(model(), ["2:input"], 3, forward=lambda m, b: m(b[0]), labels=1)
        probe.run(data, progress=False)
        CollapseProbe(model(), ["2:input"], 3).run(pairs(), progress=False)
