"""Presets of the linear-head experiment for Jacot et al.'s Sections 3 and 5 on trained networks
(:mod:`.minimiser`, :mod:`.sharpness`): bias-free networks (eq. (1)) trained by full-batch gradient
descent, with the Section 5 measurements switched on. ``docs/linear-head.md`` has their numbers.

Why these sizes: the bounds (17)/(18) grow like K^(L1 K / 2) exp(c / 2), so they are informative
only for few classes; Theorem 5.2 needs lambda <= eps1^2 / (K L2 + c) with eps1 < s_K(Y) (the paper's
lambda = N K wd / 2), and its competitor needs width >= N; Theorem 3.1's (3)-(5) need a tiny eps2
(long GD), few samples (r ~ ||Z_(L-1)||_op grows like sqrt(N)) and a narrow penultimate layer. A
small initialisation (init_scale 0.5) keeps the initial sharpness (100-200 at 1) below 2 / lr: at
the default one, GD at lr 0.1 diverged for some seeds.
"""

from __future__ import annotations

from typing import Any


def _gd(epochs: int, wd: float, lr: float | None = None) -> dict[str, Any]:
    """Full-batch gradient descent: SGD without momentum, no learning-rate drop."""
    t: dict[str, Any] = {"epochs": epochs}
    if lr is not None:
        t["lr"] = lr
    no_drop = {"kind": "constant"}
    return t | {"weight_decay": wd, "optimizer": "sgd", "momentum": 0.0, "schedule": no_drop}


def _net(L2: int, width: int, head: int) -> dict[str, Any]:
    """Two bias-free ReLU layers of ``width`` and ``L2`` linear layers (hidden width ``head``),
    weights initialised at half the Kaiming scale."""
    return {
        "L1": 2,
        "L2": L2,
        "width": width,
        "head_width": head,
        "bias": False,
        "init_scale": 0.5,
    }


def _digits(per_class: int | None = None, classes: int | None = None) -> dict[str, Any]:
    d: dict[str, Any] = {"name": "digits"}
    if classes is not None:
        d["num_classes"] = classes
    if per_class is not None:
        d["samples_per_class"] = per_class
    return d


def _run(data, model, train, every: int, checkpoint: int, **extra) -> dict[str, Any]:
    out = {"data": data, "model": model, "train": train}
    return out | extra | {"measure_every": every, "checkpoint_every": checkpoint}


#: the trained-network conditioning of Prop 5.1 / Thm 5.2 (and Prop 5.3 on the same network)
_COND = {"conditioning": True, "ntk": True}
#: the edge of stability: steps eta = eta_0 / L2 for eta_0 in sweep_lrs, the sharpness logged
_EOS = {
    "sweep": "lr",
    "sweep_lrs": [1.5, 6.0, 12.0],
    "lr_over_linear_depth": True,
    "track_sharpness": True,
    "conditioning": True,
}

#: Proposition 5.3's cap on the step (§5.2): the edge-of-stability setting over step sizes from
#: well below to far above the bound (lr_bound.py); a network that diverges is recorded as such
_LR_BOUND = _EOS | {
    "sweep_lrs": [1.5, 6.0, 12.0, 24.0, 48.0, 96.0, 192.0, 1e3, 1e4, 1e5, 1e6, 1e7],
    "lr_bound": True,
    "diverge_loss_factor": 1e6,
}

SECTION5: dict[str, dict[str, Any]] = {
    # Prop 5.1 / Thm 5.2: 2 classes, width 128 >= N = 60 (lambda = 0.3)
    "conditioning-minimiser-quick": _run(
        _digits(30, 2), _net(3, 128, 8), _gd(8000, 5e-3, 0.1), 1000, 2000, **_COND
    ),
    "conditioning-minimiser": _run(
        _digits(90, 2), _net(3, 256, 8), _gd(30000, 2e-3, 0.1), 2000, 2000, **_COND
    ),
    # Theorem 3.1 in full: all of (2)-(5) apply after 12000 steps
    "thm31-bounds-quick": _run(
        _digits(20, 2), _net(3, 128, 8), _gd(12000, 5e-3, 0.1), 2000, 2000, conditioning=True
    ),
    "thm31-bounds": _run(
        _digits(20, 2),
        _net(3, 128, 8),
        _gd(30000, 5e-3, 0.1),
        2000,
        2000,
        conditioning=True,
    ),
    # Prop 5.3: ||Theta||_op, (20) and the best-conditioned partial product; 4 classes (with 10,
    # the mean-over-entries MSE needs ~3000 steps before eps1 < s_K(Y) and the bounds exist)
    "ntk-bound-quick": _run(
        _digits(30, 4), _net(4, 64, 32), _gd(2000, 1.5e-3, 0.2), 500, 1000, **_COND
    ),
    "ntk-bound": _run(_digits(), _net(4, 128, 64), _gd(10000, 1e-3, 0.1), 1000, 1000, **_COND),
    # Section 5.2: full-batch GD at eta = 0.5, 2, 4 (L2 = 3); the smallest stays below 2 / eta
    "edge-of-stability-quick": _run(_digits(50), _net(3, 64, 32), _gd(1000, 1e-4), 50, 500, **_EOS),
    "edge-of-stability": _run(_digits(), _net(3, 128, 64), _gd(3000, 1e-4), 100, 500, **_EOS),
    "lr-bound-quick": _run(_digits(50), _net(3, 64, 32), _gd(1000, 1e-4), 50, 500, **_LR_BOUND),
    "lr-bound": _run(_digits(), _net(3, 128, 64), _gd(3000, 1e-4), 100, 500, **_LR_BOUND),
}
