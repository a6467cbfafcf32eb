r"""Phase 1 of Theorem 4.4's proof on the pyramid-flow network: Proposition 4.5 (14)-(16) along
the gradient flow, and the time the loss takes to fall to Proposition 4.5's level.

Jacot et al. (ICLR 2025), §4 and App. B. In the ball :math:`B(\theta_0, r_0)` the unregularised
loss satisfies the PL inequality (13), :math:`\|\nabla C_0\|^2 \ge \frac\alpha2 C_0`, with
:math:`\alpha = 2^{-(L-3)}\gamma^{L-2}\lambda_F\lambda_{3\to L}` and :math:`r_0 = \frac12\min(
\lambda_F, \min_{\ell\ge3}\lambda_\ell)` (proof of Thm 4.4); Proposition 4.5 then gives there

.. math:: \|\nabla C_\lambda(\theta)\|^2 \ge \frac\alpha4\big(C_\lambda(\theta) - \lambda
   m_\lambda\big) \quad (14),

a first step :math:`k_1` with :math:`C_\lambda(\theta_{k_1}) \le 2\lambda m_\lambda` before
(15)'s count, whose time :math:`\eta k_1` tends to :math:`t_1 = \frac8\alpha\log\frac{C_\lambda(
\theta_0)-\lambda m_\lambda}{\lambda m_\lambda}` as :math:`\eta \to 0`, and (16)
:math:`\|\theta_{k_1} - \theta_0\| \le 8\sqrt{C_\lambda(\theta_0)/\alpha} \le r_0`.

:func:`phase1` integrates the flow from :math:`\theta_0` to ``HORIZON`` times :math:`t_1` (the
same stiff solver as the run to :math:`t^*`), stops the clock where :math:`C_\lambda` first
reaches :math:`2\lambda m_\lambda` (an event of the solver: :math:`\tau_1`, the flow's
:math:`\eta k_1`), and at every step of the solver evaluates both sides of (13) and (14) exactly
(no interpolation) and the distance to :math:`\theta_0`. :func:`sweep_fields` reduces the sweep
over :math:`\epsilon_1` (so over :math:`\lambda \propto \epsilon_1^2`) to the phase-1 time's
dependence on :math:`\log(1/\lambda)`.
"""

from __future__ import annotations

import itertools
import math
from typing import Any

import numpy as np
import torch
from scipy.integrate import solve_ivp

from ...theory.jacot_flow import Conditions, InitConstants
from .network import Network

#: how far past (15)'s time t1 the flow is followed: long enough to find tau1 if it is late by up
#: to 2x (then tau1 / t1 > 1 fails (15)'s check with its number, not as missing)
HORIZON = 2.0


def phase1(
    net: Network, theta0: torch.Tensor, c: InitConstants, cond: Conditions, rtol: float, atol: float
) -> dict[str, Any]:
    """Proposition 4.5 along the flow of :math:`C_\\lambda` at ``cond``'s λ (module docstring):
    the smallest ratios of (13)'s and (14)'s sides over the solver's steps inside
    :math:`B(\\theta_0, r_0)`, the two sides of (14) where its ratio is smallest, the phase-1 time
    τ1 against (15)'s t1, the distance at τ1 against (16), and the loss's exponential envelope."""
    lam, m = cond.lam, cond.m_lam
    level, floor = 2 * lam * m, lam * m
    z0 = theta0.numpy()
    c_lam0, t1 = cond.c_lam0, cond.t_phase1  # C_λ(θ0) and (15)'s time as η -> 0

    def reached(_t: float, z: np.ndarray) -> float:
        return net.cost_np(z, lam) - level

    reached.terminal = False
    reached.direction = -1.0
    sol = solve_ivp(
        lambda _t, z: -net.grad_np(z, lam),
        (0.0, HORIZON * t1),
        z0,
        method="LSODA",
        jac=lambda _t, z: _gauss_newton(net, z, lam),
        rtol=rtol,
        atol=atol,
        events=reached,
    )
    if sol.status != 0:
        raise RuntimeError(f"the phase-1 solve failed: {sol.message}")
    pts = _sides(net, sol.y.T, z0, lam, c.alpha, floor)
    inside = pts["dist"] <= c.r0
    out: dict[str, Any] = {
        "log_inv_lam": -math.log(lam),
        "prop45_points": int(np.sum(inside & (pts["rhs14"] > 0))),
        "prop45_points_outside": int(np.sum(~inside)),
    }
    out |= _ratio_min(pts, inside)
    tau = sol.t_events[0]
    if tau.size == 0:  # never reached within HORIZON t1: the phase-1 fields stay undefined
        return out | dict.fromkeys(_PHASE1_KEYS)
    tau1, z1 = float(tau[0]), sol.y_events[0][0]
    before = (sol.t > 0) & (sol.t <= tau1)  # at t = 0 the ratio is 1 by definition
    scale = (pts["cost"][0] - floor) * np.exp(-c.alpha / 8.0 * sol.t[before])
    dist1 = float(np.linalg.norm(z1 - z0))
    env = (pts["cost"][before] - floor) / scale
    return out | {
        "phase1_time": tau1,
        "phase1_time_over_bound": tau1 / t1,
        "phase1_dist_over_bound": dist1 / (8.0 * math.sqrt(c_lam0 / c.alpha)),
        "phase1_dist_over_r0": dist1 / c.r0,
        "phase1_envelope_max": float(np.max(env)) if env.size else None,
    }


_PHASE1_KEYS = (
    "phase1_time",
    "phase1_time_over_bound",
    "phase1_dist_over_bound",
    "phase1_dist_over_r0",
    "phase1_envelope_max",
)


def _gauss_newton(net: Network, z: np.ndarray, lam: float) -> np.ndarray:
    """-(JᵀJ + λI), the approximate Jacobian the stiff solver needs (:class:`.train.Flow`)."""
    J = net.out_jacobian_np(z)
    H = J.T @ J
    H[np.diag_indices_from(H)] += lam
    return -H


def _sides(
    net: Network, zs: np.ndarray, z0: np.ndarray, lam: float, alpha: float, floor: float
) -> dict[str, np.ndarray]:
    """At each state (rows of ``zs``): C_λ, both sides of (13) and of (14), ‖θ - θ0‖."""
    cost, lhs13, rhs13, lhs14, rhs14, dist = ([] for _ in range(6))
    for z in zs:
        c0 = net.cost_np(z, 0.0)
        c_lam = c0 + 0.5 * lam * float(z @ z)
        cost.append(c_lam)
        lhs13.append(float(np.sum(net.grad_np(z, 0.0) ** 2)))
        rhs13.append(0.5 * alpha * c0)
        lhs14.append(float(np.sum(net.grad_np(z, lam) ** 2)))
        rhs14.append(0.25 * alpha * (c_lam - floor))
        dist.append(float(np.linalg.norm(z - z0)))
    names = ("cost", "lhs13", "rhs13", "lhs14", "rhs14", "dist")
    return dict(zip(names, map(np.asarray, (cost, lhs13, rhs13, lhs14, rhs14, dist)), strict=True))


def _ratio_min(pts: dict[str, np.ndarray], inside: np.ndarray) -> dict[str, Any]:
    """The smallest lhs / rhs of (14) (where its rhs > 0: elsewhere it holds trivially) and of
    (13) over the states inside the ball, with (14)'s two sides at its smallest ratio."""
    out: dict[str, Any] = dict.fromkeys(
        ("prop45_ratio_min", "prop45_lhs_at_min", "prop45_rhs_at_min", "pl13_ratio_min")
    )
    pos = inside & (pts["rhs14"] > 0)
    if pos.any():
        ratio = np.where(pos, pts["lhs14"] / np.where(pos, pts["rhs14"], 1.0), np.inf)
        i = int(np.argmin(ratio))
        out |= {
            "prop45_ratio_min": float(ratio[i]),
            "prop45_lhs_at_min": float(pts["lhs14"][i]),
            "prop45_rhs_at_min": float(pts["rhs14"][i]),
        }
    pos13 = inside & (pts["rhs13"] > 0)
    if pos13.any():
        out["pl13_ratio_min"] = float(np.min(pts["lhs13"][pos13] / pts["rhs13"][pos13]))
    return out


def sweep_fields(sweep: list[dict[str, Any]]) -> dict[str, Any]:
    r"""The sweep's phase-1 scalars: the extremes over :math:`\epsilon_1` of each entry's checks,
    τ1 (and (15)'s time t1) at the sweep's ends (λ largest first), the range of
    :math:`\log(1/\lambda)` it spans,
    the least-squares slope of τ1 against :math:`\log(1/\lambda)` (``phase1_time_slope``), and
    the local exponents of that slope: with :math:`s_i` the slope of τ1 per unit of
    :math:`x = \log(1/\lambda)` between consecutive λ of the sweep, :math:`p = \log(s_{i+1}/s_i)
    / \Delta x` (:math:`\Delta x` the distance between the two intervals' midpoints): 0 for a
    time logarithmic in 1/λ, p for one that grows like :math:`\lambda^{-p}` (1 for phase 2's).

    >>> rows = [{"log_inv_lam": x, "phase1_time": 2.0 + 0.5 * x} for x in (10.0, 12.0, 14.0)]
    >>> f = sweep_fields(rows)
    >>> round(f["phase1_time_slope"], 12), f["phase1_slope_exponent_max"]
    (0.5, 0.0)
    """

    def extreme(key: str, pick) -> float | None:
        vals = [e.get(key) for e in sweep]
        return None if any(v is None for v in vals) else pick(vals)

    out: dict[str, Any] = {
        "prop45_ratio_min": extreme("prop45_ratio_min", min),
        "pl13_ratio_min": extreme("pl13_ratio_min", min),
        "prop45_points_min": extreme("prop45_points", min),
        "phase1_time_over_bound_max": extreme("phase1_time_over_bound", max),
        "phase1_dist_over_bound_max": extreme("phase1_dist_over_bound", max),
        "phase1_dist_over_r0_max": extreme("phase1_dist_over_r0", max),
        "phase1_envelope_max": extreme("phase1_envelope_max", max),
        "phase1_time_largest_lam": sweep[0].get("phase1_time"),
        "phase1_time_smallest_lam": sweep[-1].get("phase1_time"),
        "t_phase1_smallest_lam": sweep[-1].get("t_phase1"),
        "log_inv_lam_range": None,
        "phase1_time_slope": None,
        "phase1_slope_exponent_max": None,
        "phase1_slope_exponent_min": None,
    }
    times = [e.get("phase1_time") for e in sweep]
    if any(t is None for t in times) or len(times) < 2:
        return out
    x = np.array([e["log_inv_lam"] for e in sweep])
    out["log_inv_lam_range"] = float(x[-1] - x[0])
    t = np.array(times, dtype=float)
    out["phase1_time_slope"] = float(np.polyfit(x, t, 1)[0])
    slopes = [(t[i + 1] - t[i]) / (x[i + 1] - x[i]) for i in range(len(t) - 1)]
    exps = [
        float(math.log(b / a) / ((x[i + 2] - x[i]) / 2)) if a > 0 and b > 0 else None
        for i, (a, b) in enumerate(itertools.pairwise(slopes))
    ]
    if exps and all(p is not None for p in exps):
        out["phase1_slope_exponent_max"] = max(exps)
        out["phase1_slope_exponent_min"] = min(exps)
    return out
