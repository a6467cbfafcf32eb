"""A Lightning callback that measures neural collapse in the validation loop and logs it with the
validation metrics.

``pip install nclab[lightning]`` (the ``lightning`` package; its ``lightning.pytorch.Callback`` is
the base class).

By default (``loader="val"``) the callback costs no forward pass of its own: during the validation
loop of every ``every_n_epochs``-th epoch it hooks the measured layers of the LightningModule, and
the forward passes ``validation_step`` makes feed the statistics (exactly, in float64, as
:meth:`nclab.CollapseProbe.run` would over the same loader). At the end of the validation epoch
the metrics that need the class means a second time (``nc1`` with the subspace scatter, ``nc3_cos``,
``nc4``, ``ncc_acc``, ``acc``) come from the pooled features kept in memory (within
``cache_budget``; beyond it one pass: ``nc1`` from the full D x D scatter, ``nc3_cos`` and ``acc``
from the first pass, no ``nc4``/``ncc_acc``, said in a warning), and every metric is logged as
``collapse/<layer>/<metric>`` through ``pl_module.log`` beside ``val_loss``: same step, every
logger of the trainer, ``trainer.callback_metrics``, ``ModelCheckpoint(monitor=...)`` and
``EarlyStopping(monitor=...)``. The measurement reads the first validation loader; a fit without
validation (no loader, no ``validation_step``, ``limit_val_batches=0``) is an error at fit start.
The sanity check is not measured.

``loader=DataLoader(...)`` (or ``"train"``) measures on a loader of its own instead, with the
probe's extra passes (``second_pass=True``: two; ``"cache"``: one) at the end of the training epoch
(what the callback did by default before it measured in the validation loop).

Collapse metrics move a lot in the first epochs (NC1 often rises before it falls):
``start_epoch=n`` measures from epoch n on, with ``EarlyStopping(monitor=..., strict=False)``,
which waits for the key to exist, or monitor from epoch 0 with a ``patience`` that outlasts the
rise. A logged metric that means little for the layer (``nc1`` when the class means span fewer
than K - 1 directions: more classes than dimensions, a language model's vocabulary) is said once
in a warning with what to watch instead (``nc1_rank_norm``, ``cdnv``; ``result.notes``).

The metrics of every measurement are also kept in ``callback.history`` (``{"epoch", "step",
metrics...}``, ``step`` the logger's step) and the last :class:`~nclab.probe.ProbeResult` in
``callback.result``. The model's modes are those of the validation loop (eval); with its own
loader the probe runs in eval mode and restores every module's mode.

Under DDP each rank measures its shard: in the validation loop the duplicates a
``DistributedSampler`` pads the last shard with are left out, with a loader of its own it is
re-sharded without padding (:func:`nclab.integrations.shard_loader`); the statistics are merged
exactly over the ranks (:meth:`nclab.ClassStats.all_reduce`), so every rank holds the numbers of
one process over the whole loader and logs them with ``sync_dist=False`` (there is nothing left to
average; the logger writes rank 0's).

Layer names are those of ``pl_module.named_modules()`` (``"model.fc:input"`` for a module that keeps
its network in ``self.model``; a dict ``{name: spec}`` names them); the batch's labels are read as
the probe reads them (``(x, y, ...)``, dicts, ``labels=``).

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
...     def validation_step(self, batch, i):
...         self.log("val_loss", nn.functional.cross_entropy(self(batch[0]), batch[1]))
...     def configure_optimizers(self):
...         return torch.optim.SGD(self.parameters(), lr=0.1)
>>> g = torch.Generator().manual_seed(0)
>>> ds = TensorDataset(torch.randn(60, 8, generator=g), torch.arange(60) % 3)
>>> cb = CollapseCallback(["body", "fc:input"], num_classes=3, classifier="fc")
>>> trainer = L.Trainer(max_epochs=2, callbacks=[cb], logger=False, enable_checkpointing=False,
...                     enable_progress_bar=False, enable_model_summary=False)
>>> trainer.fit(Net(), DataLoader(ds, batch_size=20, shuffle=True), DataLoader(ds, batch_size=20))
>>> [h["epoch"] for h in cb.history], "collapse/fc:input/nc1" in trainer.callback_metrics
([0, 1], True)
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import torch

from ..errors import DataError
from ..probe import Layers
from ..probe._cache import CACHE_BUDGET
from ._common import real_rows, require
from ._measure import Measurement

L = require("lightning.pytorch", "lightning")


class CollapseCallback(L.Callback):
    """Measure collapse of named layers in the validation loop every ``every_n_epochs`` epochs and
    log it with the validation metrics (see the module docstring).

    Args:
        layers: layer specs of the LightningModule (``"model.layer4"``, ``"model.fc:input"``),
            :class:`~nclab.probe.Tap` objects, or a dict ``{name: spec}``; one string is one layer.
        num_classes: K.
        loader: ``"val"`` (default): the forward passes of the validation loop (its first loader);
            a DataLoader (or any iterable of batches) or ``"train"`` (the training loader, read in
            order without shuffling; augmentation stays): a measurement of its own, with the
            probe's passes over that loader, at the end of the training epoch (so is ``"val"``
            with ``forward=``, which runs the model the probe's way).
        every_n_epochs: measure in epochs n-1, 2n-1, ... (0-based epoch numbers).
        start_epoch: the first epoch (0-based) that may be measured: before it the callback
            neither measures nor logs (collapse metrics of the first epochs move a lot, NC1 often
            rises before it falls; monitor them with ``EarlyStopping(..., strict=False)``, which
            waits for the key to exist, or with a ``patience``).
        prefix: the first part of every logged key (``"collapse"``).
        metrics: the metric names to log (default: all that apply; any case; an unknown name
            raises, one these options cannot give is a warning).
        second_pass: ``True`` (default): the metrics that need the class means a second time, from
            the pooled features kept in memory in the validation loop, by reading ``loader`` again
            otherwise (``"cache"``: read once, second pass from memory); ``False``: one pass, the
            full D x D scatter for ``nc1``, no ``nc4``/``ncc_acc``.
        max_batches: measure at most this many batches (per rank).
        prog_bar: also show the logged metrics in the progress bar.
        cache_budget: memory for the pooled features of the second pass (``"2GB"``).
        **probe_options: passed to :class:`~nclab.CollapseProbe`: ``classifier``, ``reduce``,
            ``tokens``, ``forward``, ``labels``, ``mask``, ``scatter``, ``global_mean``, ...
    """

    def __init__(
        self,
        layers: Layers,
        num_classes: int,
        loader: Iterable | str = "val",
        every_n_epochs: int = 1,
        prefix: str = "collapse",
        metrics: Sequence[str] | None = None,
        second_pass: bool | str = True,
        max_batches: int | None = None,
        prog_bar: bool = False,
        cache_budget: int | str = CACHE_BUDGET,
        start_epoch: int = 0,
        **probe_options: Any,
    ):
        if not isinstance(every_n_epochs, int) or every_n_epochs < 1:
            raise DataError(f"every_n_epochs must be a positive integer, got {every_n_epochs!r}")
        if not isinstance(start_epoch, int) or isinstance(start_epoch, bool) or start_epoch < 0:
            raise DataError(f"start_epoch must be an integer >= 0, got {start_epoch!r}")
        if isinstance(loader, str) and loader not in ("val", "train"):
            raise DataError(f"loader must be a DataLoader, 'val' or 'train', got {loader!r}")
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
        # forward= runs the model the probe's way: a measurement of its own
        self.in_loop = loader == "val" and "forward" not in probe_options
        self.every_n_epochs = every_n_epochs
        self.start_epoch = start_epoch
        self.prog_bar = prog_bar
        self.history: list[dict[str, float]] = []
        self.result = None
        self._session = None

    # --- checks before training ----------------------------------------------------------------
    def on_fit_start(self, trainer, pl_module) -> None:
        """Check the layer names and the classifier against the module, and that there is a
        validation loop to measure in, before training starts."""
        self.measure.probe(pl_module)
        if self.loader == "val":
            why = _no_validation(trainer, pl_module)
            if why is not None:
                raise DataError(
                    f"CollapseCallback measures in the validation loop, and this fit has none "
                    f"({why}): pass val_dataloaders to fit(), or loader=DataLoader(...) to "
                    "measure on a loader of its own with an extra pass"
                )

    def _due(self, trainer) -> bool:
        """Whether this epoch is measured: from ``start_epoch`` on, every ``every_n_epochs``."""
        epoch = trainer.current_epoch
        return epoch >= self.start_epoch and (epoch + 1) % self.every_n_epochs == 0

    def _measuring(self, trainer) -> bool:
        return self.in_loop and not trainer.sanity_checking and self._due(trainer)

    # --- in the validation loop ----------------------------------------------------------------
    def on_validation_epoch_start(self, trainer, pl_module) -> None:
        if self._measuring(trainer):
            self._session = self.measure.session(pl_module)
            self._session.attach()

    def on_validation_batch_start(self, trainer, pl_module, batch, batch_idx, dataloader_idx=0):
        if self._session is not None:
            self._session.clear()

    def on_validation_batch_end(
        self, trainer, pl_module, outputs, batch, batch_idx, dataloader_idx=0
    ) -> None:
        if self._session is not None and dataloader_idx == 0:
            with torch.inference_mode(False), torch.no_grad():  # statistics usable afterwards
                self._session.add(batch)

    def on_validation_epoch_end(self, trainer, pl_module) -> None:
        session, self._session = self._session, None
        if session is None:
            return
        session.detach()
        self.result = self.measure.finish(session, self._rows(trainer))
        self._log(trainer, pl_module, self.measure.values(self.result))

    def on_exception(self, trainer, pl_module, exception) -> None:
        if self._session is not None:
            self._session.detach()
            self._session = None

    def _rows(self, trainer) -> int | None:
        """This rank's real rows of the first validation loader (the padding left out)."""
        loader = _first(trainer.val_dataloaders)
        try:
            return real_rows(loader)
        except LookupError as exc:
            raise DataError(
                f"CollapseCallback under DDP: the validation loader is {exc}, whose shards may "
                "repeat samples; use a DistributedSampler (Lightning's default, "
                "use_distributed_sampler=True) or loader=DataLoader(...) to measure with an "
                "extra pass"
            ) from None

    # --- on a loader of its own ----------------------------------------------------------------
    def on_train_epoch_end(self, trainer, pl_module) -> None:
        if self.in_loop or not self._due(trainer):
            return
        self.result, values = self.measure(
            pl_module, self._loader(trainer), device=pl_module.device
        )
        self._log(trainer, pl_module, values)

    def _log(self, trainer, pl_module, values: dict[str, float]) -> None:
        for key, value in values.items():
            pl_module.log(
                key,
                value,
                on_step=False,
                on_epoch=True,
                prog_bar=self.prog_bar,
                sync_dist=False,  # every rank already holds the exact all-rank value
            )
        step = getattr(trainer.fit_loop.epoch_loop, "_batches_that_stepped", trainer.global_step)
        self.history.append({"epoch": trainer.current_epoch, "step": step, **values})

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
        loader = _first(loader)
        if loader is None:
            raise DataError(
                f"CollapseCallback(loader={self.loader!r}): the trainer has no {self.loader} "
                "loader at the end of this epoch; pass loader=DataLoader(...) to measure on"
            )
        return loader


def _first(loader: Any) -> Any:
    """The first loader of a dict or list of loaders (the loader itself otherwise)."""
    if isinstance(loader, dict):
        loader = next(iter(loader.values()), None)
    if isinstance(loader, list | tuple):
        loader = loader[0] if loader else None
    return loader


def _no_validation(trainer, pl_module) -> str | None:
    """Why this fit runs no validation loop (None when it runs one)."""
    from lightning.pytorch.utilities.model_helpers import is_overridden

    if not is_overridden("validation_step", pl_module):
        return "the LightningModule has no validation_step"
    if trainer.limit_val_batches == 0:
        return "limit_val_batches=0"
    loop = getattr(getattr(trainer.fit_loop, "epoch_loop", None), "val_loop", None)
    source = getattr(loop, "_data_source", None)
    if source is not None and not source.is_defined():
        return "no val loader: fit(model, train_loader) without val_dataloaders"
    return None
