"""CollapseProbe without surprises: model modes restored module by module, eval mode by default,
warnings when the two passes may see different data, a memory guard before a D x D scatter, and
messages in the probe's own vocabulary (did-you-mean, unused modules, NaN with layer and batch)."""

import warnings

import pytest
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

from nclab import CollapseProbe
from nclab.errors import DataError, DegenerateError


def bn_net():
    torch.manual_seed(0)
    return nn.Sequential(
        nn.Linear(6, 16), nn.BatchNorm1d(16), nn.ReLU(), nn.Dropout(0.5), nn.Linear(16, 3)
    )


def pairs(batches=3, bs=30, seed=0):
    g = torch.Generator().manual_seed(seed)
    out = []
    for _ in range(batches):
        y = torch.arange(bs) % 3
        out.append((torch.randn(bs, 6, generator=g) + y[:, None].float(), y))
    return out


# --- modes -----------------------------------------------------------------------------------------
def test_run_restores_every_modules_mode():
    """Issue 12, item 4: a frozen sub-module (bn.eval() inside a training model) came back training."""
    net = bn_net()
    net.train()
    net[1].eval()
    CollapseProbe(net, ["2"], 3).run(pairs())
    assert net.training and not net[1].training and net[3].training


def test_observe_runs_in_eval_mode_and_restores_modes():
    """observe() left BatchNorm in training mode: its running statistics changed."""
    net = bn_net()
    net.train()
    before = net[1].running_mean.clone()
    with CollapseProbe(net, ["2"], 3) as probe:
        for x, y in pairs():
            probe.observe(x, y)
    assert torch.equal(net[1].running_mean, before)
    assert net.training and net[1].training
    # dropout off: two probes on the same data agree exactly
    with CollapseProbe(net, ["3"], 3) as again:
        for x, y in pairs():
            again.observe(x, y)
    assert again.result().to_dict()["3"]["nc1"] == probe.result().to_dict()["2"]["nc1"]


def test_eval_mode_false_keeps_the_models_modes():
    net = bn_net()
    net.train()
    before = net[1].running_mean.clone()
    CollapseProbe(net, ["2"], 3, eval_mode=False).run(pairs())
    assert not torch.equal(net[1].running_mean, before) and net.training


# --- two passes over the same data ------------------------------------------------------------------
def loader(**kw):
    x = torch.randn(90, 6)
    y = torch.arange(90) % 3
    return DataLoader(TensorDataset(x + y[:, None].float(), y), batch_size=20, **kw)


def test_shuffling_loader_warns_in_two_pass_mode():
    net = bn_net()
    with pytest.warns(UserWarning, match=r"shuffles.*second_pass=False"):
        CollapseProbe(net, ["2"], 3).run(loader(shuffle=True))
    with pytest.warns(UserWarning, match=r"drop_last"):
        CollapseProbe(net, ["2"], 3).run(loader(shuffle=True, drop_last=True))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        CollapseProbe(net, ["2"], 3).run(loader())
        CollapseProbe(net, ["2"], 3).run(loader(shuffle=True), second_pass=False)


class Augmented:
    """A loader that draws new noise at every pass, like random augmentation."""

    def __init__(self):
        self.g = torch.Generator().manual_seed(0)

    def __iter__(self):
        for x, y in pairs():
            yield x + 0.3 * torch.randn(x.shape, generator=self.g), y


def test_different_data_in_the_second_pass_warns():
    """Issue 12, item 3: augmentation made the two passes see different draws, with no warning."""
    with pytest.warns(UserWarning, match=r"second pass saw different data"):
        CollapseProbe(bn_net(), ["2"], 3).run(Augmented())


# --- memory ------------------------------------------------------------------------------------------
def test_full_scatter_above_the_memory_limit_is_refused_with_an_estimate():
    """Issue 12, item 4: observe() allocated a D x D scatter (4.6 GB for 16,384 dims) unwarned."""
    net = nn.Sequential(nn.Linear(6, 3000), nn.ReLU(), nn.Linear(3000, 3))
    x, y = pairs(1)[0]
    with CollapseProbe(net, ["1"], 3, max_scatter_bytes=50_000_000) as probe:
        with pytest.raises(DataError, match=r"'1'.*D=3000.*MB.*'subspace'.*run\(\)"):
            probe.observe(x, y)
    with pytest.raises(DataError, match=r"D=3000.*second_pass"):
        CollapseProbe(net, ["1"], 3, max_scatter_bytes=50_000_000).run([(x, y)], second_pass=False)
    # the default two-pass run keeps the subspace scatter: no D x D matrix
    res = CollapseProbe(net, ["1"], 3, max_scatter_bytes=50_000_000).run([(x, y)])
    assert res.stats["1"].scatter_mode == "subspace"


# --- messages ------------------------------------------------------------------------------------------
class Res(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Linear(6, 8)
        self.layer1 = nn.Sequential(nn.Linear(8, 8), nn.ReLU())
        self.layer4 = nn.Sequential(nn.Linear(8, 8), nn.Tanh())
        self.unused = nn.Linear(8, 8)
        self.fc = nn.Linear(8, 3)

    def forward(self, x):
        return self.fc(self.layer4(self.layer1(self.stem(x))))


def test_did_you_mean():
    with pytest.raises(DataError, match=r"no module named 'layr4'.*did you mean 'layer4'"):
        CollapseProbe(Res(), ["layr4"], 3)


def test_a_string_is_one_layer_name():
    """``layers="layer4"`` was read as the list of characters 'l', 'a', ..."""
    res = CollapseProbe(Res(), "layer4", 3).run(pairs())
    assert list(res.to_dict()) == ["layer4"]


def test_a_module_never_called_is_named():
    with pytest.raises(DataError, match=r"'unused'.*not called.*forward"):
        CollapseProbe(Res(), ["layer1", "unused"], 3).run(pairs())


def test_nan_features_name_the_layer_and_batch():
    data = pairs()
    data[1][0][4, 2] = float("nan")
    with pytest.raises(DataError, match=r"layer 'layer1'.*batch 1.*NaN"):
        CollapseProbe(Res(), ["layer1"], 3).run(data)


def test_missing_classes_speak_of_num_classes():
    """num_classes larger than the labels suggested stats.drop_empty(), out of a probe user's reach."""
    with pytest.raises(DegenerateError, match=r"num_classes=5.*classes 3, 4") as err:
        CollapseProbe(Res(), ["layer1"], 5).run(pairs())
    assert "drop_empty" not in str(err.value)


def test_skip_reasons_speak_of_the_probe():
    res = CollapseProbe(Res(), ["layer4", "fc:input"], 3, classifier="fc").run(pairs())
    layer4 = res.skipped["layer4"]
    assert "decision_pass" not in " ".join(layer4.values())
    assert "classifier=" in layer4["nc3_cos"] and "'fc:input'" in layer4["nc3_cos"]
    one = CollapseProbe(Res(), ["layer4"], 3).run(pairs(), second_pass=False)
    reasons = one.skipped["layer4"]
    assert "decision_pass" not in " ".join(reasons.values())
    assert "second_pass" in reasons["ncc_acc"]
