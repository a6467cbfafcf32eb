r"""Near-optimality implies near-collapse, with a rate: the ε-sublevel sets of the GUFM with MSE.

Súkeník, Lampert & Mondelli's proof of Lemma 4.1 (MSE) bounds how far a point whose objective is
within ε of the optimum can be from the optimal set: its features O(ε^{1/4}) from their (conditional)
optimum, the row norms ‖w_k‖ O(ε^{1/2}) from their optimal value, W O(ε^{1/4}) from an orthogonal
matrix. A run (``rates.steps_per_decade > 0``, the GUFM with MSE) samples points of many excess
losses ε = L − L* and measures four deviations at each (:func:`deviations`):

* ``feat``: max over samples of ‖x_ki − √d Pw_k/‖Pw_k‖‖, the distance of each feature from its
  optimum *given* its class's row w_k (the proof's conditional optimum; P projects on 1⊥, so the
  optimum is on the LayerNorm sphere);
* ``set``: max over samples of ‖x_ki − √d q_k‖ with Q (orthonormal rows in 1⊥) the nearest
  optimum: the Procrustes solution of min_Q ‖W − z*Q‖² + Σ‖x_ki − √d q_k‖² (the optimal set is
  {(z*Q, √d Q ⊗ 1ᵀ)}), i.e. the features' distance to the optimal set;
* ``norm``: max over classes of |‖w_k‖ − z*|, z* = √d/(d + λK) (:func:`nclab.theory.gufm.gufm_mse`);
* ``orth``: ‖WWᵀ − diag(WWᵀ)‖_F / (tr(WWᵀ)/K), the off-diagonal part of W's normalised Gram
  matrix (the term the proof's loss is proportional to; 0 iff the rows are orthogonal).

``feat`` and ``norm`` are bounded in the proof on the sublevel sets of its lower bound (13) (the
fit without the off-diagonal terms), which contain those of the GUFM: they are sampled on (13)
(``objective = "lower_bound"``); ``set`` and ``orth`` on the GUFM itself. The statement is about
the *worst* point of each sublevel set; three samplers give points of it, so every measured worst
deviation is a lower bound of the true one:

* **adversarial** (the one that matters): for a Lagrange multiplier t, L-BFGS minimises
  (L − L*)/t − D_target, D_target the deviation of one sample / class (by symmetry every one is
  alike; ``norm`` both signs). A stationary point is a stationary point of "least excess loss
  at this deviation", i.e. a point of the upper envelope of deviation against ε; t grows by
  10^{1/steps_per_decade} per point, each solve warm-started from the last (continuation), from
  the optimum plus a seeded perturbation, until ε passes ``eps_hi``;
* **descent**: projected gradient descent from N(0, 1) starts (:class:`nclab.models.ufm.BatchedUFM`,
  the ``gufm-mse`` preset's steps) recorded at log-spaced iterations;
* **random**: the optimum plus seeded random perturbations of log-spaced sizes.

The envelope is the Pareto front of all points (no other point has a smaller or equal ε and a
larger deviation); its log-log slope is fitted by least squares over the front points with ε in
[``eps_lo``, ``eps_hi``] (× L*), and over the lowest two decades of that window (the asymptotic
end). ``norm`` has an exact worst deviation on (13) (:func:`norm_worst`), written beside it.

Length: three samplers, four deviations and the envelope fit belong to one measurement; split, the
samplers would share their private problem set-up through imports.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import torch

from ...models.ufm import BatchedUFM, UFMSpec
from ...report.figures import Panel, save_panels
from ...theory.gufm import gufm_mse
from ...validation import F64

MEASURES = ("feat", "set", "norm", "orth")
#: the sublevel set each deviation is sampled on (the proof's statement for it)
OBJECTIVE = {"feat": "lower_bound", "set": "gufm", "norm": "lower_bound", "orth": "gufm"}
#: the exponent of ε the proof bounds each deviation by
EXPONENT = {"feat": 0.25, "set": 0.25, "norm": 0.5, "orth": 0.25}
#: the signs of the deviation the adversary pushes (‖w_k‖ above and below z*)
SIGNS = {"feat": (1,), "set": (1,), "norm": (1, -1), "orth": (1,)}
#: a continuation in t stops after this many points whatever ε it reached
MAX_POINTS = 200
#: the asymptotic end of the window: its lowest decades
SMALL_DECADES = 3


# --- the problem ----------------------------------------------------------------------------------
def center(u: torch.Tensor) -> torch.Tensor:
    return u - u.mean(-2, keepdim=True)


def ln_features(u: torch.Tensor) -> torch.Tensor:
    """The LayerNorm sphere's point of each column of ``u`` (d × N): √d · Pu/‖Pu‖."""
    c = center(u)
    return math.sqrt(u.shape[-2]) * c / c.norm(dim=-2, keepdim=True)


def loss(w: torch.Tensor, x: torch.Tensor, K: int, n: int, lam: float, objective: str):
    """GUFM-MSE 1/(2N)‖WX − Y‖² + λ/2‖W‖² (``gufm``), or its lower bound (13) that keeps only
    each sample's own logit (``lower_bound``)."""
    N = K * n
    z = w @ x
    labels = torch.arange(K).repeat_interleave(n)
    own = z[labels, torch.arange(N)]
    if objective == "lower_bound":
        fit = ((own - 1) ** 2).sum()
    else:
        fit = (z**2).sum() - own.pow(2).sum() + ((own - 1) ** 2).sum()
    return fit / (2 * N) + lam / 2 * (w**2).sum()


def optimum(K: int, n: int, d: int, zstar: float, seed: int) -> tuple[torch.Tensor, torch.Tensor]:
    """A seeded optimum: Q with orthonormal rows in 1⊥, W = z*Q, X = √d Q ⊗ 1ᵀ."""
    g = torch.Generator().manual_seed(seed)
    a = center(torch.randn(d, K, generator=g, dtype=F64))
    q, _ = torch.linalg.qr(a)  # columns orthonormal, in 1⊥ (a's columns are)
    Q = q.T
    return zstar * Q.contiguous(), math.sqrt(d) * Q.repeat_interleave(n, dim=0).T.contiguous()


def procrustes(w: torch.Tensor, x: torch.Tensor, K: int, n: int, zstar: float) -> torch.Tensor:
    """The nearest optimum's Q: argmax tr(Q Aᵀ) over orthonormal rows in 1⊥, A = z*W + √d Σ_i x_ki."""
    d = w.shape[-1]
    sums = x.T.reshape(K, n, d).sum(1)
    a = zstar * w + math.sqrt(d) * sums
    a = a - a.mean(-1, keepdim=True)
    u, _, vh = torch.linalg.svd(a, full_matrices=False)
    return u @ vh


def deviations(w: torch.Tensor, x: torch.Tensor, K: int, n: int, zstar: float) -> dict[str, float]:
    """The four deviations of (W, X) (module docstring)."""
    d = w.shape[-1]
    with torch.no_grad():
        pw = w - w.mean(-1, keepdim=True)
        cond = math.sqrt(d) * pw / pw.norm(dim=-1, keepdim=True)
        xs = x.T.reshape(K, n, d)
        q = procrustes(w, x, K, n, zstar)
        g = w @ w.T
        off = g - torch.diag(torch.diag(g))
        return {
            "feat": float((xs - cond[:, None, :]).norm(dim=-1).max()),
            "set": float((xs - math.sqrt(d) * q[:, None, :]).norm(dim=-1).max()),
            "norm": float((w.norm(dim=-1) - zstar).abs().max()),
            "orth": float(off.norm() / (torch.trace(g) / K)),
        }


def target(measure: str, sign: int, w, x, K: int, n: int, zstar: float) -> torch.Tensor:
    """The smooth deviation the adversary pushes: that of sample (0, 0) / class 0 / W."""
    d = w.shape[-1]
    if measure == "feat":
        pw = w[0] - w[0].mean()
        return (x[:, 0] - math.sqrt(d) * pw / pw.norm()).norm()
    if measure == "set":
        q = procrustes(w, x, K, n, zstar)
        return (x[:, 0] - math.sqrt(d) * q[0]).norm()
    if measure == "norm":
        return sign * (w[0].norm() - zstar)
    g = w @ w.T
    return (g - torch.diag(torch.diag(g))).norm() / (torch.trace(g) / K)


def norm_worst(eps: float, K: int, d: int, lam: float) -> float:
    """The exact largest |‖w_k‖ − z*| on the ε-sublevel set of the lower bound (13).

    Class k's term is (1/(2K))(√d z − 1)² + λz²/2 at its conditional optimum while z ≤ 1/√d
    (curvature c = d/K + λ: |Δ| = √(2ε/c)), and λz²/2 above (the fit can be 0), so the excess
    ε = λ(z² − z*²)/2 − e_k with e_k the class's optimal fit; the larger of the two sides.
    """
    zs = math.sqrt(d) / (d + lam * K)
    c = d / K + lam
    quad = math.sqrt(2 * eps / c)
    low = min(quad, zs)
    edge = 1 / math.sqrt(d) - zs
    if quad <= edge:
        return quad
    fit_k = (math.sqrt(d) * zs - 1) ** 2 / (2 * K)
    high = math.sqrt(2 * (eps + fit_k) / lam + zs**2) - zs
    return max(low, high)


# --- samplers -------------------------------------------------------------------------------------
def _lbfgs(params: list[torch.Tensor], f, iters: int) -> None:
    opt = torch.optim.LBFGS(
        params,
        lr=1.0,
        max_iter=iters,
        tolerance_grad=1e-15,
        tolerance_change=1e-18,
        history_size=50,
        line_search_fn="strong_wolfe",
    )

    def closure():
        opt.zero_grad()
        v = f()
        v.backward()
        return v

    opt.step(closure)


def _start(cfg: Any, seed: int, zstar: float, g: torch.Generator):
    m, r = cfg.model, cfg.rates
    w0, x0 = optimum(m.K, m.n, m.d, zstar, seed)
    w = (w0 + r.start * zstar * torch.randn(w0.shape, generator=g, dtype=F64)).requires_grad_()
    u = (x0 + r.start * torch.randn(x0.shape, generator=g, dtype=F64)).requires_grad_()
    return w, u


def _kick(cfg: Any, w, u, size: float, zstar: float, g: torch.Generator) -> None:
    """A seeded kick off the last point (its symmetric position can be a saddle)."""
    with torch.no_grad():
        u.add_(cfg.rates.kick * size * torch.randn(u.shape, generator=g, dtype=F64))
        w.add_(cfg.rates.kick * size * zstar * torch.randn(w.shape, generator=g, dtype=F64))


def _record(cfg, w, u, measure: str, lstar: float, zstar: float, **extra) -> dict[str, Any]:
    m = cfg.model
    with torch.no_grad():
        x = ln_features(u)
        eps = float(loss(w, x, m.K, m.n, m.lambda_w, OBJECTIVE[measure]) - lstar)
        return {"eps": eps, **extra, **deviations(w, x, m.K, m.n, zstar)}


def lagrangian(cfg: Any, measure: str, sign: int, seed: int, lstar: float, zstar: float):
    """Continuation in the multiplier t of min (L − L*)/t − D_target (the convex hull of the
    envelope): a list of points ``{"eps", "t", **deviations}``."""
    m, r = cfg.model, cfg.rates
    g = torch.Generator().manual_seed(10_007 * seed + 3)
    w, u = _start(cfg, seed, zstar, g)
    points: list[dict] = []
    t = r.t_start
    while len(points) < MAX_POINTS:
        if points and r.kick:
            _kick(cfg, w, u, max(points[-1][measure], 1e-6), zstar, g)

        def f(t=t):
            x = ln_features(u)
            excess = loss(w, x, m.K, m.n, m.lambda_w, OBJECTIVE[measure]) - lstar
            return excess / t - target(measure, sign, w, x, m.K, m.n, zstar)

        _lbfgs([w, u], f, r.iters)
        points.append(_record(cfg, w, u, measure, lstar, zstar, t=t))
        eps = points[-1]["eps"]
        if eps > r.eps_hi * lstar:
            break
        # far below the window the continuation takes decade steps
        t *= 10 ** (1 / r.steps_per_decade) if eps > r.eps_lo * lstar / 100 else 10.0
    return points


def targeted(cfg: Any, measure: str, sign: int, seed: int, lstar: float, zstar: float):
    """Continuation in the target ε of min −D_target/D_ref + (ρ/2)((L − L* − ε)/ε)² (the envelope
    where it is not convex too): a list of points ``{"eps", "target", **deviations}``."""
    m, r = cfg.model, cfg.rates
    K, n, lam = m.K, m.n, m.lambda_w
    objective = OBJECTIVE[measure]
    g = torch.Generator().manual_seed(10_007 * seed + 1)
    w, u = _start(cfg, seed, zstar, g)
    decades = math.log10(r.eps_hi / r.eps_lo)
    targets = np.geomspace(r.eps_lo, r.eps_hi, round(decades * r.steps_per_decade) + 1) * lstar
    points: list[dict] = []
    for eps_t in targets:
        ref = max(points[-1][measure], 1e-6) if points else 1e-6
        if points and r.kick:
            _kick(cfg, w, u, ref, zstar, g)

        def f(eps_t=float(eps_t), ref=ref):
            x = ln_features(u)
            excess = loss(w, x, K, n, lam, objective) - lstar
            dev = target(measure, sign, w, x, K, n, zstar)
            return -dev / ref + r.penalty / 2 * ((excess - eps_t) / eps_t) ** 2

        _lbfgs([w, u], f, r.iters)
        points.append(_record(cfg, w, u, measure, lstar, zstar, target=float(eps_t)))
    return points


def random_points(cfg: Any, seed: int, lstar: float, zstar: float) -> list[dict]:
    """The optimum plus seeded perturbations of log-spaced sizes (a lower bound)."""
    m, r = cfg.model, cfg.rates
    K, n, d, lam = m.K, m.n, m.d, m.lambda_w
    w0, x0 = optimum(K, n, d, zstar, seed)
    g = torch.Generator().manual_seed(10_007 * seed + 2)
    out = []
    for s in np.geomspace(1e-6, 1.0, r.random_points):
        w = w0 + s * zstar * torch.randn(w0.shape, generator=g, dtype=F64)
        x = ln_features(x0 + s * math.sqrt(d) * torch.randn(x0.shape, generator=g, dtype=F64))
        dev = deviations(w, x, K, n, zstar)
        for measure in MEASURES:
            eps = float(loss(w, x, K, n, lam, OBJECTIVE[measure]) - lstar)
            out.append({"measure": measure, "eps": eps, "dev": dev[measure]})
    return out


def descent_points(cfg: Any, seeds: list[int], lstar: float, zstar: float) -> list[dict]:
    """Projected gradient descent from N(0, 1) starts, recorded at log-spaced iterations."""
    m, r = cfg.model, cfg.rates
    K, n, d, lam = m.K, m.n, m.d, m.lambda_w
    spec = UFMSpec(K=K, n=n, d=d, depth=1, loss="mse", bias="none", layernorm=True)
    model = BatchedUFM(
        spec,
        seeds=seeds,
        lambda_w=lam,
        lambda_h=0.0,
        lr=cfg.train.lr,
        lr_h_scale=cfg.train.lr_h_scale,
        init=cfg.model.init.to_dict(),
    )
    marks = sorted({int(s) for s in np.geomspace(1, r.descent_steps, r.descent_records)})
    out, done = [], 0
    for mark in marks:
        while done < mark:
            model.step()
            done += 1
        w_all, x_all = model.classifier.detach(), model.h.detach()
        for b in range(len(seeds)):
            dev = deviations(w_all[b], x_all[b], K, n, zstar)
            for measure in MEASURES:
                eps = float(loss(w_all[b], x_all[b], K, n, lam, OBJECTIVE[measure]) - lstar)
                out.append({"measure": measure, "eps": eps, "dev": dev[measure]})
    return out


# --- the envelope ---------------------------------------------------------------------------------
def front(points: list[tuple[float, float]]) -> list[tuple[float, float]]:
    """The Pareto front (upper envelope): points no other point beats with a smaller or equal ε
    and a larger deviation, in increasing ε.

    >>> front([(1.0, 1.0), (2.0, 0.5), (3.0, 2.0), (0.5, 0.1)])
    [(0.5, 0.1), (1.0, 1.0), (3.0, 2.0)]
    """
    out, best = [], -math.inf
    for eps, dev in sorted(points, key=lambda p: (p[0], -p[1])):
        if dev > best * (1 + 1e-9):
            out.append((eps, dev))
            best = dev
    return out


def slope(pts: list[tuple[float, float]], lo: float, hi: float) -> float | None:
    """Least-squares slope of log deviation against log ε over the points with ε in [lo, hi]
    (None with fewer than 3 points)."""
    sel = [(e, v) for e, v in pts if lo <= e <= hi and e > 0 and v > 0]
    if len(sel) < 3:
        return None
    e, v = np.log([p[0] for p in sel]), np.log([p[1] for p in sel])
    return float(np.polyfit(e, v, 1)[0])


def theory(cfg: Any):
    return gufm_mse(K=cfg.model.K, d=cfg.model.d, lam=cfg.model.lambda_w)


# --- the run --------------------------------------------------------------------------------------
def _fit(pts: list[tuple[float, float]], lo: float, hi: float) -> float | None:
    return slope(front(pts), lo, hi)


def measure_summary(measure: str, pts: dict[str, list], seeds: list[int], cfg, pred) -> dict:
    """One deviation's numbers: the envelope's slopes (every sampler together, each alone, each
    seed's adversary), the front itself (ε / L*, deviation) inside the window."""
    r, lstar = cfg.rates, pred.objective
    lo, hi = r.eps_lo * lstar, r.eps_hi * lstar
    small_hi = min(hi, lo * 10**SMALL_DECADES)
    every = [p for source in pts.values() for p in source]
    pairs = [(p["eps"], p["dev"]) for p in every]
    fr = [(e, v) for e, v in front(pairs) if lo <= e <= hi]
    out = {
        "exponent": EXPONENT[measure],
        "objective": OBJECTIVE[measure],
        "slope": _fit(pairs, lo, hi),
        "slope_small": _fit(pairs, lo, small_hi),
        "slope_adversarial": _fit([(p["eps"], p["dev"]) for p in pts["adversarial"]], lo, hi),
        "slope_descent": _fit([(p["eps"], p["dev"]) for p in pts["descent"]], lo, hi),
        "slope_random": _fit([(p["eps"], p["dev"]) for p in pts["random"]], lo, hi),
        "slope_per_seed": [
            _fit([(p["eps"], p["dev"]) for p in pts["adversarial"] if p["seed"] == s], lo, hi)
            for s in seeds
        ],
        "front_points": len(fr),
        "front_eps": [e / lstar for e, _ in fr],
        "front_dev": [v for _, v in fr],
        "points": len(every),
    }
    if measure == "norm":  # the exact worst deviation on (13): the search can only fall short
        m = cfg.model

        def exact(e: float) -> float:
            return norm_worst(e, m.K, m.d, m.lambda_w)

        out["exact_dev"] = [exact(e) for e, _ in fr]
        # every point found at most reaches it; at each target ε of the search, the best point
        # (over seeds and signs) is compared with it
        every_ratio = [p["dev"] / exact(p["eps"]) for p in every if p["eps"] > 0]
        best: dict[float, float] = {}
        for p in pts["adversarial"]:
            if p.get("target") is not None and lo <= p["target"] <= hi and p["eps"] > 0:
                best[p["target"]] = max(best.get(p["target"], 0.0), p["dev"] / exact(p["eps"]))
        out["exact_ratio_min"] = min(best.values()) if best else None
        out["exact_ratio_max"] = max(every_ratio) if every_ratio else None
    return out


def run_rates(cfg: Any, run_dir, seeds: list[int]) -> dict[str, Any]:
    """Every sampler of every deviation and seed; one ``metrics.jsonl`` record per adversarial
    continuation; returns the summary."""
    pred = theory(cfg)
    lstar, zstar = pred.objective, pred.w_norm
    run_dir.truncate_metrics(0)  # a rerun (--resume) recomputes everything
    pts: dict[str, dict[str, list]] = {
        m: {"adversarial": [], "descent": [], "random": []} for m in MEASURES
    }
    for measure in MEASURES:
        for sign in SIGNS[measure]:
            for seed in seeds:
                for method in (lagrangian, targeted):
                    found = method(cfg, measure, sign, seed, lstar, zstar)
                    run_dir.log(
                        {"measure": measure, "sign": sign, "seed": seed,
                         "method": method.__name__, "points": found}
                    )  # fmt: skip
                    pts[measure]["adversarial"] += [
                        {
                            "eps": p["eps"],
                            "dev": p[measure],
                            "seed": seed,
                            "target": p.get("target"),
                        }
                        for p in found
                    ]
    for seed in seeds:
        for p in random_points(cfg, seed, lstar, zstar):
            pts[p["measure"]]["random"].append(p)
    for p in descent_points(cfg, seeds, lstar, zstar):
        pts[p["measure"]]["descent"].append(p)
    return {
        "model": "GUFM (LayerNorm features), MSE: the ε-sublevel sets",
        "theorem": "Súkeník et al., proof of Lemma 4.1 (MSE): deviation rates in ε",
        "theory": pred.to_dict(),
        "eps_window": [cfg.rates.eps_lo, cfg.rates.eps_hi],
        "measures": {m: measure_summary(m, pts[m], seeds, cfg, pred) for m in MEASURES},
        "seeds": seeds,
    }


def rates_figure(path, cfg, summary: dict):
    """Each deviation's envelope against ε / L* (log-log), with ε^{1/4} and ε^{1/2} through its
    largest point."""
    panels = []
    for m in MEASURES:
        s = summary["measures"][m]
        eps, dev = s["front_eps"], s["front_dev"]
        curves = {"upper envelope (all samplers)": (eps, dev)}
        if eps:
            for p in (0.25, 0.5):
                curves[f"∝ ε^{p:g}"] = (eps, [dev[-1] * (e / eps[-1]) ** p for e in eps])
        if m == "norm" and eps:
            curves["exact worst (13)"] = (eps, s["exact_dev"])
        title = f"{m} (bound O(ε^{s['exponent']:g}); slope {s['slope'] or float('nan'):.3f})"
        panels.append(Panel(title, curves, xlabel="ε / L*", logx=True, logy=True))
    md = cfg.model
    title = f"GUFM-MSE sublevel sets: K={md.K}, d={md.d}, n={md.n}, λ={md.lambda_w:g}, {len(summary['seeds'])} seeds"
    return save_panels(path, panels, suptitle=title, ncols=2)
