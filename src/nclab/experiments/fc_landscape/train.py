"""One unit of fc-landscape: the true risk of h on a problem of all K = nc^L latent variables, the
global value the theory gives, and many random starts of L-BFGS on it.

The risk is the network's own (:class:`nclab.models.wordnet.WordNet`, evaluated through
``torch.func.functional_call``) weighted by the exact sentence probabilities
(:func:`nclab.data.sentences.enumerate_sentences`), plus the weight decay of
:func:`nclab.theory.feature_collapse.regularised_risk`: the true risk (5) in the convention of the
theorems' closed forms.

The tolerances follow from the stopping rule max |∇R| <= g (``search.grad_tol``, n parameters):
near a minimiser whose smallest non-zero Hessian eigenvalue is μ (the flat directions are the
rotations W, U -> QW, QU), R - R* <= |∇R|² / (2μ) <= n g² / (2μ), and a point at the zero solution
(above λ0, where the Hessian at 0 has eigenvalues λ ± σ_i(∇f(0)), so μ = λ - λ0) is within
|∇R| / μ <= √n g / μ of it. The gap tolerance adds :data:`FLOAT_FLOOR` times |R*| for the float64
evaluation of the risk.
"""

from __future__ import annotations

import math
from typing import Any

import torch
import torch.nn.functional as F

from ...data.sentences import all_latents, enumerate_sentences, make_task
from ...models.wordnet import WordNet
from ...rng import generator
from ...runs import RunDir
from ...theory.feature_collapse import equiangular_frame, fc_thm1, fc_thm2, regularised_risk
from ...theory.feature_collapse_model import thm2_lambda_bound
from ..common import lbfgs
from ..protocol import Unit
from .config import FLOAT_FLOOR, LandscapeConfig


class TrueRisk:
    """R(W, U) of h on every sentence of the problem, weighted by its probability / K."""

    def __init__(self, cfg: LandscapeConfig, d: int):
        p = cfg.problem
        self.nc, self.L, self.K, self.nw, self.d = p.nc, p.L, p.nc**p.L, p.nc * p.sc, d
        self.task = make_task(
            p.nc, self.nw, p.L, self.K, p.freq, p.zipf_s, latents=all_latents(p.nc, p.L)
        )
        self.x, self.y, prob = enumerate_sentences(self.task)
        self.weights = prob.double() / self.K
        self.net = WordNet(self.nw, self.L, d, self.K, dtype=torch.float64)
        self.mu = self.task.mu.double()
        self.lam0 = thm2_lambda_bound(p.nc, p.L, self.mu.numpy())
        self.lam = cfg.search.lam_factor * self.lam0
        self.n_params = d * (self.nw + self.K * self.L)

    def __call__(self, W: torch.Tensor, U: torch.Tensor) -> torch.Tensor:
        logits = torch.func.functional_call(self.net, {"emb.weight": W, "clf.weight": U}, (self.x,))
        ce = (self.weights * F.cross_entropy(logits, self.y, reduction="none")).sum()
        return regularised_risk(ce, W.pow(2).sum(), U.pow(2).sum(), self.lam, self.lam)

    def flat(self, theta: torch.Tensor) -> torch.Tensor:
        k = self.nw * self.d
        return self(theta[:k].view(self.nw, self.d), theta[k:].view(self.K, self.L * self.d))

    def zero_threshold(self) -> float:
        """‖∇f(0)‖_op: f the unregularised risk as a function of the products D[w, (k, ℓ)] =
        <w, u_{k,ℓ}> (App. H's f(W^T U)); above it (0, 0) is the only minimiser."""
        D = torch.zeros(self.nw, self.K, self.L, dtype=torch.float64, requires_grad=True)
        logits = sum(D[self.x[:, ell], :, ell] for ell in range(self.L))
        f = (self.weights * F.cross_entropy(logits, self.y, reduction="none")).sum()
        (g,) = torch.autograd.grad(f, D)
        return float(torch.linalg.matrix_norm(g.reshape(self.nw, -1), ord=2))


def theory_point(risk: TrueRisk) -> tuple[str, bool, torch.Tensor, float]:
    """(which solution, whether it is proven global, its flat parameters, its risk by the closed
    form): the zero solution above λ0, Theorem 1 (uniform words), Theorem 2 (conjectured)."""
    nc, L, K, nw, d = risk.nc, risk.L, risk.K, risk.nw, risk.d
    if risk.lam >= risk.lam0:
        theta = torch.zeros(risk.n_params, dtype=torch.float64)
        return "zero", True, theta, math.log(K)
    f = torch.as_tensor(equiangular_frame(nc, d, seed=0)).T  # (nc, d) unit rows
    task = risk.task
    if bool(torch.allclose(risk.mu, risk.mu[0].expand_as(risk.mu))):
        p = fc_thm1(nc, nw, L, K, risk.lam, d=d)
        w_norm = torch.full((nw,), p.word_norm, dtype=torch.float64)
        u_norm, which, proven, value = p.u_norm, "fc-thm1", True, p.objective
    else:
        p = fc_thm2(nc, nw, L, risk.lam, mu=risk.mu.tolist(), K=K)
        w_norm = torch.tensor(p.r, dtype=torch.float64)[task.word_rank]
        u_norm, which, proven, value = p.c, "fc-thm2", False, p.objective
    W = w_norm[:, None] * f[task.word_concept]
    U = (u_norm * f[task.latents]).reshape(K, L * d)
    return which, proven, torch.cat([W.reshape(-1), U.reshape(-1)]), value


def min_curvature(risk: TrueRisk, theta: torch.Tensor) -> tuple[float, float]:
    """(the smallest Hessian eigenvalue above the flat ones, the largest |∇R|) at ``theta``."""
    theta = theta.detach().clone().requires_grad_(True)
    (g,) = torch.autograd.grad(risk.flat(theta), theta)
    return lbfgs.min_curvature(risk.flat, theta), float(g.abs().max())


def minimise(risk: TrueRisk, cfg: LandscapeConfig, gen: torch.Generator) -> dict[str, float]:
    """One random start, L-BFGS in rounds until max |∇R| <= grad_tol: its endpoint."""
    scale, (W, U) = lbfgs.random_start(
        gen, cfg.search, (risk.nw, risk.d), (risk.K, risk.L * risk.d)
    )
    f, gmax, rounds = lbfgs.minimise([W, U], lambda: risk(W, U), cfg.search)
    with torch.no_grad():
        norm = math.sqrt(float(W.pow(2).sum() + U.pow(2).sum()))
    return {"objective": f, "grad_max": gmax, "norm": norm, "rounds": rounds, "init": scale}


def search(
    cfg: LandscapeConfig, d: int, starts: int, seed: int, stream: int
) -> tuple[TrueRisk, dict[str, Any]]:
    """The starts at width ``d`` and what the theory says there."""
    risk = TrueRisk(cfg, d)
    which, proven, theta, value = theory_point(risk)
    mu, g_theory = min_curvature(risk, theta)
    g = cfg.search.grad_tol
    gap_tol = risk.n_params * g * g / (2 * mu) + FLOAT_FLOOR * abs(value)
    ends = [minimise(risk, cfg, generator(seed, stream + i)) for i in range(starts)]
    gaps = [e["objective"] - value for e in ends]
    norms = [e["norm"] for e in ends]
    global_norm = float(theta.norm())
    out = {
        "d": d,
        "hypothesis": d > min(risk.nw, risk.K * risk.L),  # Theorem G: d > min(nw, KL)
        "global_solution": which,
        "global_proven": proven,
        "global_objective": value,
        "global_norm": global_norm,
        "global_risk_evaluated": float(risk.flat(theta).detach()),
        "global_grad_max": g_theory,
        "min_curvature": mu,
        "gap_tolerance": gap_tol,
        "starts": starts,
        "converged": sum(e["grad_max"] <= g for e in ends),
        "at_global": sum(x <= gap_tol for x in gaps),
        "gap_max": max(gaps),
        "gap_min": min(gaps),
        "rel_gap_max": max(gaps) / abs(value),
        "grad_max": max(e["grad_max"] for e in ends),
        "rounds_max": max(e["rounds"] for e in ends),
        "norm_min": min(norms),
        "norm_max": max(norms),
    }
    out["fraction_at_global"] = out["at_global"] / starts
    out["converged_fraction"] = out["converged"] / starts
    if which == "zero":
        out["zero_norm_tolerance"] = math.sqrt(risk.n_params) * g / mu
    else:
        out["norm_min_over_global"] = min(norms) / global_norm
        out["norm_max_over_global"] = max(norms) / global_norm
    return risk, out


def train(cfg: LandscapeConfig, unit: Unit, run_dir: RunDir, context: Any) -> dict[str, Any]:
    """The starts of seed ``unit.seed`` (and the contrast width's), with the problem's numbers."""
    s, p = cfg.search, cfg.problem
    risk, main = search(cfg, s.d, s.starts, unit.seed, 1000)
    out: dict[str, Any] = {
        "problem": {
            "nc": p.nc,
            "L": p.L,
            "K": risk.K,
            "nw": risk.nw,
            "KL": risk.K * risk.L,
            "freq": p.freq,
            "zipf_s": p.zipf_s,
            "sentences": int(risk.x.shape[0]),
            "n_params": risk.n_params,
        },
        "lam": risk.lam,
        "lam_factor": s.lam_factor,
        "lam_threshold": risk.lam0,
        "lam_threshold_numeric": risk.zero_threshold(),
        "grad_tol": s.grad_tol,
        "main": main,
        "contrast": None,
    }
    out["lam_threshold_rel_gap"] = abs(out["lam_threshold_numeric"] - risk.lam0) / risk.lam0
    if s.contrast_d > 0:
        out["contrast"] = search(cfg, s.contrast_d, s.contrast_starts, unit.seed, 2000)[1]
    return out
