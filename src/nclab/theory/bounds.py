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

from ..errors import TheoryError
from .base import Prediction

__all__ = [
    "JacotBounds",
    "JacotCertificate",
    "NetworkQuantities",
    "jacot_bounds",
    "jacot_certificate",
    "lemma_c2_bound",
    "nc1_bound",
    "nc2_bound",
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
# jacot-bounds: the prediction
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


def _check(cond: bool, msg: str) -> None:
    if not cond:
        raise TheoryError(msg)


def _finite(name: str, v: float | None, lo: float | None = None, strict: bool = False) -> None:
    if v is None:
        return
    if not isinstance(v, int | float) or isinstance(v, bool) or not math.isfinite(v):
        raise TheoryError(f"{name} must be a finite number, got {v!r}")
    if lo is not None and (v <= lo if strict else v < lo):
        raise TheoryError(f"{name} must be {'>' if strict else '>='} {lo:g}, got {v!r}")


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
    _check(isinstance(K, int) and K >= 2, f"K must be an integer >= 2, got {K!r}")
    _check(isinstance(N, int) and N >= K, f"N must be an integer >= K = {K}, got {N!r}")
    _check(
        isinstance(n_penult, int) and n_penult >= K,
        f"n_penult (the width n_(L-1)) must be an integer >= K = {K}, got {n_penult!r}: "
        "W_L needs rank K",
    )
    _finite("eps1", eps1, 0.0)
    _finite("eps2", eps2, 0.0)
    _finite("r", r, 0.0, strict=True)
    if s_k_y is None:
        _check(
            N % K == 0,
            f"N = {N} is not a multiple of K = {K}: pass s_k_y = sqrt(min class "
            "count) (the default sqrt(N/K) assumes balanced classes)",
        )
        s_k_y = math.sqrt(N / K)
    _finite("s_k_y", s_k_y, 0.0, strict=True)
    _check(
        s_k_y <= math.sqrt(N / K) * (1 + 1e-12),
        f"s_k_y = {s_k_y:g} exceeds sqrt(N/K) = {math.sqrt(N / K):g}, the largest s_K of a "
        "one-hot label matrix",
    )
    _finite("c3", c3, 1.0)
    _finite("z_op", z_op, 0.0, strict=True)
    _finite("x_op", x_op, 0.0, strict=True)
    _finite("kappa_wl", kappa_wl, 1.0)
    if L2 is not None:
        _check(
            isinstance(L2, int) and L2 >= 2,
            f"L2 must be an integer >= 2 (Theorem 3.1 needs at "
            f"least two linear layers), got {L2!r}",
        )
    if L1 is not None:
        _check(isinstance(L1, int) and L1 >= 0, f"L1 must be an integer >= 0, got {L1!r}")

    lim = math.sqrt(K - 1) * s_k_y / 2.0
    if eps1 >= s_k_y:
        return JacotBounds(
            False,
            f"approximate interpolation fails: eps1 = {eps1:.4g} >= s_K(Y) = {s_k_y:.4g}",
            s_k_y,
        )
    if eps1 >= lim:
        return JacotBounds(
            False,
            f"eps1 = {eps1:.4g} >= sqrt(K-1) s_K(Y) / 2 = {lim:.4g} "
            "(sqrt((K-1)N/(4K)) for balanced classes)",
            s_k_y,
        )

    p = psi(eps1, eps2, r, s_k_y, n_penult)
    out: dict[str, Any] = {"psi": p, "nc1_bound": nc1_bound(eps1, eps2, r, K, N, n_penult, s_k_y)}
    skipped: dict[str, str] = {}

    # (3): conditioning of W_L from the conditioning of the linear head
    head_op = (
        z_op
        if z_op is not None
        else (x_op * r**L1 if x_op is not None and L1 is not None else None)
    )
    if c3 is None or L2 is None or head_op is None:
        skipped["kappa_wl_bound"] = "needs c3, L2 and z_op (= ||Z_L1||_op) or x_op and L1"
    else:
        delta = lemma_c2_bound(eps2, r, L2)
        den = (s_k_y - eps1) ** 2 / head_op**2 - delta
        if den <= 0.0:
            skipped["kappa_wl_bound"] = (
                f"(s_K(Y)-eps1)^2/||Z_L1||_op^2 = {(s_k_y - eps1) ** 2 / head_op**2:.4g} <= "
                f"L2^2/2 r^(2(L2-1)) eps2 = {delta:.4g}: the balancedness is not good enough"
            )
        else:
            e = delta / den
            out["eps"] = e
            out["kappa_wl_bound"] = c3 ** (1 / L2) * (1 + e) ** (1 / L2) + c3 ** (1 / L2 - 1) * e
            out["kappa_wl_tight"] = (c3 * c3 * (1 + e) + e) ** (1 / (2 * L2))

    # (4), (5): need kappa(W_L)
    if kappa_wl is not None:
        k, source = kappa_wl, "given"
    elif "kappa_wl_bound" in out:
        k, source = out["kappa_wl_bound"], "bound (3)"
    else:
        k, source = None, None
    if k is None:
        why = "needs kappa(W_L): pass kappa_wl, or c3 and L2 for bound (3)"
        skipped["nc2_bound"] = skipped["nc3_bound"] = why
    else:
        out["kappa_wl_used"], out["kappa_source"] = k, source
        b2 = nc2_bound(k, r, p, s_k_y)
        if b2 is None:
            skipped["nc2_bound"] = (
                f"r Psi / s_K(Y) = {r * p / s_k_y:.4g} >= 1: the features are "
                "not provably close enough to W_L^+ Y"
            )
        else:
            out["nc2_bound"] = b2
        b3 = nc3_bound(k, eps1, r, p, N)
        if b3 <= -1.0:
            skipped["nc3_bound"] = f"vacuous: the bound (5) is {b3:.4g} <= -1"
        else:
            out["nc3_bound"] = b3
    return JacotBounds(True, "", s_k_y, skipped=skipped, **out)


# the certificate (bounds beside a trained network's metrics) lives in its own module
from .bounds_certificate import (  # noqa: E402
    JacotCertificate,
    NetworkQuantities,
    jacot_certificate,
)
