"""One unit of fc-lemmas: every lemma of :mod:`.compute` evaluated, with the tolerances each check
reads.

Length: one function per group of lemmas (Apps. C-G), each short; together they are the unit.

Tolerances: an identity of the paper holds to :data:`FLOAT_TOL` (relative) in float64; a strict
inequality holds when its smallest gap exceeds that precision. The minimisers' tolerances follow
from L-BFGS's stopping rule max |∇R| <= g (n parameters, μ the smallest non-flat Hessian eigenvalue
at the theory's minimiser, whose flat directions are the rotations): R - R* <= n g² / (2μ), the
distance to the minimiser set <= √n g / μ; the part of Û common to every class, which the
cross-entropy cannot see (a common shift of every logit), has gradient λ times itself, so
‖Σ_k Û_k‖_F / √K <= √(n_U) g / λ at any point meeting the rule.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import torch

from ...data.sentences import all_latents, frequencies, make_task
from ...rng import generator
from ...runs import RunDir
from ...theory.feature_collapse import _LogTerm, fc_thm1, fc_thm2, fc_thm3
from ...theory.feature_collapse_model import thm2_lambda_bound
from ..catalog import get_experiment
from ..common import lbfgs
from ..protocol import Unit
from . import compute as C
from .config import DISTINCT_TOL, FLOAT_TOL, SOLVE_TOL, LemmasConfig

#: the float64 evaluation of a true risk (see fc-landscape): added as FLOOR |R*| to the gap bound
FLOOR = 1e-12


def _tasks(cfg: LemmasConfig) -> tuple[C.Enumerated, C.Enumerated]:
    p = cfg.problem
    lat = all_latents(p.nc, p.L)
    k = p.nc**p.L
    uni = make_task(p.nc, p.nc * p.sc, p.L, k, "uniform", latents=lat)
    zipf = make_task(p.nc, p.nc * p.sc_zipf, p.L, k, "zipf", p.zipf_s, latents=lat)
    return C.Enumerated(uni, p.d), C.Enumerated(zipf, p.d)


def latents_section(cfg: LemmasConfig, seed: int) -> dict[str, Any]:
    """Assumption B on the full set (Lemma C), the presets' sets and small random sets."""
    p, lc = cfg.problem, cfg.latents
    full = {"name": f"all of [{p.nc}]^{p.L}", **C.assumption_b(all_latents(p.nc, p.L), p.nc)}
    fc = get_experiment("feature-collapse")
    presets = []
    for name in lc.presets:
        d = fc.config(name).data  # feature-collapse's own task of the preset and seed
        task = make_task(d.nc, d.nw, d.L, d.K, d.freq, d.zipf_s, d.distinct, seed)
        presets.append({"name": name, **C.assumption_b(task.latents, task.nc)})
    small = []
    for k in lc.small_k:
        held = 0
        for i in range(lc.draws):
            task = make_task(3, 3, lc.small_L, k, distinct=True, seed=1000 * seed + i)
            held += C.assumption_b(task.latents, 3)["holds"]
        small.append({"K": k, "L": lc.small_L, "draws": lc.draws, "holds": held})
        small[-1]["fraction"] = held / lc.draws
    all_hold = [s["K"] for s in small if s["holds"] == s["draws"]]
    return {
        "full": full,
        "presets": presets,
        "presets_all_hold": all(s["holds"] for s in presets),
        "small": small,
        "smallest_k_all_hold": min(all_hold) if all_hold else None,
    }


def lower_bound(cfg: LemmasConfig, probs: list[C.Enumerated], gen) -> dict[str, Any]:
    """Theorem D, Lemmas D and E at random points (projected onto N) and at type-I points."""
    pts = cfg.points
    thm_gap, thm_rel, lem_gap, lem_e, eq_err, eq_d_err, spread_min = (
        math.inf, math.inf, math.inf, 0.0, 0.0, 0.0, math.inf,
    )  # fmt: skip
    with torch.no_grad():
        for i in range(pts.samples):
            e = probs[i % len(probs)]
            s = lbfgs.log_uniform(gen, pts.scale_min, pts.scale_max)
            W = s * torch.randn(e.nw, e.d, generator=gen, dtype=torch.float64)
            U = s * torch.randn(e.K, e.L * e.d, generator=gen, dtype=torch.float64)
            M = e.margins(W, U)
            Nr, sizes = e.averaged_margins(M)
            r0 = float(e.risk0(W, U))
            lem_gap = min(lem_gap, r0 - float(torch.logsumexp(torch.log(sizes) - Nr, 0)))
            spread_min = min(spread_min, e.equimargin_spread(M))
            blocks = U.view(e.K, e.L, e.d)
            Un = (blocks - blocks.mean(0, keepdim=True)).reshape(e.K, -1)  # onto N
            r0 = float(e.risk0(W, Un))
            x = e.bilinear(W, Un)
            gap = r0 - float(e.g(x))
            thm_gap, thm_rel = min(thm_gap, gap), min(thm_rel, gap / r0)
            Nr, _ = e.averaged_margins(e.margins(W, Un))
            theta = torch.tensor(
                [C.theta_closed(e.nc, e.L, r) for r in range(e.L + 1)], dtype=torch.float64
            )
            dev = (Nr - theta.double() * x / e.K).abs().max() / Nr.abs().max()
            lem_e = max(lem_e, float(dev))
            # a type-I point (in N ∩ E): equality in (49) and (53)
            Wc, Uc = C.type_i(e, s, seed=i)
            r0 = float(e.risk0(Wc, Uc))
            eq_err = max(eq_err, abs(r0 - float(e.g(e.bilinear(Wc, Uc)))) / r0)
            Nr, sizes = e.averaged_margins(e.margins(Wc, Uc))
            bound = float(torch.logsumexp(torch.log(sizes) - Nr, 0))
            eq_d_err = max(eq_d_err, abs(r0 - bound) / r0)
    return {
        "samples": pts.samples,
        "thm_d_min_gap": thm_gap,
        "thm_d_min_rel_gap": thm_rel,
        "lemma_d_min_gap": lem_gap,
        "lemma_e_max_rel_err": lem_e,
        "equality_max_rel_err": eq_err,
        "lemma_d_equality_max_rel_err": eq_d_err,
        "random_equimargin_min": spread_min,
        "float_tol": FLOAT_TOL,
    }


def collapse_points(cfg: LemmasConfig, probs: list[C.Enumerated], gen) -> dict[str, Any]:
    """Lemmas I and P: type-I and type-II points of random constants are in E and in N."""
    pts = cfg.points
    stars = [C.Enumerated(e.task, e.d, "fixed") for e in probs]
    out = dict.fromkeys(("i_eq", "i_n", "ii_eq", "ii_n", "j_n"), 0.0)
    out |= {"j_off": math.inf, "j_eq": math.inf}
    with torch.no_grad():
        for i in range(pts.samples):
            e, es = probs[i % len(probs)], stars[i % len(probs)]
            s = lbfgs.log_uniform(gen, pts.scale_min, pts.scale_max)
            W, U = C.type_i(e, s, seed=i)
            out["i_eq"] = max(out["i_eq"], e.equimargin_spread(e.margins(W, U)))
            out["i_n"] = max(out["i_n"], e.mean_u_fraction(U))
            W, U = C.type_ii(es, s * math.sqrt(e.K * e.L), seed=i)
            out["ii_eq"] = max(out["ii_eq"], es.equimargin_spread(es.margins(W, U)))
            out["ii_n"] = max(out["ii_n"], es.mean_u_fraction(U))
            # Lemma J: a point of N ∩ B^I_c outside Ω^I_c (F1 = 0, ‖F‖² = nc, F not equiangular)
            f = torch.randn(e.nc, e.d, generator=gen, dtype=torch.float64)
            f = f - f.mean(0, keepdim=True)
            f *= math.sqrt(e.nc) / f.norm()
            W, U = C.type_i(e, s, f=f)
            gram = f @ f.T
            eq = torch.full_like(gram, -1.0 / (e.nc - 1)).fill_diagonal_(1.0)
            out["j_off"] = min(out["j_off"], float((gram - eq).norm() / eq.norm()))
            out["j_eq"] = min(out["j_eq"], e.equimargin_spread(e.margins(W, U)))
            out["j_n"] = max(out["j_n"], e.mean_u_fraction(U))
    return {
        "samples": pts.samples,
        "type_i_equimargin_max": out["i_eq"],
        "type_i_mean_u_max": out["i_n"],
        "type_ii_equimargin_max": out["ii_eq"],
        "type_ii_mean_u_max": out["ii_n"],
        "non_omega_equimargin_min": out["j_eq"],
        "non_omega_gram_dev_min": out["j_off"],
        "non_omega_mean_u_max": out["j_n"],
    }


def closed_forms(cfg: LemmasConfig, probs: list[C.Enumerated], gen) -> dict[str, Any]:
    """Lemma K (h, uniform words) and Lemma R (h*, uniform and Zipf words) against the
    enumerated regularised risk at collapse points of random constants."""
    pts = cfg.points
    e_u = probs[0]
    stars = [C.Enumerated(e.task, e.d, "fixed") for e in probs]
    k_err, r_err = 0.0, 0.0
    nc, L, K = e_u.nc, e_u.L, e_u.K
    eta = nc / (nc - 1) / math.sqrt(e_u.nw * K * L)
    eta_star = nc / (nc - 1) * math.sqrt(e_u.d / (K * L))
    with torch.no_grad():
        for i in range(pts.samples):
            s = lbfgs.log_uniform(gen, pts.scale_min, pts.scale_max)
            lam = lbfgs.log_uniform(gen, 1e-4, 1e-1)
            W, U = C.type_i(e_u, s, seed=i)
            t = e_u.nw * s * s
            closed = _LogTerm(nc, L, K, eta).value(t) + lam * t
            got = float(e_u.risk(W, U, lam, lam))
            k_err = max(k_err, abs(got - closed) / closed)
            es = stars[i % len(stars)]
            t = s * math.sqrt(K * L) * 3.0
            W, U = C.type_ii(es, t, seed=i)
            closed = _LogTerm(nc, L, K, eta_star).value(t) + 0.5 * lam * t * t
            got = float(es.risk(W, U, 0.0, lam))
            r_err = max(r_err, abs(got - closed) / closed)
    return {"samples": pts.samples, "lemma_k_max_rel_err": k_err, "lemma_r_max_rel_err": r_err}


def _grads(e: C.Enumerated, W: torch.Tensor, U: torch.Tensor, lam: float = 0.0, lam_w=None):
    """(∂/∂W, ∂/∂U) of R0 (``lam`` 0) or of the risk with weight decays (``lam_w``, default
    ``lam``) on W and ``lam`` on U."""
    W, U = W.clone().requires_grad_(True), U.clone().requires_grad_(True)
    lam_w = lam if lam_w is None else lam_w
    f = e.risk(W, U, lam_w, lam) if lam else e.risk0(W, U)
    return torch.autograd.grad(f, (W, U))


def type_iii_gradient(cfg: LemmasConfig, e: C.Enumerated, gen) -> dict[str, Any]:
    """Proposition C at type-III points of random (c, r_β) (Zipf words), and the critical point
    at Theorem 2's solution of (7)-(8)."""
    pts = cfg.points
    u_res, w_res = 0.0, 0.0
    for i in range(pts.samples):
        c = lbfgs.log_uniform(gen, pts.scale_min, pts.scale_max)
        r = torch.tensor(
            [lbfgs.log_uniform(gen, pts.scale_min, pts.scale_max) for _ in range(e.sc)],
            dtype=torch.float64,
        )
        W, U = C.type_iii(e, c, r, seed=i)
        gW, gU = _grads(e, W, U)
        a = (gU * U).sum() / (U * U).sum()
        u_res = max(u_res, float((gU - a * U).norm() / gU.norm()))
        for beta in range(e.sc):
            rows = e.task.word_rank == beta
            gw, w = gW[rows], W[rows]
            b = (gw * w).sum() / (w * w).sum()
            w_res = max(w_res, float((gw - b * w).norm() / gw.norm()))
    lam = cfg.minimise.lam_factor * thm2_lambda_bound(e.nc, e.L, e.mu.numpy())
    p = fc_thm2(e.nc, e.nw, e.L, lam, mu=e.mu.tolist())
    W, U = C.type_iii(e, p.c, torch.tensor(p.r, dtype=torch.float64))
    g_full = max(float(g.abs().max()) for g in _grads(e, W, U, lam))
    g0 = max(float(g.abs().max()) for g in _grads(e, W, U))
    return {
        "samples": pts.samples,
        "u_form_residual_max": u_res,
        "w_form_residual_max": w_res,
        "critical_at_solution": g_full / g0,
    }


def system_section(cfg: LemmasConfig, seed: int) -> dict[str, Any]:
    """Proposition D: (150)-(151) from random starts on a feature-collapse preset's problem."""
    fc = get_experiment("feature-collapse").config(cfg.system.preset)
    d, t = fc.data, fc.train
    sc = d.nw // d.nc
    mu = frequencies(sc, d.freq, d.zipf_s).numpy()
    lam = t.weight_decay
    ref = fc_thm2(d.nc, d.nw, d.L, lam, mu=mu.tolist())
    x_ref = np.array([ref.c, *ref.r])
    rng = np.random.default_rng(seed)
    spread = cfg.system.spread * math.log(10.0)
    ends = []
    for _ in range(cfg.system.starts):
        x0 = rng.uniform(-spread, spread, size=sc + 1)
        x, res = C.solve_system(x0, mu, d.nc, d.L, lam)
        if res <= SOLVE_TOL:
            ends.append(x)
    distinct: list[np.ndarray] = []
    for x in ends:
        if all(np.max(np.abs(x - y) / np.abs(y)) > DISTINCT_TOL for y in distinct):
            distinct.append(x)
    dev = max((float(np.max(np.abs(x - x_ref) / np.abs(x_ref))) for x in ends), default=None)
    ordered = bool(ends) and all(bool(np.all(np.diff(x[1:]) <= 0) and x[-1] > 0) for x in ends)
    return {
        "preset": cfg.system.preset,
        "nc": d.nc,
        "L": d.L,
        "sc": sc,
        "lam": lam,
        "lam_bound": ref.lam_bound,
        "starts": cfg.system.starts,
        "converged": len(ends),
        "converged_fraction": len(ends) / cfg.system.starts,
        "distinct": len(distinct),
        "max_rel_dev": dev,
        "ordered": ordered,
        "r_min": float(min(x[1:].min() for x in ends)) if ends else None,
        "solve_tol": SOLVE_TOL,
        "distinct_tol": DISTINCT_TOL,
    }


# ------------------------------------------------------------------------------------------------
# minimisers of the true risks of h and h*
# ------------------------------------------------------------------------------------------------


def _flat(e: C.Enumerated, theta: torch.Tensor, lam_w: float, lam_u: float) -> torch.Tensor:
    k = e.nw * e.d
    return e.risk(theta[:k].view(e.nw, e.d), theta[k:].view(e.K, -1), lam_w, lam_u)


def min_curvature(e: C.Enumerated, theta: torch.Tensor, lam_w: float, lam_u: float) -> float:
    """The smallest Hessian eigenvalue above the flat ones at ``theta``."""
    return lbfgs.min_curvature(lambda t: _flat(e, t, lam_w, lam_u), theta)


def _minimise(e, lam_w, lam_u, m, gen) -> tuple[torch.Tensor, torch.Tensor, float, float]:
    _, (W, U) = lbfgs.random_start(gen, m, (e.nw, e.d), (e.K, e.L * e.d))
    f, gmax, _ = lbfgs.minimise([W, U], lambda: e.risk(W, U, lam_w, lam_u), m)
    return W.detach(), U.detach(), f, gmax


def _as_columns(e: C.Enumerated, W: torch.Tensor, U: torch.Tensor) -> torch.Tensor:
    """[Wᵀ | Û]: d × (nw + KL), the weights as columns of R^d (a rotation acts on the left)."""
    return torch.cat([W.T, U.view(e.K * e.L, e.d).T], dim=1)


def procrustes(X: torch.Tensor, X0: torch.Tensor, fix_ones: bool) -> float:
    """min over rotations R of ‖X - R X0‖_F (``fix_ones``: rotations fixing 1_d, for h*'s
    mean-zero frames: the component of X along 1_d counts whole)."""
    if fix_ones:
        d = X.shape[0]
        q, _ = torch.linalg.qr(
            torch.cat([torch.ones(d, 1, dtype=X.dtype), torch.eye(d)[:, 1:].to(X)], 1)
        )
        along, B = q[:, :1], q[:, 1:]
        rest = procrustes(B.T @ X, B.T @ X0, False)
        return math.sqrt(float((along.T @ X).pow(2).sum()) + rest * rest)
    a, _, bt = torch.linalg.svd(X @ X0.T)
    return float((X - a @ bt @ X0).norm())


def _theory(e: C.Enumerated, m, star: bool):
    """(λ_W, λ_U, the global value, the theory's W, U): Theorem 3's type-II point for h*,
    Theorem 1's type-I point for h at λ = ``lam_factor`` λ0."""
    if star:
        p = fc_thm3(e.nc, e.L, e.K, m.lam_star, e.d)
        return 0.0, m.lam_star, p.objective, *C.type_ii(e, p.tau)
    lam = m.lam_factor * thm2_lambda_bound(e.nc, e.L, e.mu.numpy())
    p = fc_thm1(e.nc, e.nw, e.L, e.K, lam, d=e.d)
    return lam, lam, p.objective, *C.type_i(e, p.word_norm)


def minimisers(
    cfg: LemmasConfig, e: C.Enumerated, star: bool, seed: int, stream: int
) -> dict[str, Any]:
    """Random starts on the true risk of h (uniform words, Theorem 1) or h* (Theorem 3)."""
    m = cfg.minimise
    L, K, nw, d = e.L, e.K, e.nw, e.d
    lam_w, lam_u, value, W0, U0 = _theory(e, m, star)
    theta0 = torch.cat([W0.reshape(-1), U0.reshape(-1)])
    mu = min_curvature(e, theta0, lam_w, lam_u)
    n, n_u, g = e.n_params, K * L * d, m.grad_tol
    gap_tol = n * g * g / (2 * mu) + FLOOR * abs(value)
    dist_tol = math.sqrt(n) * g / mu
    # h*: distances are measured at rows normalised as the theory's (φ is invariant to a word's
    # scale and shift), where LayerNorm's Lipschitz constant is √d
    lip = math.sqrt(d) if star else 1.0
    X0 = _as_columns(e, e.net.represent(W0) if star else W0, U0)
    M0 = e.margins(W0, U0).detach()
    blocks0 = U0.view(K, L, d)
    lip_m = 2 * (
        float(blocks0.norm(dim=(1, 2)).max()) + float((X0[:, :nw].norm(dim=0).max()) * math.sqrt(L))
    )
    eq_tol = 2 * lip_m * lip * dist_tol / float(M0.abs().max())
    gen = generator(seed, stream)
    converged = at_global = 0
    gaps, mean_u, dists, spreads = [], [0.0], [0.0], [0.0]
    g_at = g  # h*: the largest max |∇R| at the normalised ends
    for _ in range(m.starts):
        W, U, f, gmax = _minimise(e, lam_w, lam_u, m, gen)
        gaps.append(f - value)
        if gmax > g:
            continue
        converged += 1
        if f - value > gap_tol:
            continue
        at_global += 1
        mean_u.append(float(U.view(K, L, d).sum(0).norm()) / math.sqrt(K))
        if star:  # the theory's scale: rows mean-zero of unit norm (φ(W) and R unchanged)
            W = W - W.mean(1, keepdim=True)
            W = W / W.norm(dim=1, keepdim=True)
            g_at = max(g_at, max(float(q.abs().max()) for q in _grads(e, W, U, lam_u, lam_w)))
        with torch.no_grad():
            X = _as_columns(e, e.net.represent(W) if star else W, U)
            dists.append(procrustes(X, X0, star))
            spreads.append(e.equimargin_spread(e.margins(W, U)))
    return {
        "network": "h*" if star else "h",
        "lam": lam_u,
        "starts": m.starts,
        "converged": converged,
        "at_global": at_global,
        "gap_max": max(gaps),
        "gap_tolerance": gap_tol,
        "mean_u_max": max(mean_u),
        "mean_u_tolerance": math.sqrt(n_u) * g / lam_u,
        "omega_dist_max": max(dists),
        "omega_tolerance": lip * dist_tol * g_at / g,
        "equimargin_max": max(spreads),
        "equimargin_tolerance": eq_tol * g_at / g,
    }


def train(cfg: LemmasConfig, unit: Unit, run_dir: RunDir, context: Any) -> dict[str, Any]:
    """Every section of the summary (:mod:`.schema`) for seed ``unit.seed``."""
    p = cfg.problem
    e_u, e_z = _tasks(cfg)
    gen = generator(unit.seed, 10)
    out: dict[str, Any] = {
        "nc": p.nc,
        "L": p.L,
        "K": e_u.K,
        "d": p.d,
        "float_tol": FLOAT_TOL,
        "lemma_b": C.lemma_b(e_u.task.latents, p.nc),
        "latents": latents_section(cfg, unit.seed),
        "lower_bound": lower_bound(cfg, [e_u, e_z], gen),
        "collapse_points": collapse_points(cfg, [e_u, e_z], gen),
        "bilinear": C.bilinear(e_u),
        "closed_forms": closed_forms(cfg, [e_u, e_z], gen),
        "type_iii": type_iii_gradient(cfg, e_z, gen),
        "system": system_section(cfg, unit.seed),
        "h": minimisers(cfg, e_u, False, unit.seed, 100),
        "h_star": minimisers(cfg, C.Enumerated(e_u.task, p.d, "fixed"), True, unit.seed, 200),
    }
    return out
