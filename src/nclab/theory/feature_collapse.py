r"""Theorems 1–3 of Laurent, von Brecht & Bresson, *Feature Collapse* (ICLR 2024), in closed form.

The data model: ``nc`` concepts of ``sc = nw / nc`` words each, word ``(α, β)`` drawn with
frequency :math:`\mu_\beta`; ``K`` distinct latent variables :math:`z_k \in [n_c]^L`; a sentence of
class ``k`` has its ℓ-th word drawn from concept :math:`z_{k,\ell}`. The networks:

* ``h``:  :math:`h_{W,U}(x) = U\,\mathrm{Vec}[W\zeta(x)]` (embedding ``W`` d×nw, linear ``U`` K×Ld),
* ``h*``: :math:`h^*_{W,U}(x) = U\,\mathrm{Vec}[\varphi(W\zeta(x))]` with the parameter-free LayerNorm
  :math:`\varphi(v) = (v - \bar v 1)/\sigma(v)`, :math:`\sigma^2(v) = \frac1d\sum_i (v_i-\bar v)^2`.

**Loss convention** (the one every nclab model of this paper uses, see :func:`regularised_risk`):
the mean cross-entropy over sentences plus ``λ/2`` times squared Frobenius norms,

.. math::
    R(W,U) = \frac1K\sum_{k=1}^K \mathbb{E}_{x\sim\mathcal D_{z_k}}\,\ell(h_{W,U}(x),k)
             + \frac{\lambda_W}{2}\|W\|_F^2 + \frac{\lambda_U}{2}\|U\|_F^2,

with :math:`\lambda_W=\lambda_U=\lambda` for ``h`` (paper eq. 5) and :math:`\lambda_W=0` for ``h*``
(eq. 9). The empirical risk (eqs. 2–3) replaces the expectation by the mean over the training set;
SGD with ``weight_decay=λ`` on a parameter group minimises exactly this objective. The theorems
concern the *true* risk (the expectation), which tests evaluate exactly on enumerable instances.

Rebuilt formulas (the PDF extraction garbles them; derived from Lemmas K and R, appendix E.3/F.3):
with :math:`|S_r| = \frac{K}{n_c^L}\binom{L}{r}(n_c-1)^r` neighbours at Hamming distance r
(Assumption 1) and margins proportional to r, the binomial theorem gives

.. math::
    H(t) = \log\Big(1 - \frac{K}{n_c^L} + \frac{K}{n_c^L}\big(1+(n_c-1)e^{-\eta t}\big)^L\Big) + \lambda t,
    \qquad \eta = \frac{n_c}{n_c-1}\frac{1}{\sqrt{n_w K L}},

and :math:`H^*(t)` is the same log term with :math:`\eta^* = \frac{n_c}{n_c-1}\sqrt{d/(KL)}` plus
:math:`\frac{\lambda}{2}t^2`. For K = n_c^L the log term is :math:`L\log(1+(n_c-1)e^{-\eta t})`.

The data model's helpers (:func:`regularised_risk`, :func:`word_frequencies`,
:func:`equiangular_frame`) live in :mod:`nclab.theory.feature_collapse_model` and are re-exported
here; this module holds the three theorems.

>>> p = fc_thm1(nc=3, nw=1200, L=15, K=1000, lam=1e-3)
>>> round(p.word_norm, 5), round(fc_thm1(nc=3, nw=1200, L=15, K=50, lam=1e-3).word_norm, 5)
(1.42214, 0.61602)
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from ..errors import TheoryError
from .base import Prediction
from .feature_collapse_model import (
    check_model_parameters,
    equiangular_frame,
    regularised_risk,
    thm2_lambda_bound,
    word_frequencies,
    words_per_concept,
)
from .params import is_int, require

__all__ = [
    "FCThm1",
    "FCThm2",
    "FCThm3",
    "equiangular_frame",
    "fc_thm1",
    "fc_thm2",
    "fc_thm3",
    "regularised_risk",
    "word_frequencies",
]


# --------------------------------------------------------------------------------------------------
# the scalar problems H(t), H*(t)
# --------------------------------------------------------------------------------------------------


class _LogTerm:
    r"""The unregularised risk of a collapsed configuration as a function of the margin scale:
    :math:`g(t) = \log(1 - a + a(1+(n_c-1)e^{-\eta t})^L)`, :math:`a = K/n_c^L`."""

    def __init__(self, nc: int, L: int, K: int, eta: float):
        self.nc, self.L, self.eta = nc, L, eta
        self.log_a = math.log(K) - L * math.log(nc)
        self.full = K == nc**L
        self.log_1ma = -math.inf if self.full else math.log1p(-math.exp(self.log_a))

    def _parts(self, t: float) -> tuple[float, float]:
        e = (self.nc - 1) * math.exp(-self.eta * t)
        log_big = self.log_a + self.L * math.log1p(e)
        return e, log_big

    def value(self, t: float) -> float:
        _, log_big = self._parts(t)
        return float(np.logaddexp(self.log_1ma, log_big))

    def deriv(self, t: float) -> float:
        e, log_big = self._parts(t)
        frac = math.exp(log_big - np.logaddexp(self.log_1ma, log_big))  # a A^L / (1 - a + a A^L)
        return -frac * self.L * self.eta * e / (1.0 + e)


def _argmin_convex(dfun, t_scale: float) -> float:
    """Root of the increasing derivative ``dfun`` on (0, inf), assuming dfun(0) < 0."""
    from scipy.optimize import brentq

    hi = max(t_scale, 1e-12)
    while dfun(hi) < 0:
        hi *= 2.0
        if hi > 1e300:
            raise TheoryError("could not bracket the minimiser of H(t)")
    return float(brentq(dfun, 0.0, hi, xtol=1e-14 * hi, rtol=4 * np.finfo(float).eps, maxiter=500))


# --------------------------------------------------------------------------------------------------
# Theorem 1
# --------------------------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class FCThm1(Prediction):
    """Theorem 1: the type-I collapsed global minimiser of the true risk (5) of ``h``."""

    tau: float
    word_norm: float
    u_norm: float
    objective: float
    eta: float
    lam_max: float
    margin: float
    collapsed: bool
    structure: str
    assumption_exact: bool
    applies: bool = True
    reason: str = ""


def fc_thm1(nc: int, nw: int, L: int, K: int, lam: float, d: int | None = None) -> FCThm1:
    r"""Theorem 1 (full collapse of h, uniform words): τ, word norm √(τ/nw), u norm √(τ/(KL)).

    :math:`\tau = \arg\min_{t\ge0} H(t)` (strictly convex), word embeddings
    :math:`w_{(\alpha,\beta)} = c f_\alpha` with :math:`c = \sqrt{\tau/n_w}` (``word_norm``),
    :math:`u_{k,\ell} = c' f_{z_{k,\ell}}` with :math:`c' = \sqrt{\tau/(KL)}` (``u_norm``), f
    equiangular; ``objective`` = H(τ) = the minimal true risk (5) with weight decay λ on W and U
    (:func:`regularised_risk` with ``lam_w = lam_u = lam``). The margin between a sentence and a
    class at Hamming distance r is ``margin * r``.

    Hypotheses: K distinct latents satisfying Assumption 1 — exact for K = nc^L
    (``assumption_exact``); for K < nc^L random latents satisfy it approximately, which is how the
    paper uses the theorem (1.42214 for K=1000, 0.61602 for K=50). For ``lam >= lam_max`` the
    minimiser is τ = 0: W = U = 0 (``collapsed`` False, ``structure`` "zero"). ``d`` (optional)
    must allow nc equiangular vectors (d >= nc - 1).

    >>> p = fc_thm1(nc=3, nw=1200, L=15, K=1000, lam=1e-3)
    >>> round(p.tau, 2), round(p.u_norm, 5), p.structure
    (2426.98, 0.40224, 'type-I')
    """
    check_model_parameters(nc, L, K, lam)
    words_per_concept(nc, nw)
    require(
        d is None or (is_int(d) and d >= nc - 1),
        f"type-I collapse needs nc={nc} equiangular vectors in R^d: an integer d >= "
        f"{nc - 1}, got d={d!r}",
    )
    eta = nc / (nc - 1) / math.sqrt(nw * K * L)
    g = _LogTerm(nc, L, K, eta)
    lam_max = -g.deriv(0.0)
    if lam >= lam_max:
        tau, reason = 0.0, f"lam >= lam_max = {lam_max:.6g}: the zero solution W = U = 0 is optimal"
    else:
        tau, reason = _argmin_convex(lambda t: g.deriv(t) + lam, 1.0 / eta), ""
    exact = K == nc**L
    note = (
        ""
        if exact
        else (
            "Assumption 1 holds exactly only for K = nc^L; for K < nc^L random "
            "latents satisfy it approximately (the paper's use)"
        )
    )
    return FCThm1(
        tau=tau,
        word_norm=math.sqrt(tau / nw),
        u_norm=math.sqrt(tau / (K * L)),
        objective=g.value(tau) + lam * tau,
        eta=eta,
        lam_max=lam_max,
        margin=nc / (nc - 1) * math.sqrt(tau / nw) * math.sqrt(tau / (K * L)),
        collapsed=tau > 0,
        structure="type-I" if tau > 0 else "zero",
        assumption_exact=exact,
        applies=True,
        reason="; ".join(r for r in (reason, note) if r),
    )


# --------------------------------------------------------------------------------------------------
# Theorem 3
# --------------------------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class FCThm3(Prediction):
    """Theorem 3: the type-II collapsed global minimiser of the true risk (9) of ``h*``."""

    tau: float
    u_norm: float
    u_frobenius: float
    word_rep_norm: float
    objective: float
    eta: float
    margin: float
    structure: str
    assumption_exact: bool
    applies: bool = True
    reason: str = ""


def fc_thm3(nc: int, L: int, K: int, lam: float, d: int = 100) -> FCThm3:
    r"""Theorem 3 (full collapse of h* with LayerNorm, any μ): τ, u norm τ/√(KL), reps √d.

    :math:`\tau = \arg\min_{t\ge0} H^*(t)`, :math:`H^*(t) = \log(1-a+a(1+(n_c-1)e^{-\eta^* t})^L)
    + \frac{\lambda}{2}t^2`, :math:`\eta^* = \frac{n_c}{n_c-1}\sqrt{d/(KL)}`, :math:`a=K/n_c^L`.
    Word representations :math:`\varphi(w_{(\alpha,\beta)}) = \sqrt d f_\alpha` (``word_rep_norm``
    = √d, f mean-zero equiangular), :math:`u_{k,\ell} = c f_{z_{k,\ell}}` with
    :math:`c = \tau/\sqrt{KL}` (``u_norm``); :math:`\|U\|_F = \tau` (``u_frobenius``); ``objective``
    = H*(τ), the minimal true risk (9): weight decay λ on U only (``lam_w = 0``), LayerNorm
    without ε. The embeddings W themselves are free in scale (only φ(W) matters).

    Hypotheses: K distinct latents with Assumption 1 (exact for K = nc^L), d >= nc (nc mean-zero
    equiangular vectors), lam > 0. Independent of the frequencies μ and of nw.

    >>> p = fc_thm3(nc=3, L=15, K=1000, lam=1e-3, d=100)
    >>> p.structure, round(p.word_rep_norm, 4)
    ('type-II', 10.0)
    """
    check_model_parameters(nc, L, K, lam)
    require(
        is_int(d) and d >= nc,
        f"type-II collapse needs nc={nc} mean-zero equiangular vectors in R^d: an integer "
        f"d >= {nc}, got d={d!r}",
    )
    eta = nc / (nc - 1) * math.sqrt(d / (K * L))
    g = _LogTerm(nc, L, K, eta)
    tau = _argmin_convex(lambda t: g.deriv(t) + lam * t, 1.0 / eta)
    exact = K == nc**L
    note = (
        ""
        if exact
        else (
            "Assumption 1 holds exactly only for K = nc^L; for K < nc^L random "
            "latents satisfy it approximately"
        )
    )
    u = tau / math.sqrt(K * L)
    return FCThm3(
        tau=tau,
        u_norm=u,
        u_frobenius=tau,
        word_rep_norm=math.sqrt(d),
        objective=g.value(tau) + 0.5 * lam * tau**2,
        eta=eta,
        margin=nc / (nc - 1) * math.sqrt(d) * u,
        structure="type-II",
        assumption_exact=exact,
        applies=True,
        reason=note,
    )


# --------------------------------------------------------------------------------------------------
# Theorem 2
# --------------------------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class FCThm2(Prediction):
    """Theorem 2: the type-III critical point of the true risk (5) of ``h`` (non-uniform μ)."""

    c: float
    r: list
    mu: list
    lam_bound: float
    objective: float
    structure: str
    applies: bool = True
    reason: str = ""


def _phi(c: float, b: np.ndarray, gamma: float) -> np.ndarray:
    """Vectorised root ρ of ρ(1 + γ e^{(1+γ)c²ρ})/(1+γ) = b (increasing in ρ, 0 < ρ <= b)."""
    lo = np.zeros_like(b)
    hi = b.copy()
    k = (1.0 + gamma) * c * c
    target = np.log((1.0 + gamma) * b)
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        val = np.log(np.maximum(mid, 1e-300)) + np.logaddexp(0.0, math.log(gamma) + k * mid)
        big = val > target
        hi = np.where(big, mid, hi)
        lo = np.where(big, lo, mid)
        if np.all(hi - lo <= 1e-16 * hi):
            break
    return 0.5 * (lo + hi)


def _type_iii(nc: int, L: int, lam: float, m: np.ndarray) -> tuple[float, np.ndarray, float]:
    """(c, r_1..r_sc, risk) of the type-III point: the positive solution of Theorem 2's system
    (7)-(8) for lam below its bound (r = c phi(c), c the root of (8), bracketed by doubling) and
    the true risk (5) there."""
    from scipy.optimize import brentq

    gamma = 1.0 / (nc - 1)
    b = L * m / (lam * nc)
    target = L * float(nc) ** (L - 1)

    def excess(c: float) -> float:
        return float(np.sum(_phi(c, b, gamma) ** 2)) / target - 1.0

    hi = 1.0
    while excess(hi) > 0:
        hi *= 2.0
    c = float(brentq(excess, 0.0, hi, xtol=1e-15, rtol=4 * np.finfo(float).eps, maxiter=500))
    r = c * _phi(c, b, gamma)
    margin = nc / (nc - 1) * c * r
    objective = L * float(np.sum(m * np.log1p((nc - 1) * np.exp(-margin)))) + 0.5 * lam * (
        nc * float(np.sum(r**2)) + float(nc) ** L * L * c * c
    )
    return c, r, objective


def fc_thm2(
    nc: int,
    nw: int,
    L: int,
    lam: float,
    mu: list[float] | None = None,
    zipf: bool = False,
    s: float = 1.0,
    K: int | None = None,
) -> FCThm2:
    r"""Theorem 2 (directional collapse of h, any μ, K = nc^L): (c, r_1..r_sc) of system (7)-(8).

    The type-III configuration :math:`w_{(\alpha,\beta)} = r_\beta f_\alpha`,
    :math:`u_{k,\ell} = c f_{z_{k,\ell}}` that is a critical point of the true risk (5) (weight
    decay λ on W and U, K = n_c^L, all latents).

    (c, r_1..r_sc) is the unique positive solution of the system (7)–(8), rebuilt from appendix G:

    .. math::
        \frac{\lambda}{L}\frac{r_\beta}{c}\Big(n_c - 1 + \exp\big(\tfrac{n_c}{n_c-1} c\,r_\beta\big)
        \Big) = \mu_\beta \quad (1\le\beta\le s_c), \qquad
        \sum_\beta \frac{r_\beta^2}{c^2} = L\,n_c^{L-1},

    which exists iff :math:`\lambda^2 < \frac{L}{n_c^{L+1}}\sum_\beta\mu_\beta^2` (``lam_bound`` is
    the right-hand side's square root; above it only W = U = 0 remains: a
    :class:`~nclab.errors.TheoryError`). More frequent words get larger norms r_β.
    ``objective`` is the risk at this point,
    :math:`L\sum_\beta\mu_\beta\log(1+(n_c-1)e^{-\frac{n_c}{n_c-1}c r_\beta})
    + \frac\lambda2(n_c\sum_\beta r_\beta^2 + n_c^L L c^2)`.

    Frequencies: ``mu`` (a list of sc = nw/nc values), ``zipf`` (μ_β ∝ β^{-s}) or uniform (then the
    solution is Theorem 1's with K = nc^L). ``K`` (optional): a K other than nc^L is outside the
    theorem (``applies`` False; the numbers are the K = nc^L solution).

    >>> p = fc_thm2(nc=3, nw=9, L=3, lam=0.01, zipf=True)
    >>> p.structure, p.r[0] > p.r[1] > p.r[2] > 0
    ('type-III', True)
    """
    check_model_parameters(nc, L, nc**L, lam)
    m = word_frequencies(words_per_concept(nc, nw), mu, zipf, s)
    bound = thm2_lambda_bound(nc, L, m)
    require(
        lam < bound,
        f"lam={lam:g} is above Theorem 2's bound lam < sqrt(L sum mu^2 / "
        f"nc^(L+1)) = {bound:.6g}: the system (7)-(8) has no solution and only "
        "W = U = 0 is critical",
    )
    c, r, objective = _type_iii(nc, L, lam, m)
    applies = K is None or K == nc**L
    why = f"Theorem 2 needs K = nc^L = {nc**L} (all latent variables); got K={K}: the values are the K = nc^L solution"
    return FCThm2(
        c=c,
        r=r.tolist(),
        mu=m.tolist(),
        lam_bound=bound,
        objective=objective,
        structure="type-III",
        applies=applies,
        reason="" if applies else why,
    )
