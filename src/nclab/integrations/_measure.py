"""The measurement both callbacks make: its options, checked when the callback is built (the layers
against the model at fit start), the ``metrics=`` it logs, and the two routes to a result.

* **In the loop** (:meth:`Measurement.session`): a :class:`~nclab.probe.ProbeSession` on the
  framework's own forward passes (Lightning's validation loop, the ``Trainer``'s evaluation). The
  first-pass statistics (counts, class means, within-class sums of squares: ``nc1_trace``,
  ``cdnv``, ``nc2_*``, ``nc3``, ``nc3_of``) accumulate batch by batch; what needs the class means a
  second time (``nc1`` from the subspace scatter, ``nc3_cos``, ``nc4``, ``ncc_acc``, ``acc``)
  comes from the pooled features kept in memory (``cache_budget``), with no pass of its own; beyond
  the budget the one-pass route (full D x D scatter for ``nc1``; ``nc3_cos``, ``acc`` from the
  first pass; no ``nc4``, ``ncc_acc``), said in a warning.
* **On a loader of its own** (:meth:`Measurement.__call__`): the probe reads the loader (twice with
  ``second_pass=True``), exact across ranks through :func:`~nclab.integrations.shard_loader`.
"""

from __future__ import annotations

import difflib
import math
import warnings
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import torch
from torch import nn

from ..errors import DataError
from ..metrics import CANONICAL_KEYS
from ..probe import CollapseProbe, Layers, ProbeResult, ProbeSession, Tap
from ..probe._cache import CACHE_BUDGET, parse_bytes
from ..probe._result import NEEDS_CLASSIFIER
from ._common import shard_loader


def check_metrics(metrics: Sequence[str] | str | None) -> list[str] | None:
    """``metrics=`` as canonical names (case-insensitive: ``"NC1"`` is ``"nc1"``); an unknown name
    raises with the valid ones."""
    if metrics is None:
        return None
    if isinstance(metrics, str):
        metrics = [metrics]
    out = []
    for name in metrics:
        key = name.lower() if isinstance(name, str) else name
        if key not in CANONICAL_KEYS:
            close = difflib.get_close_matches(str(key), CANONICAL_KEYS, n=2)
            hint = f" (did you mean {' or '.join(map(repr, close))}?)" if close else ""
            raise DataError(
                f"metrics=: unknown metric {name!r}{hint}; the metrics are "
                f"{', '.join(CANONICAL_KEYS)}"
            )
        if key not in out:
            out.append(key)
    return out


def flat_metrics(
    result: ProbeResult, prefix: str = "collapse", metrics: Sequence[str] | None = None
) -> dict[str, float]:
    """``{"<prefix>/<layer>/<metric>": value}`` for every finite metric of ``result`` (only those
    named in ``metrics`` when given, any case), the keys a logger plots one curve each."""
    wanted = None if metrics is None else {m.lower() for m in metrics}
    out = {}
    for layer, values in result.to_dict().items():
        for name, value in values.items():
            if wanted is not None and name not in wanted:
                continue
            if isinstance(value, int | float) and math.isfinite(value):
                out[f"{prefix}/{layer}/{name}"] = float(value)
    return out


class Measurement:
    """The probe a callback runs: its options, checked at construction (and against the model
    with :meth:`probe`), one measurement over a loader or a session on the framework's passes."""

    def __init__(
        self,
        layers: Layers,
        num_classes: int,
        prefix: str,
        metrics: Sequence[str] | None,
        second_pass: bool | str,
        max_batches: int | None,
        probe_options: dict[str, Any],
        cache_budget: int | str = CACHE_BUDGET,
    ):
        if not isinstance(num_classes, int) or num_classes < 2:
            raise DataError(f"num_classes must be an integer >= 2, got {num_classes!r}")
        if max_batches is not None and (not isinstance(max_batches, int) or max_batches < 1):
            raise DataError(f"max_batches must be a positive integer or None, got {max_batches!r}")
        if second_pass not in (True, False, "reread", "cache"):
            raise DataError(
                f"second_pass must be True, False, 'reread' or 'cache'; got {second_pass!r}"
            )
        parse_bytes(cache_budget)
        if isinstance(layers, str | Tap | Mapping):
            self.layers = layers
        else:
            self.layers = list(layers)
        self.num_classes = num_classes
        self.prefix = prefix
        self.metrics = check_metrics(metrics)
        self.second_pass = second_pass
        self.max_batches = max_batches
        self.cache_budget = cache_budget
        self.probe_options = probe_options
        self._probe: CollapseProbe | None = None
        self._warned: set[str] = set()
        self._warn_unavailable()

    def probe(self, model: nn.Module) -> CollapseProbe:
        """The probe on ``model`` (raises on unknown layers, a wrong classifier or options); built
        once per model, so that its warnings come once."""
        if self._probe is None or self._probe.model is not model:
            self._probe = CollapseProbe(model, self.layers, self.num_classes, **self.probe_options)
        return self._probe

    def session(self, model: nn.Module) -> ProbeSession:
        """A session of the probe on ``model`` (second pass from the cached features)."""
        second = self.second_pass is not False
        return self.probe(model).session(second, self.cache_budget, self.max_batches)

    def finish(self, session: ProbeSession, rows: int | None) -> ProbeResult:
        """The result of a session on the framework's passes (``rows``: this rank's real rows),
        its statistics usable outside inference mode; a session that fell back to the one-pass
        route says so in a warning, once."""
        with torch.inference_mode(False), torch.no_grad():
            result = session.finish(rows=rows)
        if session.degraded is not None:
            self.warn_once("degraded", f"CollapseCallback: {session.degraded}")
        return result

    def __call__(
        self, model: nn.Module, loader: Iterable, device: torch.device | str | None
    ) -> tuple[ProbeResult, dict[str, float]]:
        """Measure ``model`` on this rank's shard of ``loader``; every rank returns the same
        (result, flat metrics), those of one process over all the data. The random number
        generators are left as they were: each pass over a DataLoader draws its base seed from
        torch's generator, which would otherwise shift the shuffling of the training epochs that
        follow (a fit with the callback would train another model than the same fit without)."""
        dev = torch.device(device) if device is not None else None
        cuda = [dev.index or 0] if dev is not None and dev.type == "cuda" else []
        with torch.random.fork_rng(devices=cuda):
            result = self.probe(model).run(
                shard_loader(loader),
                device=device,
                second_pass=self.second_pass,
                max_batches=self.max_batches,
                progress=False,
                cache_budget=self.cache_budget,
            )
        return result, self.values(result)

    def values(self, result: ProbeResult, prefix: str | None = None) -> dict[str, float]:
        """The flat metrics of ``result``; a metric of ``metrics=`` that no layer has is a warning
        with the reason (once), and so is the caveat of a logged metric that means little for
        these layers (``result.notes``: ``nc1`` when rank(Sigma_B) < K - 1, once per key)."""
        if self.metrics is not None:
            self._warn_missing(result)
        values = flat_metrics(result, self.prefix if prefix is None else prefix, self.metrics)
        for layer, notes in result.notes.items():
            for key, note in notes.items():
                name = f"{self.prefix}/{layer}/{key}"
                if self.metrics is None or key in self.metrics:
                    self.warn_once(f"note {name}", f"{name}: {note}")
        return values

    # --- warnings ----------------------------------------------------------------------------
    def warn_once(self, key: str, message: str) -> None:
        if key not in self._warned:
            self._warned.add(key)
            warnings.warn(message, UserWarning, stacklevel=3)

    def _warn_unavailable(self) -> None:
        """Metrics of ``metrics=`` that these options cannot give, said when the callback is
        built."""
        asked = self.metrics or []
        opts = self.probe_options
        reasons = {}
        if opts.get("classifier") is None:
            for m in (m for m in asked if m in NEEDS_CLASSIFIER):
                reasons[m] = (
                    "needs the classifier: pass classifier='name' (the nn.Linear whose weights "
                    "are W) and list 'name:input' among the layers"
                )
        if self.second_pass is False:
            for m in (m for m in asked if m in ("nc4", "ncc_acc")):
                reasons[m] = "needs the class means a second time: second_pass=True (the default)"
        if opts.get("scatter") == "none" and "nc1" in asked:
            reasons["nc1"] = "needs the within-class scatter, and scatter='none' keeps none"
        self._warned.update(reasons)
        if reasons:
            lines = "; ".join(f"{m} {why}" for m, why in reasons.items())
            warnings.warn(f"metrics= asks for what cannot be computed: {lines}", stacklevel=4)

    def _warn_missing(self, result: ProbeResult) -> None:
        have = {m for values in result.to_dict().values() for m in values}
        skipped = result.skipped
        for m in self.metrics or []:
            if m in have or m in self._warned:
                continue
            why = next((r[m] for r in skipped.values() if m in r), "not computed")
            self.warn_once(m, f"metrics= asks for {m!r}, which no layer has: {why}")
