r"""Theorem 3.1 of Jacot, Súkeník, Wang & Mondelli, "Wide Neural Networks Trained with Weight Decay
Provably Exhibit Neural Collapse" (ICLR 2025): bounds on NC1, :math:`\kappa(W_L)`, NC2 and NC3 of a
network that ends with :math:`L_2 \ge 2` linear layers.

Setting (the paper's eq. (1)): :math:`Z_\ell = \sigma(W_\ell Z_{\ell-1})` for the :math:`L_1`
nonlinear layers, :math:`Z_\ell = W_\ell Z_{\ell-1}` for the :math:`L_2` linear ones, no biases,
features as columns (:math:`Z_\ell \in \mathbb R^{n_\ell\times N}`), one-hot labels
:math:`Y\in\mathbb R^{K\times N}`. Hypotheses:

* approximate interpolation :math:`\|Z_L - Y\|_F \le \epsilon_1`,
* approximate balancedness :math:`\|W_{\ell+1}^\top W_{\ell+1} - W_\ell W_\ell^\top\|_{op} \le
  \epsilon_2` for :math:`\ell = L_1+1..L-1`,
* bounded representations and weights :math:`\|Z_{L-2}\|_{op}, \|Z_{L-1}\|_{op},
  \|W_\ell\|_{op} \le r` (linear layers),
* :math:`\epsilon_1 < s_K(Y)` and :math:`\epsilon_1 < \sqrt{K-1}\,s_K(Y)/2` (for balanced classes
  :math:`s_K(Y)=\sqrt{N/K}` and the second is the paper's :math:`\sqrt{(K-1)N/(4K)}`; equality makes
  the bounds infinite, so we require strict inequality).

With :math:`\Psi = r\left(\frac{\epsilon_1}{s_K(Y)-\epsilon_1} + \sqrt{n_{L-1}\epsilon_2}\right)`:

(2) :math:`\mathrm{NC1}(Z_{L-1}) \le \frac{r^2}{N}\,\Psi^2 \big/ \left(\sqrt{\tfrac{K-1}{K}} -
\tfrac{2\epsilon_1}{\sqrt K s_K(Y)}\right)^2`
(the paper writes :math:`2\epsilon_1/\sqrt N`, equal for balanced classes; the proof in Appendix B
gives :math:`\sqrt K s_K(Y) = \sqrt{K n_{\min}}` in general, with :math:`\mu_G` the mean of the class
means, nclab's default).

(3) with :math:`\kappa(W_{L:L_1+1}) \le c_3`, :math:`\delta = \frac{L_2^2}{2} r^{2(L_2-1)}
\epsilon_2` and :math:`\epsilon = \delta / \left((s_K(Y)-\epsilon_1)^2/\|Z_{L_1}\|_{op}^2 -
\delta\right)`: :math:`\kappa(W_L) \le c_3^{1/L_2}(1+\epsilon)^{1/L_2} + c_3^{1/L_2-1}\epsilon`.
The paper bounds :math:`\|Z_{L_1}\|_{op} \le \|X\|_{op} r^{L_1}`; we accept the measured
:math:`\|Z_{L_1}\|_{op}` (``z_op``) and fall back on that bound (``x_op``, ``L1``). The proof's
intermediate, tighter step :math:`\kappa(W_L) \le (c_3^2(1+\epsilon)+\epsilon)^{1/(2L_2)}` is
reported as ``kappa_wl_tight``.

(4) :math:`\mathrm{NC2}(Z_{L-1}) = \kappa(\bar Z_{L-1}) \le \frac{\kappa(W_L) + r\Psi/s_K(Y)}
{1 - r\Psi/s_K(Y)}` when :math:`r\Psi < s_K(Y)`.

(5) :math:`\mathrm{NC3}(Z_{L-1}, W_L) \ge \frac{(\sqrt N-\epsilon_1)^2 + N\kappa(W_L)^{-2} -
\left(r\Psi + \sqrt N(\kappa(W_L)^2-1)\right)^2}{2N\kappa(W_L)(1+\epsilon_1)}`.
The printed statement has :math:`\sqrt K` where we have :math:`\sqrt N`: the proof bounds
:math:`\|((W_L')^+ - (W_L')^\top) Y\|_F`, which is at most
:math:`\|(W_L')^+ - (W_L')^\top\|_{op}\|Y\|_F = (\kappa - \kappa^{-1})\sqrt N`, and every other
term of the numerator is of order N; :math:`\sqrt K` is a typo. The proof of (5) also assumes each
feature lies in the row space of :math:`W_L` and has a positive inner product with its class's row
(exact when :math:`\epsilon_2 = 0`), so for :math:`\epsilon_2 > 0` it is a strong indication rather
than a proven bound; ``docs/theory-jacot.md`` says more.

(4) and (5) need only :math:`\kappa(W_L)`: they are evaluated with the bound (3) when ``c3`` is
given, or with a known (measured) :math:`\kappa(W_L)` passed as ``kappa_wl``.

>>> b = jacot_bounds(eps1=0.1, eps2=0.0, r=2.0, K=4, N=400, n_penult=16, c3=8.0, L2=3, z_op=20.0)
>>> b.applies, f"{b.nc1_bound:.4g}", b.kappa_wl_bound, f"{b.nc2_bound:.4f}"
(True, '5.57e-06', 2.0, '2.0122')
>>> b.skipped["nc3_bound"]  # kappa(W_L) = 2 is too far from 1 for (5) to say anything
'vacuous: the bound (5) is -1.766 <= -1'
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any

from .base import Prediction
from .params import check_int, check_number, require

__all__ = [
    "JacotBounds",
    "check_jacot_parameters",
    "head_input_op",
    "hypothesis_failure",
    "jacot_bounds",
    "kappa_wl_bound",
    "lemma_c2_bound",
    "nc1_bound",
    "nc2_bound",
    "nc2_nc3_bounds",
    "nc3_bound",
    "psi",
]


# --------------------------------------------------------------------------------------------------
# the formulas, one per bound (plain floats in, float out; validated by jacot_bounds)
# --------------------------------------------------------------------------------------------------


def psi(eps1: float, eps2: float, r: float, s_k_y: float, n_penult: int) -> float:
    r""":math:`\Psi = r(\epsilon_1/(s_K(Y)-\epsilon_1) + \sqrt{n_{L-1}\epsilon_2})`, the bound (22) on
    :math:`\|Z_{L-1} - W_L^+ Y\|_F` (Jacot et al. 2025, Thm 3.1 and Appendix B).

    >>> psi(0.0, 0.0, 3.0, 1.0, 10)
    0.0
    """
    return r * (eps1 / (s_k_y - eps1) + math.sqrt(n_penult * eps2))


def nc1_bound(
    eps1: float, eps2: float, r: float, K: int, N: int, n_penult: int, s_k_y: float
) -> float:
    r"""Bound (2) on :math:`\mathrm{NC1}(Z_{L-1}) = \mathrm{tr}\Sigma_W/\mathrm{tr}\Sigma_B`:
    :math:`\frac{r^2}{N}\Psi^2/(\sqrt{(K-1)/K} - 2\epsilon_1/(\sqrt K s_K(Y)))^2`.

    >>> f"{nc1_bound(0.1, 0.0, 1.0, 2, 200, 4, 10.0):.4g}"  # balanced: s_K(Y) = sqrt(N/K) = 10
    '1.062e-06'
    """
    den = math.sqrt((K - 1) / K) - 2.0 * eps1 / (math.sqrt(K) * s_k_y)
    return r * r / N * psi(eps1, eps2, r, s_k_y, n_penult) ** 2 / den**2


def lemma_c2_bound(eps2: float, r: float, L2: int) -> float:
    r"""Lemma C.2: :math:`\|(W_LW_L^\top)^{L_2} - W_{L:L_1+1}W_{L:L_1+1}^\top\|_{op} \le
    \frac{L_2^2}{2}\epsilon_2 r^{2(L_2-1)}`.

    >>> lemma_c2_bound(0.01, 1.0, 4)
    0.08
    """
    return 0.5 * L2 * L2 * eps2 * r ** (2 * (L2 - 1))


def nc2_bound(kappa_wl: float, r: float, psi_value: float, s_k_y: float) -> float | None:
    r"""Bound (4) on :math:`\kappa(\bar Z_{L-1})`: :math:`(\kappa(W_L)+\delta)/(1-\delta)`,
    :math:`\delta = r\Psi/s_K(Y)`; ``None`` when :math:`\delta \ge 1` (no bound).

    >>> nc2_bound(1.5, 1.0, 0.0, 2.0)
    1.5
    """
    delta = r * psi_value / s_k_y
    if delta >= 1.0:
        return None
    return (kappa_wl + delta) / (1.0 - delta)


def nc3_bound(kappa_wl: float, eps1: float, r: float, psi_value: float, N: int) -> float:
    r"""Bound (5) on :math:`\frac1N\sum_{c,i}\cos(z_{ci}, W_{L,c:})`, with the proof's
    :math:`\sqrt N(\kappa^2-1)` (the printed :math:`\sqrt K` is a typo, see the module docstring).

    >>> nc3_bound(1.0, 0.0, 1.0, 0.0, 100)  # perfect interpolation, kappa(W_L) = 1
    1.0
    """
    k = kappa_wl
    sn = math.sqrt(N)
    num = (sn - eps1) ** 2 + N / k**2 - (r * psi_value + sn * (k * k - 1.0)) ** 2
    return num / (2.0 * N * k * (1.0 + eps1))


# --------------------------------------------------------------------------------------------------
# jacot-bounds: validation, the hypotheses, each bound, and their composition
# --------------------------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class JacotBounds(Prediction):
    """Theorem 3.1's bounds. A bound that cannot be given is ``None`` and ``skipped`` says why.

    ``applies`` is False (all bounds None, ``reason`` says which hypothesis failed) when
    :math:`\\epsilon_1` is too large for the theorem. ``kappa_wl_used`` is the
    :math:`\\kappa(W_L)` that (4) and (5) were evaluated with, ``kappa_source`` where it came from
    (``"bound (3)"`` or ``"given"``).
    """

    applies: bool
    reason: str
    s_k_y: float
    psi: float | None = None
    nc1_bound: float | None = None
    eps: float | None = None
    kappa_wl_bound: float | None = None
    kappa_wl_tight: float | None = None
    kappa_wl_used: float | None = None
    kappa_source: str | None = None
    nc2_bound: float | None = None
    nc3_bound: float | None = None
    skipped: dict[str, str] = dataclasses.field(default_factory=dict)


def check_jacot_parameters(
    eps1: float,
    eps2: float,
    r: float,
    K: int,
    N: int,
    n_penult: int,
    s_k_y: float | None = None,
    c3: float | None = None,
    L2: int | None = None,
    z_op: float | None = None,
    x_op: float | None = None,
    L1: int | None = None,
    kappa_wl: float | None = None,
) -> float:
    r"""Validate :func:`jacot_bounds`'s parameters as an instance of Theorem 3.1 (not its
    hypotheses on eps1, which give ``applies=False``); return :math:`s_K(Y)`, defaulting to
    :math:`\sqrt{N/K}` for balanced classes. Raises :class:`~nclab.errors.TheoryError`.

    >>> check_jacot_parameters(eps1=0.1, eps2=0.0, r=1.0, K=4, N=400, n_penult=8)
    10.0
    """
    check_int("K", K, 2)
    check_int("N", N, K, min_label=f"K = {K}")
    check_int(
        "n_penult (the width n_(L-1))", n_penult, K, min_label=f"K = {K}", why="W_L needs rank K"
    )
    check_number("eps1", eps1, lo=0.0)
    check_number("eps2", eps2, lo=0.0)
    check_number("r", r, lo=0.0, lo_open=True)
    if s_k_y is None:
        require(
            N % K == 0,
            f"N = {N} is not a multiple of K = {K}: pass s_k_y = sqrt(min class "
            "count) (the default sqrt(N/K) assumes balanced classes)",
        )
        s_k_y = math.sqrt(N / K)
    check_number("s_k_y", s_k_y, lo=0.0, lo_open=True)
    require(
        s_k_y <= math.sqrt(N / K) * (1 + 1e-12),
        f"s_k_y = {s_k_y:g} exceeds sqrt(N/K) = {math.sqrt(N / K):g}, the largest s_K of a "
        "one-hot label matrix",
    )
    check_number("c3", c3, lo=1.0, allow_none=True)
    check_number("z_op", z_op, lo=0.0, lo_open=True, allow_none=True)
    check_number("x_op", x_op, lo=0.0, lo_open=True, allow_none=True)
    check_number("kappa_wl", kappa_wl, lo=1.0, allow_none=True)
    if L2 is not None:
        check_int("L2", L2, 2, why="Theorem 3.1 needs at least two linear layers")
    if L1 is not None:
        check_int("L1", L1, 0)
    return s_k_y


def hypothesis_failure(eps1: float, K: int, s_k_y: float) -> str | None:
    r"""Why Theorem 3.1's hypotheses on :math:`\epsilon_1` fail (``None`` when they hold):
    :math:`\epsilon_1 < s_K(Y)` and :math:`\epsilon_1 < \sqrt{K-1}\,s_K(Y)/2`.

    >>> hypothesis_failure(6.0, 2, 10.0)
    'eps1 = 6 >= sqrt(K-1) s_K(Y) / 2 = 5 (sqrt((K-1)N/(4K)) for balanced classes)'
    """
    if eps1 >= s_k_y:
        return f"approximate interpolation fails: eps1 = {eps1:.4g} >= s_K(Y) = {s_k_y:.4g}"
    lim = math.sqrt(K - 1) * s_k_y / 2.0
    if eps1 >= lim:
        return (
            f"eps1 = {eps1:.4g} >= sqrt(K-1) s_K(Y) / 2 = {lim:.4g} "
            "(sqrt((K-1)N/(4K)) for balanced classes)"
        )
    return None


def head_input_op(r: float, z_op: float | None, x_op: float | None, L1: int | None) -> float | None:
    r""":math:`\|Z_{L_1}\|_{op}`: measured (``z_op``), else the paper's :math:`\|X\|_{op}
    r^{L_1}`, else ``None``.

    >>> head_input_op(2.0, None, 3.0, 2)
    12.0
    """
    if z_op is not None:
        return z_op
    return x_op * r**L1 if x_op is not None and L1 is not None else None


def kappa_wl_bound(
    eps1: float,
    eps2: float,
    r: float,
    s_k_y: float,
    c3: float | None,
    L2: int | None,
    head_op: float | None,
) -> tuple[dict[str, float], str | None]:
    r"""Bound (3) on :math:`\kappa(W_L)` from :math:`\kappa(W_{L:L_1+1}) \le c_3`: the values
    ``{"eps", "kappa_wl_bound", "kappa_wl_tight"}``, or ``{}`` and why it cannot be given.

    >>> kappa_wl_bound(0.1, 0.0, 2.0, 10.0, 8.0, 3, 20.0)
    ({'eps': 0.0, 'kappa_wl_bound': 2.0, 'kappa_wl_tight': 2.0}, None)
    """
    if c3 is None or L2 is None or head_op is None:
        return {}, "needs c3, L2 and z_op (= ||Z_L1||_op) or x_op and L1"
    delta = lemma_c2_bound(eps2, r, L2)
    den = (s_k_y - eps1) ** 2 / head_op**2 - delta
    if den <= 0.0:
        return {}, (
            f"(s_K(Y)-eps1)^2/||Z_L1||_op^2 = {(s_k_y - eps1) ** 2 / head_op**2:.4g} <= "
            f"L2^2/2 r^(2(L2-1)) eps2 = {delta:.4g}: the balancedness is not good enough"
        )
    e = delta / den
    return {
        "eps": e,
        "kappa_wl_bound": c3 ** (1 / L2) * (1 + e) ** (1 / L2) + c3 ** (1 / L2 - 1) * e,
        "kappa_wl_tight": (c3 * c3 * (1 + e) + e) ** (1 / (2 * L2)),
    }, None


def nc2_nc3_bounds(
    kappa_wl: float | None,
    kappa_bound: float | None,
    eps1: float,
    r: float,
    psi_value: float,
    s_k_y: float,
    N: int,
) -> tuple[dict[str, Any], dict[str, str]]:
    r"""Bounds (4) and (5), evaluated at :math:`\kappa(W_L)` = ``kappa_wl`` (given) or else
    ``kappa_bound`` (from (3)): the values that exist (``kappa_wl_used``, ``kappa_source``,
    ``nc2_bound``, ``nc3_bound``) and, for the bounds that do not, why not.

    >>> nc2_nc3_bounds(1.0, None, 0.0, 1.0, 0.0, 2.0, 100)[0]
    {'kappa_wl_used': 1.0, 'kappa_source': 'given', 'nc2_bound': 1.0, 'nc3_bound': 1.0}
    """
    if kappa_wl is not None:
        k, source = kappa_wl, "given"
    elif kappa_bound is not None:
        k, source = kappa_bound, "bound (3)"
    else:
        why = "needs kappa(W_L): pass kappa_wl, or c3 and L2 for bound (3)"
        return {}, {"nc2_bound": why, "nc3_bound": why}
    out: dict[str, Any] = {"kappa_wl_used": k, "kappa_source": source}
    skipped: dict[str, str] = {}
    b2 = nc2_bound(k, r, psi_value, s_k_y)
    if b2 is None:
        skipped["nc2_bound"] = (
            f"r Psi / s_K(Y) = {r * psi_value / s_k_y:.4g} >= 1: the features are "
            "not provably close enough to W_L^+ Y"
        )
    else:
        out["nc2_bound"] = b2
    b3 = nc3_bound(k, eps1, r, psi_value, N)
    if b3 <= -1.0:
        skipped["nc3_bound"] = f"vacuous: the bound (5) is {b3:.4g} <= -1"
    else:
        out["nc3_bound"] = b3
    return out, skipped


def jacot_bounds(
    eps1: float,
    eps2: float,
    r: float,
    K: int,
    N: int,
    n_penult: int,
    s_k_y: float | None = None,
    c3: float | None = None,
    L2: int | None = None,
    z_op: float | None = None,
    x_op: float | None = None,
    L1: int | None = None,
    kappa_wl: float | None = None,
) -> JacotBounds:
    r"""Jacot et al. (ICLR 2025), Theorem 3.1: upper bounds on NC1 (2), :math:`\kappa(W_L)` (3),
    NC2 (4) and a lower bound on NC3 (5) of a network ending in :math:`L_2 \ge 2` linear layers.

    Args:
        eps1: :math:`\|Z_L - Y\|_F` (one-hot Y, N columns).
        eps2: max over consecutive linear layers of :math:`\|W_{\ell+1}^\top W_{\ell+1} - W_\ell
            W_\ell^\top\|_{op}` (absolute, not the relative ``balancedness`` metric).
        r: bound on :math:`\|Z_{L-2}\|_{op}, \|Z_{L-1}\|_{op}` and every linear layer's
            :math:`\|W_\ell\|_{op}`.
        K, N: classes and training samples. n_penult: :math:`n_{L-1}`, width of layer L-1.
        s_k_y: :math:`s_K(Y) = \sqrt{\min_c n_c}`; default :math:`\sqrt{N/K}` (balanced classes).
        c3: bound on :math:`\kappa(W_{L:L_1+1})` (the linear head's product), with ``L2`` (number
            of linear layers, >= 2) and ``z_op`` (:math:`\|Z_{L_1}\|_{op}`, the head's input) or
            ``x_op`` and ``L1`` (the paper's :math:`\|X\|_{op} r^{L_1}`): enables (3), and (4)-(5)
            through it.
        kappa_wl: a known :math:`\kappa(W_L)` to evaluate (4) and (5) with (instead of (3)).

    Raises :class:`~nclab.errors.TheoryError` for parameters that are not a valid instance
    (negative norms, K < 2, s_K(Y) larger than a one-hot Y allows, L2 < 2, c3 < 1).
    Hypotheses that fail (:math:`\epsilon_1 \ge s_K(Y)`, :math:`\epsilon_1 \ge \sqrt{K-1}s_K(Y)/2`)
    give ``applies=False`` and no number; a bound whose own condition fails is ``None`` with its
    reason in ``skipped``.

    >>> b = jacot_bounds(eps1=12.0, eps2=0.0, r=2.0, K=4, N=400, n_penult=16)
    >>> b.applies, b.nc1_bound
    (False, None)
    >>> b.reason
    'approximate interpolation fails: eps1 = 12 >= s_K(Y) = 10'
    """
    s_k_y = check_jacot_parameters(
        eps1, eps2, r, K, N, n_penult, s_k_y, c3, L2, z_op, x_op, L1, kappa_wl
    )
    failure = hypothesis_failure(eps1, K, s_k_y)
    if failure is not None:
        return JacotBounds(False, failure, s_k_y)
    p = psi(eps1, eps2, r, s_k_y, n_penult)
    out: dict[str, Any] = {"psi": p, "nc1_bound": nc1_bound(eps1, eps2, r, K, N, n_penult, s_k_y)}
    # (3): conditioning of W_L from the conditioning of the linear head
    head_op = head_input_op(r, z_op, x_op, L1)
    values, why = kappa_wl_bound(eps1, eps2, r, s_k_y, c3, L2, head_op)
    out |= values
    skipped = {} if why is None else {"kappa_wl_bound": why}
    # (4), (5): at kappa(W_L), given or from (3)
    at_kappa, why_not = nc2_nc3_bounds(kappa_wl, out.get("kappa_wl_bound"), eps1, r, p, s_k_y, N)
    return JacotBounds(True, "", s_k_y, skipped=skipped | why_not, **out, **at_kappa)
