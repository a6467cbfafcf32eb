"""nclab.integrations.transformers.CollapseCallback with the real Hugging Face Trainer, on tiny models
built from configs (no weights, no downloads): measured on the evaluation's own forward passes, in
the evaluation's log entry (eval_ keys: best model, early stopping, every reporter), the numbers of
the probe, dict batches with masked-mean pooling, GPT-2 in token mode with next-token classes."""

import importlib
import os
import sys
import warnings
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
    options = {
        "num_train_epochs": epochs,
        "eval_strategy": "epoch",
        "per_device_train_batch_size": 8,
        "per_device_eval_batch_size": 8,
        "learning_rate": 1e-2,
        "report_to": [],
        "save_strategy": "no",
        "use_cpu": True,
        "disable_tqdm": True,
    }
    args = transformers.TrainingArguments(str(tmp_path), **{**options, **kw})
    trainer = transformers.Trainer(
        model=model, args=args, train_dataset=data, eval_dataset=data, callbacks=[callback]
    )
    trainer.remove_callback(transformers.PrinterCallback)
    return trainer


def _probe(model, data, layers=LAYERS, **kw):
    loader = DataLoader(data, batch_size=8, collate_fn=transformers.default_data_collator)
    probe = CollapseProbe(model, layers, 3, reduce="mean", classifier="classifier", **kw)
    return probe.run(loader, progress=False)


def _largest_gap(entry: dict, ref, prefix="eval_collapse") -> float:
    gaps = []
    for layer, values in ref.to_dict().items():
        for key, value in values.items():
            got = entry[f"{prefix}/{layer}/{key}"]
            gaps.append(abs(got - value) / max(abs(value), 1e-300))
    return max(gaps)


def test_trainer_records_collapse_in_the_evaluation_entry(tmp_path):
    data = _text()
    cb = CollapseCallback(LAYERS, num_classes=3, reduce="mean", classifier="classifier")
    model = _bert()
    trainer = _trainer(model, data, cb, tmp_path)
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        trainer.train()
    assert not [w for w in seen if "CollapseCallback" in str(w.message)]  # in the loop
    entries = [e for e in trainer.state.log_history if "eval_collapse/classifier:input/nc1" in e]
    assert [e["epoch"] for e in entries] == [1.0, 2.0]
    assert all("eval_loss" in e for e in entries)  # the evaluation's own entry
    assert (
        entries[0]["eval_collapse/bert.encoder/nc1"] != entries[1]["eval_collapse/bert.encoder/nc1"]
    )
    # the last entry is the probe's, on the final model, with the evaluation loader's batches
    ref = _probe(model, data)
    assert _largest_gap(entries[-1], ref) < 1e-12
    assert "nc3" in ref.to_dict()["classifier:input"]
    # an explicit evaluate() measures too (with the probe's passes), and returns the metrics
    out = trainer.evaluate()
    assert out["eval_collapse/classifier:input/nc1"] == pytest.approx(
        entries[-1]["eval_collapse/classifier:input/nc1"], rel=1e-12
    )
    assert len(cb.history) == 3


def test_no_forward_pass_of_its_own(tmp_path):
    counts = []
    for callbacks in ([], [CollapseCallback(LAYERS, 3, reduce="mean", classifier="classifier")]):
        model = _bert()
        calls = []
        model.register_forward_pre_hook(lambda *a, calls=calls: calls.append(1))
        trainer = _trainer(model, _text(), transformers.TrainerCallback(), tmp_path)
        for cb in callbacks:
            trainer.add_callback(cb)
        trainer.train()
        counts.append(len(calls))
    assert counts[0] == counts[1]
    assert len(callbacks[0].history) == 2


def test_best_model_and_early_stopping_on_a_collapse_metric(tmp_path):
    data = _text()
    cb = CollapseCallback("classifier:input", num_classes=3, reduce="mean", classifier="classifier")
    stop = transformers.EarlyStoppingCallback(early_stopping_patience=1)
    trainer = _trainer(
        _bert(),
        data,
        cb,
        tmp_path,
        epochs=3,
        metric_for_best_model="collapse/classifier:input/nc1",  # the Trainer adds eval_
        greater_is_better=False,
        load_best_model_at_end=True,
        save_strategy="epoch",
    )
    trainer.add_callback(stop)
    trainer.train()
    values = [h["eval_collapse/classifier:input/nc1"] for h in cb.history]
    assert trainer.state.best_metric == pytest.approx(min(values), rel=1e-12)


class _Seen(transformers.TrainerCallback):
    def __init__(self):
        self.logs = []

    def on_log(self, args, state, control, logs=None, **kw):
        self.logs.append(dict(logs))


def test_with_the_trainer_the_metrics_reach_every_reporter(tmp_path):
    data = _text()
    cb = CollapseCallback(
        "bert.encoder", num_classes=3, reduce="cls", every_n_evals=2, metrics=["NC1", "nc2_etf"]
    )
    seen = _Seen()  # a reporter ahead of the callback
    trainer = _trainer(_bert(), data, seen, tmp_path, epochs=2)
    trainer.add_callback(cb)
    cb.trainer = trainer  # it goes first
    trainer.train()
    logged = [e for e in seen.logs if any(k.startswith("eval_collapse/") for k in e)]
    assert len(logged) == 1 and "eval_loss" in logged[0] and logged[0]["epoch"] == 2.0
    assert sorted(k for k in logged[0] if "collapse/" in k) == [
        "eval_collapse/bert.encoder/nc1",
        "eval_collapse/bert.encoder/nc2_etf",
    ]
    assert sum("eval_collapse/bert.encoder/nc1" in e for e in trainer.state.log_history) == 1
    # trainer= given first, the callback added after: it goes first when training begins
    seen = _Seen()
    trainer = _trainer(_bert(), data, seen, tmp_path, epochs=1)
    cb = CollapseCallback("bert.encoder", num_classes=3, reduce="cls", trainer=trainer)
    trainer.add_callback(cb)
    trainer.train()
    assert [e["epoch"] for e in seen.logs if "eval_collapse/bert.encoder/nc1" in e] == [1.0]
    assert len(cb.history) == 1


def test_labels_taken_out_of_the_batch_mean_an_extra_pass_said_once(tmp_path):
    """A label smoother pops the labels before the forward: the callback cannot read them there,
    says so once and measures with the probe's passes (the same numbers)."""
    data = _text()
    cb = CollapseCallback(LAYERS, num_classes=3, reduce="mean", classifier="classifier")
    model = _bert()
    trainer = _trainer(model, data, cb, tmp_path, label_smoothing_factor=0.1)
    with pytest.warns(UserWarning, match="measured with an extra pass.*labels") as seen:
        trainer.train()
    assert sum("extra pass" in str(w.message) for w in seen) == 1
    assert _largest_gap(cb.history[-1], _probe(model, data)) < 1e-12


def test_metrics_are_checked_when_the_callback_is_built():
    with pytest.raises(DataError, match="unknown metric 'nc_1'.*did you mean 'nc1'"):
        CollapseCallback("bert.encoder", num_classes=3, metrics=["nc_1"])
    with pytest.warns(UserWarning, match="nc4 needs the classifier"):
        CollapseCallback("bert.encoder", num_classes=3, metrics=["nc4"])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        CollapseCallback("classifier:input", 3, classifier="classifier", metrics=["NC4", "nc1"])


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
    trainer = _trainer(model, data, cb, tmp_path, epochs=1, learning_rate=0.0)
    trainer.train()  # measured in the evaluation's forward passes, the batch from their arguments
    # the tokens measured: inside the mask, not the last position of a row
    kept = sum(int(d["attention_mask"][1:].sum()) for d in data)
    assert cb.result.stats["transformer.h.0"].num_samples == kept
    assert "nc3" in cb.result.to_dict()["lm_head:input"]
    assert cb.result.stats["lm_head:input"].dim == 12
    in_loop = cb.history[-1]
    trainer.evaluate()  # on its own: the probe's passes over the loader, the same numbers
    for key, value in in_loop.items():
        assert cb.history[-1][key] == pytest.approx(value, rel=1e-12, abs=1e-15), key


def test_errors_are_clear(tmp_path):
    with pytest.raises(DataError, match="every_n_evals"):
        CollapseCallback("bert.encoder", num_classes=3, every_n_evals=0)
    cb = CollapseCallback("bert.encodr", num_classes=3)
    with pytest.raises(DataError, match="did you mean 'bert.encoder'"):
        _trainer(_bert(), _text(), cb, tmp_path, epochs=1).train()
    cb = CollapseCallback("bert.encoder", num_classes=3)
    with pytest.raises(DataError, match="no model or evaluation loader"):
        logs = {"eval_loss": 1.0, "eval_runtime": 0.1, "eval_samples_per_second": 10.0}
        cb.on_log(None, transformers.TrainerState(), None, logs=logs, model=_bert())


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
    out, per_device_eval_batch_size=4, per_device_train_batch_size=4, num_train_epochs=1,
    learning_rate=0.0, eval_strategy="epoch", save_strategy="no", report_to=[], use_cpu=True,
    ddp_backend="gloo", disable_tqdm=True,
)
data = _text(n=31)
trainer = transformers.Trainer(
    model=_bert().double(), args=args, train_dataset=data, eval_dataset=data, callbacks=[cb]
)
import warnings
with warnings.catch_warnings(record=True) as seen:
    warnings.simplefilter("always")
    trainer.train()  # lr 0: the evaluation's own forward passes, on the initial weights
assert not [w for w in seen if "CollapseCallback" in str(w.message)], "not in the loop"
n_loop = cb.result.stats["bert.encoder"].num_samples
trainer.evaluate()  # on its own: the probe's passes, re-sharded
rank = int(os.environ["RANK"])
import torch.distributed as dist
from nclab.integrations import shard_loader
mine = len(shard_loader(trainer.get_eval_dataloader()).dataset)  # this rank's samples
n = cb.result.stats["bert.encoder"].num_samples
torch.save((cb.history, (n_loop, n), dist.get_world_size(), mine), f"{{out}}/rank{{rank}}.pt")
"""


@pytest.mark.slow
def test_trainer_under_torchrun_two_processes_equals_one(tmp_path):
    """torchrun, 2 gloo processes: accelerate pads the evaluation shards (31 samples); the callback
    measures every sample once, in the evaluation loop and on its own, and every rank records the
    numbers of one process (float64 model)."""
    script = tmp_path / "hf_ddp.py"
    script.write_text(DDP_SCRIPT.format(tests=str(Path(__file__).parent), out=str(tmp_path)))
    torchrun(script, timeout=600, HF_HUB_OFFLINE="1")
    model = _bert().double()
    ref = CollapseProbe(model, LAYERS, 3, reduce="mean", classifier="classifier").run(
        DataLoader(_text(n=31), batch_size=4, collate_fn=transformers.default_data_collator),
        progress=False,
    )
    for rank in range(2):
        history, counts, world, mine = torch.load(tmp_path / f"rank{rank}.pt")
        assert (world, mine) == (2, 16 - rank)  # samples rank, rank + 2, ...: 16 and 15
        assert counts == (31, 31) and len(history) == 2
        for entry in history:
            assert _largest_gap(entry, ref) < 1e-9, rank
