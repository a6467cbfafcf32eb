r"""A sweep over the bias's weight decay λ_b: from the simplex ETF (λ_b -> 0) to the orthogonal frame
(λ_b -> ∞), one batched gradient-descent solve of every (λ_b, seed).

A run with ``bias="regularized"`` and ``bias_sweep.points > 0`` trains one problem per λ_b (log-spaced
in [``lo``, ``hi``]) and seed; each is compared with its closed form
(:func:`nclab.theory.ufm_bias.ufm_regularized_bias`: objective, ρ, ρ_mean, b and every NC metric)
and the ends with Theorems 3.2 (λ_b = 0) and 3.1 (bias-free).

Summary: ``lambda_bs``; per λ_b the mean over seeds of each metric (``metrics.<key>``) beside the
theory's (``theory_metrics.<key>``) and ``of_fraction`` = ρ_mean/ρ (0: simplex ETF, 1: orthogonal
frame); ``monotone`` (does NC2^OF fall and NC2^ETF of W rise along λ_b, mean over seeds, within
``MONOTONE_TOL``); ``objective_gap`` / ``metric_gap`` (largest relative objective gap, largest
|measured - theory| of a metric) over every point and ``..._off_kink`` over the points away from
λ_b^ETF = c/(1-c), where the global-mean mode's curvature vanishes and GD converges slowly;
``ends.etf`` / ``ends.of`` (the smallest / largest λ_b) with the two theorems' values.
"""

from __future__ import annotations

from itertools import pairwise
from typing import Any

import numpy as np

from ...models.ufm import BatchedUFM
from ...report.figures import Panel, save_panels
from ...theory.ufm import ufm_mse, ufm_mse_bias
from ...theory.ufm_bias import KEYS_PREDICTED as KEYS
from ...theory.ufm_bias import ufm_regularized_bias
from ..common.seeds import mean, worst
from .config import plain_problem
from .measure import measured_norms

#: points with |μ/c - 1| below this (μ = λ_b/(1+λ_b)) are near the kink λ_b^ETF (slow GD)
NEAR_KINK = 0.1
#: a sequence counts as monotone if no step goes the wrong way by more than this
MONOTONE_TOL = 1e-6


def theory(cfg: Any, lambda_b: float):
    return ufm_regularized_bias(**plain_problem(cfg), lambda_b=lambda_b)


def _near_kink(pred) -> bool:
    return pred.collapsed and abs(pred.mu / pred.threshold - 1) < NEAR_KINK


def _monotone(values: list[float], sign: int) -> bool:
    """Non-increasing (sign -1) or non-decreasing (sign +1) within MONOTONE_TOL."""
    return all(sign * (b - a) >= -MONOTONE_TOL for a, b in pairwise(values))


def _point(cfg, probs: list[dict], last: dict, measured: list[dict], b: int) -> dict[str, Any]:
    """One (λ_b, seed): metrics and norms beside the closed form's."""
    p = probs[b]
    pred = p["pred"]
    mets = {k: last["metrics"]["H"][k][b] for k in KEYS}
    th = {k: getattr(pred, k) for k in KEYS}
    diffs = [abs(mets[k] - th[k]) for k in KEYS if mets[k] is not None and th[k] is not None]
    m = measured[b]
    return {
        "lambda_b": p["lambda_b"],
        "seed": p["seed"],
        "near_kink": _near_kink(pred),
        "objective": last["objective"][b],
        "theory_objective": pred.objective,
        "objective_gap": last["objective_gap"][b],
        "metrics": mets,
        "theory_metrics": th,
        "metric_gap": max(diffs) if diffs else None,
        "of_fraction": m["rho_mean"] / m["rho"] if m["rho"] > 0 else None,
        "theory_of_fraction": pred.of_fraction,
        "measured_norms": m,
        "theory_norms": {"rho": pred.rho, "rho_mean": pred.rho_mean, "b": pred.b},
    }


def _end(cfg, grid: list[dict], lam: float) -> dict[str, Any]:
    """The points at one end of the sweep (mean over seeds) and the two theorems' values."""
    pts = [g for g in grid if g["lambda_b"] == lam]
    thm32 = ufm_mse_bias(**plain_problem(cfg))
    thm31 = ufm_mse(**plain_problem(cfg))
    rho = mean([g["measured_norms"]["rho"] for g in pts])
    rho_mean = mean([g["measured_norms"]["rho_mean"] for g in pts])
    return {
        "lambda_b": lam,
        **{k: mean([g["metrics"][k] for g in pts]) for k in KEYS},
        "of_fraction": mean([g["of_fraction"] for g in pts]),
        "rho": rho,
        "rho_mean": rho_mean,
        "rho_gap_thm32": abs(rho - thm32.rho) / thm32.rho,
        "rho_mean_gap_thm31": abs(rho_mean - thm31.rho) / thm31.rho,
    }


def bias_summary(cfg, model: BatchedUFM, probs: list[dict], history: list[dict]) -> dict:
    """The summary of a λ_b sweep (module docstring)."""
    last = history[-1]
    feats = {k: v.detach() for k, v in model.layer_features().items()}
    measured = [measured_norms(model, feats, b) for b in range(model.B)]
    grid = [_point(cfg, probs, last, measured, b) for b in range(len(probs))]
    lams = sorted({g["lambda_b"] for g in grid})
    by = {lam: [g for g in grid if g["lambda_b"] == lam] for lam in lams}
    off = [g for g in grid if not g["near_kink"]]
    means = {k: [mean([g["metrics"][k] for g in by[lam]]) for lam in lams] for k in KEYS}
    pred0 = probs[0]["pred"]
    return {
        "model": "plain UFM, MSE, regularised bias: sweep over λ_b",
        "theorem": "regularised bias between Tirer & Bruna Thm 3.2 (λ_b = 0) and 3.1 (λ_b → ∞)",
        "threshold": pred0.threshold,
        "lambda_b_etf": pred0.lambda_b_etf,
        "lambda_bs": lams,
        "metrics": means,
        "theory_metrics": {k: [by[lam][0]["theory_metrics"][k] for lam in lams] for k in KEYS},
        "of_fraction": [mean([g["of_fraction"] for g in by[lam]]) for lam in lams],
        "theory_of_fraction": [by[lam][0]["theory_of_fraction"] for lam in lams],
        "monotone": {
            "nc2_of_nonincreasing": _monotone(means["nc2_of"], -1),
            "nc2_w_etf_nondecreasing": _monotone(means["nc2_w_etf"], +1),
        },
        "objective_gap": worst([g["objective_gap"] for g in grid]),
        "objective_gap_off_kink": worst([g["objective_gap"] for g in off]),
        "metric_gap": worst([g["metric_gap"] for g in grid]),
        "metric_gap_off_kink": worst([g["metric_gap"] for g in off]),
        "near_kink_margin": NEAR_KINK,
        "ends": {"etf": _end(cfg, grid, lams[0]), "of": _end(cfg, grid, lams[-1])},
        "points": len(lams),
        "seeds": sorted({g["seed"] for g in grid}),
        "steps": cfg.train.steps,
        "grid": grid,
    }


def bias_figure(path, cfg, summary: dict):
    """The NC metrics, ρ_mean/ρ and the objective gap against λ_b, theory curves beside GD."""
    lams = summary["lambda_bs"]
    dense = [float(x) for x in np.geomspace(min(lams) / 1.5, max(lams) * 1.5, 200)]
    preds = [theory(cfg, x) for x in dense]
    vline = [(summary["lambda_b_etf"], "λ_b^ETF = c/(1-c)")]

    def panel(title: str, curves: dict, logy: bool = False) -> Panel:
        return Panel(title, curves, xlabel="λ_b", logx=True, logy=logy, vlines=vline)

    shown = ("nc2_of", "nc2_w_etf", "nc3", "nc2_etf")
    nc = {f"{k} (GD)": (lams, summary["metrics"][k]) for k in shown}
    nc.update({f"{k} (theory)": (dense, [getattr(p, k) for p in preds]) for k in shown[:3]})
    frac = {
        "GD": (lams, summary["of_fraction"]),
        "theory": (dense, [p.of_fraction for p in preds]),
    }
    gaps = [max(g["objective_gap"] for g in summary["grid"] if g["lambda_b"] == x) for x in lams]
    panels = [
        panel("NC2 / NC3 against λ_b (mean of seeds)", nc),
        panel("ρ_mean / ρ (0: simplex ETF, 1: orthogonal frame)", frac),
        panel("|f - f*| / f* (worst seed)", {"gap": (lams, gaps)}, logy=True),
    ]
    title = (
        f"regularised bias: K={cfg.model.K}, d={cfg.model.d}, n={cfg.model.n}, λ_W={cfg.model.lambda_w:g}, "
        f"λ_H={cfg.model.lambda_h:g}, {len(summary['seeds'])} seeds, {cfg.train.steps} steps"
    )
    return save_panels(path, panels, suptitle=title, ncols=3)
