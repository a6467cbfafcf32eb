"""One unit (seed) of pyramid-flow: the data and θ0 drawn from the seed, Theorem 4.4's constants
at θ0, and for each ε1 of the sweep the gradient flow of C_λ to the time t* of (10), measured.

The flow θ' = -∇C_λ(θ) is stiff (the Hessian's top eigenvalue at θ0 is ~4e5, λ ~ 1e-7 to 1e-6):
gradient descent at a stable step would need t* λ_max / 2 ~ 1e13 steps, so an implicit stiff
solver integrates it (scipy's LSODA, which switches to BDF where the flow is stiff, with the
Gauss-Newton Jacobian), validated twice: the smallest ε1's solve is repeated at ``check_factor``
times the tolerances (the end state must not move), and gradient descent at step η and η/2 over
a short time is compared with the flow there (the error must halve with the step: GD converges
to this flow at first order). Phase 1 of the proof (Proposition 4.5 along the flow, the time the
loss takes to fall to its level) is :mod:`.phase1`'s.
"""

from __future__ import annotations

import itertools
import math
import time
from typing import Any

import numpy as np
import torch
from scipy.integrate import solve_ivp

from ... import ClassStats, collapse_metrics
from ...errors import ConfigError
from ...rng import generator
from ...runs import RunDir
from ...theory.jacot_flow import Conditions, InitConstants, conditions
from ..protocol import Unit
from .activation import smooth_relu
from .config import PyramidFlowConfig
from .network import Network
from .phase1 import phase1, sweep_fields

DT = torch.float64


def make_data(cfg: PyramidFlowConfig, seed: int) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """X (d x N, unit columns), Y (K x N one-hot), labels: a Gaussian mixture."""
    d = cfg.data
    g = generator(seed, 0)
    y = torch.arange(d.num_classes).repeat_interleave(d.samples_per_class)
    means = d.separation * torch.randn(d.num_classes, d.dim, generator=g, dtype=DT)
    pts = means[y] + torch.randn(len(y), d.dim, generator=g, dtype=DT)
    X = (pts / pts.norm(dim=1, keepdim=True)).T.contiguous()
    Y = torch.nn.functional.one_hot(y, d.num_classes).T.to(DT)
    return X, Y, y


def _orthonormal_rows(rows: int, cols: int, g: torch.Generator) -> torch.Tensor:
    """A rows x cols matrix with orthonormal rows (rows <= cols) or columns (rows > cols)."""
    A = torch.randn(max(rows, cols), min(rows, cols), generator=g, dtype=DT)
    Q, R = torch.linalg.qr(A)
    Q = Q * torch.sign(torch.diagonal(R))
    return Q.T.contiguous() if rows <= cols else Q.contiguous()


def init(cfg: PyramidFlowConfig, net: Network, seed: int) -> torch.Tensor:
    """θ0: W1 orthogonal, scaled so that λ_F is ``init.lambda_f`` (a fixed-point iteration on the
    scale; σ is nearly 1-homogeneous far from 0); W2 Gaussian, ``init.second_scale`` / sqrt(n1)
    per entry; W_l (l >= 3) orthonormal rows times ``init.singular_value``."""
    i = cfg.init
    g = generator(seed, 1)
    Ws = []
    for ell, (a, b) in enumerate(net.shapes, start=1):
        if ell == 2:
            Ws.append(i.second_scale * torch.randn(a, b, generator=g, dtype=DT) / math.sqrt(b))
        else:
            Ws.append(_orthonormal_rows(a, b, g) * (1.0 if ell == 1 else i.singular_value))
    Q1, scale = Ws[0], 1.0
    for _ in range(30):
        lf = lambda_f(net, scale * Q1)
        if lf <= 0:
            raise ConfigError("σ(W1 X) is rank-deficient: λ_F = 0 (draw other data)")
        scale *= i.lambda_f / lf
    Ws[0] = scale * Q1
    return torch.cat([w.reshape(-1) for w in Ws])


def lambda_f(net: Network, W1: torch.Tensor) -> float:
    """λ_F = σ_min(σ(W1 X)) (the N-th singular value; n1 >= N)."""
    Z1 = smooth_relu(W1 @ net.X, net.gamma, net.beta)
    return float(torch.linalg.svdvals(Z1)[net.X.shape[1] - 1])


def constants(cfg: PyramidFlowConfig, net: Network, theta0: torch.Tensor) -> InitConstants:
    """(8)-(9)'s quantities at θ0."""
    Ws = net.unflat(theta0)
    sv = [torch.linalg.svdvals(W) for W in Ws]
    lams = tuple(float(s[-1]) for s in sv[2:])
    lam_min3 = min(lams)
    N, K = net.X.shape[1], net.Y.shape[0]
    return InitConstants(
        N=N,
        K=K,
        L=net.L,
        L1=net.L1,
        gamma=net.gamma,
        beta=net.beta,
        b=max(1.0, float(net.X.norm(dim=0).max())),
        x_op=float(torch.linalg.matrix_norm(net.X, 2)),
        lambda_f=lambda_f(net, Ws[0]),
        lambdas=lams,
        lambda_bars=tuple(float(s[0]) + lam_min3 for s in sv),
        c0=float(net.cost(theta0, 0.0)),
        theta_norm=float(theta0.norm()),
    )


class Flow:
    """The gradient flow θ' = -∇C_λ(θ), solved by LSODA with the Gauss-Newton Jacobian."""

    def __init__(self, net: Network, lam: float):
        self.net = net
        self.hess = torch.func.hessian(lambda t: net.cost(t, lam))
        self.lam = lam
        self.evals = [0, 0]

    def grad(self, theta: torch.Tensor) -> torch.Tensor:
        return torch.from_numpy(self.net.grad_np(theta.numpy(), self.lam))

    def rhs(self, _t: float, z: np.ndarray) -> np.ndarray:
        self.evals[0] += 1
        return -self.net.grad_np(z, self.lam)

    def jac(self, _t: float, z: np.ndarray) -> np.ndarray:
        """-(J^T J + λ I), J = ∂Z_L/∂θ: the Gauss-Newton part of the Hessian, exact up to the
        residual's term (small once Z_L ~ Y); the solver's Newton iterations only need an
        approximate Jacobian (its error control decides the accuracy)."""
        self.evals[1] += 1
        J = self.net.out_jacobian_np(z)
        H = J.T @ J
        H[np.diag_indices_from(H)] += self.lam
        return -H

    def solve(self, theta0: torch.Tensor, t_end: float, rtol: float, atol: float) -> dict[str, Any]:
        sol = solve_ivp(
            self.rhs,
            (0.0, t_end),
            theta0.numpy(),
            method="LSODA",
            jac=self.jac,
            rtol=rtol,
            atol=atol,
        )
        if sol.status != 0:
            raise RuntimeError(f"the gradient-flow solve failed: {sol.message}")
        return {"theta": torch.from_numpy(sol.y[:, -1].copy()), "steps": int(sol.t.size - 1)}


def nc1_trace(Z: torch.Tensor, labels: torch.Tensor, K: int) -> float:
    """tr Σ_W / tr Σ_B of the columns of Z (nclab's ``nc1_trace``, Jacot et al.'s NC1)."""
    stats = ClassStats.from_features(Z.T, labels, num_classes=K)
    return float(collapse_metrics(stats, keys=("nc1_trace",))["nc1_trace"])


def measure(
    net: Network, theta: torch.Tensor, labels: torch.Tensor, lam: float
) -> dict[str, float]:
    """At θ: NC1(Z_(L-1)), ‖Z_L - Y‖_F, C_λ, max_l ‖W_(l+1)^T W_(l+1) - W_l W_l^T‖_op over the
    linear pairs, ‖Z_(L-2)‖_op, ‖Z_(L-1)‖_op, max ‖W_l‖_op over the linear layers, ‖θ‖."""
    Zs = net.forward(theta)
    Ws = net.unflat(theta)
    op = lambda A: float(torch.linalg.matrix_norm(A, 2))  # noqa: E731
    D = [Ws[ell].T @ Ws[ell] - Ws[ell - 1] @ Ws[ell - 1].T for ell in range(net.L1 + 1, net.L)]
    return {
        "nc1": nc1_trace(Zs[-2], labels, net.Y.shape[0]),
        "interp": float((Zs[-1] - net.Y).norm()),
        "cost": float(net.cost(theta, lam)),
        "imbalance": max(op(x) for x in D),
        "z_penult_op": op(Zs[-2]),
        "z_before_op": op(Zs[-3]),
        "w_linear_op": max(op(W) for W in Ws[net.L1 :]),
        "theta_norm": float(theta.norm()),
    }


def gd_check(cfg: PyramidFlowConfig, net: Network, theta0: torch.Tensor, lam: float):
    """GD at η = ``gd_step_factor`` / λ_max(H C_λ(θ0)) for ``gd_steps`` steps and at η/2 for twice
    as many, against the flow at the same time: the errors and their ratio (1/2 at first order)."""
    v = cfg.solve
    flow = Flow(net, lam)
    top = float(torch.linalg.eigvalsh(flow.hess(theta0))[-1])
    eta = v.gd_step_factor / top
    ends = []
    for step, n in ((eta, v.gd_steps), (eta / 2, 2 * v.gd_steps)):
        th = theta0.clone()
        for _ in range(n):
            th = th - step * flow.grad(th)
        ends.append(th)
    ref = flow.solve(theta0, v.gd_steps * eta, v.gd_rtol, v.gd_rtol * 1e-2)["theta"]
    e1, e2 = (float((x - ref).norm()) for x in ends)
    moved = float((ref - theta0).norm())
    return top, {
        "gd_eta": eta,
        "gd_time": v.gd_steps * eta,
        "gd_error": e1,
        "gd_half_error": e2,
        "gd_error_ratio": e2 / e1 if e1 > 0 else None,
        "gd_half_error_rel": e2 / moved if moved > 0 else None,
    }


def _entry(c: Conditions, m: dict[str, float], steps: int, nc1_init: float, top: float) -> dict:
    return {
        "eps1": c.eps1,
        "eps2": c.eps2,
        "lam": c.lam,
        "lam_bound_terms": list(c.lam_terms),
        "eta_bound": c.eta,
        "eta_bound_terms": list(c.eta_terms),
        "log10_eta_bound": math.log10(c.eta),
        "k_bound": c.k,
        "log10_k_bound": math.log10(c.k),
        "t_phase1": c.t_phase1,
        "t_phase2": c.t_phase2,
        "t_star": c.t_star,
        "eta_k_over_t_star": c.eta * c.k / c.t_star,
        "gd_steps_at_stability": c.t_star * top / 2,
        "solver_steps": steps,
        "m_lam": c.m_lam,
        "phase1_level": 2 * c.lam * c.m_lam,
        "r": c.r,
        "nc1": m["nc1"],
        "nc1_over_init": m["nc1"] / nc1_init,
        "interp": m["interp"],
        "interp_over_bound": m["interp"] / (math.sqrt(2) * c.eps1),
        "cost": m["cost"],
        "imbalance": m["imbalance"],
        "imbalance_over_eps2": m["imbalance"] / c.eps2,
        "r_ratio": max(m["z_penult_op"], m["z_before_op"], m["w_linear_op"]) / c.r,
        "bound11": c.bound11,
        "bound11_psi_sq": c.bound11_psi_sq,
        "nc1_over_bound11": m["nc1"] / c.bound11,
        "bound11_over_nc1_init": c.bound11 / nc1_init,
        "theta_norm": m["theta_norm"],
    }


def train(cfg: PyramidFlowConfig, unit: Unit, run_dir: RunDir, context: Any) -> dict[str, Any]:
    """One seed: data, the network at an initialisation meeting (9), (8)-(12) at θ0, the flow
    to t* at every ε1 of the sweep, the tighter re-solve and GD against the flow.

    Length: the summary is one flat dict of the constants and sweep extremes the claim reads;
    splitting it would only move the key list elsewhere.
    """
    X, Y, labels = make_data(cfg, unit.seed)
    net = Network(cfg, X, Y)
    theta0 = init(cfg, net, unit.seed)
    c = constants(cfg, net, theta0)
    if c.assumption_lhs < c.assumption_rhs:
        raise ConfigError(
            f"Assumption 4.3 (9) fails at seed {unit.seed}: λ_F λ_(3→L) min(...) = "
            f"{c.assumption_lhs:.4g} < 8 γ sqrt((2/γ)^L C_0) = {c.assumption_rhs:.4g}; raise "
            "init.lambda_f or init.singular_value, or lower init.second_scale"
        )
    n_penult = net.shapes[-1][1]
    nc1_init = nc1_trace(net.forward(theta0)[-2], labels, c.K)
    s = cfg.sweep
    conds = [conditions(c, e, s.eps2_per_eps1_sq * e * e, s.lam_factor, n_penult) for e in s.eps1]
    top, gd = gd_check(cfg, net, theta0, conds[0].lam)
    sweep, last_theta = [], None
    for cond in conds:
        flow = Flow(net, cond.lam)
        t0 = time.perf_counter()
        out = flow.solve(theta0, cond.t_star, cfg.solve.rtol, cfg.solve.atol)
        m = measure(net, out["theta"], labels, cond.lam)
        sweep.append(_entry(cond, m, out["steps"], nc1_init, top))
        sweep[-1]["solve_seconds"] = time.perf_counter() - t0
        sweep[-1] |= phase1(net, theta0, c, cond, cfg.solve.rtol, cfg.solve.atol)
        last_theta, last_m = out["theta"], m
    # the smallest eps1 (the longest time) again at tighter tolerances
    f = cfg.solve.check_factor
    tight = Flow(net, conds[-1].lam).solve(
        theta0, conds[-1].t_star, cfg.solve.rtol * f, cfg.solve.atol * f
    )
    mt = measure(net, tight["theta"], labels, conds[-1].lam)
    nc1s = [e["nc1"] for e in sweep]
    return {
        "N": c.N,
        "K": c.K,
        "L": c.L,
        "L1": c.L1,
        "widths": [a for a, _ in net.shapes],
        "n_params": int(theta0.numel()),
        "gamma": c.gamma,
        "beta": c.beta,
        "b": c.b,
        "x_op": c.x_op,
        "lambda_f": c.lambda_f,
        "lambda_min_linear": min(c.lambdas),
        "c0": c.c0,
        "theta0_norm": c.theta_norm,
        "assumption43_lhs": c.assumption_lhs,
        "assumption43_rhs": c.assumption_rhs,
        "assumption43_margin": c.assumption_lhs / c.assumption_rhs,
        "alpha": c.alpha,
        "beta1": c.beta1,
        "r0": c.r0,
        "hessian_top_init": top,
        "nc1_init": nc1_init,
        "sweep": sweep,
        "nc1_largest_eps1": nc1s[0],
        "nc1_smallest_eps1": nc1s[-1],
        "nc1_step_ratio_max": max((b / a for a, b in itertools.pairwise(nc1s)), default=None),
        "interp_over_bound_max": max(e["interp_over_bound"] for e in sweep),
        "imbalance_over_eps2_max": max(e["imbalance_over_eps2"] for e in sweep),
        "r_ratio_max": max(e["r_ratio"] for e in sweep),
        "nc1_over_bound11_max": max(e["nc1_over_bound11"] for e in sweep),
        "bound11_over_nc1_init_min": min(e["bound11_over_nc1_init"] for e in sweep),
        "t_star_max": sweep[-1]["t_star"],
        "log10_k_bound_max": max(e["log10_k_bound"] for e in sweep),
        "log10_eta_bound_min": min(e["log10_eta_bound"] for e in sweep),
        "gd_steps_at_stability_max": max(e["gd_steps_at_stability"] for e in sweep),
        **sweep_fields(sweep),
        "check_nc1_rel_diff": abs(mt["nc1"] - last_m["nc1"]) / mt["nc1"],
        "check_theta_rel_diff": float((tight["theta"] - last_theta).norm() / tight["theta"].norm()),
        **gd,
    }
