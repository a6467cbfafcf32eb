r"""Proposition 5.3 of Jacot, Súkeník, Wang & Mondelli (ICLR 2025): a bounded neural tangent kernel
forces a well-conditioned linear layer, and interpolation with bounded weights forces a large NTK.

Setting as in :mod:`nclab.theory.bounds_theorem` (eq. (1), :math:`L_2` linear layers at the end,
:math:`n_L = K`). The NTK is :math:`\Theta = \nabla_\theta Z_L(\nabla_\theta Z_L)^\top`
(:math:`NK\times NK`) and

.. math:: \|\Theta\|_{op} = \max_A \frac{\|\nabla_\theta\mathrm{Tr}[Z_LA^\top]\|_2^2}{\|A\|_F^2}.

For a network with :math:`\|Z_L - Y\|_F \le \epsilon_1 < s_K(Y)` and :math:`\|W_\ell\|_{op} \le r`
for its linear layers, the proof (Appendix B) shows

.. math:: \|\Theta\|_{op} \ge \frac{(s_K(Y)-\epsilon_1)^2}{K^2r^2}
          \sum_{\ell=L_1+1}^{L}\kappa(W_{L:\ell})^2
          \;\ge\; \frac{(s_K(Y)-\epsilon_1)^2}{K^2r^2}\,L_2 \qquad (20)

(the second because every :math:`\kappa \ge 1`), and, writing :math:`\|\Theta\|_{op} = CL_2`, for
every :math:`M \le L_2` some :math:`\ell \in \{L_1+1, \dots, L_1+M\}` has

.. math:: \kappa(W_{L:\ell}) \le \frac{\sqrt{CL_2}\,Kr}{\sqrt M\,(s_K(Y)-\epsilon_1)}
          = \frac{\sqrt{\|\Theta\|_{op}}\,Kr}{\sqrt M\,(s_K(Y)-\epsilon_1)}.

Only the linear layers' part of the NTK enters the proof, so both statements hold with
:math:`\Theta` restricted to the linear head's parameters (a smaller kernel). Under the edge of
stability (top Hessian eigenvalue :math:`\approx 2/\eta`) with :math:`\eta = \eta_0/L_2`,
:math:`\|\Theta\|_{op} \lesssim 2L_2/\eta_0`, and (20) caps the step: GD can only be stable at an
:math:`\epsilon_1`-interpolating point with :math:`r`-bounded weights if
:math:`\eta < 2K^2r^2/(L_2(s_K(Y)-\epsilon_1)^2)` (``lr_max``, for the paper's loss
:math:`\frac12\|Z_L-Y\|_F^2`).

A step of the printed proof reads :math:`\|W_{L:\ell+1}\|_F^2 \ge \|W_{L:\ell}\|_F^2/\|W_\ell\|_{op}`;
the square on :math:`\|W_\ell\|_{op}` is missing (:math:`\|AB\|_F \le \|A\|_F\|B\|_{op}`), and its
last line uses it squared, as here.

>>> p = jacot_ntk(K=2, L2=3, r=2.0, N=8, eps1=0.0, ntk_op=12.0)
>>> p.applies, p.ntk_lower_bound, [round(b, 4) for b in p.kappa_bounds]  # s_K(Y) = 2
(True, 0.75, [6.9282, 4.899, 4.0])
>>> jacot_ntk(K=2, L2=3, r=2.0, N=8, eps1=2.5).reason
'approximate interpolation fails: eps1 = 2.5 >= s_K(Y) = 2'
"""

from __future__ import annotations

import dataclasses
import math

from .base import Prediction
from .params import check_int, check_number, require

__all__ = ["JacotNTK", "jacot_ntk", "ntk_sum_bound"]


def ntk_sum_bound(kappas: list[float], K: int, r: float, s_k_y: float, eps1: float) -> float:
    r"""The proof's intermediate lower bound :math:`\frac{(s_K(Y)-\epsilon_1)^2}{K^2r^2}\sum_\ell
    \kappa(W_{L:\ell})^2` on :math:`\|\Theta\|_{op}`, from the measured :math:`\kappa(W_{L:\ell})`,
    :math:`\ell = L_1+1..L`.

    >>> ntk_sum_bound([2.0, 1.0], K=2, r=1.0, s_k_y=2.0, eps1=0.0)
    5.0
    """
    return (s_k_y - eps1) ** 2 / (K * K * r * r) * sum(k * k for k in kappas)


@dataclasses.dataclass(frozen=True)
class JacotNTK(Prediction):
    r"""Proposition 5.3's bounds. ``ntk_lower_bound``: (20); ``lr_max``: the largest GD step
    compatible with (20) at the edge of stability (paper's loss :math:`\frac12\|Z_L-Y\|_F^2`);
    ``kappa_bounds[M-1]``: the bound on :math:`\min_{L_1 < \ell \le L_1+M}\kappa(W_{L:\ell})`,
    :math:`M = 1..L_2` (only with ``ntk_op``)."""

    applies: bool
    reason: str
    s_k_y: float
    ntk_lower_bound: float | None = None
    lr_max: float | None = None
    kappa_bounds: tuple[float, ...] = ()


def jacot_ntk(
    K: int,
    L2: int,
    r: float,
    eps1: float,
    N: int | None = None,
    s_k_y: float | None = None,
    ntk_op: float | None = None,
) -> JacotNTK:
    r"""Jacot et al. (ICLR 2025), Proposition 5.3: the lower bound (20) on :math:`\|\Theta\|_{op}`
    and, given :math:`\|\Theta\|_{op}` (``ntk_op``, :math:`= CL_2`), the bound on the best
    conditioned partial product :math:`\kappa(W_{L:\ell})` among the first :math:`M` linear layers.

    Args:
        K: classes. L2: linear layers (>= 1). r: bound on the linear layers' :math:`\|W_\ell\|_{op}`.
        eps1: :math:`\|Z_L - Y\|_F`. N or s_k_y: :math:`s_K(Y) = \sqrt{\min_c n_c}` (default
            :math:`\sqrt{N/K}`, balanced classes).
        ntk_op: a measured :math:`\|\Theta\|_{op}` (e.g. :func:`nclab.curvature.ntk_operator_norm`).

    ``applies`` is False when :math:`\epsilon_1 \ge s_K(Y)` (:math:`Z_L` may lose rank K); invalid
    instances raise :class:`~nclab.errors.TheoryError`.

    >>> p = jacot_ntk(K=10, L2=4, r=1.5, N=1000, eps1=1.0)
    >>> round(p.ntk_lower_bound, 4), round(p.lr_max, 4)  # (10 - 1)^2 4 / (100 * 2.25); 2 / that
    (1.44, 1.3889)
    """
    check_int("K", K, 2)
    check_int("L2", L2, 1)
    check_number("r", r, lo=0.0, lo_open=True)
    check_number("eps1", eps1, lo=0.0)
    check_number("ntk_op", ntk_op, lo=0.0, allow_none=True)
    if s_k_y is None:
        require(N is not None, "give N (balanced classes: s_K(Y) = sqrt(N/K)) or s_k_y")
        check_int("N", N, K, min_label=f"K = {K}")
        require(N % K == 0, f"N = {N} is not a multiple of K = {K}: pass s_k_y")
        s_k_y = math.sqrt(N / K)
    check_number("s_k_y", s_k_y, lo=0.0, lo_open=True)
    if eps1 >= s_k_y:
        why = f"approximate interpolation fails: eps1 = {eps1:.4g} >= s_K(Y) = {s_k_y:.4g}"
        return JacotNTK(False, why, s_k_y)
    gap = s_k_y - eps1
    lower = gap * gap * L2 / (K * K * r * r)
    kappas: tuple[float, ...] = ()
    if ntk_op is not None:
        kappas = tuple(math.sqrt(ntk_op) * K * r / (math.sqrt(M) * gap) for M in range(1, L2 + 1))
    return JacotNTK(True, "", s_k_y, lower, 2.0 / lower, kappas)
