"""Summary and figures of the ``deep-ln`` experiment: every metric against depth, the trend from the
shallowest to the deepest network, and the GUFM lower bound checked on every trained network."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from ..runs import RunDir

TREND_KEYS = ("nc1", "nc2", "nc3_match", "objective_gap", "w_norm_gap")


def spearman(xs: list[float], ys: list[float]) -> float | None:
    """Spearman rank correlation (ties get their mean rank); None with fewer than 3 points.

    >>> spearman([2, 5, 13], [0.4, 0.2, 0.1])
    -1.0
    """
    pts = [(a, b) for a, b in zip(xs, ys, strict=True) if b is not None and math.isfinite(b)]
    if len(pts) < 3:
        return None

    def ranks(v: list[float]) -> list[float]:
        order = sorted(range(len(v)), key=v.__getitem__)
        r = [0.0] * len(v)
        i = 0
        while i < len(order):
            j = i
            while j + 1 < len(order) and v[order[j + 1]] == v[order[i]]:
                j += 1
            for k in range(i, j + 1):
                r[order[k]] = (i + j) / 2
            i = j + 1
        return r

    rx, ry = ranks([p[0] for p in pts]), ranks([p[1] for p in pts])
    mx, my = sum(rx) / len(rx), sum(ry) / len(ry)
    cov = sum((a - mx) * (b - my) for a, b in zip(rx, ry, strict=True))
    vx = math.sqrt(sum((a - mx) ** 2 for a in rx))
    vy = math.sqrt(sum((b - my) ** 2 for b in ry))
    return cov / (vx * vy) if vx > 0 and vy > 0 else None


def _units(row: dict[str, Any]) -> list[dict[str, Any]]:
    return row.get("per_seed") or [row]


def summarize(cfg, by_depth: dict[int, dict], histories: dict[int, list], run_dir: RunDir | None):
    depths = sorted(by_depth)
    first, last = depths[0], depths[-1]
    trend: dict[str, Any] = {"first_depth": first, "last_depth": last}
    for k in TREND_KEYS:
        vals = [by_depth[d].get(k) for d in depths]
        a, b = vals[0], vals[-1]
        trend[f"{k}_first"], trend[f"{k}_last"] = a, b
        trend[f"{k}_ratio"] = b / a if a and b is not None and a > 0 else None
        trend[f"{k}_spearman"] = spearman([float(d) for d in depths], vals)
    units = [u for d in depths for u in _units(by_depth[d])]
    # L(theta) >= L_GUFM(W_L, X_L) >= L*_GUFM for every network (X_L on the LayerNorm sphere)
    margins = [u["gufm_objective"] - u["theory"]["objective"] for u in units]
    tol = 1e-9 * max(1.0, max(abs(u["theory"]["objective"]) for u in units))
    rows = {f"L{d}": {k: v for k, v in by_depth[d].items() if k != "per_seed"} for d in depths}
    out = {
        "loss": cfg.train.loss,
        "block": cfg.model.block,
        "width": cfg.model.width,
        "data": cfg.data.name,
        "num_classes": units[0]["theory"]["K"],
        "depths": depths,
        "weight_decay": cfg.train.weight_decay,
        "wd_over_depth": cfg.train.wd_over_depth,
        "by_depth": rows,
        "trend": trend,
        "theory": {"first": by_depth[first]["theory"], "last": by_depth[last]["theory"]},
        "lower_bound_holds": all(m >= -tol for m in margins),
        "min_margin_to_gufm_optimum": min(margins),
        "sphere_error_max": max(u["sphere_error"] for u in units),
        "train_acc_min": min(u["train_acc"] for u in units),
        "test_acc_mean": sum(u["test_acc"] or 0.0 for u in units) / len(units),
    }
    if run_dir is not None:
        out["figures"] = [str(p) for p in draw(out, by_depth, histories, run_dir.figures)]
    return out


def draw(summary: dict, by_depth: dict[int, dict], histories: dict[int, list], folder: Path):
    from ..report.figures import Panel, save_panels

    depths = sorted(by_depth)
    xs = [float(d) for d in depths]

    def series(key: str) -> tuple:
        ys = [by_depth[d].get(key) for d in depths]
        sd = [(by_depth[d].get("std") or {}).get(key) for d in depths]
        return (xs, ys, sd if all(s is not None for s in sd) else None)

    nc2 = "NC2 (ETF)" if summary["loss"] == "ce" else "NC2 (OF)"
    nc3 = "NC3" if summary["loss"] == "ce" else "NC3 (OF)"
    theory_obj = [by_depth[d]["theory"]["objective"] for d in depths]
    theory_w = [by_depth[d]["theory"]["w_norm"] for d in depths]
    common = {"xlabel": "depth L", "logx": True, "xticks": xs}
    panels = [
        Panel("NC1 of X_L", {"measured": series("nc1")}, logy=True, **common),
        Panel(nc2, {"measured": series("nc2")}, logy=True, **common),
        Panel(nc3, {"measured": series("nc3_match")}, logy=True, **common),
        Panel(
            "objective vs the GUFM optimum",
            {"trained network": series("objective"), "L*_GUFM (theory)": (xs, theory_obj)},
            **common,
        ),
        Panel("mean ||w_k||", {"measured": series("w_norm"), "GUFM (theory)": (xs, theory_w)},
              **common),
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
    return [save_panels(Path(folder) / "depth.png", panels, title, ncols=3)]


def draw_from_dir(run_dir: RunDir) -> list[Path]:
    """Redraw the figure of a finished run from its units' files."""
    summary = run_dir.read_summary()
    by_depth, histories = {}, {}
    for d in summary["depths"]:
        by_depth[d] = summary["by_depth"][f"L{d}"]
        units = sorted((Path(run_dir.path) / "units").glob(f"L{d}_seed-*"))
        histories[d] = [RunDir(u, create=False).read_metrics() for u in units]
    return draw(summary, by_depth, histories, run_dir.figures)
