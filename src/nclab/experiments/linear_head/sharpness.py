r"""The edge of stability on a run (Cohen et al. 2021; Jacot et al. 2025, §5.2): the top eigenvalue
of the training objective's Hessian (the *sharpness*) against the stability threshold
:math:`2/\eta` of gradient descent with step :math:`\eta`.

With ``track_sharpness`` every record carries ``sharpness``: the top Hessian eigenvalue
(:func:`nclab.curvature.hessian_top_eigenvalue`, Lanczos on Hessian-vector products) of exactly the
objective full-batch training minimises, the mean of :math:`(Z_L - Y)^2` over the :math:`NK`
entries (or the mean cross-entropy) plus :math:`\frac{\lambda_t}{2}\|\theta\|^2` (coupled weight
decay), on the whole training set. :func:`sharpness_derived` gives the claim
``jacot/edge-of-stability``'s scalars:

* ``eos_ratio_late``: the mean over the records of the last third of the run of
  :math:`\text{sharpness}\cdot\eta/2` (1 = at the edge of stability),
* ``eos_ratio_max``: its largest value over the run, ``eos_ratio_start``: at the first record,
* ``sharpness_late``: the late mean sharpness itself.
"""

from __future__ import annotations

from typing import Any

import torch
import torch.nn.functional as F

from ...curvature import hessian_top_eigenvalue

KEYS = ("eos_ratio_late", "eos_ratio_max", "eos_ratio_start", "sharpness_late")


def training_sharpness(
    model, x: torch.Tensor, y: torch.Tensor, K: int, loss: str, weight_decay: float, iters: int
) -> float:
    """The top Hessian eigenvalue of the training objective at the model's current weights."""
    if loss == "mse":

        def loss_fn(out, yy):
            return ((out - F.one_hot(yy, K).to(out.dtype)) ** 2).mean()
    else:

        def loss_fn(out, yy):
            return F.cross_entropy(out, yy)

    was = model.training
    model.eval()
    try:
        est = hessian_top_eigenvalue(
            model, loss_fn, (x, y), weight_decay=weight_decay, max_iter=iters, tol=1e-4
        )
    finally:
        model.train(was)
    return est.value


def sharpness_derived(history: list[dict[str, Any]]) -> dict[str, float | None]:
    """The scalars above from a network's records (all None unless ``sharpness`` was logged).

    >>> recs = [{"epoch": e, "lr": 0.1, "sharpness": s} for e, s in enumerate([5, 19, 20, 21])]
    >>> d = sharpness_derived(recs)
    >>> d["eos_ratio_start"], d["eos_ratio_late"], d["eos_ratio_max"]
    (0.25, 1.05, 1.05)
    """
    recs = [r for r in history if r.get("sharpness") is not None and r.get("lr")]
    out: dict[str, float | None] = dict.fromkeys(KEYS)
    if not recs:
        return out
    ratios = [r["sharpness"] * r["lr"] / 2.0 for r in recs]
    late = recs[len(recs) - max(1, len(recs) // 3) :]
    out["eos_ratio_late"] = sum(r["sharpness"] * r["lr"] / 2.0 for r in late) / len(late)
    out["eos_ratio_max"] = max(ratios)
    out["eos_ratio_start"] = ratios[0]
    out["sharpness_late"] = sum(r["sharpness"] for r in late) / len(late)
    return out
