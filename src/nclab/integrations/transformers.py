"""A Hugging Face ``TrainerCallback`` that measures neural collapse in the ``Trainer``'s evaluation.

``pip install nclab[transformers]``.

During training the callback hooks the measured layers of the model, and the forward passes of
every ``every_n_evals``-th evaluation (``eval_strategy="epoch"``: one per epoch) feed the statistics,
exactly as :meth:`nclab.CollapseProbe.run` would over the evaluation loader, with no forward pass
of its own. The metrics that need the class means a second time (``nc1`` with the subspace
scatter, ``nc3_cos``, ``nc4``, ``ncc_acc``, ``acc``) come from the pooled features kept in memory
(within ``cache_budget``; beyond it one pass: ``nc1`` from the full D x D scatter, ``nc3_cos`` and
``acc`` from the first pass, no ``nc4``/``ncc_acc``, said in a warning). Every metric goes into the
evaluation's own log entry, beside ``eval_loss``, as ``eval_collapse/<layer>/<metric>`` (the
evaluation's prefix: ``eval_<name>_...`` for a dict of evaluation sets):

* in ``trainer.state.log_history`` and the metrics dict that ``trainer.evaluate()`` returns;
* so ``TrainingArguments(metric_for_best_model="collapse/classifier:input/nc1",
  greater_is_better=False)`` and ``EarlyStoppingCallback`` use it (the ``Trainer`` adds ``eval_``);
* to every reporting integration (TensorBoard, W&B, the printer) when the callback knows the
  trainer (``callback.trainer = trainer`` after building it, or ``trainer=``): it then goes first
  among the trainer's callbacks, so the reporters see the entry with the collapse keys in it.

An evaluation outside ``trainer.train()`` (``trainer.evaluate()`` on its own), ``loader=`` and
``forward=`` (the probe runs the model itself) are measured with the probe's own passes over the
loader instead; so is an evaluation whose forward passes cannot be read (the labels taken out of
the batch by a ``label_smoother`` or ``compute_loss_func``, several forward passes per batch),
with a warning that says why.

Collapse metrics move a lot in the first epochs (NC1 often rises before it falls): start the
evaluations later with ``TrainingArguments(eval_delay=n)`` (the ``Trainer``'s convention; the
best-model tracking and ``EarlyStoppingCallback`` start with them), or give
``EarlyStoppingCallback`` an ``early_stopping_patience`` that outlasts the rise. A logged metric
that means little for the layer (``nc1`` with more classes than dimensions, a language model's
vocabulary) is said once in a warning with what to watch instead (``nc1_rank_norm``, ``cdnv``).

Batches are the collator's dicts, read from the model's keyword arguments: the labels are
``labels`` (``labels=`` names another key or a callable of the batch) and the attention mask
``attention_mask``, which the pooling ``reduce="mean"`` (masked mean) and ``"last"`` and token mode
(``tokens=True``: every token a sample) use. For next-token classes of a causal LM pass
``labels=next_token_labels``.

Under ``torch.distributed`` (``torchrun``/``accelerate``) each rank measures its shard of the
evaluation set, leaving out the samples accelerate repeats to even the batches (at the end of a
rank's shard; a loader of its own is re-sharded without them, see
:func:`nclab.integrations.shard_loader`), and the statistics are merged exactly over the ranks:
every rank records the numbers one process would have over the whole evaluation set.

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
>>> [e["epoch"] for e in trainer.state.log_history
...  if "eval_collapse/classifier:input/nc1" in e and "eval_loss" in e]
[1.0]
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import torch
from torch import nn

from .. import distributed
from ..errors import DataError
from ..probe import Layers
from ..probe._cache import CACHE_BUDGET
from ._common import real_rows, require
from ._measure import Measurement

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


def _eval_prefix(logs: dict | None) -> str | None:
    """The metric prefix of an evaluation's log entry (``"eval"``, ``"eval_<name>"``), None for
    any other entry (training logs, the final ``train_runtime`` summary)."""
    for key in logs or ():
        if key.endswith("_runtime"):
            prefix = key[: -len("_runtime")]
            if prefix != "train" and f"{prefix}_samples_per_second" in logs:
                return prefix
    return None


class CollapseCallback(hf.TrainerCallback):
    """Measure collapse of named layers in every ``every_n_evals``-th evaluation of a ``Trainer``
    and log it in the evaluation's entry (see the module docstring).

    Args:
        layers: layer specs of the model (``"bert.encoder"``, ``"classifier:input"``,
            ``"transformer.h.1"``), :class:`~nclab.probe.Tap` objects, or a dict ``{name: spec}``;
            one string is one layer.
        num_classes: K (the number of labels; the vocabulary size for next-token classes).
        loader: measure on this loader with the probe's own passes (default: the evaluation's
            forward passes).
        every_n_evals: measure at evaluations n, 2n, ...
        prefix: the part of every key after the evaluation's prefix (``eval_collapse/...``).
        metrics: the metric names to record (default: all that apply; any case; an unknown name
            raises, one these options cannot give is a warning).
        second_pass: ``True`` (default): the metrics that need the class means a second time,
            from the pooled features kept in memory (by reading ``loader`` again when given;
            ``"cache"``: read once); ``False``: one pass, the full D x D scatter for ``nc1``, no
            ``nc4``/``ncc_acc``.
        max_batches: measure at most this many batches (per rank).
        trainer: the ``Trainer``: the callback goes first among its callbacks, so that every
            reporter sees the collapse keys (also ``callback.trainer = trainer``).
        cache_budget: memory for the pooled features of the second pass (``"2GB"``).
        **probe_options: passed to :class:`~nclab.CollapseProbe`: ``classifier``, ``reduce``
            (``"cls"``, ``"mean"``, ``"last"``, ...), ``tokens``, ``labels``, ``mask``,
            ``scatter``, ``global_mean``, ...
    """

    def __init__(
        self,
        layers: Layers,
        num_classes: int,
        loader: Iterable | None = None,
        every_n_evals: int = 1,
        prefix: str = "collapse",
        metrics: Sequence[str] | None = None,
        second_pass: bool | str = True,
        max_batches: int | None = None,
        trainer: Any = None,
        cache_budget: int | str = CACHE_BUDGET,
        **probe_options: Any,
    ):
        if not isinstance(every_n_evals, int) or every_n_evals < 1:
            raise DataError(f"every_n_evals must be a positive integer, got {every_n_evals!r}")
        self.measure = Measurement(
            layers,
            num_classes,
            prefix,
            metrics,
            second_pass,
            max_batches,
            probe_options,
            cache_budget,
        )
        self.loader = loader
        self.in_loop = loader is None and "forward" not in probe_options
        self.every_n_evals = every_n_evals
        self.history: list[dict[str, float]] = []
        self.result = None
        self._evaluations = 0
        self._loop = _EvaluationHooks(self.measure)
        self._trainer = None
        self.trainer = trainer

    @property
    def trainer(self) -> Any:
        return self._trainer

    @trainer.setter
    def trainer(self, trainer: Any) -> None:
        self._trainer = trainer
        self._go_first()

    def _go_first(self) -> None:
        """Knowing the trainer, go first among its callbacks: the reporters' ``on_log`` then sees
        the collapse keys in the evaluation's entry. (Safe while the trainer calls its callbacks
        in a loop: the ones after this one keep their places.)"""
        callbacks = getattr(getattr(self._trainer, "callback_handler", None), "callbacks", None)
        if callbacks is not None and self in callbacks and callbacks[0] is not self:
            callbacks.remove(self)
            callbacks.insert(0, self)

    def on_train_begin(self, args, state, control, model=None, **kwargs):
        """Check the layers against the model and hook them for the evaluations to come."""
        self._go_first()  # CollapseCallback(trainer=trainer) added with add_callback afterwards
        if model is not None:
            self.measure.probe(model)
            if self.in_loop:
                self._loop.attach(model)

    def on_train_end(self, args, state, control, **kwargs):
        self._loop.detach()

    # what runs between evaluations is not measured
    def on_step_end(self, args, state, control, **kwargs):
        self._loop.reset()

    on_epoch_end = on_evaluate = on_predict = on_step_end

    def on_log(self, args, state, control, logs=None, model=None, **kwargs):
        """In the log entry of an evaluation: measure, and add the keys to it."""
        prefix = _eval_prefix(logs)
        if prefix is None:
            return
        self._evaluations += 1
        if self._evaluations % self.every_n_evals:
            self._loop.reset()
            return
        self.result = self._result(model, kwargs.get("eval_dataloader"))
        values = self.measure.values(self.result, f"{prefix}_{self.measure.prefix}")
        logs.update(values)
        if state.log_history and f"{prefix}_runtime" in state.log_history[-1]:
            state.log_history[-1].update(values)  # the entry the Trainer just wrote
        self.history.append({**values, "epoch": state.epoch, "step": state.global_step})

    def _result(self, model, loader):
        if self.loader is not None:
            return self.measure(model, self.loader, device=_device(model))[0]
        if model is None or loader is None:
            raise DataError(
                "CollapseCallback: the trainer passed no model or evaluation loader; give the "
                "Trainer an eval_dataset or the callback loader=DataLoader(...)"
            )
        result = self._loop.finish(model, loader) if self.in_loop else None
        if result is None:  # not measurable in the loop: the probe's passes over the loader
            result = self.measure(model, loader, device=_device(model))[0]
        return result


class _EvaluationHooks:
    """The probe's hooks on the model during training, gated to the evaluation's forward passes (in
    eval mode, without gradients); the model's keyword arguments are the batch."""

    def __init__(self, measure: Measurement):
        self.measure = measure
        self.model: nn.Module | None = None
        self.session = None
        self._handles: list[Any] = []
        self._batch: dict | None = None
        self.forwards = 0
        self.failed: str | None = None

    def attach(self, model: nn.Module) -> None:
        if self.model is model:
            return self.reset()
        self.detach()
        self.model = model
        self.session = self.measure.session(model)
        self.session.attach(self._recording)
        self._handles = [
            model.register_forward_pre_hook(self._before, with_kwargs=True),
            model.register_forward_hook(self._after, with_kwargs=True),
        ]
        self.reset()

    def detach(self) -> None:
        for h in self._handles:
            h.remove()
        self._handles.clear()
        if self.session is not None:
            self.session.detach()
        self.model = self.session = None

    def reset(self) -> None:
        if self.session is not None:
            self.session.reset()
        self._batch, self.forwards, self.failed = None, 0, None

    def _recording(self) -> bool:
        return not torch.is_grad_enabled() and self.model is not None and not self.model.training

    def _before(self, module, args, kwargs) -> None:
        if self._recording():
            self.session.clear()
            self._batch = dict(kwargs) if kwargs or not args else None

    def _after(self, module, args, kwargs, output) -> None:
        if not self._recording():
            return
        self.forwards += 1
        if self.failed is not None:
            return
        if self._batch is None:
            self.failed = "the model was called with positional arguments, not a batch dict"
            return
        try:
            self.session.add(self._batch)
        except DataError as exc:
            self.failed = str(exc)
        self._batch = None

    def finish(self, model: nn.Module, loader: Any):
        """The result of the evaluation that just ran, or None when it could not be measured in
        the loop (then every rank measures with the probe's passes; said in a warning)."""
        why = self._why_not(model, loader)
        rows = None
        if why is None:
            try:
                rows = real_rows(loader)
            except LookupError as exc:
                why = f"the evaluation loader is {exc}, whose shards may repeat samples"
        if distributed.is_initialized():  # every rank takes the same route
            flag = torch.tensor([float(why is not None)], device=_device(model) or "cpu")
            if distributed.sum_over_ranks(flag.double()).item() > 0 and why is None:
                why = "another rank could not measure in the loop"
        if why is not None:
            self.reset()
            if self.model is not None:
                self.measure.warn_once(
                    "fallback", f"CollapseCallback: measured with an extra pass ({why})"
                )
            return None
        result = self.measure.finish(self.session, rows)
        self.reset()
        return result

    def _why_not(self, model: nn.Module, loader: Any) -> str | None:
        if self.model is not model:
            return "the evaluation ran outside trainer.train()"
        if self.failed is not None:
            return self.failed
        if self.forwards == 0 or self.session.batches == 0:
            return "no forward pass of the evaluation reached the hooks"
        expected = len(loader) if hasattr(loader, "__len__") else None
        if expected is not None and self.forwards != expected:
            return (
                f"{self.forwards} forward passes for the {expected} batches of the evaluation "
                "loader (a model called several times per batch, or forwards between evaluations)"
            )
        return None
