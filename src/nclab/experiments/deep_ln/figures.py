"""The deep-ln figure, on log–log axes as the paper's Figure 1: NC1, NC2 of W_L, NC3 (1 - mean
cosine), NC2 of the class means and the gap to the GUFM optimum against depth (each titled with its
fitted slope), the objective and ‖w_k‖ beside the GUFM optimum, the total regularisation term, and NC1 during training of every
depth (first seed)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from ...report.figures import Panel, save_panels
from ...runs import RunDir
from ..protocol import UnitResult


def draw(summary: dict, by_depth: dict[int, dict], histories: dict[int, list], folder: Path):
    """``folder/depth.png`` from the run's summary, each depth's (seed-aggregated) summary and the
    logged records of each depth's units."""
    depths = sorted(by_depth)
    xs = [float(d) for d in depths]

    def series(key: str) -> tuple:
        ys = [by_depth[d].get(key) for d in depths]
        sd = [(by_depth[d].get("std") or {}).get(key) for d in depths]
        return (xs, ys, sd if all(s is not None for s in sd) else None)

    frame = "ETF" if summary["loss"] == "ce" else "OF"
    theory_obj = [by_depth[d]["theory"]["objective"] for d in depths]
    theory_w = [by_depth[d]["theory"]["w_norm"] for d in depths]
    common = {"xlabel": "depth L (log)", "logx": True, "xticks": xs}
    slope = summary.get("slopes", {})

    def nc(key: str, label: str) -> Panel:
        s = (slope.get(key) or {}).get("mean")
        title = label + (f", slope {s:.2f}" if s is not None else "")
        return Panel(title, {"measured": series(key)}, logy=True, **common)

    panels = [
        nc("nc1", "NC1 of X_L"),
        nc("nc2_w", f"NC2 of W_L ({frame})"),
        nc("nc3_cos_dist", "NC3 = 1 - mean cos(x_i, w_yi)"),
        # with K = 2 the centred class means are always antipodal: their NC2 says nothing
        *([nc("nc2", f"NC2 of the class means ({frame})")] if summary["num_classes"] > 2 else []),
        nc("objective_gap", "objective - L*_GUFM"),
        Panel(
            "objective vs the GUFM optimum",
            {"trained network": series("objective"), "L*_GUFM (theory)": (xs, theory_obj)},
            logy=True,
            **common,
        ),
        Panel(
            "total regularisation (lambda/2) sum ||W_l||^2",
            {"measured": (xs, [_reg(by_depth[d]) for d in depths])},
            **common,
        ),
        Panel(
            "mean ||w_k||",
            {"measured": series("w_norm"), "GUFM (theory)": (xs, theory_w)},
            **common,
        ),
    ]
    curves = {}
    for d in depths:
        hist = histories[d][0]
        curves[f"L={d}"] = ([r["epoch"] for r in hist], [r.get("nc1") for r in hist])
    panels.append(Panel("NC1 during training (first seed)", curves, xlabel="epoch", logy=True))
    title = (
        f"deep-ln: {summary['block'].upper()}, {summary['loss'].upper()}, width "
        f"{summary['width']}, {summary['data']}"
    )
    return [save_panels(Path(folder) / "depth.png", panels, title, ncols=4)]


def _reg(row: dict) -> float | None:
    """The regularisation term of a depth's networks: objective minus fit (mean over seeds)."""
    o, f = row.get("objective"), row.get("fit")
    return None if o is None or f is None else o - f


def figures(cfg, run: RunDir, summary: dict, units: Sequence[UnitResult]) -> list[Path]:
    """``figures/depth.png`` of a sweep from its summary and its units' logs (none for a monotone
    comparison)."""
    if cfg.mode == "monotone":
        return []
    depths = summary["depths"]
    by_depth = {d: summary["by_depth"][f"L{d}"] for d in depths}
    histories: dict[int, list] = {d: [] for d in depths}
    for r in units:
        histories[r.unit["depth"]].append(r.history())
    return draw(summary, by_depth, histories, run.figures)
