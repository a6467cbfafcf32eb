r"""The intuition of Theorem 5.1 for the linear extended UFM with fixed features (Tirer & Bruna
§5, App. F.1): gradient descent over (W2, W1) with H1 fixed at H̄1 ⊗ 1ᵀ + E_n, for many n.

App. F.1: expanding the fit term and dropping the terms linear in the zero-mean noise, the noise
only adds σ_e²/2 ‖W2W1‖²_F as n -> ∞, "and this intuition applies also for the extended UFMs
with fixed features (where no closed-form minimizers exist)". In the limit the problem over
M = W2W1 is min ½tr(M S Mᵀ) - tr(M Cᵀ) + ½ + √(λ_W1λ_W2) ‖M‖_* (the balanced factorisation of
M costs √(λ_W1λ_W2)‖M‖_*) with S = H̄H̄ᵀ/K + σ_e² I, C = H̄ᵀ/K; for H̄ᵀH̄ = ρI its minimiser is
M_∞ = c H̄ᵀ, c = (1 - K√(λ_W1λ_W2/ρ)) / (ρ + Kσ_e²): an orthogonal frame aligned with H̄ᵀ,
attenuated by a = ρ/(ρ + Kσ_e²) from the c_0 (σ_e = 0) of the collapsed features, where W2W1 is
Theorem 4.1's minimiser's (c_0 √ρ = σ_W2 σ_W1, a check of the theory).

A run (``fixed_features.ns`` with ``model.depth = 2``, linear) draws, per seed, H̄1 of Theorem
4.1's minimiser (a random orthonormal frame times σ(H̄1*), λ_H1 = ``lambda_h`` at the config's n,
i.e. λ̃_H = n λ_H held fixed as n grows) and, per n, the sums and Gram matrix of H1 = H̄1 ⊗ 1ᵀ + E
(:func:`.fixed_features.sufficient_stats`). The fit term and its gradients depend on H1 only
through S = H1H1ᵀ/N and C = YH1ᵀ/N, so plain GD on (W2, W1) (the config's step, steps and
init) runs every n × seed as one batch exactly as on the full features. Each endpoint is
compared with the exact minimum of the convex problem over M (proximal gradient).

Summary (lists per n): ``gap`` (RMS over seeds of ‖M_n - M_∞‖/‖M_∞‖), ``scale`` (⟨M_n, H̄ᵀ⟩/‖H̄‖²,
mean), ``nc2_w_of`` / ``nc3_of`` of M_n against H̄ (worst seed), ``opt_gap`` (GD's objective
against the convex minimum, relative, worst), ``slope`` of log gap against log n, the limits
``limit_scale`` (c), ``collapsed_scale`` (c_0), ``attenuation`` (a), and ``largest_n``.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import torch

from ...errors import ConfigError
from ...report.figures import Panel, save_panels
from ...runs import RunDir
from ...theory.extended_ufm import extended_ufm
from ...validation import F64
from ..common.seeds import mean, rms
from .fixed_features import _frame_dist, class_means, sufficient_stats


def limits(cfg: Any) -> dict[str, float]:
    """ρ of H̄1 (Theorem 4.1 at the config's n and λ's), c, c_0, a, and the theory check."""
    m = cfg.model
    lw1 = m.lambda_w if m.lambda_w1 is None else m.lambda_w1
    pred = extended_ufm(
        K=m.K, n=m.n, d=m.d, lambda_w2=m.lambda_w, lambda_w1=lw1, lambda_h1=m.lambda_h
    )
    if not pred.collapsed:
        raise ConfigError("Theorem 4.1's minimiser is zero at these λ's: H̄1 = 0, lower the λ's")
    rho = pred.sigma_h1_bar**2
    mu, K, s2 = math.sqrt(m.lambda_w * lw1), m.K, cfg.fixed_features.sigma_e**2
    c0 = (1 - K * mu / math.sqrt(rho)) / rho
    c = (1 - K * mu / math.sqrt(rho)) / (rho + K * s2)
    return {
        "rho": rho,
        "mu": mu,
        "limit_scale": c,
        "collapsed_scale": c0,
        "attenuation": c / c0,
        # Theorem 4.1: the product W2*W1* has singular values σ_W2 σ_W1 = c_0 √ρ
        "theory_product_gap": abs(c0 * math.sqrt(rho) - pred.sigma_w2 * pred.sigma_w1)
        / (pred.sigma_w2 * pred.sigma_w1),
    }


def _objective(w2, w1, S, C, lw2, lw1):
    m = w2 @ w1
    fit = 0.5 * (m @ S * m).sum((-1, -2)) - (m * C).sum((-1, -2)) + 0.5
    return fit + 0.5 * lw2 * (w2**2).sum((-1, -2)) + 0.5 * lw1 * (w1**2).sum((-1, -2))


def gd(cfg: Any, S: torch.Tensor, C: torch.Tensor, seeds: list[int]):
    """Plain GD on (W2, W1) of every problem (S, C: (P, d, d), (P, K, d)); init N(0, std²) with
    the config's ``init.w`` / ``init.w1``, drawn from each problem's seed."""
    m, t = cfg.model, cfg.train
    lw1 = m.lambda_w if m.lambda_w1 is None else m.lambda_w1
    P, K, d = C.shape
    w2 = torch.empty(P, K, d, dtype=F64)
    w1 = torch.empty(P, d, d, dtype=F64)
    for i, s in enumerate(seeds):
        g = torch.Generator().manual_seed(s)
        w2[i] = m.init.w * torch.randn(K, d, generator=g, dtype=F64)
        w1[i] = m.init.w1 * torch.randn(d, d, generator=g, dtype=F64)
    lr = t.lr
    for _ in range(t.steps):
        grad_m = (w2 @ w1) @ S - C  # ∂fit/∂M
        g2 = grad_m @ w1.mT + m.lambda_w * w2
        g1 = w2.mT @ grad_m + lw1 * w1
        w2 -= lr * g2
        w1 -= lr * g1
    return w2, w1, _objective(w2, w1, S, C, m.lambda_w, lw1)


def convex_minimum(S: torch.Tensor, C: torch.Tensor, mu: float, iters: int = 5000) -> torch.Tensor:
    """min over M of ½tr(MSMᵀ) - tr(MCᵀ) + ½ + mu ‖M‖_* (proximal gradient, step 1/λ_max(S))."""
    step = 1.0 / torch.linalg.eigvalsh(S)[:, -1]
    step = step[:, None, None]
    M = torch.zeros_like(C)

    def value(M):
        fit = 0.5 * (M @ S * M).sum((-1, -2)) - (M * C).sum((-1, -2)) + 0.5
        return fit + mu * torch.linalg.svdvals(M).sum(-1)

    for _ in range(iters):
        Z = M - step * (M @ S - C)
        u, sv, vh = torch.linalg.svd(Z, full_matrices=False)
        M = u @ torch.diag_embed((sv - step[..., 0] * mu).clamp_min(0)) @ vh
    return value(M)


def run_fixed_extended(cfg: Any, run_dir: RunDir, seeds: list[int]) -> dict[str, Any]:
    """The whole sweep (every n x seed in one GD batch), one record per n; the summary."""
    lim = limits(cfg)
    run_dir.truncate_metrics(0)
    m = cfg.model
    frames = {s: class_means(s, m.d, m.K, lim["rho"]) for s in seeds}
    ns = sorted(cfg.fixed_features.ns)
    S, C, who = [], [], []
    for n in ns:
        for s in seeds:
            sums, gram = sufficient_stats(frames[s], n, cfg.fixed_features.sigma_e, s)
            N = m.K * n
            S.append(torch.from_numpy(gram / N))
            C.append(torch.from_numpy(sums.T / N))
            who.append((n, s))
    S, C = torch.stack(S), torch.stack(C)
    w2, w1, f = gd(cfg, S, C, [s for _, s in who])
    f_star = convex_minimum(S, C, lim["mu"])
    M = (w2 @ w1).numpy()
    rows = []
    for n in ns:
        idx = [i for i, (nn, _) in enumerate(who) if nn == n]
        per = [
            _one(M[i], frames[who[i][1]].numpy(), lim, float(f[i]), float(f_star[i])) for i in idx
        ]
        row = {k: [p[k] for p in per] for k in per[0]}
        run_dir.log({"n": n, **row})
        rows.append(row)
    return _summary(cfg, lim, ns, seeds, rows)


def _one(M: np.ndarray, hb: np.ndarray, lim: dict, f: float, f_star: float) -> dict[str, float]:
    K = hb.shape[1]
    target = lim["limit_scale"] * hb.T
    hn = np.linalg.norm(hb)
    return {
        "gap": float(np.linalg.norm(M - target) / np.linalg.norm(target)),
        "scale": float((M * hb.T).sum() / hn**2),
        "nc2_w_of": _frame_dist(M, np.eye(K) / math.sqrt(K)),
        "nc3_of": float(np.linalg.norm(M / np.linalg.norm(M) - hb.T / hn)),
        "opt_gap": abs(f - f_star) / abs(f_star),
    }


def _summary(cfg, lim: dict, ns: list[int], seeds: list[int], rows: list[dict]) -> dict[str, Any]:
    gap = [rms(r["gap"]) for r in rows]
    c = lim["limit_scale"]
    series = {
        "gap": gap,
        "scale": [mean(r["scale"]) for r in rows],
        "nc2_w_of": [max(r["nc2_w_of"]) for r in rows],
        "nc3_of": [max(r["nc3_of"]) for r in rows],
        "opt_gap": [max(r["opt_gap"]) for r in rows],
    }
    series["scale_gap"] = [abs(s - c) / c for s in series["scale"]]
    m = cfg.model
    return {
        "model": "linear extended UFM, MSE, bias-free: (W2, W1) of fixed noisy features H1",
        "theorem": "Tirer & Bruna §5 / App. F.1: the intuition of Thm 5.1 for the extended UFM",
        "ns": ns,
        "seeds": seeds,
        "sigma_e": cfg.fixed_features.sigma_e,
        "lambda_h_tilde": m.n * m.lambda_h,
        **series,
        "slope": float(np.polyfit(np.log(ns), np.log(gap), 1)[0]),
        **lim,
        "opt_gap_max": max(series["opt_gap"]),
        "largest_n": {k: v[-1] for k, v in series.items()} | {"n": ns[-1]},
        "per_seed": [
            {"seed": s, **{k: [r[k][i] for r in rows] for k in rows[0]}}
            for i, s in enumerate(seeds)
        ],
    }


def fixed_extended_figure(path, cfg, summary: dict):
    """Gap of W2W1 to its limit against n, its scale beside c and c_0, its structure."""
    ns = summary["ns"]

    def panel(title: str, curves: dict, logy: bool = True, **kw) -> Panel:
        return Panel(title, curves, xlabel="n (samples per class)", logx=True, logy=logy, **kw)

    panels = [
        panel("‖W2W1 - M_∞‖ / ‖M_∞‖ (RMS over seeds)", {"GD endpoint": (ns, summary["gap"])}),
        panel(
            "W2W1 as a multiple of H̄ᵀ",
            {"measured (mean of seeds)": (ns, summary["scale"])},
            logy=False,
            hlines=[
                (summary["limit_scale"], "c (limit)"),
                (summary["collapsed_scale"], "c_0 (collapsed H1, Thm 4.1)"),
            ],
        ),
        panel(
            "structure of W2W1; GD vs the convex minimum",
            {k: (ns, summary[k]) for k in ("nc2_w_of", "nc3_of", "opt_gap")},
        ),
    ]
    m = cfg.model
    title = (
        f"extended UFM, fixed H1: K={m.K}, d={m.d}, λ's {m.lambda_w:g}, "
        f"λ̃_H={summary['lambda_h_tilde']:g}, σ_e={summary['sigma_e']:g}, "
        f"{len(summary['seeds'])} seeds"
    )
    return save_panels(path, panels, suptitle=title, ncols=3)
