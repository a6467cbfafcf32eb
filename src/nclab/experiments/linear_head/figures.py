"""Figures of the linear-head experiment, as in Jacot et al. (ICLR 2025): metrics per layer over
training with ±1 std bands over seeds (Fig. 1 / Fig. 4), class-mean Gram heatmaps of the linear head,
metrics against the linear depth (Fig. 2) and the nonlinear depth (Fig. 3), and the edge of
stability (sharpness against 2 / lr), Theorem 4.4's time to balancedness against the weight decay.
Drawn from the run directory: the summary, each unit's job
and logged records."""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ...report.figures import Panel, heatmaps, save_panels
from ...runs import RunDir
from ..protocol import UnitResult


def _band(histories: list[list[dict]], path: tuple[str, ...]) -> tuple[list, list, list]:
    """(epochs, mean, std) of a nested record value over seeds, at the epochs every seed logged."""
    per_epoch: dict[int, list[float]] = defaultdict(list)
    for hist in histories:
        for rec in hist:
            v: Any = rec
            for p in path:
                v = v.get(p) if isinstance(v, dict) else None
            if isinstance(v, int | float) and math.isfinite(v):
                per_epoch[rec["epoch"]].append(float(v))
    xs, ms, ss = [], [], []
    for ep in sorted(per_epoch):
        vals = per_epoch[ep]
        if len(vals) != len(histories):
            continue
        m = sum(vals) / len(vals)
        xs.append(ep)
        ms.append(m)
        ss.append(math.sqrt(sum((v - m) ** 2 for v in vals) / len(vals)))
    return xs, ms, ss


def figures(cfg, run: RunDir, summary: dict[str, Any], units: Sequence[UnitResult]) -> list[Path]:
    """The run's figures: training curves and Grams of one network (over seeds), the edge of
    stability of a learning-rate sweep, or the metrics against depth of a depth sweep."""
    results = [(u.unit.params, u.summary, u.history()) for u in units]
    if cfg.sweep == "none":
        return collapse_figures(cfg, results, summary, run)
    if cfg.sweep == "lr":
        return [lr_figure(cfg, results, summary, run)]
    if cfg.sweep == "weight_decay":
        return [wd_figure(cfg, results, summary, run)]
    return [depth_figure(cfg, summary, run)]


def lr_figure(
    cfg, results: list[tuple[dict, dict, list]], summary: dict[str, Any], run_dir: RunDir
) -> Path:
    """The edge of stability: the sharpness (top Hessian eigenvalue of the training objective)
    against epochs for each step size, beside the stability thresholds 2 / lr, and the head's
    conditioning and NC2 of Z_(L-1) at the end against the step size (±1 std over seeds)."""
    by_lr: dict[float, list[list[dict]]] = defaultdict(list)
    for job, _, hist in results:
        by_lr[job["lr"]].append(hist)
    sharp = {f"lr {lr:.3g}": _band(h, ("sharpness",)) for lr, h in sorted(by_lr.items())}
    lines = [(2.0 / lr, f"2 / {lr:.3g}") for lr in sorted(by_lr)]
    recs = [summary["by_lr"][k] for k in sorted(summary["by_lr"], key=int)]
    panels = [
        Panel("sharpness vs 2 / lr", sharp, xlabel="epoch", logy=True, hlines=lines),
        Panel("sharpness x lr / 2", _ratio_series(by_lr), xlabel="epoch", hlines=[(1.0, "EoS")]),
    ]
    for title, d in (("κ(W_L)", "cond_kappa_wl"), ("NC2 of Z_(L-1)", "nc2_last")):
        pts = [
            (r["lr"], r.get(d), (r.get("std") or {}).get(d) or 0.0)
            for r in recs
            if r.get(d) is not None
        ]
        series = {d: tuple(map(list, zip(*pts, strict=True)))} if pts else {}
        panels.append(Panel(title, series, xlabel="lr", logx=True))
    if summary.get("lr_bound"):
        panels.append(_lr_bound_panel(results))
    return save_panels(
        run_dir.figures / "edge_of_stability.png",
        panels,
        suptitle=f"{cfg.data.name}: {cfg.model.L1} + {cfg.model.L2} layers, full-batch GD, "
        f"wd {cfg.train.weight_decay:g}",
    )


def _lr_bound_panel(results: list[tuple[dict, dict, list]]) -> Panel:
    """Proposition 5.3's cap: each stable eps1-interpolating network's bound against its step
    (the diagonal: step = bound), and the steps whose networks diverged or did not interpolate
    (at the smallest bound, for the eye)."""
    good = sorted(
        (s["lr"], s["lr_bound"]["lr_max"])
        for _, s, _ in results
        if (s.get("lr_bound") or {}).get("interpolates") and not s.get("diverged")
    )
    series: dict[str, tuple] = {}
    if good:
        xs_b, ys_b = [g[0] for g in good], [g[1] for g in good]
        series["bound at the network (stable, interpolating)"] = (xs_b, ys_b)
        floor = min(b for _, b in good)
        for label, pick in (
            ("diverged", lambda s: s.get("diverged")),
            ("not interpolating", lambda s: not s.get("diverged")),
        ):
            xs = sorted(
                {
                    s["lr"]
                    for _, s, _ in results
                    if pick(s) and not (s.get("lr_bound") or {}).get("interpolates")
                }
            )
            if xs:
                series[label] = (xs, [floor] * len(xs))
    lrs = sorted({s["lr"] for _, s, _ in results})
    series["step = bound"] = (lrs, lrs)
    return Panel("Prop. 5.3: the bound on the step", series, xlabel="lr", logx=True, logy=True)


def _ratio_series(by_lr: dict[float, list[list[dict]]]) -> dict[str, tuple[list, list, list]]:
    out = {}
    for lr, hists in sorted(by_lr.items()):
        xs, ms, ss = _band(hists, ("sharpness",))
        out[f"lr {lr:.3g}"] = (xs, [m * lr / 2 for m in ms], [v * lr / 2 for v in ss])
    return out


def collapse_figures(
    cfg, results: list[tuple[dict, dict, list]], summary: dict[str, Any], run_dir: RunDir
) -> list[Path]:
    """Fig. 1 / Fig. 4: every layer's NC1, NC2, balancedness and negativity over training (mean and
    ±1 std over seeds), and the class-mean Gram matrices of the head at the end (first seed).
    The layers and the Grams come from the run's summary, the setting from the first unit's job."""
    hists = [h for _, _, h in results]
    names = [rec["name"] for rec in summary["layers"]]
    kinds = {rec["name"]: rec["kind"] for rec in summary["layers"]}
    panels = []
    for title, key, only in (
        ("NC1: tr Σ_W / tr Σ_B", "nc1_trace", None),
        ("NC2: κ(class means)", "nc2_kappa", None),
        ("balancedness (W_l, W_l+1)", "balancedness", None),
        ("negativity of pre-activations", "negativity", "nonlinear"),
    ):
        series = {}
        for n in names:
            if only and kinds[n] != only:
                continue
            xs, ms, ss = _band(hists, ("layers", n, key))
            if xs:
                series[f"{n} ({kinds[n][:3]})"] = (xs, ms, ss)
        panels.append(Panel(title, series, xlabel="epoch", logy=True))
    s = results[0][0]
    figs = [
        save_panels(
            run_dir.figures / "collapse.png",
            panels,
            suptitle=f"{cfg.data.name}: {s['L1']} nonlinear + {s['L2']} linear layers, "
            f"wd {s['weight_decay']:g}, lr {s['lr']:g} ({len(results)} seed(s), ±1 std)",
        )
    ]
    if summary.get("grams"):
        figs.append(
            heatmaps(
                run_dir.figures / "grams.png",
                {f"{n} class-mean Gram": g for n, g in summary["grams"].items()},
                suptitle="class-mean Gram matrices of the linear head (seed "
                f"{s['seed']}, end of training)",
            )
        )
    return figs


def depth_figure(cfg, summary: dict[str, Any], run_dir: RunDir) -> Path:
    """Fig. 2 / Fig. 3: derived metrics against the linear or nonlinear depth, one curve per
    weight decay or learning rate (±1 std over seeds)."""
    key = "L2" if cfg.sweep == "linear_depth" else "L1"
    other = "weight_decay" if cfg.sweep == "linear_depth" else "lr"
    by_other: dict[Any, list[dict]] = defaultdict(list)
    for rec in summary["sweep"]:
        by_other[rec[other]].append(rec)
    if cfg.sweep == "linear_depth":
        items = [
            ("NC2 of Z_(L-1) (last hidden layer)", "nc2_last"),
            ("NC2 of Z_(L1) (input of the linear head)", "nc2_head_input"),
            ("NC1 of Z_(L-1)", "nc1_last"),
        ]
    else:
        items = [
            ("mean balancedness of nonlinear layers", "balancedness_nonlinear_mean"),
            ("min balancedness of nonlinear layers", "balancedness_nonlinear_min"),
            ("mean negativity of nonlinear layers", "negativity_mean"),
            ("min negativity of nonlinear layers", "negativity_min"),
        ]
    xlabel = f"{key} ({'linear' if key == 'L2' else 'nonlinear'} layers)"
    panels = [
        Panel(title, _depth_series(by_other, key, other, d), xlabel=xlabel, logy=True)
        for title, d in items
    ]
    name = "depth.png" if cfg.sweep == "linear_depth" else "nonlinear_depth.png"
    return save_panels(
        run_dir.figures / name,
        panels,
        suptitle=f"{cfg.data.name}: metrics against {key} (±1 std over seeds)",
    )


def _depth_series(
    by_other: dict[Any, list[dict]], key: str, other: str, d: str
) -> dict[str, tuple[list, list, list]]:
    """One (depths, means, stds) series of the derived scalar ``d`` per value of ``other``."""
    series = {}
    for o, recs in sorted(by_other.items()):
        recs = sorted(recs, key=lambda r: r[key])
        xs = [r[key] for r in recs if r["derived"].get(d) is not None]
        ms = [r["derived"][d] for r in recs if r["derived"].get(d) is not None]
        ss = [r["std"]["derived"].get(d) or 0.0 for r in recs if r["derived"].get(d) is not None]
        series[f"{other} {o:g}"] = (xs, ms, ss)
    return series


def wd_figure(
    cfg, results: list[tuple[dict, dict, list]], summary: dict[str, Any], run_dir: RunDir
) -> Path:
    """Theorem 4.4's time: the linear pairs' max ||D_l||_op against the time lr x steps per
    weight decay (seed 0's, the levels imbalance_eps2 as lines), and the time to reach the first
    and last level against the weight decay, log-log, beside a 1 / wd line (±1 std over seeds)."""
    curves = {}
    for job, s, hist in results:
        if job["seed"] != cfg.seed:
            continue
        recs = [r for r in hist if r.get("imbalance")]
        lin = 1 if job["L1"] >= 1 else 0
        pts = [
            (job["lr"] * (r["epoch"] + 1) * s.get("steps_per_epoch", 1), max(r["imbalance"][lin:]))
            for r in recs
            if r["imbalance"][lin:]
        ]
        if pts:
            curves[f"wd {job['weight_decay']:g}"] = ([p[0] for p in pts], [p[1] for p in pts])
    levels = [(e, f"eps2 = {e:g}") for e in cfg.imbalance_eps2]
    rows = sorted(summary.get("by_wd", {}).values(), key=lambda r: r["weight_decay"])
    times = {}
    for key, label in (
        ("imbalance_time_eps2", "first level"),
        ("imbalance_time_eps2_last", "last"),
    ):
        ok = [r for r in rows if r.get(key) is not None]
        if ok:
            std = [(r.get("std") or {}).get(key) or 0.0 for r in ok]
            times[label] = ([r["weight_decay"] for r in ok], [r[key] for r in ok], std)
    ok = [r for r in rows if r.get("imbalance_time_eps2") is not None]
    if ok:  # a 1 / wd line through the smallest weight decay's time
        w0, t0 = ok[0]["weight_decay"], ok[0]["imbalance_time_eps2"]
        times["1 / wd"] = (
            [r["weight_decay"] for r in ok],
            [t0 * w0 / r["weight_decay"] for r in ok],
        )
    panels = [
        Panel(
            "max over linear pairs of ||D_l||_op",
            curves,
            xlabel="time lr x steps",
            logy=True,
            hlines=levels,
        ),
        Panel("time to reach eps2", times, xlabel="weight decay", logx=True, logy=True),
    ]
    return save_panels(
        run_dir.figures / "time_to_balance.png",
        panels,
        suptitle=f"{cfg.data.name}: Theorem 4.4's time against the weight decay (±1 std over seeds)",
    )
