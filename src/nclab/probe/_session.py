"""``probe.session()``: collapse measured on the forward passes that something else runs.

A training framework's validation loop already runs the model on every batch of the validation
set. A session hooks the probe's taps for that time and reads each batch's features as it goes by,
so that the measurement costs no forward pass of its own:

>>> import torch
>>> from torch import nn
>>> from nclab import CollapseProbe
>>> model = nn.Sequential(nn.Linear(10, 16), nn.ReLU(), nn.Linear(16, 3))
>>> data = [(torch.randn(32, 10), torch.arange(32) % 3) for _ in range(4)]
>>> probe = CollapseProbe(model, ["2:input"], num_classes=3, classifier="2")
>>> session = probe.session()
>>> session.attach()
>>> with torch.no_grad():
...     for x, y in data:  # the framework's loop and its forward
...         _ = model(x)
...         session.add((x, y))
>>> result = session.finish()
>>> session.detach()
>>> ref = probe.run(data, progress=False)
>>> result.to_dict() == ref.to_dict()
True

The statistics are those of :meth:`CollapseProbe.run` over the same batches, bit for bit: the same
tensors reach ``ClassStats.update`` in the same order. What needs the class means a second time
(``nc1`` with the default subspace scatter, ``nc4``, ``ncc_acc``, ``nc3_cos``) comes from the pooled
features kept in memory (``second_pass=True``, within ``cache_budget``), as with
``run(second_pass="cache")``. If they outgrow the budget the session goes on in one pass, replaying
what it kept: ``nc1`` from the full D x D scatter (within ``max_scatter_bytes``), ``nc3_cos`` and
``acc`` from the first pass, no ``nc4`` nor ``ncc_acc``; :attr:`ProbeSession.degraded` says why.
``second_pass=False`` is one pass from the start.

Under ``torch.distributed`` each rank adds its own batches and :meth:`ProbeSession.finish` merges
the statistics exactly over the ranks. A sampler that pads the ranks' shards to equal length
(``DistributedSampler``, accelerate's even batches) repeats samples at the end of a rank's
sequence, within its last batch: ``finish(rows=n)`` keeps the first ``n`` rows of this rank's
batches (the newest batch is held back until the next one arrives or ``finish``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch

from .. import distributed as dist_tools
from ..errors import DataError
from . import _guards as guards
from . import _passes as passes
from ._cache import FeatureCache, human_bytes, second_pass_mode
from ._result import ProbeResult


class ProbeSession:
    """One measurement on forward passes run elsewhere (see the module docstring).

    ``attach(gate)`` registers the hooks (a ``gate()`` returning False makes them ignore a forward)
    and starts afresh; after each forward, ``add(batch)`` reads the labels (and attention mask) of
    ``batch`` as :meth:`CollapseProbe.run` would, and the features the hooks recorded;
    ``finish()`` returns the :class:`ProbeResult`. ``clear()`` forgets what the hooks recorded in a
    forward that is not to be measured.
    """

    def __init__(self, probe, second_pass=True, cache_budget="2GB", max_batches=None):
        mode = "cache" if second_pass is True else second_pass_mode(second_pass)
        if mode == "reread":
            raise DataError(
                "a session measures forward passes run elsewhere and cannot read the data again: "
                "second_pass=True (from the pooled features in memory) or False (one pass)"
            )
        if max_batches is not None and (not isinstance(max_batches, int) or max_batches < 1):
            raise DataError(f"max_batches must be a positive integer or None, got {max_batches!r}")
        self.probe = probe
        self.mode = self._mode = mode
        self.cache_budget = cache_budget
        FeatureCache(cache_budget)  # checks the budget now
        self.max_batches = max_batches
        self._handles: list[Any] = []
        self.reset()

    # --- hooks -----------------------------------------------------------------------------------
    def attach(self, gate: Callable[[], bool] | None = None) -> None:
        """Register the probe's hooks (idempotent) and start a new measurement."""
        if not self._handles:
            for tap in self.probe.taps:
                hook = tap.hook if gate is None else _gated(tap.hook, gate)
                self._handles.append(tap.module.register_forward_hook(hook, with_kwargs=True))
        self.reset()

    def detach(self) -> None:
        for h in self._handles:
            h.remove()
        self._handles.clear()
        self.clear()

    @property
    def attached(self) -> bool:
        return bool(self._handles)

    def clear(self) -> None:
        for tap in self.probe.taps:
            tap.value = None

    def reset(self) -> None:
        """Forget every batch added: a new measurement starts."""
        for tap in self.probe.taps:
            tap.stats = tap.clf_sums = tap.value = None
        self.probe.classes.reset()
        self._mode = self.mode
        self.cache = FeatureCache(self.cache_budget) if self.mode == "cache" else None
        self.batches = self.rows_seen = self.rows_done = 0
        self.degraded: str | None = None
        self._held: tuple | None = None

    # --- batches ---------------------------------------------------------------------------------
    def add(self, batch: Any) -> None:
        """The features the hooks recorded in the forward of ``batch``, with its labels."""
        if self.max_batches is not None and self.batches >= self.max_batches:
            self.clear()
            return
        reader = self.probe.reader
        y = reader.labels_of(batch)
        mask = reader.mask_of(batch)
        feats, counts = self.probe._collect(y, mask, self.batches, "the forward of this batch")
        self._flush()
        self._held = (feats, counts, y.shape[0], self.batches)
        self.batches += 1
        self.rows_seen += y.shape[0]

    def _flush(self, rows: int | None = None) -> None:
        """Add the batch held back, its first ``rows`` rows only when given."""
        if self._held is None:
            return
        feats, counts, n, index = self._held
        self._held = None
        if rows is not None and rows < n:
            keep = rows if counts is None else int(counts[:rows].sum())
            feats = [(tap, x[:keep], y[:keep]) for tap, x, y in feats]
        self.rows_done += n if rows is None else rows
        if not feats or feats[0][1].shape[0] == 0:
            return
        if self.cache is not None and not self.cache.fits(feats):
            self._degrade(feats)
        self._first_pass(feats, index)

    def _first_pass(self, feats: list[tuple], index: int) -> None:
        probe = self.probe
        why = "full" if probe.scatter == "full" else "one-pass"
        if self._mode == "cache":
            passes.first_pass(probe, feats, index, probe.scatter, why)
            self.cache.add(feats, index)
        else:
            scatter = "full" if probe.scatter == "subspace" else probe.scatter
            if self.degraded is not None:
                scatter = self._one_pass_scatter
            passes.first_pass(probe, feats, index, scatter, why)
            passes.classify_first_pass(probe, feats)

    def _degrade(self, feats: list[tuple], why: str | None = None) -> None:
        """The cached features outgrew the budget (or another rank's did): one pass from here on,
        the batches kept so far replayed into the one-pass statistics in their order (the
        numbers of ``run(second_pass=False)``)."""
        kept = self.cache.batches if self.cache is not None else []
        size = human_bytes(self.cache.nbytes) if self.cache is not None else "?"
        dims = {tap.name: x.shape[1] for tap, x, _ in (feats or kept[0])}
        full = self.probe.scatter != "none"
        try:
            limit = self.probe.max_scatter_bytes
            guards.check_scatter_memory(dims if full else {}, limit, "")
        except DataError:
            full = False
        nc1 = (
            "nc1 from the full D x D scatter" if full else "no nc1 (D x D above max_scatter_bytes)"
        )
        self.degraded = (
            why
            or f"the pooled features of {len(kept)} batches ({size}) outgrew cache_budget="
            f"{human_bytes(self.cache.budget)}"
        ) + f": measured in one pass, {nc1}, nc3_cos and acc, no nc4 nor ncc_acc"
        self._mode, self.cache = None, None
        self._one_pass_scatter = "full" if full else "none"
        for tap in self.probe.taps:
            tap.stats = tap.clf_sums = None
        for i, old in enumerate(kept):
            self._first_pass(old, i)

    # --- the end ---------------------------------------------------------------------------------
    def finish(self, rows: int | None = None, distributed: bool = True) -> ProbeResult:
        """The metrics of the batches added (this rank's first ``rows`` rows when given), merged
        over the ranks under ``torch.distributed``."""
        if rows is not None and rows < self.rows_done:
            raise DataError(
                f"finish(rows={rows}): {self.rows_done} rows were added before the last batch; "
                "only the last batch of a rank can be padding"
            )
        if self._held is not None:
            self._flush(None if rows is None else rows - self.rows_done)
        probe = self.probe
        if any(t.stats is None for t in probe.taps):
            raise DataError(
                "no batch reached the measured layers: the loop ran no forward pass with the "
                "hooks attached (or every row was padding)"
            )
        # every rank takes part in the vote (a collective), then all go the same route
        if distributed and self.mode == "cache" and self._any_rank_degraded():
            if self._mode == "cache":
                self._degrade([], "another rank's pooled features outgrew cache_budget")
        passes.merge_first_pass(probe, distributed)
        if self._mode == "cache":
            passes.cached_second_pass(probe, self.cache, distributed)
        passes.record_classifier(probe)
        return probe.result()

    def _any_rank_degraded(self) -> bool:
        if not dist_tools.is_initialized():
            return False
        dev = self.probe.taps[0].stats.device
        flag = torch.tensor([float(self._mode != "cache")], dtype=torch.float64, device=dev)
        return bool(dist_tools.sum_over_ranks(flag).item() > 0)


def _gated(hook: Callable, gate: Callable[[], bool]) -> Callable:
    def run(module, args, kwargs, output):
        if gate():
            hook(module, args, kwargs, output)

    return run
