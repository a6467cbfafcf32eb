r"""Section 5 of Jacot et al. (ICLR 2025) on a trained network: the conditioning bounds at the
minimiser (Proposition 5.1 (17), Theorem 5.2 (18)) and the NTK bounds (Proposition 5.3 (20)),
beside what the network measures (``docs/theory-jacot.md``).

With ``conditioning = true`` the summary of each network has ``conditioning`` (:func:`report`),
computed after training on a float64 copy of the network over the whole training set:

* ``measured``: :math:`\epsilon_1 = \|Z_L - Y\|_F`, :math:`\|\theta\|^2`, :math:`\|X\|_{op}`,
  :math:`s_K(Y)`, :math:`\kappa(W_{L:\ell})` for :math:`\ell = L_1+1..L` (``kappa_partial``; the
  first is :math:`\kappa(W_{L:L_1+1})`), :math:`\kappa(W_L)`, :math:`r` = the largest
  :math:`\|W_\ell\|_{op}` of the head, the paper's :math:`\lambda` (below), the regularised loss;
* ``prop51``: (17) at the measured :math:`\|\theta\|^2` and :math:`\epsilon_1`
  (:func:`nclab.theory.jacot_conditioning.jacot_conditioning`);
* ``thm52``: (18) with a *constructed competitor*: the trained nonlinear layers
  :math:`1..L_1-1` and a last nonlinear layer :math:`W'_{L_1} = Y Z_{L_1-1}^+` fitted by least
  squares, so that :math:`\sigma(W'_{L_1}Z_{L_1-1}) = Y` exactly (ReLU keeps the non-negative
  :math:`Y`; needs :math:`Z_{L_1-1}` of rank N, i.e. width :math:`\ge N`, the paper's wide
  regime), rescaled layer by layer to the smallest norm (:func:`_competitor_c`):
  :math:`c` = its squared norm. Theorem 5.2 then bounds
  every global minimiser at :math:`\lambda \le \epsilon_1^2/(KL_2+c)`; the trained network is
  compared as a stand-in for the minimiser (``beats_competitor``: its regularised loss is at most
  the competitor's :math:`\lambda(KL_2+c)/2`, as a global minimiser's must be);
* ``ntk``: :math:`\|\Theta\|_{op}` of all parameters and of the head's
  (:func:`nclab.curvature.ntk_operator_norm`), the top Hessian eigenvalue of the paper's loss
  (eq. (19): :math:`\approx\|\Theta\|_{op}` at interpolation), and Proposition 5.3
  (:func:`nclab.theory.jacot_ntk.jacot_ntk`): the lower bound (20), the proof's sharper
  :math:`\frac{(s_K-\epsilon_1)^2}{K^2r^2}\sum_\ell\kappa(W_{L:\ell})^2`, and for
  :math:`M = 1..L_2` the bound on :math:`\min_{L_1<\ell\le L_1+M}\kappa(W_{L:\ell})` beside it.

The paper's loss is :math:`\frac12\|Y - Z_L\|_F^2 + \frac\lambda2\|\theta\|^2`; nclab trains the
mean over the :math:`NK` entries with coupled weight decay :math:`\lambda_t`, which is the same
objective times :math:`2/(NK)` with :math:`\lambda = NK\lambda_t/2`.
"""

from __future__ import annotations

import copy
import math
from typing import Any

import torch

from ...curvature import hessian_top_eigenvalue, ntk_operator_norm
from ...models.mlp import LinearHeadMLP
from ...theory.jacot_conditioning import composed_nc_bounds, jacot_conditioning
from ...theory.jacot_ntk import jacot_ntk, ntk_sum_bound
from ...validation import F64


def _kappa(a: torch.Tensor, k: int) -> float:
    s = torch.linalg.svdvals(a)
    return float(s[0] / s[k - 1]) if float(s[k - 1]) > 0 else math.inf


def partial_products(ws: list[torch.Tensor], L1: int) -> list[torch.Tensor]:
    r""":math:`W_{L:\ell} = W_L \cdots W_\ell` for :math:`\ell = L_1+1, \dots, L` (in that order).

    >>> ws = [torch.eye(2) * (i + 1) for i in range(4)]
    >>> [float(p[0, 0]) for p in partial_products(ws, 1)]  # 4*3*2, 4*3, 4
    [24.0, 12.0, 4.0]
    """
    out = [ws[-1]]
    for w in reversed(ws[L1:-1]):
        out.append(out[-1] @ w)
    return out[::-1]


def why_not_applicable(model: LinearHeadMLP, cfg) -> str | None:
    """Why Section 5's statements do not apply to this network (None when they do): the paper's
    eq. (1) has no biases and no backbone; Proposition 5.1 needs :math:`|\\sigma(x)| \\le |x|`
    (ReLU, leaky ReLU) and the MSE objective with coupled weight decay."""
    if model.backbone is not None:
        return "a backbone precedes the MLP (eq. (1) has none)"
    if any(m.bias is not None for m in model.linear_modules()):
        return "the network has biases (eq. (1) has none: set model.bias=false)"
    if cfg.model.activation not in ("relu", "leaky_relu"):
        return f"activation {cfg.model.activation!r}: the competitor needs sigma(1) = 1"
    if cfg.train.loss != "mse" or cfg.train.optimizer == "adamw":
        return "the objective is not MSE + coupled weight decay (loss mse, optimizer sgd/adam)"
    if model.L1 < 1:
        return "no nonlinear layer (L1 = 0)"
    return None


def _competitor_c(model: LinearHeadMLP, zs: list[torch.Tensor], onehot: torch.Tensor):
    r"""(c, relative residual) of the competitor: layers :math:`1..L_1-1` as trained, each scaled
    by :math:`\alpha`, and the last nonlinear layer :math:`W' = Y Z_{L_1-1}^+` (least squares)
    scaled by :math:`\alpha^{-(L_1-1)}` (ReLU is positively homogeneous, so the output stays
    :math:`Y`). With :math:`S = \sum_{\ell<L_1}\|W_\ell\|_F^2` and :math:`B = \|W'\|_F^2`,
    :math:`c(\alpha) = \alpha^2S + \alpha^{-2(L_1-1)}B` is smallest at
    :math:`\alpha^{2L_1} = (L_1-1)B/S`."""
    L1 = model.L1
    z_in = zs[L1 - 1]
    w_t = torch.linalg.pinv(z_in) @ onehot  # n x K: Z W'^T = Y
    resid = float(torch.linalg.matrix_norm(z_in @ w_t - onehot) / torch.linalg.matrix_norm(onehot))
    S = sum(float((w**2).sum()) for w in model.weights()[: L1 - 1])
    B = float((w_t**2).sum())
    if L1 == 1 or S == 0.0:
        return B, resid
    a2 = ((L1 - 1) * B / S) ** (1.0 / L1)  # alpha^2
    return a2 * S + B / a2 ** (L1 - 1), resid


def _prop53(m64, x, onehot, K, meas, kappas, lam: float, ntk_iter: int) -> dict[str, Any]:
    """Proposition 5.3 on the float64 network: NTK norms, Hessian of the paper's loss, bounds."""
    L1, L2 = m64.L1, m64.L2
    lin_names = [f"layers.{i}.weight" for i in range(L1, m64.L)]
    theta = ntk_operator_norm(m64, x, max_iter=ntk_iter, tol=1e-6).value
    theta_lin = ntk_operator_norm(m64, x, params=lin_names, max_iter=ntk_iter, tol=1e-6).value

    def half_sse(out, y):
        return 0.5 * ((out - y) ** 2).sum()

    hess = hessian_top_eigenvalue(
        m64, half_sse, (x, onehot), reduction="sum", weight_decay=lam, max_iter=ntk_iter, tol=1e-6
    ).value
    eps1, s_k_y, r = meas["eps1"], meas["s_k_y"], meas["r_head"]
    pred = jacot_ntk(K=K, L2=L2, r=r, eps1=eps1, s_k_y=s_k_y, ntk_op=theta)
    out: dict[str, Any] = {
        "ntk_op": theta,
        "ntk_op_head": theta_lin,
        "hessian_top": hess,
        "hessian_over_ntk": hess / theta,
        "prediction": pred.to_dict(),
        "applies": pred.applies,
    }
    if not pred.applies:
        return out
    best = [min(kappas[:M]) for M in range(1, L2 + 1)]
    ratios = [b / k for b, k in zip(best, pred.kappa_bounds, strict=True)]
    out.update(
        ntk_lower_bound=pred.ntk_lower_bound,
        ntk_sum_bound=ntk_sum_bound(kappas, K, r, s_k_y, eps1),
        kappa_best=best,
        kappa_bound=list(pred.kappa_bounds),
        kappa_over_bound_max=max(ratios),
        ntk_over_lower_bound=theta / pred.ntk_lower_bound,
        ntk_head_over_lower_bound=theta_lin / pred.ntk_lower_bound,
        ntk_head_over_sum_bound=theta_lin / ntk_sum_bound(kappas, K, r, s_k_y, eps1),
        lr_max_paper=pred.lr_max,
    )
    return out


@torch.no_grad()
def _measure(m64: LinearHeadMLP, x: torch.Tensor, onehot: torch.Tensor, K: int, lam: float):
    zs = m64.forward_all(x)
    ws = m64.weights()
    L1 = m64.L1
    prods = partial_products(ws, L1)
    kappas = [_kappa(p, K) for p in prods]
    theta_sq = sum(float((p**2).sum()) for p in m64.parameters())
    counts = onehot.sum(0)
    eps1 = float(torch.linalg.matrix_norm(zs[-1] - onehot))
    meas = {
        "eps1": eps1,
        "s_k_y": math.sqrt(float(counts.min())),
        "x_op": float(torch.linalg.matrix_norm(zs[0], 2)),
        "theta_sq": theta_sq,
        "theta_nonlin_sq": sum(float((w**2).sum()) for w in ws[:L1]),
        "kappa_partial": kappas,
        "kappa_product": kappas[0],
        "kappa_wl": kappas[-1],
        "r_head": max(float(torch.linalg.matrix_norm(w, 2)) for w in ws[L1:]),
        "lam_paper": lam,
        "reg_loss": 0.5 * eps1 * eps1 + 0.5 * lam * theta_sq,
    }
    return zs, kappas, meas


def report(cfg, model: LinearHeadMLP, x, y, K: int, weight_decay: float) -> dict[str, Any]:
    """The ``conditioning`` record of the module docstring for a trained network on its training
    samples ``x, y`` (one process; the whole set)."""
    why = why_not_applicable(model, cfg)
    if why is not None:
        return {"applies": False, "reason": why}
    m64 = copy.deepcopy(model).to(F64).eval()
    x64 = x.to(F64)
    onehot = torch.nn.functional.one_hot(y, K).to(F64)
    N = len(y)
    lam = N * K * weight_decay / 2.0
    zs, kappas, meas = _measure(m64, x64, onehot, K, lam)
    L1, L2 = m64.L1, m64.L2
    common = dict(K=K, L1=L1, L2=L2, x_op=meas["x_op"], s_k_y=meas["s_k_y"])
    p51 = jacot_conditioning(**common, eps1=meas["eps1"], theta_sq=meas["theta_sq"])
    out: dict[str, Any] = {"applies": True, "reason": "", "measured": meas}
    out["prop51"] = _with_ratios(p51.to_dict(), meas)
    with torch.no_grad():
        c, resid = _competitor_c(m64, zs, onehot)
    thm: dict[str, Any] = {"competitor_c": c, "competitor_residual": resid}
    if resid > 1e-6:
        thm |= {
            "applies": False,
            "reason": f"no exact competitor: Z_(L1-1) has rank < N "
            f"(least-squares residual {resid:.3g}); widen layer L1-1 to >= N",
        }
    else:
        p52 = jacot_conditioning(**common, c=c, lam=lam)
        thm |= _with_ratios(p52.to_dict(), meas)
        comp_loss = 0.5 * lam * (K * L2 + c)
        thm |= {
            "competitor_reg_loss": comp_loss,
            "reg_loss_over_competitor": meas["reg_loss"] / comp_loss,
            "beats_competitor": bool(meas["reg_loss"] <= comp_loss),
            "eps1_over_allowed": meas["eps1"] / p52.eps1,
            "theta_sq_over_allowed": meas["theta_sq"] / (K * L2 + c),
        }
        if p52.applies:
            thm |= _composed(zs, meas, K, N, p52.kappa_wl_bound, p52.kappa_wl_printed)
    out["thm52"] = thm
    if cfg.ntk:
        out["ntk"] = _prop53(m64, x64, onehot, K, meas, kappas, lam, cfg.ntk_iterations)
    return out


def _composed(zs, meas, K: int, N: int, kappa_wl: float, kappa_printed: float) -> dict[str, Any]:
    """The sentence after Theorem 5.2 (written since issue 50): Theorem 3.1's (2), (4), (5) at
    ε2 = 0 with κ(W_L) at (18)'s bound (``composed``; ``composed_printed`` with (18)'s printed
    exponent 1/L1), at the measured ε1 and Theorem 3.1's r = max(‖Z_(L-2)‖_op, ‖Z_(L-1)‖_op,
    the head's largest ‖W_l‖_op) (:func:`nclab.theory.jacot_conditioning.composed_nc_bounds`)."""
    op = [float(torch.linalg.matrix_norm(z, 2)) for z in (zs[-3], zs[-2])]
    r = max(*op, meas["r_head"])
    args = (meas["eps1"], r, K, N, int(zs[-2].shape[1]), meas["s_k_y"])
    return {
        "composed_r": r,
        "composed": composed_nc_bounds(*args, kappa_wl=kappa_wl),
        "composed_printed": composed_nc_bounds(*args, kappa_wl=kappa_printed),
    }


def _with_ratios(pred: dict[str, Any], meas: dict[str, Any]) -> dict[str, Any]:
    """A jacot-conditioning prediction with the measured kappas against its bounds: ``holds_*``
    and ``log10_slack_*`` = log10(bound / measured) (how many decades the bound is above)."""
    if not pred.get("applies"):
        return pred
    log_b = pred["log_kappa_product_bound"]
    lp = math.log(meas["kappa_product"])
    pred["holds_product"] = bool(lp <= log_b + 1e-9)
    pred["log10_slack_product"] = (log_b - lp) / math.log(10.0)
    log_bw = log_b / len(meas["kappa_partial"])
    lw = math.log(meas["kappa_wl"])
    pred["holds_wl"] = bool(lw <= log_bw + 1e-9)
    pred["log10_slack_wl"] = (log_bw - lw) / math.log(10.0)
    return pred


#: the derived scalars of :func:`conditioning_derived` (None where they do not apply)
KEYS = (
    "cond_kappa_product",
    "cond_kappa_wl",
    "cond_eps1",
    "cond_prop51_log10_bound",
    "cond_prop51_log10_ratio",
    "cond_thm52_applies",
    "cond_thm52_log10_bound",
    "cond_thm52_log10_ratio",
    "cond_thm52_log10_ratio_wl",
    "cond_thm52_bound_wl",
    "cond_eps1_over_allowed",
    "cond_reg_loss_over_competitor",
    "cond_thm52_nc1_bound",
    "cond_thm52_nc1_log10_ratio",
    "cond_thm52_nc2_bound",
    "cond_thm52_nc2_log10_ratio",
    "cond_thm52_nc2_log10_ratio_printed",
    "cond_thm52_nc3_bound",
    "cond_thm52_nc3_margin",
    "cond_thm52_nc3_margin_printed",
    "ntk_op",
    "ntk_op_head",
    "ntk_lower_bound",
    "ntk_over_lower_bound",
    "ntk_head_over_lower_bound",
    "ntk_head_over_sum_bound",
    "ntk_kappa_over_bound_max",
    "ntk_hessian_over_ntk",
)


def conditioning_derived(summary: dict[str, Any]) -> dict[str, Any]:
    r"""Flat scalars of a network's ``conditioning`` record, for the summary's ``derived`` (means
    over seeds). ``*_log10_ratio`` = :math:`\log_{10}(\text{measured}/\text{bound})` (<= 0: the
    bound holds; -20: twenty decades to spare); ``cond_thm52_applies`` 1.0 or 0.0.

    >>> conditioning_derived({})["cond_kappa_wl"] is None
    True
    """
    out: dict[str, Any] = dict.fromkeys(KEYS)
    rec = summary.get("conditioning")
    if not rec or not rec.get("applies"):
        return out
    m = rec["measured"]
    ln10 = math.log(10.0)
    out |= {
        "cond_kappa_product": m["kappa_product"],
        "cond_kappa_wl": m["kappa_wl"],
        "cond_eps1": m["eps1"],
    }
    p51 = rec["prop51"]
    if p51.get("applies"):
        out["cond_prop51_log10_bound"] = p51["log_kappa_product_bound"] / ln10
        out["cond_prop51_log10_ratio"] = -p51["log10_slack_product"]
    t = rec["thm52"]
    out["cond_thm52_applies"] = 1.0 if t.get("applies") else 0.0
    if "eps1_over_allowed" in t:
        out["cond_eps1_over_allowed"] = t["eps1_over_allowed"]
        out["cond_reg_loss_over_competitor"] = t["reg_loss_over_competitor"]
    if t.get("applies"):
        out["cond_thm52_log10_bound"] = t["log_kappa_product_bound"] / ln10
        out["cond_thm52_log10_ratio"] = -t["log10_slack_product"]
        out["cond_thm52_log10_ratio_wl"] = -t["log10_slack_wl"]
        out["cond_thm52_bound_wl"] = t["kappa_wl_bound"]
        out |= composed_derived(t, (summary.get("certificate") or {}).get("measured") or {})
    n = rec.get("ntk")
    if n:
        out |= {"ntk_op": n["ntk_op"], "ntk_op_head": n["ntk_op_head"]}
        out["ntk_hessian_over_ntk"] = n["hessian_over_ntk"]
        if n.get("applies"):
            out |= {
                "ntk_lower_bound": n["ntk_lower_bound"],
                "ntk_over_lower_bound": n["ntk_over_lower_bound"],
                "ntk_head_over_lower_bound": n["ntk_head_over_lower_bound"],
                "ntk_head_over_sum_bound": n["ntk_head_over_sum_bound"],
                "ntk_kappa_over_bound_max": n["kappa_over_bound_max"],
            }
    return out


def composed_derived(thm52: dict[str, Any], measured: dict[str, Any]) -> dict[str, Any]:
    r"""The measured NC1, NC2 (:math:`\kappa(\bar Z_{L-1})`) and NC3 (mean cosine with
    :math:`W_L`) of :math:`Z_{L-1}` (the certificate's ``measured``) against the composed bounds
    of :func:`_composed`: ``cond_thm52_nc1_log10_ratio`` and ``cond_thm52_nc2_log10_ratio``
    (``_printed``: (18) with its printed exponent 1/L1) are :math:`\log_{10}` (measured / bound),
    <= 0 where the bound holds; ``cond_thm52_nc3_margin`` (``_printed``) is measured - bound, >= 0
    where it holds; None where a bound or a metric is missing.

    >>> t = {"composed": {"nc1": 1.0, "nc2": 10.0, "nc3": -5.0},
    ...      "composed_printed": {"nc1": 1.0, "nc2": 100.0, "nc3": -50.0}}
    >>> d = composed_derived(t, {"nc1_trace": 0.01, "nc2_kappa": 1.0, "nc3_cos": 0.9})
    >>> d["cond_thm52_nc1_log10_ratio"], d["cond_thm52_nc2_log10_ratio_printed"]
    (-2.0, -2.0)
    >>> d["cond_thm52_nc3_margin"]
    5.9
    """
    out: dict[str, Any] = {}
    for tag, key in (("", "composed"), ("_printed", "composed_printed")):
        b = thm52.get(key) or {}
        if not tag:
            out["cond_thm52_nc1_bound"] = b.get("nc1")
            out["cond_thm52_nc2_bound"] = b.get("nc2")
            out["cond_thm52_nc3_bound"] = b.get("nc3")
            out["cond_thm52_nc1_log10_ratio"] = _log10_ratio(
                measured.get("nc1_trace"), b.get("nc1")
            )
        out[f"cond_thm52_nc2_log10_ratio{tag}"] = _log10_ratio(
            measured.get("nc2_kappa"), b.get("nc2")
        )
        nc3, bound = measured.get("nc3_cos"), b.get("nc3")
        out[f"cond_thm52_nc3_margin{tag}"] = None if None in (nc3, bound) else nc3 - bound
    return out


def _log10_ratio(value: float | None, bound: float | None) -> float | None:
    """log10(value / bound) for two positive numbers, else None."""
    if value is None or bound is None or not (value > 0 and bound > 0):
        return None
    if not (math.isfinite(value) and math.isfinite(bound)):
        return None
    return math.log10(value / bound)
