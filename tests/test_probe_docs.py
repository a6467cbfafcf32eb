"""The probe's documentation runs: the README's "Measuring collapse" block (with small stand-ins for
its data and models) and the example of docs/metrics.md's "Measuring a model" section."""

from pathlib import Path

import pytest
import torch
from torch import nn

ROOT = Path(__file__).resolve().parents[1]


def python_block(text: str, after: str, last: bool = False) -> str:
    section = text.split(after, 1)[1].split("\n## ", 1)[0]
    blocks = [b.split("```", 1)[0] for b in section.split("```python")[1:]]
    return blocks[-1] if last else blocks[0]


class ResNetLike(nn.Module):
    """The module names the README uses: layer3, layer4, avgpool, fc (512 features, 10 classes)."""

    def __init__(self):
        super().__init__()
        self.layer3 = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU())
        self.layer4 = nn.Sequential(nn.Conv2d(8, 512, 3, padding=1), nn.Tanh())
        self.avgpool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(512, 10)

    def forward(self, x):
        return self.fc(self.avgpool(self.layer4(self.layer3(x))).flatten(1))


class TextModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(30, 16)
        layer = nn.TransformerEncoderLayer(16, 2, 32, dropout=0.0, batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, 1, enable_nested_tensor=False)
        self.head = nn.Linear(16, 2)

    def forward(self, input_ids, attention_mask):
        h = self.encoder(self.embed(input_ids), src_key_padding_mask=attention_mask == 0)
        return self.head(h[:, 0])


def test_readme_measuring_block_runs():
    torch.manual_seed(0)
    code = python_block((ROOT / "README.md").read_text(), "## Measuring collapse")
    model = ResNetLike()
    loader = [(torch.randn(40, 3, 4, 4), torch.arange(40) % 10) for _ in range(3)]
    mask = torch.ones(8, 5, dtype=torch.long)
    mask[::2, 3:] = 0
    text_loader = [
        {
            "input_ids": torch.randint(1, 30, (8, 5)),
            "attention_mask": mask,
            "labels": torch.arange(8) % 2,
        }
        for _ in range(2)
    ]
    scope = {
        "features": torch.randn(200, 512),
        "labels": torch.arange(200) % 10,
        "W": torch.randn(10, 512),
        "b": torch.randn(10),
        "loader": loader,
        "feats": lambda x: model.avgpool(model.layer4(model.layer3(x))).flatten(1).detach(),
        "model": model,
        "text_model": TextModel(),
        "text_loader": text_loader,
        **tiny_gpt2(),
    }
    exec(code, scope)
    assert list(scope["table"]) == ["encoder"]
    assert "nc1" in scope["table"]["encoder"]
    assert 0 < len(scope["lm"].classes) < scope["vocab_size"]
    assert "nc1" in scope["lm"].to_dict()["lm_head:input"]
    assert scope["callback"] in scope["trainer"].callbacks  # the validation-loop callback


def tiny_gpt2() -> dict:
    """A GPT-2 LM from a config (no weights downloaded) and token batches for the README's block."""
    transformers = pytest.importorskip("transformers")
    vocab = 300
    cfg = transformers.GPT2Config(vocab_size=vocab, n_positions=16, n_embd=16, n_layer=2, n_head=2)
    ids = [
        torch.randint(0, vocab, (6, 8), generator=torch.Generator().manual_seed(i)) for i in (0, 1)
    ]
    lm_loader = [{"input_ids": x, "attention_mask": torch.ones_like(x), "labels": x} for x in ids]
    return {
        "gpt2": transformers.GPT2LMHeadModel(cfg),
        "vocab_size": vocab,
        "lm_loader": lm_loader,
    }


def test_metrics_doc_probe_example_runs():
    code = python_block(
        (ROOT / "docs" / "metrics.md").read_text(), "## Measuring a model", last=True
    )
    exec(code, {"__name__": "probe_doc"})
