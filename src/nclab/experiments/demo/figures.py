"""The demo's figure: NC1, NC2, CDNV per layer and NC3/NC4 of the classifier against epochs."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ...report.figures import Panel, curves_from_records, save_panels
from ...runs import RunDir
from ..protocol import UnitResult


def figures(cfg: Any, run: RunDir, summary: dict, units: Sequence[UnitResult]) -> list[Path]:
    """The collapse figure of the first seed's training (``figures/collapse.png``)."""
    return [collapse_figure(run.figures / "collapse.png", units[0].history())]


def collapse_figure(path: Path, history: list[dict[str, Any]]) -> Path:
    final = history[-1]
    layer_names = list(final["layers"])
    ep = [r["epoch"] for r in history]
    panels = [
        Panel(
            title,
            {ln: curves_from_records(history, "epoch", f"layers.{ln}.{key}") for ln in layer_names},
            xlabel="epoch",
            logy=True,
        )
        for title, key in [
            ("NC1 (tr Σ_W Σ_B⁺ / K)", "nc1"),
            ("NC2 (ETF distance of means)", "nc2_etf"),
            ("CDNV", "cdnv"),
        ]
    ]
    panels.append(
        Panel(
            "classifier: NC3 and NC4",
            {
                "nc3 (self-duality)": curves_from_records(
                    history, "epoch", "layers.classifier input.nc3"
                ),
                "nc4 (NCC mismatch)": curves_from_records(
                    history, "epoch", "layers.classifier input.nc4"
                ),
                "1 - test acc": (ep, [1 - r["test_acc"] for r in history]),
            },
            xlabel="epoch",
            logy=True,
        )
    )
    return save_panels(path, panels, suptitle="Collapse of an MLP trained on digits")
