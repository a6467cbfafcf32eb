"""What a UFM run's log says about its feature levels over training, and the nuclear norms of
the ReLU model's second level (Tirer & Bruna App. D, App. E and §6; issue 26).

* :func:`level_rates`: NC1 of every layer at each logged step, and per layer its log-rate of
  collapse over the rate window (the first interval of the metric grid after its first point,
  steps ``[log_every, 2 log_every]``: the paper computes its metrics every 5e3 iterations);
  the contrast of the two levels' rates (first level H1, last level: the classifier's input);
* :func:`nuclear_norms`: ‖W1H1‖_* and ‖σ(W1H1)‖_* of the ReLU extended UFM (App. E: equal at a
  minimiser), their relative difference;
* :func:`nc1_ends`: the median over seeds of the classifier input's NC1 at the start and the end
  (the unregularised UFM: interpolating, not collapsed);
* :func:`same_range`: the linear extended UFM's balance identities λ_W2 W2ᵀW2 = λ_W1 W1W1ᵀ,
  λ_W1 W1ᵀW1 = λ_H1 H1H1ᵀ and the principal angles between the K-dimensional ranges of W2ᵀ,
  W1ᵀ and H1 (App. D, from the proof of Theorem 4.1; written since issue 50);
* :func:`features_given_w`: the GUFM-MSE's features against the proof's optimum given W,
  √d w_k/‖w_k‖, and the margin of ‖w_k‖ below d^(-1/2) (Súkeník et al.; since issue 50).

Each writes top-level keys (the median or worst over seeds, as named) and per-seed keys.
"""

from __future__ import annotations

import math
import statistics
from typing import Any

import numpy as np
import torch

from ...models.ufm import lr_factor
from .config import COLLAPSED


def _median(values: list[float | None]) -> float | None:
    vals = [v for v in values if v is not None]
    return float(statistics.median(vals)) if vals else None


def _contrast(a: float | None, b: float | None) -> float | None:
    """max(a/b, b/a) of two positive numbers (None otherwise)."""
    if a is None or b is None or not (a > 0 and b > 0):
        return None
    return max(a / b, b / a)


def rate_window(steps: list[int], log_every: int) -> list[int]:
    """Indices of the records in the rate window: steps in [log_every, 2 log_every], else the
    first two records after initialisation (a run shorter than two grid intervals).

    >>> rate_window([0, 5000, 10000, 15000], 5000), rate_window([0, 200, 400], 5000)
    ([1, 2], [1, 2])
    """
    idx = [i for i, s in enumerate(steps) if log_every <= s <= 2 * log_every]
    if len(idx) < 2:
        idx = [i for i, s in enumerate(steps) if s > 0][:2]
    return idx


def _rate(steps: list[int], values: list[float | None]) -> float | None:
    """Decades of NC1 lost per 1000 steps: minus the least-squares slope of log10 NC1 against
    the step (None where a value is missing or not positive)."""
    if len(steps) < 2 or any(v is None or not v > 0 for v in values):
        return None
    slope = np.polyfit(np.asarray(steps, float), np.log10(np.asarray(values, float)), 1)[0]
    return float(-1000 * slope)


def level_rates(cfg: Any, history: list[dict], B: int) -> tuple[dict, list[dict]]:
    """(top-level keys, one dict per problem) of the NC1 trajectories and rates of a deep model.

    Per seed: ``nc1_trajectory`` (every layer, at ``nc1_steps``), ``nc1_rates`` per layer,
    ``nc1_value_contrast`` (the largest max(a/b, b/a) of the two levels' NC1 over the window's
    records) and ``nc1_rate_contrast`` (max(r/r', r'/r) of their rates), the latter only for a
    seed whose last level collapsed (final NC1 <= :data:`COLLAPSED`: a stalled seed has no rate of
    collapse; it is counted, not judged). Top level: the medians over seeds (the rate contrast's
    over the collapsed seeds, over every seed with one when none collapsed), ``seeds_collapsed``.
    """
    steps = [int(r["step"]) for r in history]
    layers = list(history[-1]["metrics"])
    first, last = layers[0], layers[-1]
    win = rate_window(steps, cfg.log_every)
    wsteps = [steps[i] for i in win]
    per: list[dict] = []
    for b in range(B):
        traj = {ly: [r["metrics"][ly]["nc1"][b] for r in history] for ly in layers}
        rates = {ly: _rate(wsteps, [traj[ly][i] for i in win]) for ly in layers}
        values = [_contrast(traj[last][i], traj[first][i]) for i in win]
        final = traj[last][-1]
        collapsed = final is not None and final <= COLLAPSED
        seed = {
            "nc1_trajectory": traj,
            "nc1_rates": rates,
            "nc1_value_contrast": None if None in values else max(values),
            "level_collapsed": collapsed,
        }
        contrast = _contrast(rates[last], rates[first])
        if collapsed:
            seed["nc1_rate_contrast"] = contrast
        seed["_contrast"] = contrast
        per.append(seed)
    judged = [p["nc1_rate_contrast"] for p in per if "nc1_rate_contrast" in p]
    fallback = [p["_contrast"] for p in per]
    for p in per:
        del p["_contrast"]
    top = {
        "nc1_steps": steps,
        "nc1_rate_window": [wsteps[0], wsteps[-1]] if wsteps else [],
        "nc1_levels": [first, last],
        "nc1_rates": {ly: _median([p["nc1_rates"][ly] for p in per]) for ly in layers},
        "nc1_rate_contrast": _median(judged if judged else fallback),
        "nc1_value_contrast": _median([p["nc1_value_contrast"] for p in per]),
        "seeds_collapsed": sum(p["level_collapsed"] for p in per),
    }
    return top, per


def _nuclear(a: torch.Tensor) -> float:
    return float(torch.linalg.svdvals(a.to(torch.float64)).sum())


def nuclear_norms(
    feats: dict[str, torch.Tensor], reached: list[bool | None]
) -> tuple[dict, list[dict]]:
    """(top-level keys, one dict per problem): ‖Z1‖_*, ‖A1‖_* = ‖σ(Z1)‖_* and
    ``nuclear_gap`` = |‖Z1‖_* - ‖A1‖_*| / ‖Z1‖_* per seed; ``nuclear_gap_at_minimiser`` only for a
    seed that reached the minimiser. Top level: the worst gap over the seeds that reached it
    (over every seed when none did: ``seeds_reaching_minimiser`` says so), over those that did
    not (None when all did), and over every seed."""
    z, a = feats["Z1"], feats["A1"]
    per = []
    for b, ok in enumerate(reached):
        nz, na = _nuclear(z[b]), _nuclear(a[b])
        gap = abs(nz - na) / nz if nz > 0 else None
        seed = {"nuclear_norms": {"Z1": nz, "A1": na}, "nuclear_gap": gap}
        if ok:
            seed["nuclear_gap_at_minimiser"] = gap
        per.append(seed)
    at = [p["nuclear_gap"] for p, ok in zip(per, reached, strict=True) if ok]
    off = [p["nuclear_gap"] for p, ok in zip(per, reached, strict=True) if not ok]
    gaps = [p["nuclear_gap"] for p in per]
    top = {
        "nuclear_gap": _worst(gaps),
        "nuclear_gap_at_minimiser": _worst(at if at else gaps),
        "nuclear_gap_not_reached": _worst(off),
    }
    return top, per


def _rel(a: torch.Tensor, b: torch.Tensor) -> float:
    """‖a - b‖_F / max(‖a‖_F, ‖b‖_F)."""
    top = max(float(a.norm()), float(b.norm()))
    return float((a - b).norm()) / top if top > 0 else 0.0


def _top(a: torch.Tensor, k: int) -> torch.Tensor:
    """An orthonormal basis of the span of the top ``k`` left singular vectors of ``a``."""
    return torch.linalg.svd(a, full_matrices=False)[0][:, :k]


def _sine(u: torch.Tensor, v: torch.Tensor) -> float:
    """The largest sine of the principal angles between the spans of orthonormal ``u``, ``v``."""
    return float(torch.linalg.svdvals(u - v @ (v.T @ u)).max())


def same_range(cfg: Any, params: list[torch.Tensor]) -> tuple[dict, list[dict]]:
    """(top-level keys, one dict per problem) of the linear extended UFM's App. D identities at the
    end of the run, params [W1 (B, d, d), W2 (B, K, d), H1 (B, d, N)]: ``balance_w2_w1`` =
    ‖λ_W2 W2ᵀW2 - λ_W1 W1W1ᵀ‖_F / max of the two norms, ``balance_w1_h1`` the same for
    λ_W1 W1ᵀW1 and λ_H1 H1H1ᵀ; ``range_sine`` the largest sine of the principal angles between
    the top-K left singular subspaces of W2ᵀ, W1ᵀ and H1 (pairwise: the sentence read literally),
    ``range_sine_chain`` the same between W2ᵀ and W1 and between W1ᵀ and H1 (the ranges the two
    identities equate: range W2ᵀW2 = range W1W1ᵀ, range W1ᵀW1 = range H1H1ᵀ); ``rank_tail`` the largest
    σ_{K+1}/σ_1 of W1 and H1 (0 when their ranges are K-dimensional). Top level: the worst
    seed."""
    m = cfg.model
    lam_w2, lam_h = m.lambda_w, m.lambda_h
    lam_w1 = m.lambda_w if m.lambda_w1 is None else m.lambda_w1
    w1, w2, h = (p.detach().to(torch.float64) for p in params[:3])
    K = w2.shape[1]
    per = []
    for b in range(w1.shape[0]):
        a, c, x = w1[b], w2[b], h[b]
        bal2 = _rel(lam_w2 * c.T @ c, lam_w1 * a @ a.T)
        bal1 = _rel(lam_w1 * a.T @ a, lam_h * x @ x.T)
        w2t, w1t, w1r, h1 = _top(c.T, K), _top(a.T, K), _top(a, K), _top(x, K)
        literal = max(_sine(w2t, w1t), _sine(w2t, h1), _sine(w1t, h1))
        chain = max(_sine(w2t, w1r), _sine(w1t, h1))
        tails = []
        for mat in (a, x):
            sv = torch.linalg.svdvals(mat)
            tails.append(float(sv[K] / sv[0]) if sv.numel() > K and sv[0] > 0 else 0.0)
        per.append(
            {
                "balance_w2_w1": bal2,
                "balance_w1_h1": bal1,
                "range_sine": literal,
                "range_sine_chain": chain,
                "rank_tail": max(tails),
            }
        )
    top = {k: _worst([p[k] for p in per]) for k in per[0]} if per else {}
    return top, per


def features_given_w(params: list[torch.Tensor], n: int) -> tuple[dict, list[dict]]:
    """(top-level keys, one dict per problem) of the GUFM with MSE at the end of the run, params
    [W (B, K, d), H (B, d, K n)] (Súkeník et al., proof of Lemma 4.1; written since issue 50):
    ``features_given_w_gap`` = max over samples of ‖x_ki - √d w_k/‖w_k‖‖ / √d (the proof's
    optimal features given W, when ‖w_k‖ <= d^(-1/2)); ``w_norm_sphere_margin`` = 1 - √d max_k
    ‖w_k‖ (> 0: every ‖w_k‖ strictly below d^(-1/2)). Top level: the worst seed (largest gap,
    smallest margin)."""
    w, h = (p.detach().to(torch.float64) for p in params[:2])
    d = w.shape[-1]
    per = []
    for b in range(w.shape[0]):
        norms = w[b].norm(dim=1)
        target = (math.sqrt(d) * w[b] / norms[:, None]).repeat_interleave(n, dim=0).T  # (d, Kn)
        gap = float((h[b] - target).norm(dim=0).max()) / math.sqrt(d)
        per.append(
            {
                "features_given_w_gap": gap,
                "w_norm_sphere_margin": 1.0 - math.sqrt(d) * float(norms.max()),
            }
        )
    top = {
        "features_given_w_gap": _worst([p["features_given_w_gap"] for p in per]),
        "w_norm_sphere_margin": min(p["w_norm_sphere_margin"] for p in per),
    }
    return top, per


def _worst(values: list[float | None]) -> float | None:
    vals = [v for v in values if v is not None and math.isfinite(v)]
    return max(vals) if vals else None


def nc1_ends(history: list[dict], B: int) -> tuple[dict, list[dict]]:
    """(top-level keys, one dict per problem): NC1 of the classifier's input at the start and at
    the end, the medians over seeds at the top level (``nc1_median``: "most seeds")."""
    layer = list(history[-1]["metrics"])[-1]
    start = [history[0]["metrics"][layer]["nc1"][b] for b in range(B)]
    end = [history[-1]["metrics"][layer]["nc1"][b] for b in range(B)]
    per = [{"nc1_start": s, "nc1_median": e} for s, e in zip(start, end, strict=True)]
    return {"nc1_start_median": _median(start), "nc1_median": _median(end)}, per


def weight_decay_factor(cfg: Any) -> float:
    """∏_t (1 - η_t λ_H): what plain GD's weight decay alone does to an entry of H over the run
    (η_t the step of H at step t: lr × lr_h_scale × the schedule's factor)."""
    t = cfg.train
    out = 1.0
    for step in range(t.steps):
        eta = t.lr * t.lr_h_scale * lr_factor(step, t.schedule, t.milestones, t.gamma, t.steps)
        out *= 1 - eta * cfg.model.lambda_h
    return out


def negatives(cfg: Any, h0: torch.Tensor, h: torch.Tensor) -> tuple[dict, list[dict]]:
    """(top-level keys, one dict per problem) of the plain UFM with a ReLU on its features,
    W σ(H), from H at initialisation ``h0`` and at the end ``h`` (B, d, N):
    ``negatives_kept``, the fraction of H's entries negative at initialisation that are still
    <= 0 at the end; ``negatives_fit_change``, the largest change of those entries beyond what the
    weight decay alone makes of them, |h - h0 ∏(1 - ηλ_H)|, relative to the largest |h0| among
    them (0 up to rounding: no fit gradient reaches them); ``dead_fraction``, the fraction of
    entries <= 0 at the end. Top level: the worst seed (smallest kept, largest change) and the
    mean dead fraction."""
    decay = weight_decay_factor(cfg)
    per = []
    for b in range(h0.shape[0]):
        a0, a = h0[b].to(torch.float64), h[b].to(torch.float64)
        neg = a0 < 0
        scale = float(a0[neg].abs().max()) if neg.any() else 0.0
        change = float((a[neg] - a0[neg] * decay).abs().max()) if neg.any() else 0.0
        per.append(
            {
                "negatives_kept": float((a[neg] <= 0).double().mean()) if neg.any() else None,
                "negatives_fit_change": change / scale if scale > 0 else None,
                "dead_fraction": float((a <= 0).double().mean()),
            }
        )
    kept = [p["negatives_kept"] for p in per if p["negatives_kept"] is not None]
    top = {
        "negatives_kept": min(kept) if kept else None,
        "negatives_fit_change": _worst([p["negatives_fit_change"] for p in per]),
        "dead_fraction": float(np.mean([p["dead_fraction"] for p in per])),
        "weight_decay_factor": decay,
    }
    return top, per
