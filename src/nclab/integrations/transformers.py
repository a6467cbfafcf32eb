"""A Hugging Face ``TrainerCallback`` that measures neural collapse at every evaluation.

``pip install nclab[transformers]``.

At every ``every_n_evals``-th evaluation of the ``Trainer`` (``on_evaluate``: set
``eval_strategy="epoch"`` for one measurement per epoch, or call ``trainer.evaluate()``) the callback
runs a :class:`~nclab.CollapseProbe` on the model over the evaluation loader (or ``loader=``) and
records every metric as ``collapse/<layer>/<metric>``:

* in ``trainer.state.log_history``, one entry per measurement (with ``epoch`` and ``step``);
* in the metrics dict that ``trainer.evaluate()`` returns;
* through ``trainer.log`` instead, so that every reporting integration (TensorBoard, W&B, ...)
  receives them, when the callback knows the trainer: ``CollapseCallback(..., trainer=trainer)`` or
  ``callback.trainer = trainer`` after building it.

Batches are the collator's dicts: the model runs as ``model(**batch)`` without the ``labels`` key,
the labels are ``batch["labels"]`` and the attention mask ``batch["attention_mask"]``, which the
pooling ``reduce="mean"`` (masked mean) and ``"last"`` and token mode (``tokens=True``: every token
a sample) use. For next-token classes of a causal LM pass ``labels=next_token_labels``. The probe
runs in eval mode without gradients and restores every module's mode.

Under ``torch.distributed`` (``torchrun``/``accelerate``) each rank measures its shard of the
evaluation set (re-sharded without the padding ``accelerate`` adds to even the batches, see
:func:`nclab.integrations.shard_loader`) and the statistics are merged exactly over the ranks: every
rank records the numbers one process would have over the whole evaluation set.

>>> import os; os.environ["HF_HUB_OFFLINE"] = "1"
>>> import torch
>>> from transformers import (BertConfig, BertForSequenceClassification, PrinterCallback, Trainer,
...                           TrainingArguments)
>>> from nclab.integrations.transformers import CollapseCallback
>>> torch.manual_seed(0)  # doctest: +ELLIPSIS
<torch._C.Generator object at ...>
>>> config = BertConfig(vocab_size=32, hidden_size=16, num_hidden_layers=1,
...                     num_attention_heads=2, intermediate_size=32, num_labels=2)
>>> model = BertForSequenceClassification(config)
>>> data = [{"input_ids": torch.randint(1, 32, (6,)), "attention_mask": torch.ones(6, dtype=torch.long),
...          "labels": torch.tensor(i % 2)} for i in range(16)]
>>> cb = CollapseCallback(["bert.encoder", "classifier:input"], num_classes=2,
...                       reduce="mean", classifier="classifier")
>>> args = TrainingArguments("/tmp/nclab-hf-doctest", num_train_epochs=1, eval_strategy="epoch",
...                          per_device_train_batch_size=8, report_to=[], save_strategy="no",
...                          use_cpu=True, disable_tqdm=True)
>>> trainer = Trainer(model=model, args=args, train_dataset=data, eval_dataset=data, callbacks=[cb])
>>> trainer.remove_callback(PrinterCallback)  # keep this example's output quiet
>>> _ = trainer.train()
>>> [e["epoch"] for e in trainer.state.log_history if "collapse/classifier:input/nc1" in e]
[1.0]
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import torch
from torch import nn

from ..errors import DataError
from ..probe import Tap
from ._common import Measurement, require

hf = require("transformers", "transformers")


def next_token_labels(batch: Any, ignore_index: int = -100) -> torch.Tensor:
    """Next-token classes of a causal-LM batch, aligned with the hidden states: the label of
    position t is the token at t + 1 (``batch["labels"]``, else ``batch["input_ids"]``), and the
    last position is ``ignore_index``. Pass it as ``labels=next_token_labels`` with ``tokens=True``.

    >>> next_token_labels({"input_ids": torch.tensor([[5, 6, 7]])}).tolist()
    [[6, 7, -100]]
    """
    ids = batch["labels"] if "labels" in batch else batch["input_ids"]
    out = torch.full_like(ids, ignore_index)
    out[:, :-1] = ids[:, 1:]
    return out


def _device(model: nn.Module) -> torch.device | None:
    p = next(model.parameters(), None)
    return p.device if p is not None else None


class CollapseCallback(hf.TrainerCallback):
    """Measure collapse of named layers at every ``every_n_evals``-th evaluation of a ``Trainer``.

    Args:
        layers: layer specs of the model (``"bert.encoder"``, ``"classifier:input"``,
            ``"transformer.h.1"``) or :class:`~nclab.probe.Tap` objects; one string is one layer.
        num_classes: K (the number of labels; the vocabulary size for next-token classes).
        loader: what to measure on (default: the trainer's evaluation loader).
        every_n_evals: measure at evaluations n, 2n, ...
        prefix: the first part of every recorded key (``"collapse"``).
        metrics: the metric names to record (default: all that apply).
        second_pass: the probe's second pass (``nc3_cos``, ``nc4``, ``ncc_acc``, the subspace
            scatter); ``"cache"`` reads the loader once and runs it from the pooled features
            in memory; ``False`` reads it once and keeps the full D x D scatter.
        max_batches: read at most this many batches (per rank).
        trainer: the ``Trainer``; when set, the metrics go through ``trainer.log`` (every reporter).
        **probe_options: passed to :class:`~nclab.CollapseProbe`: ``classifier``, ``reduce``
            (``"cls"``, ``"mean"``, ``"last"``, ...), ``tokens``, ``labels``, ``mask``, ``forward``,
            ``scatter``, ``global_mean``, ...
    """

    def __init__(
        self,
        layers: Iterable[str | Tap] | str | Tap,
        num_classes: int,
        loader: Iterable | None = None,
        every_n_evals: int = 1,
        prefix: str = "collapse",
        metrics: Sequence[str] | None = None,
        second_pass: bool | str = True,
        max_batches: int | None = None,
        trainer: Any = None,
        **probe_options: Any,
    ):
        if not isinstance(every_n_evals, int) or every_n_evals < 1:
            raise DataError(f"every_n_evals must be a positive integer, got {every_n_evals!r}")
        self.measure = Measurement(
            layers, num_classes, prefix, metrics, second_pass, max_batches, probe_options
        )
        self.loader = loader
        self.every_n_evals = every_n_evals
        self.trainer = trainer
        self.history: list[dict[str, float]] = []
        self.result = None
        self._evaluations = 0

    def on_train_begin(self, args, state, control, model=None, **kwargs):
        """Check the layer names and the classifier against the model before training starts."""
        if model is not None:
            self.measure.probe(model)

    def on_evaluate(self, args, state, control, model=None, metrics=None, **kwargs):
        self._evaluations += 1
        if self._evaluations % self.every_n_evals:
            return
        loader = self.loader if self.loader is not None else kwargs.get("eval_dataloader")
        if model is None or loader is None:
            raise DataError(
                "CollapseCallback: the trainer passed no model or evaluation loader; give the "
                "Trainer an eval_dataset or the callback loader=DataLoader(...)"
            )
        self.result, values = self.measure(model, loader, device=_device(model))
        if metrics is not None:
            metrics.update(values)
        entry = {**values, "epoch": state.epoch, "step": state.global_step}
        if self.trainer is not None:
            self.trainer.log(dict(values))
        else:
            state.log_history.append(entry)
        self.history.append(entry)
