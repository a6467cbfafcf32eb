"""ProbeResult, and the probe's wording of the metrics it could not compute."""

from __future__ import annotations

from dataclasses import dataclass, field

import torch

from ..collapse import ClassStats
from ..errors import DataError
from ..metrics import Metrics
from ..tables import metrics_table
from ._taps import BoundTap


@dataclass
class ProbeResult:
    """Metrics per layer (``to_dict()``: ``{layer: {metric: value}}``), the reasons for the metrics
    left out (``skipped``: ``{layer: {metric: reason}}``), the caveats of those computed where they
    mean little (``notes``: ``{layer: {metric: caveat}}``) and the statistics behind them (``stats``,
    each with the classifier it was measured with: ``stats[layer].compute()`` gives the metrics
    again) and the original index of each class measured (``classes``: ``0..K-1``, or the classes
    kept when ``empty_classes="drop"`` left some out; ``len(result.classes)`` is the K measured)."""

    metrics: dict[str, Metrics]
    stats: dict[str, ClassStats]
    #: original index of each class measured: ``[0, ..., K-1]``, or the classes kept when
    #: ``empty_classes="drop"`` left some out (always a list)
    classes: list[int] = field(default_factory=list)

    def to_dict(self) -> dict[str, dict[str, float]]:
        return {layer: dict(m) for layer, m in self.metrics.items()}

    @property
    def skipped(self) -> dict[str, dict[str, str]]:
        """``{layer: {metric: reason}}`` for the metrics a layer could not compute (layers with
        none left out)."""
        return {layer: dict(m.skipped) for layer, m in self.metrics.items() if m.skipped}

    @property
    def notes(self) -> dict[str, dict[str, str]]:
        """``{layer: {metric: caveat}}`` for the metrics a layer computed that mean less than they
        seem, e.g. ``nc1`` when rank(Sigma_B) < K - 1 (a vocabulary of K classes in D < K - 1
        dimensions: compare ``nc1_rank_norm`` and ``cdnv``); layers with none left out."""
        return {layer: dict(m.notes) for layer, m in self.metrics.items() if m.notes}

    def to_pandas(self):
        """The layer x metric table as a ``pandas.DataFrame`` (needs pandas)."""
        try:
            import pandas as pd
        except ImportError as exc:  # pragma: no cover - depends on the environment
            raise DataError("to_pandas() needs pandas: pip install pandas") from exc
        return pd.DataFrame.from_dict(self.to_dict(), orient="index")

    def __rich__(self):
        return metrics_table(self.to_dict(), title="collapse metrics by layer")


def first_pass_decisions(m: Metrics, clf_sums: torch.Tensor) -> None:
    cos, correct, n, zeros = clf_sums.tolist()
    m["acc"] = correct / n
    m.skipped.pop("acc", None)
    if zeros:
        m.skipped["nc3_cos"] = "nc3_cos is undefined: some features are exactly zero"
    else:
        m["nc3_cos"] = cos / n
        m.skipped.pop("nc3_cos", None)


NEEDS_CLASSIFIER = ("nc2_w_etf", "nc2_w_of", "nc3", "nc3_of", "nc3_cos", "nc4", "acc")


def reword_skipped(m: Metrics, tap: BoundTap, classifier: str | None) -> None:
    """Skip reasons in the probe's vocabulary (``classifier=``, ``run()``), not ClassStats'."""
    if classifier is None:
        no_w = (
            "needs the classifier: pass classifier='name' (the nn.Linear whose weights are W) "
            "and list 'name:input' among the layers"
        )
    else:
        no_w = (
            f"needs the classifier's weights, which apply to its input: see layer "
            f"'{classifier}:input' (classifier={classifier!r})"
        )
    for key in NEEDS_CLASSIFIER:
        if not tap.is_classifier and key not in m:
            m.skipped[key] = f"{key} {no_w}"
    for key, reason in list(m.skipped.items()):
        if "decision_pass" in reason and "second pass" in reason:
            m.skipped[key] = (
                f"{key} needs a second pass over the data with the final class means: "
                "probe.run(loader) with second_pass=True (the default)"
            )
