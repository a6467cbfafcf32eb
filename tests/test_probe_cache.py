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


def test_beyond_the_budget_the_cache_spills_to_a_file_and_reads_the_loader_once(tmp_path):
    x, y = base()
    batches = [(x[i : i + 45], y[i : i + 45]) for i in range(0, 180, 45)]
    net = model()
    calls = []
    net.register_forward_hook(lambda *_: calls.append(1))
    two = probe(net).run(batches, progress=False)
    calls.clear()
    spilled = probe(net).run(
        batches, second_pass="cache", cache_budget="10kB", spill=tmp_path, progress=False
    )
    assert len(calls) == len(batches)  # one forward per batch: nothing is run twice
    assert spilled.to_dict() == two.to_dict()  # the same tensors read back: bit for bit
    assert list(tmp_path.iterdir()) == []  # an unnamed temporary file, gone with the pass
    with pytest.raises(DataError, match="no such folder"):
        probe(net).run(batches, second_pass="cache", spill=tmp_path / "missing", progress=False)
    with pytest.raises(DataError, match="spill must be"):
        probe(net).run(batches, second_pass="cache", spill=3, progress=False)


def test_the_spill_file_keeps_every_dtype_and_shape(tmp_path):
    from nclab.probe._cache import FeatureCache

    tap = object()
    g = torch.Generator().manual_seed(0)
    batches = [
        [(tap, torch.randn(5, 3, generator=g).to(dtype), torch.arange(5))]
        for dtype in (torch.float32, torch.float64, torch.bfloat16, torch.float16)
    ]
    batches.append([(tap, torch.empty(0, 3), torch.empty(0, dtype=torch.long))])
    cache = FeatureCache(100, spill=tmp_path)  # the first batch fits in memory, not the rest
    for i, b in enumerate(batches):
        cache.add(b, i)
    assert cache.nbytes > 0 and cache.spilled > 0
    for got, want in zip(cache.read(), batches, strict=True):
        (t1, x1, y1), (t2, x2, y2) = got[0], want[0]
        assert t1 is t2 and x1.dtype == x2.dtype and torch.equal(x1, x2) and torch.equal(y1, y2)
    cache.clear()
    assert cache.batches == [] and cache.spilled == 0 and cache._file is None
