"""What the UFM laboratory measures and what the theory predicts for it.

* :func:`theory_for`: the closed form of :mod:`nclab.theory` for a configuration (or None);
* :func:`expected_zero`: the NC metrics that vanish at that closed form, per layer;
* :func:`layer_metrics`: the canonical metrics of one problem's layers, through the measurement
  core (:meth:`nclab.ClassStats.from_features` + :func:`nclab.collapse_metrics`);
* :func:`measured_norms` / :func:`theory_norms`: norms and singular values beside their predictions;
* :func:`measure`: one ``metrics.jsonl`` line (objective, its gap to the theory, every metric).
"""

from __future__ import annotations

import math
from typing import Any

import torch

from ...collapse import ClassStats
from ...errors import ConfigError
from ...metrics import collapse_metrics
from ...models.ufm import BatchedUFM
from ...theory.extended_ufm import deep_linear_ufm, extended_ufm, extended_ufm_relu
from ...theory.gufm import gufm_ce, gufm_mse
from ...theory.ufm import ufm_ce, ufm_mse, ufm_mse_bias

FEATURE_KEYS = ("nc1", "nc2_etf", "nc2_of")
CLASSIFIER_KEYS = ("nc2_w_etf", "nc2_w_of", "nc3", "nc3_of")
OF_KEYS = ("nc1", "nc2_etf", "nc2_of", "nc2_w_of", "nc3_of")  # orthogonal frame, W ∝ H̄ᵀ
ETF_KEYS = ("nc1", "nc2_etf", "nc2_w_etf", "nc3", "nc3_of")  # simplex ETF with zero global mean


#: the theorem note of the unregularised MSE UFM (λ_W = λ_H = 0)
UNREGULARISED = (
    "unregularised MSE UFM: every interpolating point (WH = Y, objective 0) is a global "
    "minimiser, collapsed or not (Tirer & Bruna §2); no closed form to compare with"
)


#: the theorem note of the plain UFM with a ReLU on its features, W σ(H)
RELU_FEATURES = (
    "W σ(H): its minimum is the plain UFM's (Tirer & Bruna Thm 3.1): ‖σ(H)‖ <= ‖H‖ and "
    "(W, σ(H)) is a point of the plain UFM, so no lower value; a nonnegative orthogonal frame "
    "(d >= K) attains it"
)


def theory_for(cfg: Any, lambda_w: float, lambda_w1: float, lambda_h: float) -> tuple[Any, str]:
    """(prediction, note) for one configuration; (None, why) where no theorem covers it.

    Raises :class:`~nclab.errors.TheoryError` for parameters outside a theorem's hypotheses
    (e.g. d < K for the bias-free UFM), so such runs fail before training.
    """
    K, n, d, L = cfg.model.K, cfg.model.n, cfg.model.d, cfg.model.depth
    if cfg.model.layernorm:
        fn = gufm_mse if cfg.model.loss == "mse" else gufm_ce
        return fn(K=K, d=d, lam=lambda_w), "Súkeník et al., GUFM"
    if L == 1:
        if cfg.model.loss == "ce":
            lb = cfg.model.lambda_b if cfg.model.bias == "regularized" else 0.0
            return (
                ufm_ce(
                    K=K,
                    n=n,
                    d=d,
                    lambda_w=lambda_w,
                    lambda_h=lambda_h,
                    bias=cfg.model.bias,
                    lambda_b=lb,
                ),
                "Zhu et al. 2021, Thm 3.1 (regularised CE UFM)",
            )
        if lambda_w == 0 and lambda_h == 0:  # config.check allows it for this model only
            return None, UNREGULARISED
        if cfg.model.relu_features:
            return ufm_mse(K=K, n=n, d=d, lambda_w=lambda_w, lambda_h=lambda_h), RELU_FEATURES
        if cfg.model.bias == "none":
            return (
                ufm_mse(K=K, n=n, d=d, lambda_w=lambda_w, lambda_h=lambda_h),
                "Tirer & Bruna Thm 3.1",
            )
        lb = cfg.model.lambda_b if cfg.model.bias == "regularized" else 0.0
        return (
            ufm_mse_bias(K=K, n=n, d=d, lambda_w=lambda_w, lambda_h=lambda_h, lambda_b=lb),
            "Tirer & Bruna Thm 3.2" if lb == 0 else "regularised bias (docs/theory-ufm.md)",
        )
    if cfg.model.loss != "mse" or cfg.model.bias != "none":
        return None, "no closed form for deep UFMs with cross-entropy or a bias"
    if L == 2:
        fn = extended_ufm_relu if cfg.model.relu else extended_ufm
        return (
            fn(K=K, n=n, d=d, lambda_w2=lambda_w, lambda_w1=lambda_w1, lambda_h1=lambda_h),
            "Tirer & Bruna Thm 4.2" if cfg.model.relu else "Tirer & Bruna Thm 4.1",
        )
    pred = deep_linear_ufm(
        K=K, n=n, d=d, lambda_w=[lambda_w1] * (L - 1) + [lambda_w], lambda_h=lambda_h
    )
    if cfg.model.relu:
        return pred, (
            "deep ReLU UFM: the linear optimum, an upper bound of its minimum "
            "(a nonnegative orthogonal frame attains it); no theorem for L > 2"
        )
    return pred, "deep linear UFM (Schatten-2/(L+1) reduction, docs/theory-ufm.md)"


def expected_zero(cfg: Any, pred: Any) -> dict[str, tuple[str, ...]]:
    """Per layer, the metrics that are 0 at the predicted minimiser (empty if it is zero)."""
    if pred is None or not getattr(pred, "collapsed", True):
        return {}
    if cfg.model.depth == 1:
        if cfg.model.loss == "ce":
            return {"H": ETF_KEYS}
        if cfg.model.layernorm or cfg.model.bias == "none":
            return {"H": OF_KEYS}
        if cfg.model.bias == "free":
            return {"H": ETF_KEYS}
        return {"H": ("nc1", "nc2_etf", "nc3_of")}  # regularised bias: ETF plus a global mean
    last = f"A{cfg.model.depth - 1}" if cfg.model.relu else f"Z{cfg.model.depth - 1}"
    if cfg.model.relu:
        return {last: OF_KEYS} if cfg.model.depth == 2 else {}
    out = {"H1": FEATURE_KEYS}
    out.update({f"Z{i}": FEATURE_KEYS for i in range(1, cfg.model.depth - 1)})
    out[last] = OF_KEYS
    return out


def layer_metrics(
    model: BatchedUFM, feats: dict[str, torch.Tensor], b: int, labels: torch.Tensor
) -> dict[str, dict[str, float | None]]:
    """Canonical metrics of problem ``b``, per layer; the classifier keys on its input layer.

    A metric that is undefined (e.g. zero features) is None.
    """
    K = model.spec.K
    names = list(feats)
    out: dict[str, dict[str, float | None]] = {}
    for name in names:
        last = name == names[-1]
        keys = FEATURE_KEYS + (CLASSIFIER_KEYS if last else ())
        stats = ClassStats.from_features(feats[name][b].T, labels, num_classes=K, decisions=False)
        m = collapse_metrics(stats, weights=model.classifier[b] if last else None, keys=keys)
        out[name] = {k: m.get(k) for k in keys}
    return out


def measure(model: BatchedUFM, step: int, theory_obj: list[float | None]) -> dict[str, Any]:
    """Per-problem lists of the objective, its relative gap to the theory's and every metric.

    Raises :class:`~nclab.errors.ConfigError` when gradient descent diverged (by ``step``).
    """
    obj = model.objective().tolist()
    if not all(math.isfinite(f) for f in obj):
        raise ConfigError(
            f"gradient descent diverged by step {step} (objective {obj}); "
            "lower lr (or the init scales)"
        )
    feats = {k: v.detach() for k, v in model.layer_features().items()}
    labels = torch.arange(model.spec.N, device=model.device) // model.spec.n
    per = [layer_metrics(model, feats, b, labels) for b in range(model.B)]
    metrics = {layer: {k: [p[layer][k] for p in per] for k in per[0][layer]} for layer in per[0]}
    gaps = [
        None if t is None else abs(f - t) / abs(t) for f, t in zip(obj, theory_obj, strict=True)
    ]
    return {"objective": obj, "objective_gap": gaps, "metrics": metrics}


def _top_sv(a: torch.Tensor, k: int) -> float:
    return float(torch.linalg.svdvals(a.to(torch.float64))[:k].mean())


def measured_norms(model: BatchedUFM, feats: dict[str, torch.Tensor], b: int) -> dict[str, float]:
    """Norms (plain UFM / GUFM) or mean top-K singular values (deep models) of problem ``b``."""
    s = model.spec
    if s.depth == 1:
        w = model.classifier[b].to(torch.float64)
        h = model.h[b].clamp_min(0) if s.relu_features else model.h[b]  # the classifier's input
        hbar = h.to(torch.float64).reshape(s.d, s.K, s.n).mean(-1)  # d x K class means
        out = {"w_norm": float(w.norm(dim=1).mean()), "h_norm": float(hbar.norm(dim=0).mean())}
        if s.layernorm:
            out["feature_norm"] = float(model.h[b].to(torch.float64).norm(dim=0).mean())
            del out["h_norm"]
            return out
        if s.loss == "mse":
            g = hbar.T @ hbar
            c = torch.eye(s.K, dtype=g.dtype) - 1.0 / s.K
            out["rho"] = float((g * c).sum()) / (s.K - 1)
            out["rho_mean"] = float(g.sum()) / s.K
            if model.has_bias:
                out["b"] = float(model.b[b].mean())
        return out
    out = {f"sigma_W{i + 1}": _top_sv(w[b], s.K) for i, w in enumerate(model.weights)}
    for name, f in feats.items():
        out[f"sigma_{'H' if name == 'H1' else name}"] = _top_sv(f[b], s.K)
    return out


def theory_norms(cfg: Any, pred: Any) -> dict[str, float]:
    """The predicted values of the :func:`measured_norms` keys the theorem determines."""
    if pred is None:
        return {}
    if cfg.model.depth == 1:
        if cfg.model.layernorm:
            return {"w_norm": pred.w_norm, "feature_norm": pred.feature_norm}
        out = {"w_norm": pred.w_norm, "h_norm": pred.h_norm}
        if cfg.model.loss == "mse":
            out.update(rho=pred.rho, rho_mean=pred.rho_mean)
            if cfg.model.bias != "none":
                out["b"] = pred.b
        return out
    if cfg.model.depth == 2 and cfg.model.relu:
        return {"sigma_W2": pred.sigma_w2, "sigma_A1": pred.sigma_w1h1}
    if cfg.model.relu:
        return {}
    if cfg.model.depth == 2:
        return {
            "sigma_W1": pred.sigma_w1,
            "sigma_W2": pred.sigma_w2,
            "sigma_H": pred.sigma_h1,
            "sigma_Z1": pred.sigma_w1h1,
        }
    out = {f"sigma_W{i + 1}": v for i, v in enumerate(pred.sigma_w)}
    out["sigma_H"] = pred.sigma_h
    out.update({f"sigma_Z{i + 1}": v for i, v in enumerate(pred.sigma_z[:-1])})
    return out


def rel_gap(measured: float | None, theory: float | None) -> float | None:
    """|m - t| / |t| (absolute difference when the theory value is 0)."""
    if measured is None or theory is None:
        return None
    return abs(measured - theory) / abs(theory) if theory != 0 else abs(measured - theory)
