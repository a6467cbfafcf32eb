"""The side-by-side figure of a resnet-ufm run (``figures/resnet_ufm.png``): the ResNet18's two
feature levels against the epoch (top row) and the extended UFM's H1 and σ(W1 H1) against the
iteration (bottom row), panel for panel — Tirer & Bruna's Fig. 5 (right) / Fig. 10 beside their
nonlinear extended UFM: NC1 of both levels; NC2^ETF and NC2^OF of the features of both levels;
NC2^ETF and NC2^OF of W; NC3 (``nc3``) and NC3^OF (``nc3_of``). Log scale.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ...report.figures import Panel, save_panels
from ...runs import RunDir
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


def render(
    cfg: ResNetUFMConfig,
    run_dir: RunDir,
    history: list[dict],
    ufm_history: list[dict],
    summary: dict[str, Any],
) -> list[str]:
    return [
        str(side_by_side(run_dir.figures / "resnet_ufm.png", cfg, history, ufm_history, summary))
    ]


def rerender(run_dir: RunDir) -> None:
    """Re-draw the figure of a finished run from its config, logs and summary."""
    data = run_dir.read_config()
    data.pop("nclab", None)
    cfg = ResNetUFMConfig.from_dict(data)
    sub = RunDir(run_dir.path / "ufm", create=False) if (run_dir.path / "ufm").is_dir() else None
    ufm_history = sub.read_metrics() if sub is not None else []
    render(cfg, run_dir, run_dir.read_metrics(), ufm_history, run_dir.read_summary())
