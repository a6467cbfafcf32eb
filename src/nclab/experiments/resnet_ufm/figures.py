"""The side-by-side figure of a resnet-ufm run (``figures/resnet_ufm.png``): the ResNet18's two
feature levels against the epoch (top row) and the extended UFM's H1 and σ(W1 H1) against the
iteration (bottom row), panel for panel — Tirer & Bruna's Fig. 5 (right) / Fig. 10 beside their
nonlinear extended UFM: NC1 of both levels; NC2^ETF and NC2^OF of the features of both levels;
NC2^ETF and NC2^OF of W; NC3 (``nc3``) and NC3^OF (``nc3_of``). Log scale. One per unit (seed),
in the unit's ``figures/``, drawn from its directory: the network's ``metrics.jsonl``, the UFM's
``ufm/metrics.jsonl`` and the unit's summary.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ...report.figures import Panel, save_panels
from ...runs import RunDir
from ..protocol import UnitResult
from .config import ResNetUFMConfig


def _curve(history: list[dict], unit: str, level: str, key: str) -> tuple[list, list]:
    xs, ys = [], []
    for r in history:
        v = r.get(level, {}).get(key)
        if v is not None and v > 0:
            xs.append(r[unit])
            ys.append(v)
    return xs, ys


def _row(history: list[dict], unit: str, names: tuple[str, str], who: str) -> list[Panel]:
    a, b = names

    def panel(title: str, curves: dict) -> Panel:
        return Panel(f"{who}: {title}", curves, xlabel=unit, logy=True)

    return [
        panel("NC1", {a: _curve(history, unit, "first", "nc1"), b: _curve(history, unit, "second", "nc1")}),
        panel(
            "NC2 of the features",
            {
                f"{lvl_name} {k}": _curve(history, unit, lvl, k)
                for lvl, lvl_name in (("first", a), ("second", b))
                for k in ("nc2_etf", "nc2_of")
            },
        ),
        panel("NC2 of W", {k: _curve(history, unit, "second", k) for k in ("nc2_w_etf", "nc2_w_of")}),
        panel(f"NC3 (W vs {b})", {k: _curve(history, unit, "second", k) for k in ("nc3", "nc3_of")}),
    ]  # fmt: skip


def side_by_side(
    path: Path, cfg: ResNetUFMConfig, history: list[dict], ufm_history: list[dict], summary: dict
) -> Path:
    """Network (top) and extended UFM (bottom), the same four panels each."""
    net_names = (f"H1 = {cfg.levels.first}", f"H2 = {cfg.levels.second}")
    panels = _row(history, "epoch", net_names, "ResNet18")
    if ufm_history:
        panels += _row(ufm_history, "step", ("H1", "σ(W1H1)"), "extended UFM")
    title = summary.get("model", "")
    if "ufm" in summary:
        title += f"  |  {summary['ufm']['model']}"
    return save_panels(path, panels, suptitle=title, ncols=4)


def figures(
    cfg: ResNetUFMConfig, run: RunDir, summary: dict[str, Any], units: Sequence[UnitResult]
) -> list[Path]:
    """``figures/resnet_ufm.png`` of every unit (the run's own for a run of one seed)."""
    out = []
    for u in units:
        sub = u.run.path / "ufm"
        ufm_history = RunDir(sub, create=False).read_metrics() if sub.is_dir() else []
        path = u.run.figures / "resnet_ufm.png"
        out.append(side_by_side(path, cfg, u.history(), ufm_history, u.summary))
    return out
