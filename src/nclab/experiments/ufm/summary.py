"""The summaries of UFM-laboratory runs (one configuration × seeds, or a phase-diagram grid).

Conventions: ``objective`` is the mean over seeds of the final objective, ``objective_gap`` the
*largest* relative gap |f - f*|/|f*| over the seeds (grid points), ``metrics`` the *largest* value
of each metric over the seeds (the worst seed), per layer for the extended/deep models.
``per_seed`` keeps every seed's numbers. Norms: ``theory_norms`` beside ``measured_norms`` (mean over seeds) and
``norm_gaps`` (largest relative gap over the seeds; absolute where the theory value is 0).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from scipy.stats import spearmanr

from ...models.ufm import BatchedUFM
from ...theory.ufm import ufm_ce
from ..common.seeds import mean, worst
from .config import REACHED_GAP, describe, threshold_lambda
from .levels import features_given_w, level_rates, nc1_ends, nuclear_norms, same_range
from .measure import expected_zero, measured_norms, rel_gap, theory_norms

#: grid points this close to the threshold (|criticality - 1| below it) converge slowly (the
#: curvature of the collapsed mode vanishes there); they are reported but kept out of the
#: "off_threshold" maxima
NEAR_THRESHOLD = 0.1


def _metrics_of(last: dict, b: int) -> dict[str, dict[str, Any]]:
    return {layer: {k: v[b] for k, v in keys.items()} for layer, keys in last["metrics"].items()}


def _collapse_max(metrics: dict[str, dict[str, Any]], expected: dict[str, tuple]) -> tuple:
    worst, at = None, None
    for layer, keys in expected.items():
        for k in keys:
            v = metrics.get(layer, {}).get(k)
            if v is None:
                return float("inf"), f"{layer}.{k} (undefined)"
            if worst is None or v > worst:
                worst, at = v, f"{layer}.{k}"
    return worst, at


def _norms(cfg, model: BatchedUFM, probs: list[dict]) -> tuple[list[dict], list[dict]]:
    feats = {k: v.detach() for k, v in model.layer_features().items()}
    measured = [measured_norms(model, feats, b) for b in range(model.B)]
    theory = [theory_norms(cfg, p["pred"]) for p in probs]
    return measured, theory


def reached(gap: float | None) -> bool | None:
    """Whether a relative objective gap is within :data:`REACHED_GAP` (None without a theory)."""
    return None if gap is None else bool(gap <= REACHED_GAP)


def single_summary(cfg, model: BatchedUFM, probs: list[dict], history: list[dict]) -> dict:
    last = history[-1]
    pred, note = probs[0]["pred"], probs[0]["note"]
    B = model.B
    per_problem = [_metrics_of(last, b) for b in range(B)]
    worst_metrics = {
        layer: {k: worst([p[layer][k] for p in per_problem]) for k in keys}
        for layer, keys in per_problem[0].items()
    }
    expected = expected_zero(cfg, pred)
    cmax, cat = _collapse_max(worst_metrics, expected) if expected else (None, None)
    measured, theory = _norms(cfg, model, probs)
    tn = theory[0]
    seed_gaps = [{k: rel_gap(m.get(k), tn[k]) for k in tn} for m in measured]
    norm_gaps = {k: worst([g[k] for g in seed_gaps]) for k in tn}
    t_obj = pred.objective if pred is not None else None
    excess = [
        None if t_obj is None or f is None else (f - t_obj) / abs(t_obj) for f in last["objective"]
    ]
    flat = (lambda m: m["H"]) if cfg.model.depth == 1 else (lambda m: m)
    reached_seeds = [reached(g) for g in last.get("objective_gap") or [None] * B]
    extra, extra_seed = _extras(cfg, model, history, reached_seeds)
    return {
        "model": describe(cfg),
        "theorem": note,
        "objective": mean(last["objective"]),
        "objective_per_seed": last["objective"],
        "theory_objective": pred.objective if pred is not None else None,
        "objective_gap": worst(last["objective_gap"]),
        "metrics": flat(worst_metrics),
        "expected_zero": {layer: list(keys) for layer, keys in expected.items()},
        "collapse_max": cmax,
        "collapse_max_at": cat,
        "theory": pred.to_dict() if pred is not None else None,
        "theory_norms": tn,
        "measured_norms": {k: mean([m[k] for m in measured]) for k in measured[0]},
        "norm_gaps": norm_gaps,
        "objective_excess": min((e for e in excess if e is not None), default=None),
        "reached_minimiser": _all(reached_seeds),
        "seeds_reaching_minimiser": sum(bool(r) for r in reached_seeds),
        "per_seed": [
            {
                "seed": p["seed"],
                "objective": last["objective"][b],
                "objective_gap": last["objective_gap"][b],
                "reached_minimiser": reached_seeds[b],
                "metrics": flat(per_problem[b]),
                "measured_norms": measured[b],
                "norm_gaps": seed_gaps[b],
                "objective_excess": excess[b],
                **extra_seed[b],
            }
            for b, p in enumerate(probs)
        ],
        "steps": cfg.train.steps,
        "seeds": [p["seed"] for p in probs],
        **extra,
    }


def _extras(cfg, model: BatchedUFM, history: list[dict], reached_seeds: list) -> tuple:
    """The keys of :mod:`.levels` (top level, per seed): NC1 at the start and end of every
    model, the levels' NC1 over training of a deep one, the nuclear norms of the ReLU extended
    UFM's second level."""
    B = model.B
    top, per = nc1_ends(history, B)
    parts = []
    if cfg.model.depth >= 2:
        parts.append(level_rates(cfg, history, B))
    if cfg.model.depth == 2 and cfg.model.relu:
        feats = {k: v.detach() for k, v in model.layer_features().items()}
        parts.append(nuclear_norms(feats, reached_seeds))
    if cfg.model.depth == 2 and not cfg.model.relu and not model.has_bias:
        parts.append(same_range(cfg, model.params))
    if cfg.model.layernorm and cfg.model.loss == "mse":
        parts.append(features_given_w(model.params, model.spec.n))
    for t, p in parts:
        top.update(t)
        for b in range(B):
            per[b].update(p[b])
    return top, per


def _all(flags: list[bool | None]) -> bool | None:
    """True when every flag is True, None when any is None (no theory to compare with)."""
    return None if any(f is None for f in flags) else all(flags)


def criticality(cfg, pred) -> float:
    """Distance to the collapse threshold: 1 on it, < 1 collapsed (K√(nλ_Wλ_H) for L = 1)."""
    if cfg.model.depth == 1:
        return pred.threshold
    return pred.threshold_value / pred.threshold


def _phase_grid(cfg, model: BatchedUFM, probs: list[dict], last: dict) -> list[dict]:
    """One entry per (λ, seed) problem: its objective beside the theorem's, its metrics."""
    measured, theory = _norms(cfg, model, probs)
    grid = []
    for b, p in enumerate(probs):
        pred = p["pred"]
        mets = _metrics_of(last, b)
        classifier_layer = list(mets)[-1]
        expected = expected_zero(cfg, pred)
        cmax, _ = _collapse_max(mets, expected) if expected else (None, None)
        grid.append(
            {
                "lambda": p["lambda_w"],
                "seed": p["seed"],
                "criticality": criticality(cfg, pred),
                "collapsed": bool(pred.collapsed),
                "objective": last["objective"][b],
                "theory_objective": pred.objective,
                "objective_gap": last["objective_gap"][b],
                "metrics": mets[classifier_layer],
                "collapse_max": cmax,
                "expected_zero": list(expected.get(classifier_layer, ())),
                "measured_norms": measured[b],
                "theory_norms": theory[b],
            }
        )
    return grid


def phase_summary(cfg, model: BatchedUFM, probs: list[dict], history: list[dict]) -> dict:
    grid = _phase_grid(cfg, model, probs, history[-1])
    lams = sorted({g["lambda"] for g in grid})
    by_lam = {lam: [g for g in grid if g["lambda"] == lam] for lam in lams}
    off = [g for g in grid if abs(g["criticality"] - 1) >= NEAR_THRESHOLD]
    collapsed_off = [g for g in off if g["collapsed"]]
    keys = sorted({k for g in collapsed_off for k in g["expected_zero"]})
    return {
        "model": describe(cfg),
        "theorem": probs[0]["note"],
        "threshold_lambda": threshold_lambda(cfg),
        "lambdas": lams,
        "objective": [mean([g["objective"] for g in by_lam[lam]]) for lam in lams],
        "theory_objective": [by_lam[lam][0]["theory_objective"] for lam in lams],
        "objective_gap": worst([g["objective_gap"] for g in grid]),
        "objective_gap_off_threshold": worst([g["objective_gap"] for g in off]),
        # the best seed at each λ off the threshold, the worst λ: whether the global minimum
        # (zero or collapsed) is where the theorem puts it, whatever local minima some starts
        # reach (the extended model's zero solution is a local minimum on both sides)
        "objective_gap_best_off_threshold": worst(
            [
                min(g["objective_gap"] for g in by_lam[lam])
                for lam in lams
                if abs(by_lam[lam][0]["criticality"] - 1) >= NEAR_THRESHOLD
            ]
        ),
        "near_threshold_margin": NEAR_THRESHOLD,
        **_global_minimum(grid, collapsed_off),
        # the metrics that vanish at the optimum, worst over the collapsed off-threshold points
        "metrics": {k: worst([g["metrics"][k] for g in collapsed_off]) for k in keys},
        "collapse_max": worst([g["collapse_max"] for g in collapsed_off]),
        "points": len(lams),
        "seeds": sorted({g["seed"] for g in grid}),
        "steps": cfg.train.steps,
        "grid": grid,
        **({"ce_norms": ce_norms(cfg, grid, lams)} if _plain_ce(cfg) else {}),
    }


def _global_minimum(grid: list[dict], collapsed_off: list[dict]) -> dict[str, Any]:
    """The global-minimum claim on any run: the smallest signed relative excess of a start's
    objective over the theorem's (below 0 a start beat the closed form), and the structure at
    the points that reached it (collapsed, off the threshold, within REACHED_GAP)."""
    excess = [
        (g["objective"] - g["theory_objective"]) / abs(g["theory_objective"])
        for g in grid
        if g["theory_objective"]
    ]
    reached_max = [g["collapse_max"] for g in collapsed_off if reached(g["objective_gap"])]
    return {
        "objective_excess": min(excess, default=None),
        "collapse_max_reached": worst(reached_max),
    }


def _plain_ce(cfg) -> bool:
    return cfg.model.loss == "ce" and cfg.model.depth == 1 and not cfg.model.layernorm


#: the closed-form sweeps of :func:`ce_norms` span these multiples of the threshold λ*
CE_SWEEP = (1e-6, 10.0)
CE_SWEEP_POINTS = 43


def _spearman(x: list[float], y: list[float]) -> float:
    return float(spearmanr(x, y).statistic)


def ce_norms(cfg, grid: list[dict], lams: list[float]) -> dict:
    """The regularised CE UFM's optimal norms against the regularisation strength (Súkeník et
    al.'s appendix: "the absolute size of these vectors is an increasing function of the
    regularization strength"): the closed form (Zhu et al. Thm 3.1, :func:`nclab.theory.ufm.
    ufm_ce`) over λ = λ_W = λ_H from ``CE_SWEEP[0]`` to ``CE_SWEEP[1]`` times λ* (the ratio
    fixed, the strength varied) and over λ_H at the config's λ_W (the proof's choice of λ_H),
    their Spearman correlations with λ, the ends, and the gradient-descent points of the phase
    grid (mean over seeds) against the closed form."""
    m = cfg.model
    star = threshold_lambda(cfg)
    dense = [
        float(x) for x in np.geomspace(star * CE_SWEEP[0], star * CE_SWEEP[1], CE_SWEEP_POINTS)
    ]
    joint = [ufm_ce(K=m.K, n=m.n, d=m.d, lambda_w=x, lambda_h=x) for x in dense]
    h_star = 1 / (m.K**2 * m.n * m.lambda_w)  # λ_H where K√(nλ_Wλ_H) = 1 at the config's λ_W
    dense_h = [
        float(x) for x in np.geomspace(h_star * CE_SWEEP[0], h_star * CE_SWEEP[1], CE_SWEEP_POINTS)
    ]
    only_h = [ufm_ce(K=m.K, n=m.n, d=m.d, lambda_w=m.lambda_w, lambda_h=x) for x in dense_h]
    h_joint, w_joint = [p.h_norm for p in joint], [p.w_norm for p in joint]
    h_only = [p.h_norm for p in only_h]
    by = {lam: [g for g in grid if g["lambda"] == lam] for lam in lams}
    gd_h = [mean([g["measured_norms"]["h_norm"] for g in by[lam]]) for lam in lams]
    gd_w = [mean([g["measured_norms"]["w_norm"] for g in by[lam]]) for lam in lams]
    gaps = [
        abs(g["measured_norms"][k] - g["theory_norms"][k]) / g["theory_norms"][k]
        for g in grid
        if g["collapsed"] and abs(g["criticality"] - 1) >= NEAR_THRESHOLD
        for k in ("h_norm", "w_norm")
    ]
    sqrt_d = math.sqrt(m.d)
    return {
        "lambdas": dense,
        "h_norm": h_joint,
        "w_norm": w_joint,
        "spearman_h": _spearman(dense, h_joint),
        "spearman_w": _spearman(dense, w_joint),
        "h_norm_at_smallest": h_joint[0],
        "h_norm_at_largest": h_joint[-1],
        "gd_lambdas": lams,
        "gd_h_norm": gd_h,
        "gd_w_norm": gd_w,
        "gd_spearman_h": _spearman(lams, gd_h),
        "gd_spearman_w": _spearman(lams, gd_w),
        "gd_norm_gap": worst(gaps),
        "lambda_w": m.lambda_w,
        "lambda_hs": dense_h,
        "h_norm_lambda_h": h_only,
        "spearman_h_lambda_h": _spearman(dense_h, h_only),
        # monotone either way: what the proof's choice of λ_H needs
        "monotone_h_lambda_h": abs(_spearman(dense_h, h_only)),
        # the proof picks λ_H with ‖h̄‖ = √d: the sweep's norms must bracket it
        "brackets_sqrt_d": bool(min(h_only) < sqrt_d < max(h_only)),
    }
