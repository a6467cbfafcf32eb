"""Summaries of the linear-head experiment: mean and ±1 std over seeds, derived scalars
per network (what the paper's claims are about), one record per depth for sweeps.

Derived scalars of one network (``derived``), L1 nonlinear and L2 linear layers, measured from
``measure_from`` on:

* ``nc1_last`` / ``nc1_last_start``: ``nc1_trace`` of Z_{L-1} at the end / at the first measurement,
* ``nc2_head_input`` / ``nc2_last``: ``nc2_kappa`` of Z_{L1} (input of the linear head) and of
  Z_{L-1} (input of W_L); ``nc2_head_decrease``: fraction of steps Z_l -> Z_{l+1} through the head
  (l = L1 .. L-2) that lower ``nc2_kappa``,
* ``gram_of_last`` / ``gram_of_last_start``: ``nc2_of`` of Z_{L-1}, the distance of its class-mean
  Gram matrix to a multiple of I,
* ``balancedness_linear_max`` / ``_mean`` (pairs inside the head, l = L1+1 .. L-1), ``..._start``
  (the max at the first measurement),
  ``balancedness_nonlinear_mean`` / ``_min`` (l <= L1, W_l nonlinear),
* ``negativity_mean`` / ``negativity_min`` over the measured nonlinear layers, ``negativity_last``:
  that of the last nonlinear layer Z_{L1},
* ``nc3_gap_last`` / ``nc3_gap_last_start``: 1 - ``nc3_cos`` of Z_{L-1} with W_L (the paper's NC3,
  1 at perfect alignment) at the end / at the first measurement,
* ``balancedness_rate_before`` / ``_plateau`` / ``_after`` and their ratios: the log-rates of the
  linear head's balancedness before the plateau, on it and after the learning-rate drop
  (:mod:`.plateau`; None without a drop),
* with ``track_imbalance``, the per-step decay of the layer pairs' imbalance against
  (1 - lr wd)^2 (:mod:`.balance_rate`; None otherwise), and with ``imbalance_eps2`` the time
  (lr x steps) to reach those levels of imbalance (:func:`.balance_rate.time_derived`).

A network whose training diverged (``diverged``, :class:`.train.Diverged`) has no metrics: a group's
means (and ``derived``) are over the networks that did not diverge, ``n_diverged`` counts the others,
and a group where every network diverged has every metric None and no layers. A step-size sweep
with ``lr_bound`` adds ``lr_bound``: Proposition 5.3's cap on the step (:mod:`.lr_bound`).

A weight-decay sweep (``sweep = "weight_decay"``) adds ``by_wd`` (one row per weight decay, keyed
by rank, 0 = the smallest) and ``time_scaling``: the exponents of Theorem 4.4's time in the weight
decay, the least-squares slopes over the sweep of log(seed-mean value) against log(wd):
``exponent_time_eps2`` (the time to the first level), ``exponent_time_eps2_last`` (to the last),
``exponent_time_per_log_eps2`` (of the time per unit of log(1/eps2)), and the smallest and largest
over the weight decays of wd x the time per unit of log(1/eps2)
(``time_per_log_eps2_times_wd_min`` / ``_max``).
"""

from __future__ import annotations

import itertools
import math
from collections import defaultdict
from collections.abc import Sequence
from typing import Any

from ..protocol import UnitResult
from .balance_rate import rate_derived, scaling_exponent, time_derived
from .distributed import ranks_agree, setup_distributed
from .lr_bound import sweep_record as lr_bound_sweep
from .minimiser import conditioning_derived
from .plateau import plateau_derived
from .schema import Derived, LinearHeadSummary, LinearHeadSweepSummary
from .sharpness import sharpness_derived

SCALARS = ("train_mse", "train_acc", "test_acc")
#: what the runner adds to the summary.json of a unit under ``units/``: not the network's
RUNNER_KEYS = ("seconds", "versions")
METRICS = ("nc1_trace", "nc2_kappa", "nc2_of", "nc3_cos", "balancedness", "negativity")


def _mean_std(vals: Sequence[float | None]) -> tuple[float | None, float | None]:
    v = [float(x) for x in vals if x is not None and math.isfinite(float(x))]
    if not v:
        return None, None
    m = sum(v) / len(v)
    return m, math.sqrt(sum((x - m) ** 2 for x in v) / len(v))


def derived(summary: dict[str, Any], history: list[dict[str, Any]]) -> dict[str, float | None]:
    L1, L2 = summary["L1"], summary["L2"]
    L = L1 + L2
    by = {rec["index"]: rec for rec in summary["layers"]}
    first = history[0]["layers"] if history else {}
    first_by = {rec["index"]: rec for rec in first.values()}

    def get(ell, key, src=by):
        return src.get(ell, {}).get(key)

    head = [get(ell, "nc2_kappa") for ell in range(L1, L)]
    steps = [(a, b) for a, b in itertools.pairwise(head) if a is not None and b is not None]
    lin_bal = [get(ell, "balancedness") for ell in range(L1 + 1, L)]
    lin_bal0 = [get(ell, "balancedness", first_by) for ell in range(L1 + 1, L)]
    nl_bal = [v for ell in range(1, L1 + 1) if (v := get(ell, "balancedness")) is not None]
    neg = [v for ell in range(1, L1 + 1) if (v := get(ell, "negativity")) is not None]
    lin_bal = [v for v in lin_bal if v is not None]
    lin_bal0 = [v for v in lin_bal0 if v is not None]
    extra = rate_derived(summary, history) | sharpness_derived(history)
    extra |= time_derived(summary, history, summary.get("imbalance_eps2") or [])
    extra |= thm31_derived(summary.get("certificate") or {})
    extra |= plateau_derived(summary, history)
    return (
        extra
        | conditioning_derived(summary)
        | {
            "nc1_last": get(L - 1, "nc1_trace"),
            "nc1_last_start": get(L - 1, "nc1_trace", first_by),
            "nc2_head_input": get(L1, "nc2_kappa"),
            "nc2_last": get(L - 1, "nc2_kappa"),
            "nc2_head_decrease": (sum(b < a for a, b in steps) / len(steps)) if steps else None,
            "gram_of_last": get(L - 1, "nc2_of"),
            "gram_of_last_start": get(L - 1, "nc2_of", first_by),
            "balancedness_linear_max": max(lin_bal) if lin_bal else None,
            "balancedness_linear_mean": sum(lin_bal) / len(lin_bal) if lin_bal else None,
            "balancedness_linear_start": max(lin_bal0) if lin_bal0 else None,
            "balancedness_nonlinear_mean": sum(nl_bal) / len(nl_bal) if nl_bal else None,
            "balancedness_nonlinear_min": min(nl_bal) if nl_bal else None,
            "negativity_mean": sum(neg) / len(neg) if neg else None,
            "negativity_min": min(neg) if neg else None,
            "negativity_last": get(L1, "negativity"),
            "nc3_gap_last": _gap(get(L - 1, "nc3_cos")),
            "nc3_gap_last_start": _gap(get(L - 1, "nc3_cos", first_by)),
        }
    )


def _gap(cos: float | None) -> float | None:
    """1 - a mean cosine (None stays None)."""
    return None if cos is None else 1.0 - cos


def thm31_derived(cert: dict[str, Any]) -> dict[str, float | None]:
    """Theorem 3.1's certificate in scalars: ``thm31_bounds_given``, how many of its four bounds
    (NC1 (2), kappa(W_L) (3), NC2 (4), NC3 (5), in the theorem's chain) the trained network's
    hypotheses give (0..4), ``thm31_bounds_holding``, how many apply and hold (0..4);
    their tightness ``thm31_<m>_bound_over_measured`` (upper bounds: >= 1, 1 = tight) and
    ``thm31_nc3_measured_minus_bound`` (>= 0), None where a bound is not given.

    >>> d = thm31_derived({"applies": True, "holds": {"nc1": True, "kappa_wl": True},
    ...                    "bounds": {"nc1": 0.2, "kappa_wl": 1.2},
    ...                    "measured": {"nc1_trace": 0.1, "kappa_wl": 1.0}})
    >>> d["thm31_bounds_holding"], d["thm31_kappa_wl_bound_over_measured"], d["thm31_nc2_bound_over_measured"]
    (2.0, 1.2, None)
    >>> d["thm31_bounds_given"]
    2.0
    """
    holds = cert.get("holds", {}) if cert.get("applies") else {}
    b, m = cert.get("bounds", {}), cert.get("measured", {})
    names = ("nc1", "kappa_wl", "nc2", "nc3")
    given = [k for k in names if cert.get("applies") and _finite(b.get(k))]
    out: dict[str, float | None] = {
        "thm31_bounds_given": float(len(given)),
        "thm31_bounds_holding": float(sum(bool(holds.get(k)) for k in names)),
    }
    for name, key in (("nc1", "nc1_trace"), ("kappa_wl", "kappa_wl"), ("nc2", "nc2_kappa")):
        ok = b.get(name) is not None and m.get(key)
        out[f"thm31_{name}_bound_over_measured"] = b[name] / m[key] if ok else None
    ok = b.get("nc3") is not None and m.get("nc3_cos") is not None
    out["thm31_nc3_measured_minus_bound"] = m["nc3_cos"] - b["nc3"] if ok else None
    return out


def _finite(v: Any) -> bool:
    return isinstance(v, int | float) and math.isfinite(v)


def _derived_keys() -> list[str]:
    return list(Derived.model_fields)


def aggregate(group: list[tuple[dict, dict, list]]) -> dict[str, Any]:
    """Mean (and ``std``) over the networks of a group (seeds; for by-depth also wd / lr) that
    did not diverge; ``n`` counts them all, ``n_diverged`` those that diverged."""
    ok = [g for g in group if not g[1].get("diverged")]
    if not ok:  # every network diverged: no metric
        none = dict.fromkeys(_derived_keys())
        out: dict[str, Any] = dict.fromkeys(SCALARS)
        out |= {"layers": [], "derived": none, "certificate": None, "n": len(group)}
        out["std"] = {**dict.fromkeys(SCALARS), "layers": [], "derived": dict(none)}
        out["n_diverged"] = len(group)
        return out
    out = _aggregate(ok)
    out["n"], out["n_diverged"] = len(group), len(group) - len(ok)
    return out


def _aggregate(group: list[tuple[dict, dict, list]]) -> dict[str, Any]:
    sums = [s for _, s, _ in group]
    out: dict[str, Any] = {}
    std: dict[str, Any] = {}
    for k in SCALARS:
        out[k], std[k] = _mean_std([s.get(k) for s in sums])
    layers, layers_std = [], []
    for i, rec in enumerate(sums[0]["layers"]):
        m = {"name": rec["name"], "kind": rec["kind"], "index": rec["index"]}
        sd = {}
        for key in METRICS:
            m[key], sd[key] = _mean_std([s["layers"][i].get(key) for s in sums])
        layers.append(m)
        layers_std.append(sd)
    out["layers"] = layers
    std["layers"] = layers_std
    ders = [derived(s, h) for _, s, h in group]
    out["derived"], std["derived"] = {}, {}
    for k in ders[0]:
        out["derived"][k], std["derived"][k] = _mean_std([d[k] for d in ders])
    out["certificate"] = sums[0]["certificate"]
    out["std"] = std
    out["n"] = len(group)
    return out


def summarize(cfg, units: Sequence[UnitResult]) -> LinearHeadSummary | LinearHeadSweepSummary:
    """The run's summary from its finished units (every rank under ``torchrun``), as its declared
    type: the networks' summary (:func:`results_summary`), the world size and, with several ranks,
    whether every rank reports the same numbers (``ddp``)."""
    _, world, _ = setup_distributed(cfg.device)  # joined already unless every unit was finished
    if world > 1:
        import torch.distributed as dist

        dist.barrier()  # the units' logs, which rank 0 writes, are complete
    results = [
        (
            dict(u.unit.params),
            {k: v for k, v in u.summary.items() if k not in RUNNER_KEYS},
            u.history(),
        )
        for u in units
    ]
    out = results_summary(cfg, results)
    out["ddp"] = {"world_size": world}
    if world > 1:
        out["ddp"]["ranks_agree"] = ranks_agree(out)
    return (LinearHeadSummary if cfg.sweep == "none" else LinearHeadSweepSummary)(**out)


def results_summary(cfg, results: list[tuple[dict, dict, list]]) -> dict[str, Any]:
    """The summary of the networks' (job, summary, logged records); without figures."""
    out: dict[str, Any] = {"sweep_kind": cfg.sweep}
    if cfg.sweep == "none":
        out.update(aggregate(results))
        out["per_seed"] = [{k: v for k, v in s.items() if k != "grams"} for _, s, _ in results]
        alive = [s for _, s, _ in results if not s.get("diverged")]
        out["grams"] = alive[0].get("grams", {}) if alive else {}
    else:
        out.update(sweep_summary(cfg, results))
    return out


def sweep_summary(cfg, results: list[tuple[dict, dict, list]]) -> dict[str, Any]:
    """A depth sweep: one record per (depth, weight decay or learning rate), one per depth
    (``by_depth``: the derived scalars), and the layers of the deepest networks."""
    key = {"linear_depth": "L2", "nonlinear_depth": "L1", "lr": "lr0", "weight_decay": "wd_group"}[
        cfg.sweep
    ]
    other = "lr" if cfg.sweep in ("nonlinear_depth", "weight_decay") else "wd_group"
    groups: dict[tuple, list] = defaultdict(list)
    depth: dict[int, list] = defaultdict(list)
    for job, s, h in results:
        groups[(job[key], job[other])].append((job, s, h))
        depth[job[key]].append((job, s, h))
    out: dict[str, Any] = {"sweep": []}
    for (v, o), grp in groups.items():
        rec = aggregate(grp)
        name = "weight_decay" if key == "wd_group" else key
        rec.update({name: v, "weight_decay" if other == "wd_group" else "lr": o})
        out["sweep"].append(rec)
    by = {"lr": "by_lr", "weight_decay": "by_wd"}.get(cfg.sweep, "by_depth")
    ranked = cfg.sweep in ("lr", "weight_decay")
    out[by] = {}
    for i, (v, grp) in enumerate(sorted(depth.items())):
        agg = aggregate(grp)
        # a learning-rate or weight-decay sweep is keyed by position (0 = smallest): a float has
        # a dot
        out[by][str(i) if ranked else str(v)] = {
            **agg["derived"],
            "std": agg["std"]["derived"],
            "test_acc": agg["test_acc"],
            "train_mse": agg["train_mse"],
            "n": agg["n"],
            "n_diverged": agg["n_diverged"],
        }
        if cfg.sweep == "lr":
            out[by][str(i)] |= {"lr0": v, "lr": grp[0][0]["lr"], "train_acc": agg["train_acc"]}
        if cfg.sweep == "weight_decay":
            out[by][str(i)] |= {
                "weight_decay": v,
                "lr": grp[0][0]["lr"],
                "train_acc": agg["train_acc"],
            }
    if cfg.sweep == "weight_decay":
        out["time_scaling"] = time_scaling(list(out[by].values()))
    if cfg.sweep == "lr" and cfg.lr_bound:
        out["lr_bound"] = lr_bound_sweep([s for _, s, _ in results])
    # the deepest (largest) value of the sweep where some network did not diverge
    alive = [v for v, grp in depth.items() if any(not s.get("diverged") for _, s, _ in grp)]
    deepest = max(alive or depth)
    top = aggregate(depth[deepest])
    for k in ("layers", "train_mse", "train_acc", "test_acc", "certificate", "derived"):
        out[k] = top[k]
    out["std"] = {**top["std"], by: {v: d["std"] for v, d in out[by].items()}}
    what = {"lr": "the largest step", "weight_decay": "the largest weight decay"}.get(
        cfg.sweep, "the deepest"
    )
    if len(alive) < len(depth):
        what += " where some network did not diverge" if alive else " (every network diverged)"
    out["layers_from"] = f"{key} = {deepest} ({what} of the sweep)"
    return out


def time_scaling(rows: list[dict[str, Any]]) -> dict[str, float | None]:
    """Theorem 4.4's time against the weight decay over a weight-decay sweep's rows (``by_wd``):
    the exponents and extremes the module docstring names (None where a row lacks a value)."""
    wds = [r["weight_decay"] for r in rows]

    def exponent(key: str) -> float | None:
        return scaling_exponent(wds, [r.get(key) for r in rows])

    prods = [r.get("imbalance_time_per_log_eps2_times_wd") for r in rows]
    have = all(p is not None for p in prods) and prods
    return {
        "exponent_time_eps2": exponent("imbalance_time_eps2"),
        "exponent_time_eps2_last": exponent("imbalance_time_eps2_last"),
        "exponent_time_per_log_eps2": exponent("imbalance_time_per_log_eps2"),
        "time_per_log_eps2_times_wd_min": min(prods) if have else None,
        "time_per_log_eps2_times_wd_max": max(prods) if have else None,
    }
