"""empty_classes="drop": a vocabulary-sized K where most classes never occur (token-level LMs)."""

import pytest
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

from nclab import CollapseProbe
from nclab.errors import DataError, DegenerateError

K, D, USED = 40, 6, [3, 7, 8, 19, 33]


class Net(nn.Module):
    def __init__(self, k):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(5, D), nn.Tanh())
        self.fc = nn.Linear(D, k)

    def forward(self, x):
        return self.fc(self.body(x))


def data():
    g = torch.Generator().manual_seed(0)
    y = torch.tensor(USED)[torch.randint(0, len(USED), (120,), generator=g)]
    x = torch.randn(120, 5, generator=g) + y[:, None] / 10
    return x, y


def compact_reference(second_pass):
    """The same measurement with the classes renumbered by hand and W cut to their rows."""
    torch.manual_seed(0)
    net = Net(K)
    small = Net(len(USED))
    small.body = net.body
    small.fc.weight.data = net.fc.weight.data[USED].clone()
    small.fc.bias.data = net.fc.bias.data[USED].clone()
    x, y = data()
    remap = torch.full((K,), -1, dtype=torch.long)
    remap[USED] = torch.arange(len(USED))
    ref = CollapseProbe(small, ["body", "fc:input"], len(USED), classifier="fc")
    loader = DataLoader(TensorDataset(x, remap[y]), batch_size=32)
    return net, ref.run(loader, second_pass=second_pass, progress=False)


@pytest.mark.parametrize("second_pass", [True, "cache", False])
def test_drop_equals_renumbering_by_hand(second_pass):
    net, ref = compact_reference(second_pass)
    x, y = data()
    probe = CollapseProbe(net, ["body", "fc:input"], K, classifier="fc", empty_classes="drop")
    res = probe.run(
        DataLoader(TensorDataset(x, y), batch_size=32), second_pass=second_pass, progress=False
    )
    assert res.classes == USED
    for layer in ("body", "fc:input"):
        got, want = res.metrics[layer], ref.metrics[layer]
        assert set(got) == set(want)
        for key in want:
            if key == "acc" and second_pass is False:
                continue  # one pass: argmax over all K outputs of the real classifier
            assert got[key] == pytest.approx(want[key], rel=1e-12, abs=1e-14), key
    # the recorded classifier is the rows of the classes kept
    torch.testing.assert_close(res.stats["fc:input"].weights, net.fc.weight.detach().double()[USED])


def test_default_still_refuses_empty_classes():
    net = Net(K)
    x, y = data()
    with pytest.raises(DegenerateError, match="empty_classes='drop'"):
        CollapseProbe(net, ["body"], K).run(
            DataLoader(TensorDataset(x, y), batch_size=32), progress=False
        )


def test_second_pass_with_a_class_the_first_never_saw():
    net = Net(K)
    x, y = data()
    reads = iter([0, 1])

    class Changing:
        def __iter__(self):
            yy = y.clone()
            if next(reads) == 1:
                yy[0] = 0  # class 0 appears only in the second read
            return iter([(x, yy)])

    probe = CollapseProbe(net, ["body"], K, empty_classes="drop")
    with pytest.raises(DataError, match=r"classes \[0\].*second_pass='cache'"):
        probe.run(Changing(), progress=False)


def test_bad_value():
    with pytest.raises(DataError, match="empty_classes"):
        CollapseProbe(Net(K), ["body"], K, empty_classes="skip")
