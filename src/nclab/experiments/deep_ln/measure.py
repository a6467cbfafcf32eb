"""The deep-ln objective and measurement: the exact loss, the GUFM optimum a depth-L network
approaches, and the trained network's objective, collapse of X_L and accuracy."""

from __future__ import annotations

import math
from typing import Any

import torch
import torch.nn.functional as F

from ...collapse import ClassStats
from ...metrics import collapse_metrics
from ...theory.gufm import gufm_ce, gufm_mse


def fit_loss(
    logits: torch.Tensor, y: torch.Tensor, onehot: torch.Tensor, loss: str
) -> torch.Tensor:
    """Mean CE, or the GUFM's MSE (1/2N)‖Z - Y‖² (sum over classes, mean over samples)."""
    if loss == "ce":
        return F.cross_entropy(logits, y)
    return ((logits - onehot) ** 2).sum(1).mean() / 2


@torch.no_grad()
def measure(model, x, y, xt, yt, lam: float, loss: str, theory) -> dict[str, Any]:
    """The trained network's objective (float64), collapse of X_L and accuracy.

    Besides the canonical metrics of X_L, the two the paper plots: ``nc2_w`` (the distance of the
    head W_L to the GUFM's frame: a simplex ETF for CE, an orthogonal frame for MSE) and
    ``nc3_cos_dist`` = 1 - (1/N) Σ_i cos(x_i, w_{y_i}) (0 at collapse).
    """

    K = model.head.out_features
    h = model.features(x).double()
    w = model.head.weight.double()
    logits = h @ w.T
    onehot = F.one_hot(y, K).double()
    fit = float(fit_loss(logits, y, onehot, loss))
    reg_head = lam / 2 * float((w * w).sum())
    reg = lam / 2 * sum(float((p.double() ** 2).sum()) for p in model.decayed_parameters())
    stats = ClassStats.from_features(h, y, num_classes=K, weights=w)
    m = collapse_metrics(stats, w)
    d = h.shape[1]
    keys = ("nc1", "nc1_trace", "nc2_etf", "nc2_of", "nc2_w_etf", "nc2_w_of", "nc3", "nc3_of")
    out: dict[str, Any] = {k: m.get(k) for k in (*keys, "nc3_cos", "nc4", "cdnv")}
    out.update(
        nc2=m.get("nc2_etf" if loss == "ce" else "nc2_of"),
        nc3_match=m.get("nc3" if loss == "ce" else "nc3_of"),
        # the paper's NC2 and NC3: W_L against the GUFM's frame, 1 - mean cos(x_i, w_{y_i})
        nc2_w=m.get("nc2_w_etf" if loss == "ce" else "nc2_w_of"),
        nc3_cos_dist=1.0 - m["nc3_cos"] if "nc3_cos" in m else None,
        objective=fit + reg,
        gufm_objective=fit + reg_head,  # L_GUFM(W_L, X_L) <= objective
        objective_gap=fit + reg - theory.objective,
        fit=fit,
        w_norm=float(w.norm(dim=1).mean()),
        w_norm_gap=abs(float(w.norm(dim=1).mean()) - theory.w_norm) / theory.w_norm,
        sphere_error=float(
            torch.maximum(h.sum(1).abs().max(), (h.norm(dim=1) - math.sqrt(d)).abs().max())
        ),
        train_acc=float((logits.argmax(1) == y).double().mean()),
        test_acc=float((model(xt).argmax(1) == yt).double().mean()) if len(yt) else None,
    )
    return out


def theory_for(loss: str, K: int, d: int, lam: float):
    """The GUFM optimum the depth-L objective approaches as L grows (the paper's main result)."""

    return gufm_ce(K, d, lam) if loss == "ce" else gufm_mse(K, d, lam)
