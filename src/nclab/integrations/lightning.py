"""A Lightning callback that measures neural collapse every n training epochs and logs it.

``pip install nclab[lightning]`` (the ``lightning`` package; its ``lightning.pytorch.Callback`` is
the base class).

At the end of every ``every_n_epochs``-th training epoch (``on_train_epoch_end``, after that
epoch's validation) the callback runs a :class:`~nclab.CollapseProbe` on the LightningModule over a
loader (default: the trainer's validation loader) and logs every metric as
``collapse/<layer>/<metric>`` through ``pl_module.log`` (``on_epoch=True``), so it reaches every
logger of the trainer, ``trainer.callback_metrics`` (``ModelCheckpoint(monitor=...)``,
``EarlyStopping``) and the progress bar when asked. The metrics of every measurement are also kept
in ``callback.history`` (``{"epoch", "step", metrics...}`` per measurement) and the last
:class:`~nclab.probe.ProbeResult` in ``callback.result``. The probe runs in eval mode without
gradients and restores every module's mode: training continues as if nothing had happened.

Under DDP each rank measures its shard of the loader (re-sharded without padding, see
:func:`nclab.integrations.shard_loader`), the statistics are merged exactly over the ranks
(:meth:`nclab.ClassStats.all_reduce`), so every rank holds the numbers of one process over the whole
loader and logs them with ``sync_dist=False`` (there is nothing left to average; the logger writes
rank 0's).

Layer names are those of ``pl_module.named_modules()`` (``"model.fc:input"`` for a module that keeps
its network in ``self.model``); the batch is read as the probe reads it (``(x, y, ...)``, dicts,
or ``forward=``), the model is ``pl_module(x)``.

>>> import torch, lightning as L
>>> from torch import nn
>>> from torch.utils.data import DataLoader, TensorDataset
>>> from nclab.integrations.lightning import CollapseCallback
>>> class Net(L.LightningModule):
...     def __init__(self):
...         super().__init__()
...         self.body = nn.Sequential(nn.Linear(8, 16), nn.ReLU())
...         self.fc = nn.Linear(16, 3)
...     def forward(self, x):
...         return self.fc(self.body(x))
...     def training_step(self, batch, i):
...         return nn.functional.cross_entropy(self(batch[0]), batch[1])
...     def configure_optimizers(self):
...         return torch.optim.SGD(self.parameters(), lr=0.1)
>>> g = torch.Generator().manual_seed(0)
>>> ds = TensorDataset(torch.randn(60, 8, generator=g), torch.arange(60) % 3)
>>> cb = CollapseCallback(["body", "fc:input"], num_classes=3, classifier="fc",
...                       loader=DataLoader(ds, batch_size=20))
>>> trainer = L.Trainer(max_epochs=2, callbacks=[cb], logger=False, enable_checkpointing=False,
...                     enable_progress_bar=False, enable_model_summary=False)
>>> trainer.fit(Net(), DataLoader(ds, batch_size=20, shuffle=True))
>>> [h["epoch"] for h in cb.history], "collapse/fc:input/nc1" in trainer.callback_metrics
([0, 1], True)
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from ..errors import DataError
from ..probe import Tap
from ._common import Measurement, require

L = require("lightning.pytorch", "lightning")


class CollapseCallback(L.Callback):
    """Measure collapse of named layers every ``every_n_epochs`` training epochs and log it.

    Args:
        layers: layer specs of the LightningModule (``"model.layer4"``, ``"model.fc:input"``) or
            :class:`~nclab.probe.Tap` objects; one string is one layer.
        num_classes: K.
        loader: what to measure on: a DataLoader (or any iterable of batches), ``"val"`` (default:
            the trainer's first validation loader) or ``"train"`` (the training loader, read in
            order without shuffling; augmentation stays: prefer an evaluation copy).
        every_n_epochs: measure after epochs n-1, 2n-1, ... (0-based epoch numbers).
        prefix: the first part of every logged key (``"collapse"``).
        metrics: the metric names to log (default: all that apply).
        second_pass: the probe's second pass (``nc3_cos``, ``nc4``, ``ncc_acc``, the subspace
            scatter); ``"cache"`` reads the loader once and runs it from the pooled features
            in memory; ``False`` reads it once and keeps the full D x D scatter.
        max_batches: read at most this many batches (per rank).
        prog_bar: also show the logged metrics in the progress bar.
        **probe_options: passed to :class:`~nclab.CollapseProbe`: ``classifier``, ``reduce``,
            ``tokens``, ``forward``, ``labels``, ``mask``, ``scatter``, ``global_mean``, ...
    """

    def __init__(
        self,
        layers: Iterable[str | Tap] | str | Tap,
        num_classes: int,
        loader: Iterable | str = "val",
        every_n_epochs: int = 1,
        prefix: str = "collapse",
        metrics: Sequence[str] | None = None,
        second_pass: bool | str = True,
        max_batches: int | None = None,
        prog_bar: bool = False,
        **probe_options: Any,
    ):
        if not isinstance(every_n_epochs, int) or every_n_epochs < 1:
            raise DataError(f"every_n_epochs must be a positive integer, got {every_n_epochs!r}")
        if isinstance(loader, str) and loader not in ("val", "train"):
            raise DataError(f"loader must be a DataLoader, 'val' or 'train', got {loader!r}")
        self.measure = Measurement(
            layers, num_classes, prefix, metrics, second_pass, max_batches, probe_options
        )
        self.loader = loader
        self.every_n_epochs = every_n_epochs
        self.prog_bar = prog_bar
        self.history: list[dict[str, float]] = []
        self.result = None

    def on_fit_start(self, trainer, pl_module) -> None:
        """Check the layer names and the classifier against the module before training starts."""
        self.measure.probe(pl_module)

    def on_train_epoch_end(self, trainer, pl_module) -> None:
        if (trainer.current_epoch + 1) % self.every_n_epochs:
            return
        self.result, values = self.measure(
            pl_module, self._loader(trainer), device=pl_module.device
        )
        for key, value in values.items():
            pl_module.log(
                key,
                value,
                on_step=False,
                on_epoch=True,
                prog_bar=self.prog_bar,
                sync_dist=False,  # every rank already holds the exact all-rank value
            )
        self.history.append({"epoch": trainer.current_epoch, "step": trainer.global_step, **values})

    def state_dict(self) -> dict[str, Any]:
        """The measurements so far: a checkpoint keeps them, and a resumed fit goes on from them."""
        return {"history": [dict(h) for h in self.history]}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        self.history = [dict(h) for h in state_dict.get("history", [])]

    def _loader(self, trainer) -> Iterable:
        if not isinstance(self.loader, str):
            return self.loader
        if self.loader == "train":
            loader = trainer.train_dataloader
        else:
            loader = trainer.val_dataloaders
            if loader is None and trainer.datamodule is not None:
                loader = trainer.datamodule.val_dataloader()
        if isinstance(loader, dict):
            loader = next(iter(loader.values()), None)
        if isinstance(loader, list | tuple):
            loader = loader[0] if loader else None
        if loader is None:
            raise DataError(
                f"CollapseCallback(loader={self.loader!r}): the trainer has no {self.loader} "
                "loader at the end of this epoch; pass loader=DataLoader(...) to measure on"
            )
        return loader
