"""Random starts of L-BFGS on an enumerated true risk, and the curvature at a minimiser, shared by
fc-landscape and fc-lemmas (their settings: :class:`~nclab.experiments.common.config.LBFGSCfg`).

A start draws every entry N(0, s²) with one scale s log-uniform in [``init_min``, ``init_max``];
L-BFGS runs in rounds (a fresh memory each round) until max |∇R| <= ``grad_tol`` or
``max_rounds``. The stopping rule gives the tolerances of both experiments: near a minimiser whose
smallest non-flat Hessian eigenvalue is μ, R - R* <= n g² / (2μ) (n parameters).

>>> gen = torch.Generator().manual_seed(0)
>>> scale, (x,) = random_start(gen, LBFGSCfg(), (3,))
>>> f, gmax, rounds = minimise([x], lambda: (x - 1).pow(2).sum(), LBFGSCfg())
>>> f < 1e-16, gmax <= 1e-8, rounds
(True, True, 1)
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import torch

from .config import LBFGSCfg

#: Hessian eigenvalues below this fraction of the largest are the minimiser set's flat directions
FLAT = 1e-9
#: Hessian rows computed at once (memory ~ rows x the risk's intermediates)
HESSIAN_CHUNK = 64


def log_uniform(gen: torch.Generator, lo: float, hi: float) -> float:
    """One draw log-uniform in [lo, hi] (one float64 uniform from ``gen``)."""
    u = float(torch.rand((), generator=gen, dtype=torch.float64))
    return math.exp(math.log(lo) + u * (math.log(hi) - math.log(lo)))


def random_start(
    gen: torch.Generator, cfg: LBFGSCfg, *shapes: Sequence[int]
) -> tuple[float, list[torch.Tensor]]:
    """(s, one float64 tensor of each shape, entries N(0, s²), requiring gradients), s
    log-uniform in [``cfg.init_min``, ``cfg.init_max``]; drawn in this order from ``gen``."""
    scale = log_uniform(gen, cfg.init_min, cfg.init_max)
    params = [
        (scale * torch.randn(*shape, generator=gen, dtype=torch.float64)).requires_grad_()
        for shape in shapes
    ]
    return scale, params


def minimise(
    params: list[torch.Tensor], risk: Callable[[], torch.Tensor], cfg: LBFGSCfg
) -> tuple[float, float, int]:
    """L-BFGS on ``risk()`` over ``params`` (in place), in rounds until max |∇R| <=
    ``cfg.grad_tol`` or ``cfg.max_rounds``: (the last value, the largest |∇R|, the rounds)."""

    def closure():
        opt.zero_grad()
        f = risk()
        f.backward()
        return f

    gmax, f, rounds = math.inf, math.inf, 0
    while rounds < cfg.max_rounds and gmax > cfg.grad_tol:
        opt = torch.optim.LBFGS(
            params,
            lr=1,
            max_iter=cfg.iters_per_round,
            tolerance_grad=cfg.grad_tol,
            tolerance_change=0.0,
            history_size=cfg.history,
            line_search_fn="strong_wolfe",
        )
        opt.step(closure)
        f = float(closure().detach())
        gmax = max(float(q.grad.abs().max()) for q in params)
        rounds += 1
    return f, gmax, rounds


def min_curvature(fn: Callable[[torch.Tensor], torch.Tensor], theta: torch.Tensor) -> float:
    """The smallest Hessian eigenvalue of ``fn`` at ``theta`` above the flat ones (below
    :data:`FLAT` times the largest |eigenvalue|).

    The Hessian is reverse over reverse in chunks of :data:`HESSIAN_CHUNK` rows: torch.func.hessian
    (forward over reverse, every direction at once) held ~20 GB at fc-landscape's L = 4 (3330
    parameters, 6561 sentences)."""
    H = torch.func.jacrev(torch.func.grad(fn), chunk_size=HESSIAN_CHUNK)(theta.detach())
    ev = torch.linalg.eigvalsh(0.5 * (H + H.T))
    top = float(ev.abs().max())
    return float(ev[ev > FLAT * top].min())
