r"""Proposition 5.1 and Theorem 5.2 of Jacot, Súkeník, Wang & Mondelli (ICLR 2025): the condition
number of the linear head :math:`W_{L:L_1+1} = W_L\cdots W_{L_1+1}` (and of :math:`W_L`) of a
network that interpolates with a small parameter norm, in particular at a global minimiser of the
regularised loss.

Setting as in :mod:`nclab.theory.bounds_theorem` (the paper's eq. (1), no biases, :math:`n_L = K`),
with :math:`L_1 \ge 1` nonlinear layers whose activation satisfies :math:`|\sigma(x)| \le |x|`
(ReLU does) and :math:`L_2 \ge 1` linear ones, :math:`L = L_1 + L_2`.

**Proposition 5.1, eq. (17).** If :math:`\|Z_L - Y\|_F \le \epsilon_1 < s_K(Y)` and
:math:`\|\theta\|_2^2 \le LK + c`, then

.. math:: \kappa(W_{L:L_1+1}) \le \exp\Big(\tfrac12\big(c + L_1K\log K
          - 2K\log\tfrac{s_K(Y)-\epsilon_1}{\|X\|_{op}}\big)\Big).

**Theorem 5.2, eq. (18).** If some nonlinear part of squared norm :math:`c` maps :math:`X` to
:math:`Z_{L_1} = Y` and :math:`\lambda \le \epsilon_1^2/(KL_2 + c)`, every global minimiser of
:math:`\frac12\|Y - Z_L\|_F^2 + \frac\lambda2\|\theta\|^2` has :math:`\|Z_L-Y\|_F\le\epsilon_1`
and :math:`\|\theta\|^2 \le KL_2 + c = LK + (c - L_1K)`, so (17) applies with :math:`c - L_1K`:

.. math:: \kappa(W_{L:L_1+1}) \le \Big(\tfrac{\|X\|_{op}}{s_K(Y)-\epsilon_1}\Big)^K
          \exp\big(\tfrac12(c - L_1K + L_1K\log K)\big),
          \qquad \kappa(W_L) = \kappa(W_{L:L_1+1})^{1/L_2}.

The last identity holds because the linear layers of any critical point are balanced
(:math:`W_\ell W_\ell^\top = W_{\ell+1}^\top W_{\ell+1}`), which aligns their singular vectors and
makes their non-zero singular values equal, so those of the product are their :math:`L_2`-th
powers. The paper's (18) and the last line of its proof print the exponent :math:`1/L_1`; its
Section 5 text writes :math:`1/L_2`, which is what the identity gives (``docs/theory-jacot.md``;
``tests/test_theory_conditioning.py`` checks it on balanced heads). The printed value is
reported as ``kappa_wl_printed`` for comparison.

The theorem's hypothesis is printed :math:`\lambda \le \epsilon_1^2/(KL + c)`; its proof needs only
:math:`\lambda \le \epsilon_1^2/(KL_2 + c)` (the competitor's norm is :math:`KL_2 + c`), which we
use: the printed condition implies it.

>>> p = jacot_conditioning(K=3, L1=2, L2=4, x_op=2.0, N=30, c=8.0, lam=1e-3)
>>> p.applies, p.source, round(p.eps1, 4), round(p.kappa_product_bound, 2)
(True, 'theorem 5.2', 0.1414, 21.3)
>>> round(p.kappa_wl_bound, 4), round(p.kappa_wl_printed, 4)  # exponent 1/L2 = 1/4; printed 1/L1
(2.1483, 4.6151)
>>> jacot_conditioning(K=3, L1=2, L2=4, x_op=2.0, N=30, eps1=0.1, c=8.0, lam=1e-3).reason
'lambda = 0.001 > eps1^2 / (K L2 + c) = 0.0005: the global minimiser need not eps1-interpolate'
"""

from __future__ import annotations

import dataclasses
import math

from .base import Prediction
from .bounds_theorem import hypothesis_failure, nc1_bound, nc2_bound, nc3_bound, psi
from .params import check_int, check_number, require

__all__ = [
    "JacotConditioning",
    "composed_nc_bounds",
    "jacot_conditioning",
    "kappa_wl_from_product",
    "log_kappa_product_bound",
]


def log_kappa_product_bound(
    K: int, L1: int, slack: float, s_k_y: float, eps1: float, x_op: float
) -> float:
    r""":math:`\log` of the bound (17): :math:`\frac12(c + L_1K\log K - 2K\log((s_K(Y)-\epsilon_1)
    /\|X\|_{op}))` with ``slack`` :math:`= c` (:math:`\|\theta\|^2 \le LK + c`).

    >>> log_kappa_product_bound(2, 1, 0.0, 1.0, 0.0, 1.0) == math.log(2.0)  # (1/2) 2 log 2
    True
    """
    return 0.5 * (slack + L1 * K * math.log(K) - 2.0 * K * math.log((s_k_y - eps1) / x_op))


def kappa_wl_from_product(kappa_product: float, L2: int) -> float:
    r""":math:`\kappa(W_L) = \kappa(W_{L:L_1+1})^{1/L_2}` for balanced linear layers.

    >>> kappa_wl_from_product(16.0, 4)
    2.0
    """
    return kappa_product ** (1.0 / L2)


def _exp(x: float) -> float:
    return math.exp(x) if x < 709.0 else math.inf


@dataclasses.dataclass(frozen=True)
class JacotConditioning(Prediction):
    r"""Bounds (17) / (18). ``source`` is ``"proposition 5.1"`` (from a measured
    :math:`\|\theta\|^2`) or ``"theorem 5.2"`` (at a global minimiser). ``slack`` is the :math:`c`
    of (17) (:math:`\|\theta\|^2 - LK`, or :math:`c - L_1K` under Theorem 5.2); ``lam_max`` the
    largest :math:`\lambda` Theorem 5.2 allows at this :math:`\epsilon_1`.
    ``kappa_wl_bound`` (:math:`= \text{kappa\_product\_bound}^{1/L_2}`) bounds :math:`\kappa(W_L)`
    when the linear layers are balanced: always under Theorem 5.2, an assumption
    (``kappa_wl_needs``) under Proposition 5.1. ``kappa_wl_printed`` uses the printed exponent
    :math:`1/L_1` (a typo). Bounds too large for a float are ``inf``; their logs are finite.
    """

    applies: bool
    reason: str
    source: str
    s_k_y: float
    eps1: float | None = None
    slack: float | None = None
    lam_max: float | None = None
    log_kappa_product_bound: float | None = None
    kappa_product_bound: float | None = None
    kappa_wl_bound: float | None = None
    kappa_wl_printed: float | None = None
    kappa_wl_needs: str = ""


def _check(K, L1, L2, x_op, N, s_k_y, eps1, theta_sq, c, lam) -> float:
    """Validate; return s_K(Y) (default sqrt(N/K), balanced classes)."""
    check_int("K", K, 2)
    check_int("L1", L1, 1, why="the bound on the nonlinear part's norm needs a nonlinear layer")
    check_int("L2", L2, 1)
    check_number("x_op", x_op, lo=0.0, lo_open=True)
    check_number("eps1", eps1, lo=0.0, allow_none=True)
    check_number("theta_sq", theta_sq, lo=0.0, allow_none=True)
    check_number("c", c, lo=0.0, allow_none=True)
    check_number("lam", lam, lo=0.0, lo_open=True, allow_none=True)
    require(
        (theta_sq is None) != (c is None),
        "give either theta_sq (||theta||^2 of a network: Proposition 5.1) or c (||theta_nonlin||^2 "
        "of a nonlinear part with Z_L1 = Y: Theorem 5.2), not both nor neither",
    )
    require(theta_sq is None or eps1 is not None, "Proposition 5.1 needs eps1 (||Z_L - Y||_F)")
    require(c is None or eps1 is not None or lam is not None, "Theorem 5.2 needs eps1 or lam")
    if s_k_y is None:
        require(N is not None, "give N (balanced classes: s_K(Y) = sqrt(N/K)) or s_k_y")
        check_int("N", N, K, min_label=f"K = {K}")
        require(N % K == 0, f"N = {N} is not a multiple of K = {K}: pass s_k_y")
        return math.sqrt(N / K)
    return check_number("s_k_y", s_k_y, lo=0.0, lo_open=True)


def _bounds(K: int, L1: int, L2: int, slack: float, s_k_y: float, eps1: float, x_op: float):
    log_b = log_kappa_product_bound(K, L1, slack, s_k_y, eps1, x_op)
    return {
        "log_kappa_product_bound": log_b,
        "kappa_product_bound": _exp(log_b),
        "kappa_wl_bound": _exp(log_b / L2),
        "kappa_wl_printed": _exp(log_b / L1),
    }


def jacot_conditioning(
    K: int,
    L1: int,
    L2: int,
    x_op: float,
    N: int | None = None,
    s_k_y: float | None = None,
    eps1: float | None = None,
    theta_sq: float | None = None,
    c: float | None = None,
    lam: float | None = None,
) -> JacotConditioning:
    r"""Jacot et al. (ICLR 2025), Proposition 5.1 (17) and Theorem 5.2 (18): upper bounds on
    :math:`\kappa(W_{L:L_1+1})` and :math:`\kappa(W_L)`.

    Args:
        K: classes (:math:`n_L = K`). L1, L2: nonlinear (>= 1) and linear (>= 1) layers.
        x_op: :math:`\|X\|_{op}` of the training inputs (features as columns).
        N or s_k_y: :math:`s_K(Y) = \sqrt{\min_c n_c}`; default :math:`\sqrt{N/K}`.
        eps1: :math:`\|Z_L - Y\|_F`.
        theta_sq: :math:`\|\theta\|_2^2` of a network (Proposition 5.1; ``eps1`` required).
        c: :math:`\|\theta_{nonlin}\|^2` of a nonlinear part with :math:`Z_{L_1} = Y` (Theorem 5.2),
            with ``lam`` (:math:`\lambda`) and/or ``eps1``: without ``eps1``, the smallest one the
            theorem allows, :math:`\sqrt{\lambda(KL_2+c)}`; without ``lam``, the bound for every
            :math:`\lambda \le` ``lam_max``.

    ``applies`` is False, with the failing hypothesis in ``reason``, when
    :math:`\epsilon_1 \ge s_K(Y)` or :math:`\lambda > \epsilon_1^2/(KL_2 + c)`. Invalid instances
    raise :class:`~nclab.errors.TheoryError`.

    >>> p = jacot_conditioning(K=2, L1=1, L2=2, x_op=1.0, s_k_y=1.0, eps1=0.0, theta_sq=6.0)
    >>> p.source, p.slack, p.kappa_product_bound, round(p.kappa_wl_bound, 6)  # 2 = exp(log 2)
    ('proposition 5.1', 0.0, 2.0, 1.414214)
    >>> jacot_conditioning(K=2, L1=1, L2=2, x_op=1.0, N=4, eps1=1.5, theta_sq=6.0).reason
    'approximate interpolation fails: eps1 = 1.5 >= s_K(Y) = 1.414'
    """
    s_k_y = _check(K, L1, L2, x_op, N, s_k_y, eps1, theta_sq, c, lam)
    L = L1 + L2
    if theta_sq is not None:
        source, slack, lam_max = "proposition 5.1", theta_sq - L * K, None
        needs = "the linear layers to be balanced (not assumed by Proposition 5.1)"
    else:
        source, slack, needs = "theorem 5.2", c - L1 * K, ""
        if eps1 is None:
            eps1 = math.sqrt(lam * (K * L2 + c))
        lam_max = eps1 * eps1 / (K * L2 + c)
    head = {"source": source, "s_k_y": s_k_y, "eps1": eps1, "slack": slack, "lam_max": lam_max}
    if eps1 >= s_k_y:
        why = f"approximate interpolation fails: eps1 = {eps1:.4g} >= s_K(Y) = {s_k_y:.4g}"
        return JacotConditioning(False, why, **head)
    if lam is not None and lam_max is not None and lam > lam_max * (1 + 1e-12):
        why = (
            f"lambda = {lam:.4g} > eps1^2 / (K L2 + c) = {lam_max:.4g}: the global minimiser "
            "need not eps1-interpolate"
        )
        return JacotConditioning(False, why, **head)
    bounds = _bounds(K, L1, L2, slack, s_k_y, eps1, x_op)
    return JacotConditioning(True, "", **head, **bounds, kappa_wl_needs=needs)


def composed_nc_bounds(
    eps1: float, r: float, K: int, N: int, n_penult: int, s_k_y: float, kappa_wl: float
) -> dict[str, float | str | None]:
    r"""The sentence after Theorem 5.2: Theorem 3.1's bounds (2), (4), (5) on NC1, NC2 and NC3 of
    :math:`Z_{L-1}` at :math:`\epsilon_2 = 0` (a global minimiser's linear layers are balanced)
    with :math:`\kappa(W_L)` = ``kappa_wl``, (18)'s bound on it. ``nc1`` is (2) (it does not read
    :math:`\kappa(W_L)`), ``nc2`` is (4) (None where :math:`\delta = r\Psi/s_K(Y) \ge 1`: no
    bound), ``nc3`` is (5) as a number even where it is at most -1 (vacuous: a cosine is >= -1);
    ``reason`` says why nothing is given (Theorem 3.1's hypotheses on :math:`\epsilon_1`), else "".

    >>> b = composed_nc_bounds(0.1, 2.0, 2, 8, 4, 2.0, kappa_wl=1.0)
    >>> round(b["nc1"], 6), round(b["nc2"], 4), round(b["nc3"], 4), b["reason"]
    (0.013679, 1.2353, 0.875, '')
    >>> composed_nc_bounds(0.1, 2.0, 2, 8, 4, 2.0, kappa_wl=3.0)["nc3"] < -1  # vacuous
    True
    """
    out: dict[str, float | str | None] = dict.fromkeys(("psi", "delta", "nc1", "nc2", "nc3"))
    why = hypothesis_failure(eps1, K, s_k_y)
    if why is not None:
        return out | {"reason": why}
    p = psi(eps1, 0.0, r, s_k_y, n_penult)
    finite = math.isfinite(kappa_wl)
    return out | {
        "reason": "",
        "psi": p,
        "delta": r * p / s_k_y,
        "nc1": nc1_bound(eps1, 0.0, r, K, N, n_penult, s_k_y),
        "nc2": nc2_bound(kappa_wl, r, p, s_k_y) if finite else None,
        "nc3": nc3_bound(kappa_wl, eps1, r, p, N) if finite else None,
    }
