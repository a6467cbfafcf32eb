"""CollapseProbe: collapse metrics of named layers of any PyTorch model, streamed over a DataLoader.

Forward hooks on the named modules feed one :class:`~nclab.ClassStats` per layer; a second pass
(needed by ``nc3_cos``, ``nc4`` and ``ncc_acc``, which compare each sample with the *final* class
means) runs when ``second_pass=True``. Hooks are removed afterwards, even on error.

Layer names are module names from ``model.named_modules()``. A layer records its module's *output*,
except the classifier (an ``nn.Linear`` named by ``classifier``), which records its *input*: the
penultimate features that NC1-NC4 are about. Append ``":input"`` or ``":output"`` to a name to choose.

>>> import torch
>>> from torch import nn
>>> model = nn.Sequential(nn.Linear(10, 16), nn.ReLU(), nn.Linear(16, 3))
>>> data = [(torch.randn(32, 10), torch.randint(0, 3, (32,))) for _ in range(4)]
>>> probe = CollapseProbe(model, layers=["1", "2"], num_classes=3, classifier="2")
>>> result = probe.run(data)
>>> sorted(result.to_dict())
['1', '2']
>>> "nc3" in result.to_dict()["2"]
True
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, Literal

import torch
from torch import nn

from ._kernels import classifier_sums, scratch_f64
from .errors import DataError
from .metrics import Metrics, collapse_metrics
from .stats import ClassStats
from .validation import check_tensor

Reduce = Literal["flatten", "avgpool"]


@dataclass
class _Tap:
    name: str  # as given by the user
    module_name: str
    module: nn.Module
    use_input: bool
    stats: ClassStats | None = None
    batch: torch.Tensor | None = field(default=None, repr=False)
    clf_sums: torch.Tensor | None = field(default=None, repr=False)  # cos, correct, n, zeros


@dataclass
class ProbeResult:
    """Metrics per layer (``to_dict()``: ``{layer: {metric: value}}``) and the statistics behind them."""

    metrics: dict[str, Metrics]
    stats: dict[str, ClassStats]

    def to_dict(self) -> dict[str, dict[str, float]]:
        return {layer: dict(m) for layer, m in self.metrics.items()}

    def skipped(self) -> dict[str, dict[str, str]]:
        return {layer: dict(m.skipped) for layer, m in self.metrics.items() if m.skipped}

    def to_pandas(self):
        """The layer x metric table as a ``pandas.DataFrame`` (needs pandas)."""
        try:
            import pandas as pd
        except ImportError as exc:  # pragma: no cover - depends on the environment
            raise DataError("to_pandas() needs pandas: pip install pandas") from exc
        return pd.DataFrame.from_dict(self.to_dict(), orient="index")

    def __rich__(self):
        from .tables import metrics_table

        return metrics_table(self.to_dict(), title="collapse metrics by layer")


class CollapseProbe:
    """Collapse metrics of named layers.

    Args:
        model: any ``nn.Module``.
        layers: module names (``model.named_modules()``), optionally suffixed ``:input``/``:output``.
        num_classes: K.
        reduce: how to turn feature maps (N, C, ...) into vectors: ``"flatten"`` or ``"avgpool"``
            (mean over the spatial dimensions).
        classifier: name of the ``nn.Linear`` whose weight (and bias) are W (and b) for NC2-W, NC3
            and NC4; defaults to the last layer in ``layers`` when it is an ``nn.Linear``.
        global_mean: ``"class"`` (mean of class means, default) or ``"sample"``.
        scatter: how each layer keeps its within-class scatter (see :class:`~nclab.ClassStats`):
            ``"subspace"`` (default: O(N D K) work, filled by the second pass), ``"full"`` (D x D,
            one pass) or ``"none"`` (skips ``nc1``). Without a second pass, ``"full"`` is used.
    """

    def __init__(
        self,
        model: nn.Module,
        layers: Iterable[str],
        num_classes: int,
        reduce: Reduce = "flatten",
        classifier: str | None = None,
        global_mean: Literal["class", "sample"] = "class",
        scatter: str = "subspace",
    ):
        if reduce not in ("flatten", "avgpool"):
            raise DataError(f"reduce must be 'flatten' or 'avgpool', got {reduce!r}")
        self.model = model
        self.num_classes = num_classes
        self.reduce = reduce
        self.global_mean = global_mean
        self.scatter = scatter
        modules = dict(model.named_modules())
        layers = list(layers)
        if not layers:
            raise DataError("CollapseProbe needs at least one layer name")
        if classifier is None:
            last = layers[-1].split(":")[0]
            if isinstance(modules.get(last), nn.Linear):
                classifier = last
        if classifier is not None and not isinstance(modules.get(classifier), nn.Linear):
            raise DataError(f"classifier {classifier!r} is not an nn.Linear of the model")
        self.classifier = classifier
        self.taps: list[_Tap] = []
        for name in layers:
            mod_name, _, side = name.partition(":")
            if mod_name not in modules:
                valid = ", ".join(repr(n) for n in list(modules)[:30] if n)
                raise DataError(f"no module named {mod_name!r} in the model; modules: {valid}")
            if side not in ("", "input", "output"):
                raise DataError(f"layer {name!r}: the suffix must be ':input' or ':output'")
            use_input = side == "input" or (side == "" and mod_name == classifier)
            self.taps.append(_Tap(name, mod_name, modules[mod_name], use_input))
        self._handles: list[Any] = []

    # --- hooks -----------------------------------------------------------------------------------
    def _vectorise(self, t: torch.Tensor) -> torch.Tensor:
        if t.ndim <= 2:
            return t.reshape(t.shape[0], -1)
        if self.reduce == "avgpool":
            return t.flatten(2).mean(2)
        return t.flatten(1)

    def _attach(self) -> None:
        for tap in self.taps:

            def hook(module, inputs, output, tap=tap):
                t = inputs[0] if tap.use_input else output
                side = "input" if tap.use_input else "output"
                check_tensor(t, f"the {side} of layer {tap.name!r}")
                tap.batch = self._vectorise(t.detach())

            self._handles.append(tap.module.register_forward_hook(hook))

    def _detach(self) -> None:
        for h in self._handles:
            h.remove()
        self._handles.clear()
        for tap in self.taps:
            tap.batch = None

    def __enter__(self) -> CollapseProbe:
        self._attach()
        return self

    def __exit__(self, *exc) -> None:
        self._detach()

    # --- passes ----------------------------------------------------------------------------------
    def _forward(self, inputs: Any, device) -> None:
        if device is not None:
            inputs = inputs.to(device) if isinstance(inputs, torch.Tensor) else inputs
        self.model(inputs)

    def _classifier_params(self):
        if self.classifier is None:
            return None, None
        lin = dict(self.model.named_modules())[self.classifier]
        return lin.weight.detach(), (lin.bias.detach() if lin.bias is not None else None)

    def observe(
        self, inputs: Any, labels: torch.Tensor, device=None, scatter: str | None = None
    ) -> None:
        """Run one batch through the model (hooks attached) and add its features to the statistics.

        Used alone (context manager), the statistics keep the full scatter unless ``scatter`` says
        otherwise, since no second pass follows.
        """
        self._forward(inputs, device)
        for tap in self.taps:
            feats = tap.batch
            if tap.stats is None:
                tap.stats = ClassStats(
                    self.num_classes, feats.shape[1], device=feats.device, scatter=scatter or "full"
                )
            tap.stats.update(feats, labels)

    def _decide(self, inputs: Any, labels: torch.Tensor, device=None) -> None:
        self._forward(inputs, device)
        w, b = self._classifier_params()
        for tap in self.taps:
            is_clf = tap.module_name == self.classifier and tap.use_input
            tap.stats.decision_pass(tap.batch, labels, w if is_clf else None, b if is_clf else None)

    def _classify_first_pass(self, labels: torch.Tensor) -> None:
        """Without a second pass: ``nc3_cos`` and ``acc`` of the classifier input, which need each
        sample and W (not the final class means), accumulated in float64 during the first pass."""
        w, b = self._classifier_params()
        if w is None:
            return
        for tap in self.taps:
            if not (tap.module_name == self.classifier and tap.use_input):
                continue
            x = scratch_f64(tap.batch)
            y = labels.to(x.device)
            b64 = b.to(x.device, torch.float64) if b is not None else None
            cos_sum, correct, zeros, _ = classifier_sums(x, y, w.to(x.device, torch.float64), b64)
            part = torch.tensor(
                [cos_sum, correct, len(y), zeros], dtype=torch.float64, device=x.device
            )
            tap.clf_sums = part if tap.clf_sums is None else tap.clf_sums + part

    def run(
        self,
        loader: Iterable,
        device: torch.device | str | None = None,
        second_pass: bool = True,
        max_batches: int | None = None,
        distributed: bool = True,
        progress: bool = True,
    ) -> ProbeResult:
        """Stream ``loader`` (yielding ``(inputs, labels)``) through the model and compute the metrics.

        The model runs in eval mode under ``torch.no_grad()`` and is restored afterwards. Under
        ``torch.distributed`` each rank streams its shard and the statistics are all-reduced, so every
        rank returns the same numbers as one process over all the data.
        """
        from .progress import track

        was_training = self.model.training
        self.model.eval()
        for tap in self.taps:
            tap.stats = tap.clf_sums = None
        # "subspace" needs the second pass; without it keep the full scatter ("none" stays none)
        first_scatter = self.scatter if (second_pass or self.scatter != "subspace") else "full"
        self._attach()
        try:
            with torch.no_grad():
                for i, (x, y) in enumerate(track(loader, "probe: statistics", enabled=progress)):
                    if max_batches is not None and i >= max_batches:
                        break
                    self.observe(x, y, device, first_scatter)
                    if not second_pass:
                        self._classify_first_pass(y)
                if any(t.stats is None for t in self.taps):
                    raise DataError("the loader yielded no batches")
                if distributed:
                    for tap in self.taps:
                        tap.stats.all_reduce()
                        if tap.clf_sums is not None:
                            _all_reduce_sum(tap.clf_sums)
                if second_pass:
                    for i, (x, y) in enumerate(track(loader, "probe: decisions", enabled=progress)):
                        if max_batches is not None and i >= max_batches:
                            break
                        self._decide(x, y, device)
                    if distributed:
                        for tap in self.taps:
                            tap.stats.all_reduce_second_pass()
        finally:
            self._detach()
            self.model.train(was_training)
        return self.result()

    def result(self) -> ProbeResult:
        """Metrics of the statistics gathered so far (by :meth:`run` or :meth:`observe`)."""
        w, b = self._classifier_params()
        metrics, stats = {}, {}
        for tap in self.taps:
            if tap.stats is None:
                raise DataError(f"layer {tap.name!r} has seen no data")
            is_clf = tap.module_name == self.classifier and tap.use_input
            metrics[tap.name] = collapse_metrics(
                tap.stats,
                w if is_clf else None,
                b if is_clf else None,
                global_mean=self.global_mean,
            )
            if is_clf and tap.clf_sums is not None and tap.stats.decision.n == 0:
                cos, correct, n, zeros = tap.clf_sums.tolist()
                m = metrics[tap.name]
                m["acc"] = correct / n
                m.skipped.pop("acc", None)
                if zeros:
                    m.skipped["nc3_cos"] = "nc3_cos is undefined: some features are exactly zero"
                else:
                    m["nc3_cos"] = cos / n
                    m.skipped.pop("nc3_cos", None)
            stats[tap.name] = tap.stats
        return ProbeResult(metrics, stats)


def _all_reduce_sum(t: torch.Tensor) -> None:
    import torch.distributed as dist

    if dist.is_available() and dist.is_initialized():
        dist.all_reduce(t)
