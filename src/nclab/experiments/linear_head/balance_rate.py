r"""Phase 2 of Jacot et al.'s Theorem 4.4 on a run: the per-step decay of each layer pair's
imbalance :math:`\|D_\ell\|_{op}`, :math:`D_\ell = W_{\ell+1}^\top W_{\ell+1} - W_\ell W_\ell^\top`,
against the exact rate :math:`(1-\eta\lambda)^2` of SGD with weight decay and no momentum.

For consecutive bias-free linear layers one SGD step gives exactly
:math:`D_{k+1} = (1-\eta\lambda)^2 D_k + \eta^2(G_{\ell+1}^\top G_{\ell+1} - G_\ell G_\ell^\top)`
(``docs/theory-jacot.md``); once the gradients are small the last term is negligible and
:math:`\|D\|` decays by :math:`(1-\eta\lambda)^2` per step. The pair :math:`(W_{L_1}, W_{L_1+1})`
straddles the last nonlinearity and obeys no such rule.

With ``track_imbalance`` the experiment logs ``imbalance`` (:func:`pair_imbalance`: the pairs
:math:`\ell = L_1, \dots, L-1`, the straddling pair first) with every record; :func:`rate_derived`
turns the records into the derived scalars the claim ``jacot/balancedness-rate`` checks:

* ``imbalance_rate_predicted``: :math:`(1-\eta\lambda)^2`;
* ``imbalance_rate_error_linear``: the largest, over the linear pairs, of
  :math:`|\log\hat r / \log(1-\eta\lambda)^2 - 1|`, with :math:`\log\hat r` the least-squares slope
  of :math:`\log\|D_\ell\|` per step over the second half of the records (gradients small);
* ``imbalance_log_rate_ratio_straddle``: :math:`\log\hat r / \log(1-\eta\lambda)^2` of the
  straddling pair (None without nonlinear layers);
* ``imbalance_end_over_start``: the largest, over the linear pairs, of :math:`\|D\|` at the last
  record over that at the first;
* ``loss_settled_fraction``: the epoch at which the training loss first comes within 10 % of its
  total fall (first record to last) of its final value, over the run's epochs (phase 1's end);
* ``imbalance_settled_fraction``: the same for :math:`\log\|D_\ell\|` (the latest linear pair):
  phase 2's end. Phase 1 before phase 2: the first well below the second.

With ``imbalance_eps2`` (levels :math:`\epsilon_2`, decreasing), :func:`time_derived` measures the
time of Theorem 4.4's (10), :math:`\eta k` (the step times the number of steps), for the linear
pairs to become :math:`\epsilon_2`-balanced, :math:`\max_\ell \|D_\ell\|_{op} \le \epsilon_2`
(Theorem 3.1's balancedness, :math:`\ell = L_1+1, \dots, L-1`), and to stay so to the end:

* ``imbalance_time_eps2``: that time at the first (largest) level, ``imbalance_time_eps2_last`` at
  the last (smallest); between records :math:`\log\max_\ell\|D_\ell\|` is interpolated
  linearly in the step; None if a level is not reached by the end;
* ``imbalance_time_per_log_eps2``: the least-squares slope of that time against
  :math:`\log(1/\epsilon_2)` over the levels; Theorem 4.4 makes it of order :math:`1/\lambda`
  (the exact recursion above, :math:`(1-\eta\lambda)^2` per step: :math:`1/(2\lambda)`);
* ``imbalance_time_per_log_eps2_times_wd``: that slope times the weight decay (of order 1).

In nclab's convention (loss the mean over N K entries, weight decay ``wd`` of the optimiser)
:math:`\eta\,\mathrm{wd}` is the paper's :math:`\eta\lambda`, so the time :math:`\eta k` and
:math:`1/\mathrm{wd}` are the paper's :math:`\eta k` and :math:`1/\lambda` times one and the same
factor: exponents in :math:`\lambda` and the product above do not depend on the convention.
"""

from __future__ import annotations

import math
from typing import Any

import torch

KEYS = (
    "imbalance_rate_predicted",
    "imbalance_rate_error_linear",
    "imbalance_log_rate_ratio_straddle",
    "imbalance_end_over_start",
    "loss_settled_fraction",
    "imbalance_settled_fraction",
)
TIME_KEYS = (
    "imbalance_time_eps2",
    "imbalance_time_eps2_last",
    "imbalance_time_per_log_eps2",
    "imbalance_time_per_log_eps2_times_wd",
)


@torch.no_grad()
def pair_imbalance(model) -> list[float]:
    r""":math:`\|W_{\ell+1}^\top W_{\ell+1} - W_\ell W_\ell^\top\|_{op}` for
    :math:`\ell = \max(L_1, 1), \dots, L-1` (float64), the pair straddling the last nonlinearity
    first when :math:`L_1 \ge 1`.

    >>> from nclab.models.mlp import LinearHeadMLP
    >>> len(pair_imbalance(LinearHeadMLP(4, 3, [8, 8], [6, 5])))  # (W2, W3), (W3, W4), (W4, W5)
    3
    """
    ws = [w.detach().to(torch.float64) for w in model.weights()]
    out = []
    for ell in range(max(model.L1, 1), model.L):
        lo, hi = ws[ell - 1], ws[ell]
        out.append(float(torch.linalg.matrix_norm(hi.T @ hi - lo @ lo.T, 2)))
    return out


def _slope(xs: list[float], ys: list[float]) -> float:
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    sxx = sum((x - mx) ** 2 for x in xs)
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True)) / sxx


def _log_rate(steps: list[float], values: list[float]) -> float | None:
    """Least-squares slope of log(values) per step over the second half (at least two points)."""
    half = min(len(values) // 2, len(values) - 2)
    xs, ys = steps[half:], values[half:]
    if len(xs) < 2 or min(ys) <= 0.0:
        return None
    return _slope(xs, [math.log(v) for v in ys])


def _settled_index(losses: list[float]) -> int:
    final, fall = losses[-1], losses[0] - losses[-1]
    return next(i for i, v in enumerate(losses) if v - final <= 0.1 * abs(fall))


def rate_derived(summary: dict[str, Any], history: list[dict[str, Any]]) -> dict[str, Any]:
    """The derived scalars above from a network's summary (``lr``, ``weight_decay``, ``L1``,
    ``epochs``, ``steps_per_epoch``) and its records; all None unless ``imbalance`` was logged."""
    out: dict[str, Any] = dict.fromkeys(KEYS)
    recs = [r for r in history if r.get("imbalance") and r.get("train_loss") is not None]
    if len(recs) < 2:
        return out
    pred = (1.0 - summary["lr"] * summary["weight_decay"]) ** 2
    out["imbalance_rate_predicted"] = pred
    steps = [r["epoch"] * summary.get("steps_per_epoch", 1) for r in recs]
    series = list(zip(*(r["imbalance"] for r in recs), strict=True))
    straddle = summary["L1"] >= 1
    linear = series[1:] if straddle else series
    ratios = [
        (s / math.log(pred)) if (s := _log_rate(steps, list(v))) is not None else None
        for v in series
    ]
    lin_ratios = ratios[1:] if straddle else ratios
    if lin_ratios and all(r is not None for r in lin_ratios) and pred < 1.0:
        out["imbalance_rate_error_linear"] = max(abs(r - 1.0) for r in lin_ratios)
    if straddle and pred < 1.0:
        out["imbalance_log_rate_ratio_straddle"] = ratios[0]
    if linear:
        out["imbalance_end_over_start"] = max(v[-1] / v[0] for v in linear)
    k = _settled_index([r["train_loss"] for r in recs])
    out["loss_settled_fraction"] = recs[k]["epoch"] / summary["epochs"]
    if linear:
        # log ||D|| falls like the loss: 90 % of its fall (start to end) marks phase 2's end
        k = max(_settled_index([math.log(x) for x in v]) for v in linear)
        out["imbalance_settled_fraction"] = recs[k]["epoch"] / summary["epochs"]
    return out


def _reach_step(steps: list[float], values: list[float], level: float) -> float | None:
    """The step after which ``values`` (positive) stay <= ``level``: log-linear interpolation
    between the last record above it and the next; the first record's step if none is above;
    None if the last record is above."""
    if values[-1] > level:
        return None
    above = [i for i, v in enumerate(values) if v > level]
    if not above:
        return steps[0]
    i = above[-1]
    la, lb, lc = math.log(values[i]), math.log(values[i + 1]), math.log(level)
    return steps[i] + (steps[i + 1] - steps[i]) * (la - lc) / (la - lb)


def time_derived(
    summary: dict[str, Any], history: list[dict[str, Any]], levels: list[float]
) -> dict[str, Any]:
    """The times above (``TIME_KEYS``) of one network; all None without ``levels``, without
    linear pairs (L2 >= 2) or without records of ``imbalance``. A record at (0-based) epoch e
    follows (e + 1) epochs of training."""
    out: dict[str, Any] = dict.fromkeys(TIME_KEYS)
    recs = [r for r in history if r.get("imbalance")]
    if not levels or len(recs) < 2:
        return out
    straddle = summary["L1"] >= 1
    pairs = [r["imbalance"][1:] if straddle else r["imbalance"] for r in recs]
    if not pairs[0]:
        return out
    lr, spe = summary["lr"], summary.get("steps_per_epoch", 1)
    steps = [(r["epoch"] + 1) * spe for r in recs]
    worst = [max(p) for p in pairs]
    if min(worst) <= 0.0:
        return out
    times = [None if (k := _reach_step(steps, worst, e)) is None else lr * k for e in levels]
    out["imbalance_time_eps2"], out["imbalance_time_eps2_last"] = times[0], times[-1]
    if len(levels) >= 2 and all(t is not None for t in times):
        slope = _slope([math.log(1.0 / e) for e in levels], times)
        out["imbalance_time_per_log_eps2"] = slope
        out["imbalance_time_per_log_eps2_times_wd"] = slope * summary["weight_decay"]
    return out


def scaling_exponent(wds: list[float], values: list[float | None]) -> float | None:
    """The least-squares slope of log(value) against log(weight decay) (None unless every value
    is positive and there are two distinct weight decays).

    >>> round(scaling_exponent([1e-3, 2e-3, 4e-3], [8.0, 4.0, 2.0]), 12)
    -1.0
    """
    if len(set(wds)) < 2 or any(v is None or not v > 0 for v in values):
        return None
    return _slope([math.log(w) for w in wds], [math.log(v) for v in values])
