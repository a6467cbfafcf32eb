"""Layer-wise measurement of a :class:`~nclab.models.mlp.LinearHeadMLP` (Jacot et al., ICLR 2025, §6)
and the inputs of the Theorem 3.1 certificate.

:func:`measure_layers` streams the training data once through a :class:`~nclab.CollapseProbe` tapping
the representations :math:`Z_\\ell` from the backbone's output on (``first``); ``nc3_cos`` of
:math:`Z_{L-1}` against :math:`W_L` and the accuracy come from the same pass (they need each sample
and W, not the final class means), so no second pass runs; forward hooks on the nonlinear layers'
pre-activations feed :class:`~nclab.metrics.NegativityStats` in that pass. Under
``torch.distributed`` every rank streams its shard and all statistics are all-reduced, so every rank
returns the numbers one process would.

:func:`network_quantities` measures what Theorem 3.1 assumes (:math:`\\epsilon_1, \\epsilon_2, r,
c_3, \\|Z_{L_1}\\|_{op}`) from float64 Gram matrices of the representations, all-reduced the same way;
:func:`certificate` evaluates the theorem's bounds on them.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Iterable
from typing import Any

import torch

from ...errors import TheoryError
from ...metrics import NegativityStats, balancedness
from ...models.mlp import LinearHeadMLP
from ...probe import CollapseProbe
from ...theory.bounds import NetworkQuantities, jacot_certificate
from ...validation import F64

#: the per-layer keys of a record (None where a metric does not apply to the layer)
LAYER_KEYS = ("nc1_trace", "nc2_kappa", "nc2_of", "nc3_cos", "balancedness", "negativity")


def _dist():
    import torch.distributed as dist

    return dist if (dist.is_available() and dist.is_initialized()) else None


def layer_label(ell: int) -> str:
    return f"Z{ell}"


def layer_kind(model: LinearHeadMLP, ell: int) -> str:
    if ell == 0:
        return "backbone" if model.backbone is not None else "input"
    return "linear" if model.is_linear(ell) else "nonlinear"


def _tap(model: LinearHeadMLP, ell: int) -> str:
    L = model.L
    if ell == 0:
        return "backbone"
    if ell == L - 1:
        return model.layer_name(L) + ":input"  # the classifier's input: Z_{L-1}, with W_L
    if ell == L:
        return model.layer_name(L) + ":output"
    return model.layer_name(ell)


def measured_layers(model: LinearHeadMLP, first: int) -> list[int]:
    lo = 0 if model.backbone is not None else 1
    if not lo <= first <= model.L:
        raise ValueError(f"measure_from must be in {lo}..{model.L}, got {first}")
    return list(range(first, model.L + 1))


@torch.no_grad()
def weight_balancedness(model: LinearHeadMLP) -> dict[int, float]:
    """Relative balancedness of (W_{l+1}, W_l) for l = 1..L-1, keyed by l (the layer between them)."""
    ws = model.weights()
    return {ell: balancedness(ws[ell], ws[ell - 1]) for ell in range(1, model.L)}


def measure_layers(
    model: LinearHeadMLP,
    loader: Iterable,
    num_classes: int,
    first: int = 1,
    grams: bool = False,
    device=None,
    weights: bool = True,
) -> dict[str, Any]:
    """Collapse metrics of Z_first .. Z_L over ``loader`` (this rank's shard of the training set).

    Returns ``{"layers": {"Z3": {"kind", "nc1_trace", "nc2_kappa", "nc2_of", "nc3_cos",
    "balancedness", "negativity"}, ...}}`` (None where a metric does not apply: ``nc3_cos`` is
    defined for Z_{L-1} and W_L only, ``negativity`` for nonlinear layers, ``balancedness`` for
    layers between two weight matrices) and, with ``grams=True``, ``"grams"``: the class-mean Gram
    matrices (K x K, divided by their largest entry) of the layers from Z_{L1} on; ``"stats"``: the
    :class:`~nclab.ClassStats` of each layer; ``"train_acc"``: accuracy of the network's argmax.
    """
    ells = measured_layers(model, first)
    taps = {ell: _tap(model, ell) for ell in ells}
    probe = CollapseProbe(
        model,
        list(taps.values()),
        num_classes,
        classifier=model.layer_name(model.L),
        scatter="none",
    )
    neg: dict[int, NegativityStats] = {}
    handles = _negativity_hooks(model, ells, neg)
    try:
        res = probe.run(loader, device=device, second_pass=False, progress=False)
    finally:
        for h in handles:
            h.remove()
    bal = weight_balancedness(model) if weights else {}
    layers = {
        layer_label(ell): _layer_record(model, ell, res.metrics[taps[ell]], bal, neg)
        for ell in ells
    }
    out: dict[str, Any] = {"layers": layers}
    if grams:
        out["grams"] = {
            layer_label(ell): _normalised_gram(res.stats[taps[ell]].means)
            for ell in ells
            if ell >= model.L1
        }
    out["stats"] = {layer_label(ell): res.stats[taps[ell]] for ell in ells}
    pen = taps.get(model.L - 1)
    out["train_acc"] = res.metrics[pen].get("acc") if pen is not None else None
    return out


def _negativity_hooks(model: LinearHeadMLP, ells: list[int], neg: dict[int, NegativityStats]):
    """Forward hooks feeding the pre-activations of the measured nonlinear layers into ``neg``
    (created on the first batch); returns their handles."""
    handles = []
    for ell in ells:
        if 1 <= ell <= model.L1:
            lin = model.layers[ell - 1].linear

            def hook(mod, inp, out, ell=ell):
                if ell not in neg:
                    neg[ell] = NegativityStats(out.shape[1], device=out.device)
                neg[ell].update(out.detach())

            handles.append(lin.register_forward_hook(hook))
    return handles


def _layer_record(
    model: LinearHeadMLP,
    ell: int,
    metrics: dict[str, Any],
    bal: dict[int, float],
    neg: dict[int, NegativityStats],
) -> dict[str, Any]:
    """One layer's record: the probe's metrics, balancedness and (all-reduced) negativity."""
    rec: dict[str, Any] = {"kind": layer_kind(model, ell), "index": ell}
    for key in LAYER_KEYS[:4]:
        rec[key] = metrics.get(key)
    if ell != model.L - 1:
        rec["nc3_cos"] = None
    rec["balancedness"] = bal.get(ell)
    rec["negativity"] = None
    if ell in neg:
        neg[ell].all_reduce()
        rec["negativity"] = neg[ell].compute()
    return rec


def _normalised_gram(mu: torch.Tensor) -> list[list[float]]:
    """The class-mean Gram matrix divided by its largest entry (in absolute value)."""
    g = mu @ mu.T
    return (g / g.abs().max()).cpu().tolist()


# --------------------------------------------------------------------------------------------------
# Theorem 3.1's hypotheses, measured
# --------------------------------------------------------------------------------------------------


def _op_from_gram(g: torch.Tensor) -> float:
    return math.sqrt(max(float(torch.linalg.eigvalsh(g).max()), 0.0))


def _kappa(a: torch.Tensor, k: int) -> float:
    s = torch.linalg.svdvals(a.to(F64))
    return float(s[0] / s[k - 1]) if float(s[k - 1]) > 0 else math.inf


@torch.no_grad()
def network_quantities(
    model: LinearHeadMLP,
    x: torch.Tensor,
    y: torch.Tensor,
    num_classes: int,
    measured: dict[str, float],
    batch_size: int = 1024,
) -> NetworkQuantities:
    """eps1 = ||Z_L - Y||_F, eps2 = max_l ||W_{l+1}^T W_{l+1} - W_l W_l^T||_op over the linear head,
    r = max(||Z_{L-2}||_op, ||Z_{L-1}||_op, ||W_l||_op of the head), c3 = kappa(W_{L:L1+1}),
    ||Z_{L1}||_op and s_K(Y) = sqrt(min class count), over the training samples ``x, y`` of this
    rank (all-reduced under torch.distributed); ``measured`` holds the metrics of Z_{L-1}.
    """
    L, L1, K = model.L, model.L1, num_classes
    grams, sse, counts = _representation_grams(
        model, x, y, K, {"z_l1": L1, "z_lm2": L - 2, "z_lm1": L - 1}, batch_size
    )
    op = {k: _op_from_gram(g) for k, g in grams.items()}
    head = [w.detach().to(F64) for w in model.weights()][L1:]
    eps2, w_op, prod = _head_quantities(head)
    parts = {"z_lm2_op": op["z_lm2"], "z_lm1_op": op["z_lm1"], "w_head_op": w_op}
    m = dict(measured)
    m["kappa_wl"] = _kappa(head[-1], K)
    return NetworkQuantities(
        eps1=math.sqrt(float(sse)),
        eps2=eps2,
        r=max(op["z_lm2"], op["z_lm1"], w_op),
        K=K,
        N=int(counts.sum()),
        n_penult=int(head[-1].shape[1]),
        s_k_y=math.sqrt(float(counts.min())),
        L2=model.L2,
        c3=_kappa(prod, K),
        z_op=op["z_l1"],
        measured=m,
        parts=parts,
    )


def _representation_grams(
    model: LinearHeadMLP,
    x: torch.Tensor,
    y: torch.Tensor,
    K: int,
    idx: dict[str, int],
    batch_size: int,
) -> tuple[dict[str, torch.Tensor], torch.Tensor, torch.Tensor]:
    """(float64 Gram Z_l^T Z_l of each layer ``idx`` names, ||Z_L - Y||_F^2, class counts) over
    ``x, y`` in eval mode, summed over the ranks under torch.distributed."""
    was = model.training
    model.eval()
    grams: dict[str, torch.Tensor] = {}
    sse = torch.zeros((), dtype=F64)
    counts = torch.zeros(K, dtype=F64)
    try:
        for i in range(0, len(y), batch_size):
            xb, yb = x[i : i + batch_size], y[i : i + batch_size]
            zs = model.forward_all(xb)
            for key, ell in idx.items():
                z = zs[ell].to(F64)
                grams[key] = grams.get(key, 0) + z.T @ z
            onehot = torch.nn.functional.one_hot(yb, K).to(F64)
            sse += ((zs[model.L].to(F64) - onehot) ** 2).sum().cpu()
            counts += torch.bincount(yb, minlength=K).to(F64).cpu()
    finally:
        model.train(was)
    dist = _dist()
    if dist is not None:
        for key in grams:
            dist.all_reduce(grams[key])
        dist.all_reduce(sse)
        dist.all_reduce(counts)
    return grams, sse, counts


def _head_quantities(head: list[torch.Tensor]) -> tuple[float, float, torch.Tensor]:
    """(eps2: the largest ||W_{l+1}^T W_{l+1} - W_l W_l^T||_op, the largest ||W_l||_op, the
    product W_L ... W_{L1+1}) of the linear head's float64 weights."""
    eps2 = max(
        (
            float(
                torch.linalg.matrix_norm(head[i + 1].T @ head[i + 1] - head[i] @ head[i].T, ord=2)
            )
            for i in range(len(head) - 1)
        ),
        default=0.0,
    )
    w_op = max(float(torch.linalg.matrix_norm(w, ord=2)) for w in head)
    prod = head[0]
    for w in head[1:]:
        prod = w @ prod
    return eps2, w_op, prod


@torch.no_grad()
def lemma_c2(model: LinearHeadMLP, K: int) -> dict[str, Any]:
    """Lemma C.2 on the trained linear head (written since issue 50): ``lhs`` =
    ‖(W_L W_Lᵀ)^L2 - W_(L:L1+1)W_(L:L1+1)ᵀ‖_op against ``bound`` = L2²/2 ε2 r^(2(L2-1)) (ε2 the
    largest ‖W_(l+1)ᵀW_(l+1) - W_l W_lᵀ‖_op, r the largest ‖W_l‖_op of the head), ``ratio`` =
    lhs / bound; and §5's κ(W_L) = κ(W_(L:L1+1))^(1/L2) of a balanced head: ``kappa_rel_gap`` =
    |κ(W_L) - κ(W_(L:L1+1))^(1/L2)| / κ(W_L) against ``kappa_tolerance``, the larger relative
    distance from κ(W_(L:L1+1))^(1/L2) to the ends of the bracket Weyl's inequality gives κ(W_L)
    when (W_L W_Lᵀ)^L2 is within ``bound`` of W_(L:L1+1)W_(L:L1+1)ᵀ (the largest float where
    the bound reaches s_K(W_(L:L1+1))²: no bracket)."""
    head = [w.detach().to(F64) for w in model.weights()][model.L1 :]
    L2 = len(head)
    eps2, r, prod = _head_quantities(head)
    a = head[-1] @ head[-1].T
    lhs = float(torch.linalg.matrix_norm(torch.linalg.matrix_power(a, L2) - prod @ prod.T, ord=2))
    bound = L2 * L2 / 2 * eps2 * r ** (2 * (L2 - 1))
    s = torch.linalg.svdvals(prod)
    s1, sk = float(s[0]) ** 2, float(s[K - 1]) ** 2
    kappa_wl, root = _kappa(head[-1], K), (s1 / sk) ** (1 / (2 * L2)) if sk > 0 else math.inf
    # no bracket: κ(W_L) is not bounded above; the largest float stands for the infinite
    # half-width (a summary holds no inf), which claims read as "untestable" (validity)
    tol = sys.float_info.max
    if sk > bound:
        lo = ((s1 - bound) / (sk + bound)) ** (1 / (2 * L2))
        hi = ((s1 + bound) / (sk - bound)) ** (1 / (2 * L2))
        tol = max(hi - root, root - lo) / root
    return {
        "L2": L2,
        "eps2": eps2,
        "r": r,
        "lhs": lhs,
        "bound": bound,
        "ratio": lhs / bound if bound > 0 else None,
        "kappa_wl": kappa_wl,
        "kappa_root": root,
        "kappa_rel_gap": abs(kappa_wl - root) / kappa_wl,
        "kappa_tolerance": tol,
    }


def certificate(cfg, model: LinearHeadMLP, x, y, K: int, layers: dict[str, Any]) -> dict[str, Any]:
    """Theorem 3.1's bounds for the trained network beside its measured NC1/kappa(W_L)/NC2/NC3."""

    pen = layers.get(layer_label(model.L - 1), {})
    measured = {k: pen[k] for k in ("nc1_trace", "nc2_kappa", "nc3_cos") if pen.get(k) is not None}
    q = network_quantities(model, x, y, K, measured)
    if cfg.model.head_bias:
        return {
            "applies": False,
            "reason": "the linear head has biases; Theorem 3.1 assumes Z_l = W_l Z_(l-1)",
            "measured": q.measured,
        }
    try:
        out = jacot_certificate(q).to_dict()
    except TheoryError as exc:
        out = {
            "applies": False,
            "reason": str(exc),
            "measured": q.measured,
            "hypotheses": {"eps1": q.eps1, "eps2": q.eps2, "r": q.r, "c3": q.c3},
        }
    out["lemma_c2"] = lemma_c2(model, K)
    return out
