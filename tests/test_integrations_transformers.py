"""nclab.integrations.transformers.CollapseCallback with the real Hugging Face Trainer, on tiny models
built from configs (no weights, no downloads): log history per evaluation, the numbers of the probe,
dict batches with masked-mean pooling, and GPT-2 in token mode with next-token classes."""

import importlib
import os
import sys
from pathlib import Path

import pytest
import torch
from torch.utils.data import DataLoader

os.environ["HF_HUB_OFFLINE"] = "1"
pytest.importorskip(
    "accelerate", reason="the HF Trainer needs accelerate>=1.1 (pip install nclab[transformers])"
)
transformers = pytest.importorskip("transformers")

from nclab import CollapseProbe  # noqa: E402
from nclab.errors import DataError  # noqa: E402
from nclab.integrations.transformers import CollapseCallback, next_token_labels  # noqa: E402
from torchrun import torchrun  # noqa: E402

LAYERS = ["bert.encoder", "bert.pooler", "classifier:input"]


def _bert(seed=0):
    torch.manual_seed(seed)
    config = transformers.BertConfig(
        vocab_size=40,
        hidden_size=16,
        num_hidden_layers=1,
        num_attention_heads=2,
        intermediate_size=32,
        max_position_embeddings=16,
        num_labels=3,
    )
    return transformers.BertForSequenceClassification(config)


def _text(n=30, seed=0):
    """Sequences of unequal length (right padding): the class sets the first token."""
    g = torch.Generator().manual_seed(seed)
    rows = []
    for i in range(n):
        length = 4 + i % 5
        ids = torch.randint(4, 40, (8,), generator=g)
        ids[0] = 1 + i % 3
        mask = (torch.arange(8) < length).long()
        rows.append(
            {"input_ids": ids * mask, "attention_mask": mask, "labels": torch.tensor(i % 3)}
        )
    return rows


def _trainer(model, data, callback, tmp_path, epochs=2, **kw):
    args = transformers.TrainingArguments(
        str(tmp_path),
        num_train_epochs=epochs,
        eval_strategy="epoch",
        per_device_train_batch_size=8,
        per_device_eval_batch_size=8,
        learning_rate=1e-2,
        report_to=[],
        save_strategy="no",
        use_cpu=True,
        disable_tqdm=True,
        **kw,
    )
    trainer = transformers.Trainer(
        model=model, args=args, train_dataset=data, eval_dataset=data, callbacks=[callback]
    )
    trainer.remove_callback(transformers.PrinterCallback)
    return trainer


def test_trainer_records_collapse_at_every_evaluation(tmp_path):
    data = _text()
    cb = CollapseCallback(LAYERS, num_classes=3, reduce="mean", classifier="classifier")
    model = _bert()
    trainer = _trainer(model, data, cb, tmp_path)
    trainer.train()
    entries = [e for e in trainer.state.log_history if "collapse/classifier:input/nc1" in e]
    assert [e["epoch"] for e in entries] == [1.0, 2.0]
    assert entries[0]["collapse/bert.encoder/nc1"] != entries[1]["collapse/bert.encoder/nc1"]
    # the last entry is the probe's, on the final model, with the evaluation loader's batches
    ref = CollapseProbe(model, LAYERS, 3, reduce="mean", classifier="classifier").run(
        DataLoader(data, batch_size=8, collate_fn=transformers.default_data_collator),
        progress=False,
    )
    for layer, values in ref.to_dict().items():
        for key, value in values.items():
            got = entries[-1][f"collapse/{layer}/{key}"]
            assert got == pytest.approx(value, rel=1e-9, abs=1e-12), (layer, key)
    assert "nc3" in ref.to_dict()["classifier:input"]
    # an explicit evaluate() measures too, and returns the metrics with the evaluation's
    out = trainer.evaluate()
    assert out["collapse/classifier:input/nc1"] == pytest.approx(
        entries[-1]["collapse/classifier:input/nc1"], rel=1e-12
    )
    assert len(cb.history) == 3


class _Seen(transformers.TrainerCallback):
    def __init__(self):
        self.logs = []

    def on_log(self, args, state, control, logs=None, **kw):
        self.logs.append(dict(logs))


def test_with_the_trainer_the_metrics_reach_every_reporter(tmp_path):
    data = _text()
    cb = CollapseCallback(
        "bert.encoder", num_classes=3, reduce="cls", every_n_evals=2, metrics=["nc1", "nc2_etf"]
    )
    seen = _Seen()
    trainer = _trainer(_bert(), data, cb, tmp_path, epochs=1)
    trainer.add_callback(seen)
    cb.trainer = trainer
    trainer.evaluate()
    assert cb.history == []  # every second evaluation
    trainer.evaluate()
    logged = [e for e in seen.logs if any(k.startswith("collapse/") for k in e)]
    assert len(logged) == 1
    assert sorted(k for k in logged[0] if k.startswith("collapse/")) == [
        "collapse/bert.encoder/nc1",
        "collapse/bert.encoder/nc2_etf",
    ]
    assert sum("collapse/bert.encoder/nc1" in e for e in trainer.state.log_history) == 1


def test_gpt2_token_mode_with_next_token_classes(tmp_path):
    """Every token a sample, its class the next token; padding and the last position left out."""
    torch.manual_seed(0)
    vocab = 6
    config = transformers.GPT2Config(
        vocab_size=vocab, n_positions=16, n_embd=12, n_layer=1, n_head=2, pad_token_id=0
    )
    model = transformers.GPT2LMHeadModel(config)
    g = torch.Generator().manual_seed(1)
    data = []
    for i in range(12):
        ids = torch.randint(0, vocab, (10,), generator=g)
        mask = (torch.arange(10) < 6 + i % 5).long()
        labels = ids.masked_fill(mask == 0, -100)  # HF: no loss on padding
        data.append({"input_ids": ids, "attention_mask": mask, "labels": labels})
    cb = CollapseCallback(
        ["transformer.h.0", "lm_head:input"],
        num_classes=vocab,
        tokens=True,
        labels=next_token_labels,
        classifier="lm_head",
    )
    trainer = _trainer(model, data, cb, tmp_path, epochs=1)
    trainer.evaluate()
    # the tokens measured: inside the mask, not the last position of a row
    kept = sum(int(d["attention_mask"][1:].sum()) for d in data)
    assert cb.result.stats["transformer.h.0"].num_samples == kept
    assert "nc3" in cb.result.to_dict()["lm_head:input"]
    assert cb.result.stats["lm_head:input"].dim == 12


def test_errors_are_clear(tmp_path):
    with pytest.raises(DataError, match="every_n_evals"):
        CollapseCallback("bert.encoder", num_classes=3, every_n_evals=0)
    cb = CollapseCallback("bert.encodr", num_classes=3)
    with pytest.raises(DataError, match="did you mean 'bert.encoder'"):
        _trainer(_bert(), _text(), cb, tmp_path, epochs=1).train()
    cb = CollapseCallback("bert.encoder", num_classes=3)
    with pytest.raises(DataError, match="no model or evaluation loader"):
        cb.on_evaluate(None, transformers.TrainerState(), None, model=_bert())


def test_missing_transformers_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "transformers", None)
    monkeypatch.delitem(sys.modules, "nclab.integrations.transformers")
    with pytest.raises(ImportError, match=r"pip install nclab\[transformers\]"):
        importlib.import_module("nclab.integrations.transformers")


DDP_SCRIPT = """
import os, sys
import torch
import transformers
sys.path.insert(0, {tests!r})
from test_integrations_transformers import LAYERS, _bert, _text
from nclab.integrations.transformers import CollapseCallback

out = {out!r}
cb = CollapseCallback(LAYERS, num_classes=3, reduce="mean", classifier="classifier")
args = transformers.TrainingArguments(
    out, per_device_eval_batch_size=4, report_to=[], use_cpu=True, ddp_backend="gloo",
    disable_tqdm=True,
)
trainer = transformers.Trainer(
    model=_bert().double(), args=args, eval_dataset=_text(n=31), callbacks=[cb]
)
trainer.evaluate()
rank = int(os.environ["RANK"])
import torch.distributed as dist
from nclab.integrations import shard_loader
mine = len(shard_loader(trainer.get_eval_dataloader()).dataset)  # this rank's samples
n = cb.result.stats["bert.encoder"].num_samples
torch.save((cb.history, n, dist.get_world_size(), mine), f"{{out}}/rank{{rank}}.pt")
"""


@pytest.mark.slow
def test_trainer_under_torchrun_two_processes_equals_one(tmp_path):
    """torchrun, 2 gloo processes: accelerate pads the evaluation shards (31 samples); the callback
    measures every sample once and every rank records the numbers of one process (float64 model)."""
    script = tmp_path / "hf_ddp.py"
    script.write_text(DDP_SCRIPT.format(tests=str(Path(__file__).parent), out=str(tmp_path)))
    torchrun(script, timeout=600, HF_HUB_OFFLINE="1")
    model = _bert().double()
    ref = CollapseProbe(model, LAYERS, 3, reduce="mean", classifier="classifier").run(
        DataLoader(_text(n=31), batch_size=4, collate_fn=transformers.default_data_collator),
        progress=False,
    )
    for rank in range(2):
        history, n, world, mine = torch.load(tmp_path / f"rank{rank}.pt")
        assert (world, mine) == (2, 16 - rank)  # samples rank, rank + 2, ...: 16 and 15
        assert n == 31 and len(history) == 1
        for layer, values in ref.to_dict().items():
            for key, value in values.items():
                got = history[0][f"collapse/{layer}/{key}"]
                assert got == pytest.approx(value, rel=1e-9, abs=1e-12), (rank, layer, key)
