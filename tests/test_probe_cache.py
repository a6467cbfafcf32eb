"""Issue 12, "No surprises": ``run(second_pass="cache")`` reads the loader once and runs the second
pass from the pooled features kept in memory, so both passes see the same draw."""

from __future__ import annotations

import warnings

import pytest
import torch
from torch import nn

from nclab import CollapseProbe
from nclab.errors import DataError

K, D_IN = 3, 10


def model() -> nn.Module:
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(D_IN, 16), nn.ReLU(), nn.Linear(16, K))


def base(n: int = 180):
    g = torch.Generator().manual_seed(1)
    y = torch.arange(n) % K
    return 2 * torch.randn(K, D_IN, generator=g)[y] + torch.randn(n, D_IN, generator=g), y


class Augmenting:
    """A loader that adds fresh noise on every read, as a training loader's augmentation does."""

    def __init__(self, seed: int = 7, batch: int = 45):
        self.x, self.y = base()
        self.g = torch.Generator().manual_seed(seed)
        self.batch = batch

    def __iter__(self):
        for i in range(0, len(self.y), self.batch):
            x = self.x[i : i + self.batch]
            yield x + 0.5 * torch.randn(x.shape, generator=self.g), self.y[i : i + self.batch]


def probe(net: nn.Module) -> CollapseProbe:
    return CollapseProbe(net, ["0", "2:input"], K, classifier="2")


def test_cache_gives_the_numbers_of_two_reads_on_a_deterministic_loader():
    x, y = base()
    batches = [(x[i : i + 45], y[i : i + 45]) for i in range(0, 180, 45)]
    net = model()
    two = probe(net).run(batches, progress=False)
    one = probe(net).run(batches, second_pass="cache", progress=False)
    assert one.to_dict() == two.to_dict()  # the same tensors in the same order: bit for bit
    assert {"nc1", "nc3_cos", "nc4", "ncc_acc"} <= set(one.to_dict()["2:input"])


def test_cache_is_the_one_draw_value_on_an_augmenting_loader():
    net = model()
    frozen = list(Augmenting())  # one read of the augmenting loader, kept
    one_draw = probe(net).run(frozen, progress=False).to_dict()
    with pytest.warns(UserWarning, match="second pass saw different data"):
        reread = probe(net).run(Augmenting(), progress=False).to_dict()
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # one read: nothing to warn about
        cached = probe(net).run(Augmenting(), second_pass="cache", progress=False).to_dict()
    assert cached == one_draw
    for key in ("nc1", "nc3_cos"):  # continuous (the accuracies may coincide)
        assert reread["2:input"][key] != pytest.approx(cached["2:input"][key], rel=1e-6), key


def test_cache_over_its_budget_is_refused_with_the_alternatives():
    x, y = base()
    batches = [(x[i : i + 45], y[i : i + 45]) for i in range(0, 180, 45)]
    with pytest.raises(DataError, match="cache_budget") as err:
        probe(model()).run(batches, second_pass="cache", cache_budget="10kB", progress=False)
    msg = str(err.value)
    assert "second_pass=True" in msg and "second_pass=False" in msg and "reduce=" in msg
    with pytest.raises(DataError, match="cache_budget must be"):
        probe(model()).run(batches, second_pass="cache", cache_budget="lots", progress=False)
    with pytest.raises(DataError, match="second_pass must be"):
        probe(model()).run(batches, second_pass="twice", progress=False)


def test_the_shuffle_warning_names_the_cache():
    from torch.utils.data import DataLoader, TensorDataset

    x, y = base()
    loader = DataLoader(TensorDataset(x, y), batch_size=30, shuffle=True, drop_last=True)
    with pytest.warns(UserWarning, match="second_pass='cache'"):
        probe(model()).run(loader, progress=False)
