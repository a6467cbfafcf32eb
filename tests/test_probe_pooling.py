"""CollapseProbe pooling: ``reduce`` for every shape (feature maps, token sequences with an attention
mask, callables) and token-level measurement (every token a sample)."""

import warnings

import pytest
import torch
from torch import nn

from nclab import ClassStats, CollapseProbe, collapse_metrics
from nclab.errors import DataError

V, H, T, K = 11, 8, 6, 3


class TinyEncoder(nn.Module):
    """Embedding + a one-layer nn.TransformerEncoder + a linear head on the first token;
    ``forward(input_ids, attention_mask)`` like a Hugging Face encoder."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.embed = nn.Embedding(V, H)
        layer = nn.TransformerEncoderLayer(H, 2, 16, dropout=0.0, batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, 1, enable_nested_tensor=False)
        self.head = nn.Linear(H, K)

    def forward(self, input_ids, attention_mask=None):
        pad = None if attention_mask is None else attention_mask == 0
        h = self.encoder(self.embed(input_ids), src_key_padding_mask=pad)
        return self.head(h[:, 0])


def token_batches(batches=3, bs=12, seed=0):
    """Dict batches with right padding: labels per sequence."""
    g = torch.Generator().manual_seed(seed)
    out = []
    for _ in range(batches):
        ids = torch.randint(1, V, (bs, T), generator=g)
        lengths = torch.randint(2, T + 1, (bs,), generator=g)
        mask = (torch.arange(T)[None, :] < lengths[:, None]).long()
        ids = ids * mask
        out.append({"input_ids": ids, "attention_mask": mask, "labels": torch.arange(bs) % K})
    return out


def encoder_outputs(model, batches):
    hs = []
    with torch.no_grad():
        for b in batches:
            pad = b["attention_mask"] == 0
            hs.append(model.encoder(model.embed(b["input_ids"]), src_key_padding_mask=pad))
    return hs


def reference_nc1(feats, labels):
    s = ClassStats(K, feats.shape[1], scatter="full")
    s.update(feats, labels)
    return collapse_metrics(s)["nc1"]


@pytest.mark.parametrize("how", ["cls", "last", "mean"])
def test_token_pooling_with_the_attention_mask(how):
    """Issue 12, item 1: CLS, last non-padding token and masked mean of a (B, T, H) output."""
    model = TinyEncoder().eval()
    batches = token_batches()
    res = CollapseProbe(model, ["encoder"], num_classes=K, reduce=how).run(batches)
    feats = []
    for b, h in zip(batches, encoder_outputs(model, batches), strict=True):
        m = b["attention_mask"]
        if how == "cls":
            feats.append(h[:, 0])
        elif how == "last":
            feats.append(h[torch.arange(len(h)), m.sum(1) - 1])
        else:
            feats.append((h * m[..., None]).sum(1) / m.sum(1, keepdim=True))
    labels = torch.cat([b["labels"] for b in batches])
    assert res.stats["encoder"].dim == H
    expected = reference_nc1(torch.cat(feats), labels)
    assert res.to_dict()["encoder"]["nc1"] == pytest.approx(expected, rel=1e-6)


def test_last_token_with_left_padding():
    model = TinyEncoder().eval()
    b = token_batches(1)[0]
    b["attention_mask"] = b["attention_mask"].flip(1)
    b["input_ids"] = b["input_ids"].flip(1)
    probe = CollapseProbe(model, ["encoder"], num_classes=K, reduce="last")
    h = encoder_outputs(model, [b])[0]
    r = probe.run([b], second_pass=False)
    assert r.stats["encoder"].means[0].tolist() == pytest.approx(
        h[:, -1][b["labels"] == 0].double().mean(0).tolist(), rel=1e-6
    )


def test_avgpool_on_a_token_sequence_is_an_error_naming_mean_and_cls():
    """Issue 12, item 1: avgpool on (B, T, H) silently averaged the hidden dimension (T-dim features)."""
    with pytest.raises(DataError, match=r"'encoder'.*\(12, 6, 8\).*'mean'.*'cls'"):
        CollapseProbe(TinyEncoder(), ["encoder"], num_classes=K, reduce="avgpool").run(
            token_batches()
        )


def test_token_pooling_of_a_feature_map_is_an_error():
    model = nn.Sequential(nn.Conv2d(1, 2, 3), nn.Flatten(), nn.Linear(2 * 16, K))
    x, y = torch.randn(6, 1, 6, 6), torch.arange(6) % K
    with pytest.raises(DataError, match=r"'0'.*\(6, 2, 4, 4\).*'avgpool'"):
        CollapseProbe(model, ["0"], num_classes=K, reduce="mean").run([(x, y)])


def test_avgpool_of_feature_maps_and_a_callable():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Conv2d(1, 4, 3), nn.Flatten(), nn.Linear(4 * 16, K))
    x, y = torch.randn(30, 1, 6, 6), torch.arange(30) % K
    avg = CollapseProbe(model, ["0"], num_classes=K, reduce="avgpool").run([(x, y)])
    mx = CollapseProbe(model, ["0"], num_classes=K, reduce=lambda t: t.amax((2, 3))).run([(x, y)])
    with torch.no_grad():
        fmap = model[0](x)
    assert avg.to_dict()["0"]["nc1"] == pytest.approx(reference_nc1(fmap.mean((2, 3)), y))
    assert mx.to_dict()["0"]["nc1"] == pytest.approx(reference_nc1(fmap.amax((2, 3)), y))


def test_per_tap_reduce():
    from nclab.probe import Tap

    model = TinyEncoder().eval()
    taps = [Tap("encoder", reduce="mean", name="enc-mean"), "head:input"]
    res = CollapseProbe(model, taps, num_classes=K, reduce="flatten", classifier="head").run(
        token_batches()
    )
    assert res.stats["enc-mean"].dim == H and "nc3" in res.to_dict()["head:input"]


def test_token_level_mode():
    """Every non-padding token is a sample with its own label (-100 is ignored, as in HF)."""
    model = TinyEncoder().eval()
    batches = token_batches()
    g = torch.Generator().manual_seed(3)
    for b in batches:
        lab = torch.randint(0, K, (len(b["labels"]), T), generator=g)
        lab[:, 1] = -100
        b["labels"] = lab
    res = CollapseProbe(model, ["encoder", "embed"], num_classes=K, tokens=True).run(batches)
    feats, labels = [], []
    for b, h in zip(batches, encoder_outputs(model, batches), strict=True):
        keep = (b["attention_mask"] == 1) & (b["labels"] != -100)
        feats.append(h[keep])
        labels.append(b["labels"][keep])
    feats, labels = torch.cat(feats), torch.cat(labels)
    assert res.stats["encoder"].num_samples == len(labels)
    assert res.to_dict()["encoder"]["nc1"] == pytest.approx(reference_nc1(feats, labels), rel=1e-6)
    assert res.stats["embed"].num_samples == len(labels)


def test_token_level_mode_needs_per_token_labels():
    with pytest.raises(DataError, match=r"tokens=True.*labels of shape \(B, T\)"):
        CollapseProbe(TinyEncoder(), ["encoder"], num_classes=K, tokens=True).run(token_batches())


@pytest.mark.parametrize("how", ["mean", "last"])
def test_dict_batches_without_a_mask_warn_once_naming_mask(how):
    """Issue 27: a dict batch without "attention_mask" pooled every token, padding included,
    silently."""
    batches = token_batches()
    for b in batches:
        del b["attention_mask"]
    model = TinyEncoder()
    with pytest.warns(
        UserWarning, match=rf"no 'attention_mask' key: reduce='{how}'.*mask='key'"
    ) as w:
        CollapseProbe(model, "encoder", K, reduce=how).run(batches, progress=False)
    assert sum("attention_mask" in str(m.message) for m in w) == 1
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the mask named, turned off, or not needed: no warning
        CollapseProbe(model, "encoder", K, reduce=how, mask=None).run(batches, progress=False)
        CollapseProbe(model, "encoder", K, reduce="cls").run(batches, progress=False)
        CollapseProbe(model, "encoder", K, reduce=how).run(token_batches(), progress=False)
