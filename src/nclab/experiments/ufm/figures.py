"""Figures of the UFM laboratory, drawn with :mod:`nclab.report.figures`.

* ``collapse.png`` (one configuration): objective and its gap to the theory, NC1 of every layer,
  NC2 (of the features of every layer and of the classifier) and NC3 against the iteration, log
  scale — Tirer & Bruna's Fig. 2 / 5 / 9 panels — and the remaining NC2/NC3 variants of the
  classifier's input (those of the other frame, e.g. ``nc2_w_etf`` of an orthogonal frame, stay
  away from 0: see docs/ufm.md);
* ``phase_diagram.png``: objective, feature norm, collapse metrics and gap against λ across the
  threshold, with the theory's curve and the threshold marked;
* ``bias_sweep.png`` (:func:`.bias_sweep.bias_figure`): NC2/NC3 and ρ_mean/ρ against λ_b;
* ``fixed_features.png`` (:func:`.fixed_features.fixed_figure`): Theorem 5.1's gap against n;
* ``rates.png`` (:func:`.rates.rates_figure`): the GUFM-MSE deviations' envelopes against ε.

:func:`render` draws the run's figure; :func:`figures` draws it from a run directory (after the run
or again from a finished one).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ...report.figures import Panel, save_panels
from ...runs import RunDir
from ..protocol import UnitResult
from .bias_sweep import bias_figure
from .fixed_extended import fixed_extended_figure
from .fixed_features import fixed_figure
from .measure import theory_for, theory_norms
from .rates import rates_figure


def _stat(values: list[Any]) -> tuple[float | None, float | None]:
    vals = [v for v in values if v is not None and math.isfinite(v)]
    if not vals:
        return None, None
    return float(np.mean(vals)), float(np.std(vals))


def _series(history: list[dict], get) -> tuple:
    """(steps, mean over seeds); no std band: the panels are log scale and span many decades."""
    xs, ys = [], []
    for r in history:
        try:
            m, _ = _stat(get(r))
        except KeyError:
            continue
        if m is not None:
            xs.append(r["step"])
            ys.append(m)
    return xs, ys


def _frame(cfg) -> str:
    return "etf" if cfg.model.loss == "ce" or cfg.model.bias != "none" else "of"


def _iteration_panel(title: str, curves: dict, **kw: Any) -> Panel:
    return Panel(title, curves, xlabel="iteration", logy=True, **kw)


def _metric(history: list[dict], layer: str, key: str) -> tuple:
    """(steps, mean over seeds) of one metric of one layer."""
    return _series(history, lambda r: r["metrics"][layer][key])


def training_figure(path: Path, cfg, history: list[dict], summary: dict) -> Path:
    """Objective, gap, NC1, NC2 and NC3 vs iteration (mean over seeds, ±1 std band)."""
    layers = list(history[-1]["metrics"])
    last = layers[-1]
    theory = summary.get("theory_objective")
    hlines = [(theory, "theory optimum")] if theory is not None else ()
    objective = {"gradient descent": _series(history, lambda r: r["objective"])}
    panels = [_iteration_panel("objective", objective, hlines=hlines)]
    if theory is not None:
        gap = {"relative gap": _series(history, lambda r: r["objective_gap"])}
        panels.append(_iteration_panel("|f - f*| / f*", gap))
    nc1 = {name: _metric(history, name, "nc1") for name in layers}
    panels.append(_iteration_panel("NC1", nc1))
    key, wkey, nc3 = (
        ("nc2_of", "nc2_w_of", "nc3_of") if _frame(cfg) == "of" else ("nc2_etf", "nc2_w_etf", "nc3")
    )
    nc2 = {f"{name} ({key})": _metric(history, name, key) for name in layers}
    nc2[f"W ({wkey})"] = _metric(history, last, wkey)
    panels.append(_iteration_panel("NC2", nc2))
    panels.append(_iteration_panel("NC3", {f"W vs {last} ({nc3})": _metric(history, last, nc3)}))
    other = {
        k: _metric(history, last, k)
        for k in ("nc2_etf", "nc2_of", "nc2_w_etf", "nc2_w_of", "nc3", "nc3_of")
        if k not in (key, wkey, nc3)
    }
    panels.append(_iteration_panel(f"{last}: the remaining NC2 / NC3 variants", other))
    seeds = len(history[-1]["objective"])
    title = f"{summary.get('model', '')}: K={cfg.model.K}, d={cfg.model.d}, n={cfg.model.n}" + (
        f", {seeds} seeds" if seeds > 1 else ""
    )
    return save_panels(path, panels, suptitle=title, ncols=3 if len(panels) > 4 else len(panels))


def phase_figure(path: Path, cfg, summary: dict) -> Path:
    """Measured (mean over seeds) vs theory across λ, threshold λ* marked."""
    grid = summary["grid"]
    lams = summary["lambdas"]
    dense = np.geomspace(min(lams) * 0.9, max(lams) * 1.1, 200)
    preds = [theory_for(cfg, float(x), float(x), float(x))[0] for x in dense]
    vline = [(summary["threshold_lambda"], "threshold λ*")]

    def by_lam(get):
        return lams, [_stat([get(g) for g in grid if g["lambda"] == lam])[0] for lam in lams]

    def lam_panel(title: str, curves: dict, xlabel: str = "λ", logy: bool = False) -> Panel:
        return Panel(title, curves, xlabel=xlabel, logx=True, logy=logy, vlines=vline)

    objective = {
        "GD (mean of seeds)": by_lam(lambda g: g["objective"]),
        "theory": (list(dense), [p.objective for p in preds]),
    }
    panels = [lam_panel("objective", objective, xlabel="λ = λ_W = λ_H")]
    norm_key = next((k for k in ("h_norm", "sigma_H") if k in grid[0]["theory_norms"]), None)
    if norm_key is not None:
        norms = {
            "GD": by_lam(lambda g: g["measured_norms"][norm_key]),
            "theory": (list(dense), [theory_norms(cfg, p)[norm_key] for p in preds]),
        }
        what = "class-mean feature norm" if norm_key == "h_norm" else "singular value of H"
        panels.append(lam_panel(f"{norm_key} ({what})", norms))
    keys = sorted({k for g in grid for k in g["expected_zero"]})
    collapse = {
        k: by_lam(lambda g, k=k: g["metrics"].get(k) if g["collapsed"] else None) for k in keys
    }
    panels.append(lam_panel("collapse metrics (collapsed phase)", collapse, logy=True))
    worst = [max(g["objective_gap"] for g in grid if g["lambda"] == lam) for lam in lams]
    panels.append(lam_panel("|f - f*| / f* (worst seed)", {"gap": (lams, worst)}, logy=True))
    title = (
        f"{summary.get('model', '')}: phase diagram, K={cfg.model.K}, d={cfg.model.d}, n={cfg.model.n}, "
        f"{len(summary['seeds'])} seeds, {cfg.train.steps} steps"
    )
    return save_panels(path, panels, suptitle=title, ncols=3 if len(panels) > 4 else len(panels))


def render(cfg, run_dir: RunDir, history: list[dict], summary: dict) -> list[str]:
    """Draw the run's figure (``fixed_features.png``, ``bias_sweep.png``, ``phase_diagram.png`` or
    ``collapse.png``); return its path."""
    if cfg.fixed_features.ns and cfg.model.depth == 2:
        path = run_dir.figures / "fixed_features_extended.png"
        return [str(fixed_extended_figure(path, cfg, summary))]
    if cfg.fixed_features.ns:
        return [str(fixed_figure(run_dir.figures / "fixed_features.png", cfg, summary))]
    if cfg.rates.steps_per_decade:
        return [str(rates_figure(run_dir.figures / "rates.png", cfg, summary))]
    if cfg.bias_sweep.points:
        return [str(bias_figure(run_dir.figures / "bias_sweep.png", cfg, summary))]
    if cfg.phase.points:
        return [str(phase_figure(run_dir.figures / "phase_diagram.png", cfg, summary))]
    return [str(training_figure(run_dir.figures / "collapse.png", cfg, history, summary))]


def figures(cfg, run: RunDir, summary: dict, units: Sequence[UnitResult]) -> list[str]:
    """The run's figure from its directory (``Experiment.figures``)."""
    return render(cfg, run, run.read_metrics(), summary)
