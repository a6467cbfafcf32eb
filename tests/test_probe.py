"""CollapseProbe: hooks on named layers, two passes, equality with direct statistics, cleanup."""

import pytest
import torch
from torch import nn

from nclab import ClassStats, CollapseProbe, collapse_metrics
from nclab.errors import DataError
from reference import metrics as ref_metrics


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(1, 4, 3, padding=1)
        self.body = nn.Sequential(nn.Flatten(), nn.Linear(4 * 36, 16), nn.ReLU())
        self.fc = nn.Linear(16, 3)

    def forward(self, x):
        return self.fc(self.body(torch.relu(self.conv(x))))


def loader(seed=0, batches=5, bs=24):
    g = torch.Generator().manual_seed(seed)
    out = []
    for _ in range(batches):
        y = torch.randint(0, 3, (bs,), generator=g)
        x = torch.randn(bs, 1, 6, 6, generator=g) + y[:, None, None, None].float()
        out.append((x, y))
    return out


def all_features(model, data):
    feats, labels = [], []
    for x, y in data:
        with torch.no_grad():
            feats.append(model.body(torch.relu(model.conv(x))))
        labels.append(y)
    return torch.cat(feats), torch.cat(labels)


def test_probe_matches_direct_metrics_and_removes_hooks():
    torch.manual_seed(0)
    model = Net()
    data = loader()
    probe = CollapseProbe(
        model, ["conv", "body.2", "fc:input"], num_classes=3, reduce="avgpool", classifier="fc"
    )
    res = probe.run(data)
    assert not model.conv._forward_hooks and not model.fc._forward_hooks
    assert probe.classifier == "fc"
    h, y = all_features(model, data)
    ref = ref_metrics(
        h.double().numpy(),
        y.numpy(),
        3,
        model.fc.weight.detach().double().numpy(),
        model.fc.bias.detach().double().numpy(),
    )
    fc = res.to_dict()["fc:input"]
    for key in ("nc1", "nc1_trace", "cdnv", "nc2_etf", "nc3", "nc3_cos", "nc4", "ncc_acc", "acc"):
        assert fc[key] == pytest.approx(ref[key], rel=1e-6), key
    # body.2 records the output of the ReLU, which is the classifier input: same numbers, no W
    assert res.to_dict()["body.2"]["nc1"] == pytest.approx(fc["nc1"], rel=1e-12)
    assert "nc3" not in res.to_dict()["body.2"]
    # conv output pooled to 4 channels
    assert res.stats["conv"].dim == 4


def test_flatten_and_explicit_sides():
    model = Net()
    data = loader(1)
    with pytest.warns(UserWarning, match="'fc:input'"):  # W applies to no listed layer
        probe = CollapseProbe(model, ["conv", "fc:output"], num_classes=3, classifier="fc")
    res = probe.run(data)
    assert res.stats["conv"].dim == 4 * 36
    assert res.stats["fc:output"].dim == 3


def test_hooks_removed_on_error_and_training_mode_restored():
    model = Net()
    model.train()
    probe = CollapseProbe(model, ["fc"], num_classes=2)
    bad = [(torch.randn(4, 1, 6, 6), torch.tensor([0, 1, 2, 0]))]  # label 2 out of range for K=2
    with pytest.raises(DataError, match=r"\[0, 2\)"):
        probe.run(bad)
    assert not model.fc._forward_hooks and model.training


def test_bad_layer_names():
    with pytest.raises(DataError, match="no module named 'nope'"):
        CollapseProbe(Net(), ["nope"], num_classes=3)
    with pytest.raises(DataError, match="not an nn.Linear"):
        CollapseProbe(Net(), ["conv"], num_classes=3, classifier="conv")


def test_context_manager_observe():
    model = Net()
    data = loader(2)
    with CollapseProbe(model, ["fc:input"], num_classes=3) as probe:
        with torch.no_grad():
            for x, y in data:
                probe.observe(x, y)
    res = probe.result()
    h, y = all_features(model, data)
    s = ClassStats(3, 16, scatter="full")
    s.update(h, y)
    assert res.to_dict()["fc:input"]["nc1"] == pytest.approx(collapse_metrics(s)["nc1"], rel=1e-10)


def test_to_pandas():
    pd = pytest.importorskip("pandas")
    res = CollapseProbe(Net(), ["body.2", "fc"], num_classes=3).run(loader(3))
    df = res.to_pandas()
    assert isinstance(df, pd.DataFrame) and list(df.index) == ["body.2", "fc"]
