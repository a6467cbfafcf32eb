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

**The step cap in nclab's convention** (:func:`lr_max`, ``nclab theory jacot-lr-max``). nclab
trains the mean of the square loss over the :math:`NK` entries with coupled weight decay ``wd``:
the paper's objective times :math:`2/(NK)` at :math:`\lambda = NK\,wd/2`. Its Hessian is
:math:`2/(NK)` times the paper's, so the step GD on nclab's loss can take is :math:`NK/2` times
the paper's, :math:`\eta_{\max} = NK^3r^2/(L_2(s_K(Y)-\epsilon_1)^2)` (``tests/test_lr_bound.py``
checks the factor on the Hessians; the ``linear-head`` experiment's step-size sweeps compare
their steps with it). :func:`lr_max` computes the paper's cap directly, :math:`2r^2K^2/(L_2
(s_K(Y)-\epsilon_1)^2)`; :class:`JacotNTK`'s ``lr_max`` is the same cap as :math:`2/` (20)'s
bound (equal up to rounding; each keeps its own arithmetic, so that recorded numbers stay as
they were).
"""

from __future__ import annotations

import dataclasses
import math

from ..errors import TheoryError
from .base import Prediction
from .params import check_int, check_number, require

__all__ = ["JacotLrMax", "JacotNTK", "jacot_lr_max", "jacot_ntk", "lr_max", "ntk_sum_bound"]


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


def _checked(
    K: int, L2: int, r: float, eps1: float, N: int | None, s_k_y: float | None
) -> tuple[float, str | None]:
    """Proposition 5.3's instance checked (:class:`~nclab.errors.TheoryError` for an invalid one):
    (s_K(Y), given or sqrt(N/K) for balanced classes; why its hypothesis eps1 < s_K(Y) fails, None
    when it holds)."""
    check_int("K", K, 2)
    check_int("L2", L2, 1)
    check_number("r", r, lo=0.0, lo_open=True)
    check_number("eps1", eps1, lo=0.0)
    if s_k_y is None:
        require(N is not None, "give N (balanced classes: s_K(Y) = sqrt(N/K)) or s_k_y")
        check_int("N", N, K, min_label=f"K = {K}")
        require(N % K == 0, f"N = {N} is not a multiple of K = {K}: pass s_k_y")
        s_k_y = math.sqrt(N / K)
    check_number("s_k_y", s_k_y, lo=0.0, lo_open=True)
    if eps1 >= s_k_y:
        return s_k_y, f"approximate interpolation fails: eps1 = {eps1:.4g} >= s_K(Y) = {s_k_y:.4g}"
    return s_k_y, None


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
    s_k_y, why = _checked(K, L2, r, eps1, N, s_k_y)
    check_number("ntk_op", ntk_op, lo=0.0, allow_none=True)
    if why is not None:
        return JacotNTK(False, why, s_k_y)
    gap = s_k_y - eps1
    lower = gap * gap * L2 / (K * K * r * r)
    kappas: tuple[float, ...] = ()
    if ntk_op is not None:
        kappas = tuple(math.sqrt(ntk_op) * K * r / (math.sqrt(M) * gap) for M in range(1, L2 + 1))
    return JacotNTK(True, "", s_k_y, lower, 2.0 / lower, kappas)


def lr_max(N: int, K: int, L2: int, r: float, eps1: float, s_k_y: float) -> tuple[float, float]:
    r"""Proposition 5.3's cap on the GD step at an :math:`\epsilon_1`-interpolating point with
    :math:`r`-bounded linear layers: (the paper's :math:`2r^2K^2/(L_2(s_K(Y)-\epsilon_1)^2)`,
    nclab's mean loss's :math:`NK/2` times it; see the module docstring), for
    :math:`\epsilon_1 < s_K(Y)` (else :class:`~nclab.errors.TheoryError`).

    >>> lr_max(N=8, K=2, L2=3, r=2.0, eps1=0.0, s_k_y=2.0)  # 2*4*4/(3*4) = 8/3; x 8
    (2.6666666666666665, 21.333333333333332)
    """
    if not eps1 < s_k_y:
        raise TheoryError(f"the bound needs eps1 < s_K(Y), got {eps1} >= {s_k_y}")
    paper = 2.0 * r * r * K * K / (L2 * (s_k_y - eps1) ** 2)
    return paper, N * K / 2.0 * paper


@dataclasses.dataclass(frozen=True)
class JacotLrMax(Prediction):
    r"""Proposition 5.3's step cap: ``lr_max`` for the paper's loss
    :math:`\frac12\|Z_L-Y\|_F^2`, ``lr_max_mean`` for nclab's mean square loss over the
    :math:`NK` entries (:math:`NK/2` times it; needs N)."""

    applies: bool
    reason: str
    s_k_y: float
    lr_max: float | None = None
    lr_max_mean: float | None = None


def jacot_lr_max(
    K: int, L2: int, r: float, eps1: float, N: int | None = None, s_k_y: float | None = None
) -> JacotLrMax:
    r"""Jacot et al. (ICLR 2025), Proposition 5.3 (§5.2): the largest GD step stable at an
    :math:`\epsilon_1`-interpolating point whose linear layers have :math:`\|W_\ell\|_{op} \le r`,
    on the paper's loss and on nclab's mean loss.

    Args:
        K: classes. L2: linear layers (>= 1). r: bound on the linear layers' :math:`\|W_\ell\|_{op}`.
        eps1: :math:`\|Z_L - Y\|_F`. N: training samples (nclab's cap, and :math:`s_K(Y) =
            \sqrt{N/K}` for balanced classes). s_k_y: :math:`s_K(Y) = \sqrt{\min_c n_c}`.

    ``applies`` is False when :math:`\epsilon_1 \ge s_K(Y)` (no cap: the proposition's
    hypothesis fails).

    >>> p = jacot_lr_max(K=10, L2=3, r=1.0, eps1=2.0, N=500)
    >>> f"{p.lr_max:.6g}", f"{p.lr_max_mean:.6g}"  # 200 / (3 (sqrt(50) - 2)^2); x 2500
    ('2.59245', '6481.12')
    """
    if N is not None:  # nclab's cap reads N even where s_k_y is given
        check_int("N", N, K, min_label=f"K = {K}")
    s_k_y, why = _checked(K, L2, r, eps1, N, s_k_y)
    if why is not None:
        return JacotLrMax(False, why, s_k_y)
    paper, mean = lr_max(N or 0, K, L2, r, eps1, s_k_y)
    return JacotLrMax(True, "", s_k_y, paper, mean if N is not None else None)
