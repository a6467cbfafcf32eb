"""The probe: hooks on taps, the two passes over a loader, the metrics per tap."""

from __future__ import annotations

import os
import warnings
from collections.abc import Callable, Iterable, Mapping
from typing import Any, Literal

import torch
from torch import nn

from ..errors import DataError
from ..metrics import collapse_metrics
from ..progress import track
from . import _guards as guards
from . import _passes as passes
from ._batches import BatchReader, Getter, to_device
from ._cache import CACHE_BUDGET, FeatureCache, second_pass_mode
from ._classes import ClassSet, EmptyClasses
from ._ood import nc5_per_layer
from ._pooling import check_reduce, pool, token_keep, token_rows
from ._result import ProbeResult, first_pass_decisions, reword_skipped
from ._session import ProbeSession
from ._taps import BoundTap, Layers, Tap, bind, find_module, named_specs

Reduce = Literal["flatten", "avgpool", "cls", "last", "mean"] | Callable[..., torch.Tensor]


class CollapseProbe:
    """Collapse metrics of named layers (see :mod:`nclab.probe` for layer specs, pooling, batches).

    Args:
        model: any ``nn.Module``.
        layers: layer specs (``"layer4"``, ``"fc:input"``, ``"encoder[0]"``) or :class:`Tap`
            objects; one string is one layer; a dict ``{name: spec}`` names them in the results
            (``{"penultimate": "fc:input"}``, as torchvision's feature extractor does).
        num_classes: K.
        reduce: ``"flatten"`` (default), ``"avgpool"``, ``"cls"``, ``"last"``, ``"mean"`` or a
            callable ``f(t)`` / ``f(t, mask)``; a :class:`Tap` may override it.
        classifier: the module (name or object; an ``nn.Linear`` or any module with a (K, D)
            ``weight``) whose weight and bias are W and b. They apply to the tap on its input
            (``"fc:input"``): nc2_w_*, nc3, nc3_of, nc3_cos, nc4 and acc. Never inferred.
        global_mean: ``"class"`` (mean of class means, default) or ``"sample"``.
        scatter: ``"subspace"`` (default: O(N D K), filled by the second pass), ``"full"`` (D x D,
            one pass) or ``"none"`` (no ``nc1``). Without a second pass, ``"full"`` is used.
        tokens: token-level mode: every token of a (B, T, H) output is a sample, labels are (B, T);
            tokens labelled ``ignore_index`` or outside the attention mask are left out.
        forward, labels, mask: how a batch is run and read (see :mod:`nclab.probe._batches`):
            ``forward(model, batch)``; ``labels`` and ``mask`` a key, an index or a callable.
        eval_mode: run the model in eval mode (default); every module's mode is restored after.
        max_scatter_bytes: refuse full D x D scatters estimated above this (None: no limit).
        empty_classes: ``"error"`` (default): every class must have samples; ``"drop"``: classes
            without samples (e.g. the tokens of a vocabulary that never occur as next tokens) are
            left out after the first pass, the others renumbered in order with the classifier's
            rows; ``result.classes`` lists the original index of each class kept (always a list:
            ``0..K-1`` when none is dropped).
    """

    def __init__(
        self,
        model: nn.Module,
        layers: Layers,
        num_classes: int,
        reduce: Reduce = "flatten",
        classifier: str | nn.Module | None = None,
        global_mean: Literal["class", "sample"] = "class",
        scatter: str = "subspace",
        *,
        tokens: bool = False,
        ignore_index: int = -100,
        forward: Callable[[nn.Module, Any], Any] | None = None,
        labels: Getter = None,
        mask: Getter = "attention_mask",
        eval_mode: bool = True,
        max_scatter_bytes: int | None = guards.MAX_SCATTER_BYTES,
        empty_classes: EmptyClasses = "error",
    ):
        check_reduce(reduce)
        self.classes = ClassSet(num_classes, empty_classes)
        self.model = model
        self.num_classes = num_classes
        self.reduce = reduce
        self.global_mean = global_mean
        self.scatter = scatter
        self.tokens = tokens
        self.ignore_index = ignore_index
        self.reader = BatchReader(forward, labels, mask)
        self.eval_mode = eval_mode
        self.max_scatter_bytes = max_scatter_bytes
        modules = dict(model.named_modules())
        self.taps = self._bind(layers, modules)
        self.classifier, self._clf = self._find_classifier(classifier, modules)
        self._handles: list[Any] = []
        self._observed = 0

    def _bind(self, layers, modules) -> list[BoundTap]:
        if isinstance(layers, str | Tap):
            layers = [layers]
        elif isinstance(layers, Mapping):
            layers = named_specs(layers)
        taps = [bind(self.model, spec, modules) for spec in layers]
        if not taps:
            raise DataError("CollapseProbe needs at least one layer name")
        names = [t.name for t in taps]
        dup = sorted({n for n in names if names.count(n) > 1})
        if dup:
            raise DataError(f"layers {dup} are listed twice; give each Tap its own name=")
        for t in taps:
            if t.reduce is not None:
                check_reduce(t.reduce, f"the reduce of layer {t.name!r}")
        return taps

    def _find_classifier(self, ref, modules) -> tuple[str | None, nn.Module | None]:
        if ref is None:
            return None, None
        name, mod = find_module(ref, modules)
        w = getattr(mod, "weight", None)
        if not isinstance(w, torch.Tensor) or w.ndim != 2:
            raise DataError(
                f"classifier {name!r} is not an nn.Linear of the model (nor a module with a "
                f"2-D weight (K, D)): it is a {type(mod).__name__}"
            )
        if w.shape[0] != self.num_classes:
            raise DataError(
                f"classifier {name!r} has {w.shape[0]} outputs (weight of shape "
                f"{tuple(w.shape)}) but num_classes={self.num_classes}"
            )
        for t in self.taps:
            t.is_classifier = t.module is mod and t.use_input and t.select in (None, 0)
        if not any(t.is_classifier for t in self.taps):
            warnings.warn(
                f"classifier={name!r}: its weights apply to the features it reads; list "
                f"'{name}:input' among the layers to get nc3, nc3_cos, nc4 and acc (a bare "
                f"{name!r} measures its output, the logits)",
                UserWarning,
                stacklevel=3,
            )
        return name, mod

    # --- hooks -----------------------------------------------------------------------------------
    def _attach(self) -> None:
        for tap in self.taps:
            self._handles.append(tap.module.register_forward_hook(tap.hook, with_kwargs=True))

    def _detach(self) -> None:
        for h in self._handles:
            h.remove()
        self._handles.clear()
        for tap in self.taps:
            tap.value = None

    def __enter__(self) -> CollapseProbe:
        self._attach()
        return self

    def __exit__(self, *exc) -> None:
        self._detach()

    # --- one batch -------------------------------------------------------------------------------
    def _features(self, batch: Any, labels: Any, index: int, device) -> list[tuple]:
        """Run the model on one batch; [(tap, features (n, D), labels (n,))] for every tap.
        ``labels`` None: ``batch`` is a whole batch; else ``batch`` holds the inputs only."""
        batch = to_device(batch, device)
        if labels is None:
            y = self.reader.labels_of(batch)
            mask = self.reader.mask_of(batch)
        else:
            y = labels if isinstance(labels, torch.Tensor) else torch.as_tensor(labels)
            mask = self.reader.mask_of((batch, y))
        for tap in self.taps:
            tap.value = None
        if labels is None:
            self.reader.run(self.model, batch)
        else:
            self.reader.run_inputs(self.model, batch)
        return self._collect(y, mask, index, "the model's forward")[0]

    def _collect(self, y, mask, index: int, where: str, rows: int | None = None):
        """The features of the values the hooks recorded in one forward: ([(tap, features (n, D),
        labels (n,))], the samples of each batch row: its kept tokens in token mode, else None (one
        each)). ``rows``: only the first ``rows`` rows of the batch."""
        if rows is not None:
            y = y[:rows]
            mask = mask[:rows] if mask is not None else None
        self._warn_unmasked(mask)
        keep = token_keep(y, mask, self.ignore_index) if self.tokens else None
        out = []
        for tap in self.taps:
            if tap.value is None:
                raise DataError(
                    f"layer {tap.name!r}: module {tap.module_name!r} was not called in "
                    f"{where} (batch {index}); measure a module that forward() runs"
                )
            value = tap.value if rows is None else tap.value[:rows]
            tap.value = None
            side = f"the {tap.side} of layer {tap.name!r}"
            if keep is not None:
                out.append((tap, token_rows(value, keep, side), y[keep.to(y.device)]))
            else:
                reduce = tap.reduce if tap.reduce is not None else self.reduce
                out.append((tap, pool(value, reduce, mask, side), y))
        return out, (keep.sum(1) if keep is not None else None)

    def _warn_unmasked(self, mask) -> None:
        """A dict batch without an attention mask, pooled over its tokens: padding counts."""
        if mask is not None or not self.reader.dict_batch or self.tokens:
            return
        pooled = [t.reduce if t.reduce is not None else self.reduce for t in self.taps]
        used = sorted({r for r in pooled if isinstance(r, str) and r in ("mean", "last")})
        if used:
            self.reader.warn_once(
                "mask",
                f"the dict batches have no {self.reader.mask!r} key: reduce={used[0]!r} pools "
                "every token, padding included; name the attention mask with mask='key' (or "
                "mask=callable(batch); mask=None to pool every token without this warning)",
            )

    def observe(
        self, inputs: Any, labels: Any = None, device=None, scatter: str | None = None
    ) -> None:
        """Run one batch through the model (hooks attached) and add its features to the statistics.

        ``observe(batch)`` reads a whole batch as :meth:`run` does; ``observe(inputs, labels)`` runs
        the model on ``inputs``. The model runs in eval mode under ``torch.no_grad()`` (see
        ``eval_mode``) and every module's mode is restored; outside ``with probe:`` the hooks are
        attached for this call only. Used alone (without :meth:`run`), the
        statistics keep the full scatter unless ``scatter`` says otherwise (no second pass
        follows), within ``max_scatter_bytes``.
        """
        why = "observe" if scatter is None else ("full" if scatter == "full" else "one-pass")
        self._observe(inputs, labels, device, scatter or "full", why)

    def _observe(self, inputs, labels, device, scatter: str, why: str) -> list[tuple]:
        self.classes.check_open(self.taps[0].stats is not None)
        index = self._observed
        attached = bool(self._handles)  # observe() outside `with probe:` hooks for this call
        if not attached:
            self._attach()
        try:
            with guards.Modes(self.model, self.eval_mode), torch.no_grad():
                feats = self._features(inputs, labels, index, device)
        finally:
            if not attached:
                self._detach()
        passes.first_pass(self, feats, index, scatter, why)
        self._observed += 1
        return feats

    def _decide(self, batch: Any, index: int, device, check: guards.PassCheck | None) -> None:
        with guards.Modes(self.model, self.eval_mode):
            feats = self._features(batch, None, index, device)
        passes.decide(self, feats, index, check)

    # --- the passes ------------------------------------------------------------------------------
    def run(
        self,
        loader: Iterable,
        device: torch.device | str | None = None,
        second_pass: bool | Literal["reread", "cache"] = True,
        max_batches: int | None = None,
        distributed: bool = True,
        progress: bool = True,
        cache_budget: int | str = CACHE_BUDGET,
        spill: bool | str | os.PathLike = False,
    ) -> ProbeResult:
        """Stream ``loader`` through the model and compute the metrics.

        Batches are ``(inputs, labels[, ...])``, dicts or anything ``forward=``/``labels=`` read.
        The model runs in eval mode (``eval_mode``) under ``torch.no_grad()``; every module's mode is
        restored afterwards. ``second_pass`` (``nc1`` with ``scatter="subspace"``, ``nc3_cos``,
        ``nc4``, ``ncc_acc``):

        * ``True`` / ``"reread"`` (default): read the loader again. It warns when a DataLoader
          shuffles and when the second pass saw different data (augmentation, ``drop_last``);
        * ``"cache"``: read the loader once and run the second pass on the pooled features kept in
          memory (at most ``cache_budget`` bytes, e.g. ``"2GB"``; refused beyond it, unless
          ``spill=True`` (the system's temporary folder) or ``spill="folder"``: the batches beyond
          the budget go to a temporary file there and are read back): both passes see the same
          draw, so a training loader that augments gives consistent one-draw values, and a
          deterministic one exactly the numbers of ``"reread"``; the model runs once per batch;
        * ``False``: one pass, no second pass (the full D x D scatter for ``nc1``; ``nc3_cos`` and
          ``acc`` with the classifier; no ``nc4``, ``ncc_acc``).

        Under ``torch.distributed`` each rank streams its shard and the statistics are
        all-reduced, so every rank returns the same numbers as one process over all the data.
        """
        mode = second_pass_mode(second_pass)
        for tap in self.taps:
            tap.stats = tap.clf_sums = None
        self.classes.reset()
        cache = FeatureCache(cache_budget, spill) if mode == "cache" else None
        if mode == "reread":
            guards.warn_if_loader_varies(loader)
        self._attach()
        try:
            with torch.no_grad():
                self._first_pass(loader, device, mode, max_batches, progress, cache)
                passes.merge_first_pass(self, distributed)
                if mode == "reread":
                    self._second_pass(loader, device, max_batches, distributed, progress)
                elif mode == "cache":
                    passes.cached_second_pass(self, cache, distributed, progress)
        finally:
            self._detach()
            if cache is not None:
                cache.clear()  # the memory, and the spill file (if any) with it
        passes.record_classifier(self)
        return self.result()

    def session(
        self,
        second_pass: bool | Literal["cache"] = True,
        cache_budget: int | str = CACHE_BUDGET,
        max_batches: int | None = None,
    ) -> ProbeSession:
        """A measurement on forward passes that something else runs (a training framework's
        validation loop): ``attach()`` the hooks, ``add(batch)`` after each forward, ``finish()``
        for the result; see :class:`~nclab.probe.ProbeSession`."""
        return ProbeSession(self, second_pass, cache_budget, max_batches)

    def nc5(self, ood_loader: Iterable, centre: bool = False, **kwargs) -> dict[str, float]:
        """{layer: NC5} of an out-of-distribution loader against the class means of :meth:`run`
        (:func:`nclab.metrics.nc5`; ``kwargs``: ``device``, ``max_batches``, ``progress``)."""
        return nc5_per_layer(self, ood_loader, centre, **kwargs)

    def _first_pass(self, loader, device, mode, max_batches, progress, cache) -> None:
        # "subspace" needs the second pass; without it keep the full scatter ("none" stays none)
        first_scatter = self.scatter if (mode or self.scatter != "subspace") else "full"
        why = "full" if self.scatter == "full" else "one-pass"
        for i, batch in enumerate(track(loader, "probe: statistics", enabled=progress)):
            if max_batches is not None and i >= max_batches:
                break
            self._observed = i
            feats = self._observe(batch, None, device, first_scatter, why)
            if cache is not None:
                cache.add(feats, i)
            if mode is None:
                passes.classify_first_pass(self, feats)
        if any(t.stats is None for t in self.taps):
            raise DataError("the loader yielded no batches")

    def _second_pass(self, loader, device, max_batches, distributed, progress) -> None:
        check = guards.PassCheck(min(self.taps, key=lambda t: t.stats.dim).name)
        for i, batch in enumerate(track(loader, "probe: decisions", enabled=progress)):
            if max_batches is not None and i >= max_batches:
                break
            self._decide(batch, i, device, check)
        if distributed:
            for tap in self.taps:
                tap.stats.all_reduce_second_pass()
            if check.sums is not None:
                guards.all_reduce_sum(check.sums)
        check.verify(next(t.stats for t in self.taps if t.name == check.name))

    def result(self) -> ProbeResult:
        """Metrics of the statistics gathered so far (by :meth:`run` or :meth:`observe`)."""
        w, b = passes.classifier_params(self)
        metrics, stats = {}, {}
        for tap in self.taps:
            if tap.stats is None:
                raise DataError(f"layer {tap.name!r} has seen no data")
            if tap is self.taps[0]:
                self.classes.settle(self.taps)
            # the classifier recorded on the statistics, else (observe() alone) the model's own
            clf = tap.is_classifier and tap.stats.weights is None
            m = collapse_metrics(
                tap.stats, w if clf else None, b if clf else None, global_mean=self.global_mean
            )
            if tap.is_classifier and tap.clf_sums is not None and tap.stats.decision.n == 0:
                first_pass_decisions(m, tap.clf_sums)
            reword_skipped(m, tap, self.classifier)
            metrics[tap.name], stats[tap.name] = m, tap.stats
        kept = self.classes.kept
        classes = kept.tolist() if kept is not None else list(range(self.num_classes))
        return ProbeResult(metrics, stats, classes)
