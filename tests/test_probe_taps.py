"""CollapseProbe taps: what a layer spec measures (a module's output by default, ``name:input``,
an element of a non-tensor output) and the classifier, named explicitly, never inferred."""

from types import SimpleNamespace

import pytest
import torch
from torch import nn

from nclab import CollapseProbe
from nclab.errors import DataError
from nclab.probe import Tap


def mlp():
    torch.manual_seed(0)
    return nn.Sequential(
        nn.Linear(6, 16), nn.ReLU(), nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 3)
    )


def data(batches=3, bs=30, d=6, seed=0):
    g = torch.Generator().manual_seed(seed)
    out = []
    for _ in range(batches):
        y = torch.arange(bs) % 3
        out.append((torch.randn(bs, d, generator=g) + y[:, None].float(), y))
    return out


def test_a_bare_name_is_the_output_wherever_it_is_listed():
    """Issue 12, item 2: an nn.Linear listed last was hooked at its input (16-d here) and the same
    layer was 32-d elsewhere in the list; a bare name is now always the module's output."""
    model = mlp()
    last = CollapseProbe(model, ["0", "2"], num_classes=3).run(data())
    first = CollapseProbe(model, ["2", "0"], num_classes=3).run(data())
    assert last.stats["2"].dim == first.stats["2"].dim == 32
    assert last.stats["0"].dim == first.stats["0"].dim == 16


def test_classifier_is_never_inferred_from_list_order():
    model = mlp()
    probe = CollapseProbe(model, ["3", "4"], num_classes=3)
    assert probe.classifier is None
    res = probe.run(data())
    assert res.stats["4"].dim == 3  # the logits
    assert "nc3" not in res.to_dict()["4"]


def test_classifier_input_tap_gets_the_weights():
    model = mlp()
    res = CollapseProbe(model, ["3", "4:input", "4"], num_classes=3, classifier="4").run(data())
    d = res.to_dict()
    assert res.stats["4:input"].dim == 32 and res.stats["4"].dim == 3
    for key in ("nc3", "nc3_cos", "nc4", "acc", "nc2_w_etf"):
        assert key in d["4:input"], key
    assert "nc3" not in d["3"] and "nc3" not in d["4"]
    # the ReLU's output is the classifier's input: same statistics
    assert d["3"]["nc1"] == pytest.approx(d["4:input"]["nc1"], rel=1e-12)


def test_classifier_given_as_the_module():
    model = mlp()
    res = CollapseProbe(model, ["4:input"], num_classes=3, classifier=model[4]).run(data())
    assert "nc3" in res.to_dict()["4:input"]


def test_classifier_without_a_tap_on_its_input_warns():
    with pytest.warns(UserWarning, match=r"'4:input'"):
        CollapseProbe(mlp(), ["2", "4"], num_classes=3, classifier="4")


def test_classifier_with_the_wrong_number_of_classes():
    with pytest.raises(DataError, match=r"classifier '4' has 3 outputs.*num_classes=5"):
        CollapseProbe(mlp(), ["4:input"], num_classes=5, classifier="4")


class Pair(nn.Module):
    """Returns (features, extra) like nn.LSTM / nn.MultiheadAttention / HF tuples."""

    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(6, 8)

    def forward(self, x):
        h = self.lin(x)
        return h, 2 * h[:, :5]


class DictOut(nn.Module):
    def __init__(self, attr=False):
        super().__init__()
        self.lin = nn.Linear(6, 8)
        self.attr = attr

    def forward(self, x):
        h = self.lin(x)
        if self.attr:  # like a ModelOutput read by attribute
            return SimpleNamespace(last_hidden_state=h, pooler_output=h[:, :3])
        return {"pooler_output": h[:, :3], "last_hidden_state": h}


class Wrapper(nn.Module):
    def __init__(self, inner):
        super().__init__()
        self.inner = inner
        self.head = nn.Linear(8, 3)

    def forward(self, x):
        out = self.inner(x)
        if isinstance(out, tuple):
            h = out[0]
        elif isinstance(out, dict):
            h = out["last_hidden_state"]
        else:
            h = out.last_hidden_state
        return self.head(h)


@pytest.mark.parametrize("inner", [Pair(), DictOut(), DictOut(attr=True)])
def test_non_tensor_outputs_are_read_by_default(inner):
    """Issue 12, item 1: tuples (first tensor), dicts and ModelOutput-like objects
    (``last_hidden_state``) are read without a selector."""
    model = Wrapper(inner)
    res = CollapseProbe(model, ["inner"], num_classes=3).run(data())
    assert res.stats["inner"].dim == 8
    direct = CollapseProbe(model, ["head:input"], num_classes=3).run(data())
    assert res.to_dict()["inner"]["nc1"] == pytest.approx(direct.to_dict()["head:input"]["nc1"])


def test_selectors_key_index_and_callable():
    model = Wrapper(DictOut())
    res = CollapseProbe(model, ["inner[pooler_output]"], num_classes=3).run(data())
    assert res.stats["inner[pooler_output]"].dim == 3
    tup = Wrapper(Pair())
    res = CollapseProbe(tup, ["inner[1]"], num_classes=3).run(data())
    assert res.stats["inner[1]"].dim == 5
    tap = Tap("inner", select=lambda out: out[1][:, :2], name="first2")
    res = CollapseProbe(tup, [tap], num_classes=3).run(data())
    assert res.stats["first2"].dim == 2


def test_output_without_a_readable_tensor_names_the_ways_to_select():
    class Odd(nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = nn.Linear(6, 3)

        def forward(self, x):
            return {"logits": self.lin(x), "aux": self.lin(x)}

    model = nn.Sequential(Odd())
    with pytest.raises(DataError, match=r"'0'.*keys.*'logits'.*'0\[logits\]'"):
        CollapseProbe(model, ["0"], num_classes=3).run(data())


def test_input_tap_of_a_module_called_with_keywords():
    class KwLayer(nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = nn.Linear(6, 4)

        def forward(self, hidden_states=None):
            return self.lin(hidden_states)

    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.layer = KwLayer()

        def forward(self, x):
            return self.layer(hidden_states=x)

    res = CollapseProbe(M(), ["layer:input"], num_classes=3).run(data())
    assert res.stats["layer:input"].dim == 6


def test_bad_suffix():
    with pytest.raises(DataError, match=r"':input' or ':output'"):
        CollapseProbe(mlp(), ["2:inptu"], num_classes=3)


def test_layers_as_a_dict_of_names_to_specs():
    """Issue 27: as torchvision's feature extractor takes them, {name: spec}; the results use the
    names."""
    model = mlp()
    named = CollapseProbe(
        model,
        {"hidden": "1", "penultimate": "4:input", "mean": Tap("3", name="ignored")},
        num_classes=3,
        classifier="4",
    ).run(data(), progress=False)
    plain = CollapseProbe(model, ["1", "4:input", "3"], 3, classifier="4").run(
        data(), progress=False
    )
    assert list(named.to_dict()) == ["hidden", "penultimate", "mean"]
    assert named.to_dict()["penultimate"] == plain.to_dict()["4:input"]
    assert named.to_dict()["mean"] == plain.to_dict()["3"]
    with pytest.raises(DataError, match="did you mean"):
        CollapseProbe(model, {"x": "40:input"}, 3)
