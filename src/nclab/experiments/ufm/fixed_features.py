r"""Theorem 5.1 of Tirer & Bruna: the exact classifier of fixed, non-collapsed features, for many n.

A run (``fixed_features.ns`` non-empty) draws, per seed, the class means H̄ of the bias-free UFM's
minimiser (a random orthonormal d x K frame times √ρ, :func:`nclab.theory.ufm.ufm_mse`) and, per
n, the features :math:`\tilde H_n = \bar H \otimes 1_n^\top + E_n` with N(0, σ_e²) noise (streamed
one class at a time: only the class sums and the d x d Gram matrix are kept). It computes the exact
minimiser over W (:func:`nclab.theory.fixed_features.ridge_classifier`, λ_H = λ̃_H / n with
λ̃_H = ``n · lambda_h`` of the config) and compares it with the theorem's limit Ŵ_∞ = a H̄ᵀ
(:func:`nclab.theory.fixed_features.ufm_fixed_features`). No gradient descent: ``steps`` and
``log_every`` are not used. ``metrics.jsonl`` gets one record per n.

Summary (lists are per n, numbers RMS or mean over seeds): ``gap`` (‖Ŵ_n - Ŵ_∞‖/‖Ŵ_∞‖, RMS),
``gap_sqrt_n``, ``slope`` (least-squares slope of log gap against log n; theory -0.5),
``gap_constant_ratio`` (√n · gap at the largest n over the theory's constant), ``scale``
(⟨Ŵ_n, H̄ᵀ⟩/‖H̄‖², the multiple of H̄ᵀ), ``gap_to_w_star`` (‖Ŵ_n - W*‖/‖W*‖, tends to 1 - a, not 0),
``nc2_w_of`` / ``nc3_of`` of Ŵ_n and ``nc1`` of the features (which stay non-collapsed: it tends
to ``limit_nc1`` = (K-1)σ_e²/ρ), ``limit_gap_to_w_star`` = 1 - a, and
``largest_n`` with every number at the largest n.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import torch

from ...errors import ConfigError
from ...report.figures import Panel, save_panels
from ...runs import RunDir
from ...theory.fixed_features import FixedFeaturesPrediction, ridge_classifier, ufm_fixed_features
from ...validation import F64
from ..common.seeds import mean, rms
from .config import plain_problem


def prediction(cfg: Any) -> FixedFeaturesPrediction:
    """Theorem 5.1's limit for the config (λ̃_H = ``cfg.model.n * cfg.model.lambda_h``)."""
    return ufm_fixed_features(**plain_problem(cfg), sigma_e=cfg.fixed_features.sigma_e)


def class_means(seed: int, d: int, K: int, rho: float) -> torch.Tensor:
    """H̄ (d x K) with H̄ᵀH̄ = ρ I: √ρ times the Q factor of a seeded Gaussian d x K matrix."""
    g = torch.Generator().manual_seed(seed)
    q, _ = torch.linalg.qr(torch.randn(d, K, generator=g, dtype=F64))
    return math.sqrt(rho) * q


def sufficient_stats(
    hbar: torch.Tensor, n: int, sigma_e: float, seed: int
) -> tuple[np.ndarray, np.ndarray]:
    """(class sums H Yᵀ, Gram H Hᵀ) of H = H̄ ⊗ 1ᵀ_n + E, E ~ N(0, σ_e²), one class at a time."""
    d, K = hbar.shape
    g = torch.Generator().manual_seed(1_000_003 * seed + n)
    sums = torch.empty(d, K, dtype=F64)
    gram = torch.zeros(d, d, dtype=F64)
    for k in range(K):
        block = hbar[:, k : k + 1] + sigma_e * torch.randn(d, n, generator=g, dtype=F64)
        sums[:, k] = block.sum(1)
        gram += block @ block.T
    return sums.numpy(), gram.numpy()


def nc1_from_stats(sums: np.ndarray, gram: np.ndarray, n: int) -> float:
    """NC1 = tr(Σ_W Σ_B^†)/K of balanced classes (n each) from their sums and Gram matrix."""
    K = sums.shape[1]
    mu = sums / n
    sigma_w = gram / (K * n) - mu @ mu.T / K
    centred = mu - mu.mean(1, keepdims=True)
    sigma_b = centred @ centred.T / K
    return float(np.trace(sigma_w @ np.linalg.pinv(sigma_b, rcond=1e-12, hermitian=True)) / K)


def _frame_dist(a: np.ndarray, target: np.ndarray) -> float:
    g = a @ a.T
    return float(np.linalg.norm(g / np.linalg.norm(g) - target))


def one_problem(cfg: Any, pred: FixedFeaturesPrediction, hbar: torch.Tensor, n: int, seed: int):
    """Every number of one (n, seed): the exact Ŵ_n against Ŵ_∞ and W*."""
    sums, gram = sufficient_stats(hbar, n, cfg.fixed_features.sigma_e, seed)
    w = ridge_classifier(sums, gram, cfg.model.K * n, cfg.model.lambda_w)
    hb = hbar.numpy()
    w_inf, w_star = pred.w_hat_scale * hb.T, pred.w_star_scale * hb.T
    hn = np.linalg.norm(hb)
    return {
        "gap": float(np.linalg.norm(w - w_inf) / np.linalg.norm(w_inf)),
        "gap_to_w_star": float(np.linalg.norm(w - w_star) / np.linalg.norm(w_star)),
        "scale": float((w * hb.T).sum() / hn**2),
        "nc2_w_of": _frame_dist(w, np.eye(cfg.model.K) / math.sqrt(cfg.model.K)),
        "nc3_of": float(np.linalg.norm(w / np.linalg.norm(w) - hb.T / hn)),
        "nc1": nc1_from_stats(sums, gram, n),
    }


def run_fixed(cfg: Any, run_dir: RunDir, seeds: list[int]) -> dict[str, Any]:
    """The whole sweep (every n x every seed), one record per n; returns the summary."""
    pred = prediction(cfg)
    if not pred.collapsed:
        raise ConfigError(
            f"K√(nλ_Hλ_W) = {pred.threshold:.4g} >= 1: H̄ = 0, nothing to recover; lower the λ's"
        )
    run_dir.truncate_metrics(0)  # a rerun (--resume) recomputes every n from scratch
    frames = {s: class_means(s, cfg.model.d, cfg.model.K, pred.rho) for s in seeds}
    ns = sorted(cfg.fixed_features.ns)
    rows = []
    for n in ns:
        per = [one_problem(cfg, pred, frames[s], n, s) for s in seeds]
        row = {k: [p[k] for p in per] for k in per[0]}
        run_dir.log({"n": n, **row})
        rows.append(row)
    return fixed_summary(cfg, pred, ns, seeds, rows)


def fixed_summary(cfg, pred, ns: list[int], seeds: list[int], rows: list[dict]) -> dict[str, Any]:
    """The summary of a fixed-features run (module docstring)."""
    gap = [rms(r["gap"]) for r in rows]
    slope = float(np.polyfit(np.log(ns), np.log(gap), 1)[0])
    scale = [mean(r["scale"]) for r in rows]
    series = {
        "gap": gap,
        "gap_sqrt_n": [g * math.sqrt(n) for g, n in zip(gap, ns, strict=True)],
        "gap_to_w_star": [mean(r["gap_to_w_star"]) for r in rows],
        "scale": scale,
        "scale_gap": [abs(s - pred.w_hat_scale) / pred.w_hat_scale for s in scale],
        "nc2_w_of": [max(r["nc2_w_of"]) for r in rows],
        "nc3_of": [max(r["nc3_of"]) for r in rows],
        "nc1": [min(r["nc1"]) for r in rows],
    }
    return {
        "model": "plain UFM, MSE, bias-free: classifier of fixed noisy features",
        "theorem": "Tirer & Bruna Thm 5.1 (App. F)",
        "theory": pred.to_dict(),
        "ns": ns,
        "seeds": seeds,
        "sigma_e": cfg.fixed_features.sigma_e,
        "lambda_h_tilde": pred.lambda_h_tilde,
        **series,
        "slope": slope,
        "gap_constant_ratio": series["gap_sqrt_n"][-1] / pred.gap_constant,
        "first_over_last": gap[0] / gap[-1],
        "sqrt_n_ratio": math.sqrt(ns[-1] / ns[0]),
        "limit_gap_to_w_star": 1 - pred.attenuation,
        "limit_nc1": pred.nc1_features,
        "largest_n": {k: v[-1] for k, v in series.items()} | {"n": ns[-1]},
        "per_seed": [
            {"seed": s, **{k: [r[k][i] for r in rows] for k in rows[0]}}
            for i, s in enumerate(seeds)
        ],
    }


def fixed_figure(path, cfg, summary: dict):
    """Gap to Ŵ_∞ against n with the theory's c/√n, the scale of Ŵ_n, its structure metrics."""
    ns, th = summary["ns"], summary["theory"]
    const = [th["gap_constant"] / math.sqrt(n) for n in ns]

    def panel(title: str, curves: dict, logy: bool = True, **kw) -> Panel:
        return Panel(title, curves, xlabel="n (samples per class)", logx=True, logy=logy, **kw)

    panels = [
        panel(
            "‖Ŵ_n - Ŵ_∞‖ / ‖Ŵ_∞‖ (RMS over seeds)",
            {"exact minimiser": (ns, summary["gap"]), "theory constant / √n": (ns, const)},
        ),
        panel(
            "Ŵ_n as a multiple of H̄ᵀ",
            {"measured (mean of seeds)": (ns, summary["scale"])},
            logy=False,
            hlines=[(th["w_hat_scale"], "Ŵ_∞ (Thm 5.1)"), (th["w_star_scale"], "W* (Thm 3.1)")],
        ),
        panel(
            "structure of Ŵ_n, NC1 of the features",
            {k: (ns, summary[k]) for k in ("nc2_w_of", "nc3_of", "nc1", "gap_to_w_star")},
            hlines=[(summary["limit_nc1"], "NC1 limit"), (summary["limit_gap_to_w_star"], "1 - a")],
        ),
    ]
    title = (
        f"Theorem 5.1: K={cfg.model.K}, d={cfg.model.d}, λ_W={cfg.model.lambda_w:g}, λ̃_H={th['lambda_h_tilde']:g}, "
        f"σ_e={th['sigma_e']:g}, {len(summary['seeds'])} seeds"
    )
    return save_panels(path, panels, suptitle=title, ncols=3)
