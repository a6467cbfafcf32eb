"""Summary of the ``deep-ln`` experiment: every metric against depth, the trend from the shallowest
to the deepest network, and the GUFM lower bound checked on every trained network; returned as its
declared type (:class:`~.schema.DeepLnSweepSummary`, :class:`~.schema.DeepLnMonotoneSummary`)."""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from typing import Any

from ..common.seeds import aggregate_summaries
from ..protocol import UnitResult
from . import monotone
from .limit import limit
from .schema import SLOPE_KEYS, TREND_KEYS, DeepLnMonotoneSummary, DeepLnSweepSummary, Unit


def loglog_slope(xs: list[float], ys: list[float]) -> float | None:
    """Least-squares slope of log y against log x: the exponent a of y ≈ c·x^a.

    None with fewer than two points with x > 0 and y > 0, finite (a metric of exactly 0 has no
    logarithm: such points are left out, and with fewer than two left there is no slope).

    >>> round(loglog_slope([2, 4, 8, 16], [1.0, 0.5, 0.25, 0.125]), 12)
    -1.0
    >>> loglog_slope([2, 4], [0.0, 1.0]) is None
    True
    """
    pts = [
        (math.log(a), math.log(b))
        for a, b in zip(xs, ys, strict=True)
        if a is not None and b is not None and a > 0 and b > 0 and math.isfinite(b)
    ]
    if len(pts) < 2 or len({p[0] for p in pts}) < 2:
        return None
    mx = sum(p[0] for p in pts) / len(pts)
    my = sum(p[1] for p in pts) / len(pts)
    sxx = sum((p[0] - mx) ** 2 for p in pts)
    return sum((p[0] - mx) * (p[1] - my) for p in pts) / sxx


def slopes(by_depth: dict[int, dict]) -> dict[str, Any]:
    """Per metric of :data:`SLOPE_KEYS`: the log–log slope against depth fitted on each seed's
    networks separately, then its mean and (population) std over the seeds, and ``per_seed``."""
    depths = sorted(by_depth)
    seeds = [_units(by_depth[d]) for d in depths]
    n = min(len(s) for s in seeds)
    out: dict[str, Any] = {}
    for k in SLOPE_KEYS:
        per = [
            loglog_slope(
                [float(d) for d in depths], [seeds[j][i].get(k) for j in range(len(depths))]
            )
            for i in range(n)
        ]
        ok = [p for p in per if p is not None]
        mean = sum(ok) / len(ok) if ok else None
        std = math.sqrt(sum((p - mean) ** 2 for p in ok) / len(ok)) if ok else None
        out[k] = {"mean": mean, "std": std, "per_seed": per}
    return out


def spearman(xs: list[float], ys: list[float]) -> float | None:
    """Spearman rank correlation (ties get their mean rank); None with fewer than 3 points.

    >>> spearman([2, 5, 13], [0.4, 0.2, 0.1])
    -1.0
    """
    pts = [(a, b) for a, b in zip(xs, ys, strict=True) if b is not None and math.isfinite(b)]
    if len(pts) < 3:
        return None
    rx, ry = _ranks([p[0] for p in pts]), _ranks([p[1] for p in pts])
    mx, my = sum(rx) / len(rx), sum(ry) / len(ry)
    cov = sum((a - mx) * (b - my) for a, b in zip(rx, ry, strict=True))
    vx = math.sqrt(sum((a - mx) ** 2 for a in rx))
    vy = math.sqrt(sum((b - my) ** 2 for b in ry))
    return cov / (vx * vy) if vx > 0 and vy > 0 else None


def _ranks(v: list[float]) -> list[float]:
    """0-based ranks of ``v``, ties sharing their mean rank."""
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


def _units(row: dict[str, Any]) -> list[dict[str, Any]]:
    return row.get("per_seed") or [row]


def trend(by_depth: dict[int, dict]) -> dict[str, Any]:
    """Each of :data:`TREND_KEYS` at the shallowest and deepest network, their ratio, and its
    Spearman correlation with depth."""
    depths = sorted(by_depth)
    out: dict[str, Any] = {"first_depth": depths[0], "last_depth": depths[-1]}
    for k in TREND_KEYS:
        vals = [by_depth[d].get(k) for d in depths]
        a, b = vals[0], vals[-1]
        out[f"{k}_first"], out[f"{k}_last"] = a, b
        out[f"{k}_ratio"] = b / a if a and b is not None and a > 0 else None
        out[f"{k}_spearman"] = spearman([float(d) for d in depths], vals)
    # the gap's ratio per seed (deepest / shallowest network of the same seed) and its median: a
    # ratio of means is decided by a single shallow network that failed to train
    firsts, lasts = _units(by_depth[depths[0]]), _units(by_depth[depths[-1]])
    per = [
        b["objective_gap"] / a["objective_gap"]
        for a, b in zip(firsts, lasts, strict=False)
        if (a.get("objective_gap") or 0) > 0 and b.get("objective_gap") is not None
    ]
    out["objective_gap_ratio_per_seed"] = per
    out["objective_gap_ratio_median"] = statistics.median(per) if per else None
    return out


def summarize(cfg, units: Sequence[UnitResult]) -> DeepLnSweepSummary | DeepLnMonotoneSummary:
    """The run's summary from its finished units (a monotone comparison: :mod:`.monotone`)."""
    if cfg.mode == "monotone":
        return monotone.summarize(cfg, units)
    return depth_summary(cfg, by_depth(units))


def by_depth(units: Sequence[UnitResult]) -> dict[int, dict[str, Any]]:
    """Each depth's summary: its one unit's, or its seeds' aggregated as :class:`~.schema.Unit`
    declares (each measurement's mean and std; the depth, λ and GUFM optimum the seeds share; the
    list of the seeds; no wall time or versions), with ``per_seed``."""
    per: dict[int, list[dict[str, Any]]] = {}
    for r in units:
        per.setdefault(r.unit["depth"], []).append(r.summary)
    return {d: aggregate_summaries(s, Unit) if len(s) > 1 else s[0] for d, s in per.items()}


def depth_limit(by_depth: dict[int, dict]) -> dict[str, Any] | None:
    """The sweep's objectives against depth fitted as L_inf + c L^-a and compared with the GUFM
    optimum every depth shares (:func:`.limit.limit`; None where the depths' optima differ, as
    with λ/L, or with fewer than four depths)."""
    depths = sorted(by_depth)
    optima = [by_depth[d]["theory"]["objective"] for d in depths]
    same = all(abs(o - optima[0]) <= 1e-12 * max(1.0, abs(optima[0])) for o in optima)
    objectives = [by_depth[d]["objective"] for d in depths]
    return limit(depths, objectives, optima[0] if same else None)


def depth_summary(cfg, by_depth: dict[int, dict]) -> DeepLnSweepSummary:
    """The run's summary from the (seed-aggregated) summary of each depth; without figures."""
    depths = sorted(by_depth)
    first, last = depths[0], depths[-1]
    units = [u for d in depths for u in _units(by_depth[d])]
    # L(theta) >= L_GUFM(W_L, X_L) >= L*_GUFM for every network (X_L on the LayerNorm sphere)
    margins = [u["gufm_objective"] - u["theory"]["objective"] for u in units]
    tol = 1e-9 * max(1.0, max(abs(u["theory"]["objective"]) for u in units))
    rows = {f"L{d}": {k: v for k, v in by_depth[d].items() if k != "per_seed"} for d in depths}
    return DeepLnSweepSummary(
        loss=cfg.train.loss,
        block=cfg.model.block,
        width=cfg.model.width,
        data=cfg.data.name,
        num_classes=units[0]["theory"]["K"],
        depths=depths,
        weight_decay=cfg.train.weight_decay,
        wd_over_depth=cfg.train.wd_over_depth,
        by_depth=rows,
        trend=trend(by_depth),
        slopes=slopes(by_depth),
        theory={"first": by_depth[first]["theory"], "last": by_depth[last]["theory"]},
        limit=depth_limit(by_depth),
        lower_bound_holds=all(m >= -tol for m in margins),
        min_margin_to_gufm_optimum=min(margins),
        sphere_error_max=max(u["sphere_error"] for u in units),
        train_acc_min=min(u["train_acc"] for u in units),
        test_acc_mean=sum(u["test_acc"] or 0.0 for u in units) / len(units),
    )
