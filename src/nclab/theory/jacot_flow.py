r"""Theorem 4.4 of Jacot, Súkeník, Wang & Mondelli (ICLR 2025) evaluated on one network: the
constants (8)-(9) at initialisation, the step conditions (10), the time they give, and bounds
(11)-(12).

At initialisation θ0 = (W_l): λ_l = σ_min(W_l), λ̄_l = ‖W_l‖_op + min_{l>=3} λ_l, λ_F =
σ_min(σ(W1 X)), λ_{3→L} = Π_{l>=3} λ_l; Assumption 4.3 (9):
λ_F λ_{3→L} min(λ_F, min_{l>=3} λ_l) >= 8 γ sqrt((2/γ)^L C_0(θ0)); α = 2^{-(L-3)} γ^{L-2} λ_F
λ_{3→L}, r0 = min(λ_F, min_{l>=3} λ_l) / 2, β1 = 5 N β b³ (Π_l max(1, λ̄_l))³ L^{5/2}, m_λ =
(1 + sqrt(4λ/α))² (‖θ0‖ + r0)². (10) bounds λ, the step η and the number of steps k; as η → 0
(``log(1 - x) ≈ -x``) the time η k of its k tends to

.. math:: t^* = \frac{8}{\alpha}\log\frac{C_\lambda(\theta_0) - \lambda m_\lambda}{\lambda
   m_\lambda} + \frac{1}{\lambda}\log\frac{4\epsilon_1^2}{\lambda\epsilon_2},

the time of the gradient flow that GD at (10)'s step follows. Bound (11) as printed:
NC1(Z_{L-1}) <= (r²/N) Ψ(√2 ε1, ε2, r) / (sqrt((K-1)/K) - 2√2 ε1/√N)² with r of (12); the proof
applies Theorem 3.1 at √2 ε1, whose (2) has Ψ² (:func:`nclab.theory.bounds_theorem.nc1_bound`),
reported beside it.

:class:`InitConstants` holds (8)-(9) at θ0 (the experiment ``pyramid-flow`` measures them on its
network), :func:`conditions` evaluates (10)-(12) at one (ε1, ε2), :func:`eps1_failure` says when
ε1 is outside the theorem's range, and :func:`jacot_flow` (``nclab theory jacot-flow``) does all
three from the constants given as numbers.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence

from ..errors import TheoryError
from .base import Prediction
from .bounds_theorem import hypothesis_failure, nc1_bound, psi
from .params import check_int, check_number, check_number_list, require

__all__ = [
    "Conditions",
    "InitConstants",
    "JacotFlow",
    "conditions",
    "eps1_failure",
    "init_constants",
    "jacot_flow",
]


@dataclasses.dataclass(frozen=True)
class InitConstants:
    """(8)-(9) and the ε-free constants of (10) at θ0."""

    N: int
    K: int
    L: int
    L1: int
    gamma: float
    beta: float
    b: float  # max(1, max_i ‖X_:i‖)
    x_op: float  # ‖X‖_op
    lambda_f: float
    lambdas: tuple[float, ...]  # λ_l, l = 3..L
    lambda_bars: tuple[float, ...]  # λ̄_l, l = 1..L
    c0: float  # C_0(θ0) = ‖Z_L - Y‖_F² / 2
    theta_norm: float  # ‖θ0‖_2

    @property
    def lambda_3_to_L(self) -> float:
        return math.prod(self.lambdas)

    @property
    def lambda_min(self) -> float:
        """min(λ_F, min_{l>=3} λ_l)."""
        return min(self.lambda_f, *self.lambdas)

    @property
    def assumption_lhs(self) -> float:
        return self.lambda_f * self.lambda_3_to_L * self.lambda_min

    @property
    def assumption_rhs(self) -> float:
        return 8 * self.gamma * math.sqrt((2 / self.gamma) ** self.L * self.c0)

    @property
    def alpha(self) -> float:
        return (
            2.0 ** (-(self.L - 3)) * self.gamma ** (self.L - 2) * self.lambda_f * self.lambda_3_to_L
        )

    @property
    def r0(self) -> float:
        return 0.5 * self.lambda_min

    @property
    def beta1(self) -> float:
        prod = math.prod(max(1.0, v) for v in self.lambda_bars)
        return 5 * self.N * self.beta * self.b**3 * prod**3 * self.L**2.5


@dataclasses.dataclass(frozen=True)
class Conditions:
    """(10) at one (ε1, ε2): the three terms of λ's bound and λ, m_λ, the four terms of η's bound
    and η, the k it asks for (a float: it is astronomically large), the time t* (η → 0), and r
    (12), bound (11) as printed and in Theorem 3.1's form (Ψ²)."""

    eps1: float
    eps2: float
    lam_terms: tuple[float, float, float]
    lam: float
    m_lam: float
    c_lam0: float
    eta_terms: tuple[float, float, float, float]
    eta: float
    k: float
    t_phase1: float
    t_phase2: float
    r: float
    bound11: float
    bound11_psi_sq: float

    @property
    def t_star(self) -> float:
        return self.t_phase1 + self.t_phase2


def conditions(
    c: InitConstants, eps1: float, eps2: float, lam_factor: float, n_penult: int
) -> Conditions:
    """(10)-(12) at (ε1, ε2), λ = ``lam_factor`` times (10)'s bound; ``n_penult`` is the width
    :math:`n_{L-1}`. Raises :class:`~nclab.errors.TheoryError` when (10)'s logarithms are not
    defined (λ too large for the constants)."""
    L, L1, N, K = c.L, c.L1, c.N, c.K
    lam_terms = (
        2 * (c.gamma / 2) ** (L - 2) * c.lambda_f * c.lambda_3_to_L,
        2 * c.c0 / c.theta_norm**2,
        eps1**2 / (18 * (c.theta_norm + c.lambda_f / 2) ** 2),
    )
    lam = lam_factor * min(lam_terms)
    m_lam = (1 + math.sqrt(4 * lam / c.alpha)) ** 2 * (c.theta_norm + c.r0) ** 2
    c_lam0 = c.c0 + 0.5 * lam * c.theta_norm**2
    pre = 5 * N * c.beta * c.b**3 * L**2.5
    eta_terms = (
        1 / (2 * c.beta1),
        1 / (pre * max(1.0, (2 * eps1**2 / lam) ** (1.5 * L))),
        1 / (2 * lam),
        (lam / (2 * eps1**2)) ** (L1 + L) * eps2 / (4 * c.x_op**2),
    )
    eta = min(eta_terms)
    a = lam * m_lam / (c_lam0 - lam * m_lam)
    bb = lam * eps2 / (4 * eps1**2)
    if not 0 < a < 1 or not 0 < bb < 1:
        raise TheoryError(f"(10)'s logarithms need 0 < a, b < 1, got a = {a:.3g}, b = {bb:.3g}")
    k = math.ceil(math.log(a) / math.log1p(-eta * c.alpha / 8)) + math.ceil(
        math.log(bb) / math.log1p(-eta * lam)
    )
    rho = eps1 * math.sqrt(2 / lam)
    r = max(rho, rho ** (L - 2) * c.x_op, rho ** (L - 1) * c.x_op)
    s_k_y = math.sqrt(N / K)  # balanced classes
    e = math.sqrt(2) * eps1
    den = (math.sqrt((K - 1) / K) - 2 * e / math.sqrt(N)) ** 2
    printed = r * r / N * psi(e, eps2, r, s_k_y, n_penult) / den
    return Conditions(
        eps1=eps1,
        eps2=eps2,
        lam_terms=lam_terms,
        lam=lam,
        m_lam=m_lam,
        c_lam0=c_lam0,
        eta_terms=eta_terms,
        eta=eta,
        k=float(k),
        t_phase1=-8 / c.alpha * math.log(a),
        t_phase2=-math.log(bb) / lam,
        r=r,
        bound11=printed,
        bound11_psi_sq=nc1_bound(e, eps2, r, K, N, n_penult, s_k_y),
    )


def eps1_failure(eps1: float, K: int, N: int) -> str | None:
    r"""Why ε1 is outside Theorem 4.4's range for N balanced samples of K classes (``None``
    inside it): the theorem asks :math:`\epsilon_1 \le \sqrt{(K-1)N/K}/2`, and its bound (11) is
    Theorem 3.1's (2) at :math:`\sqrt2\epsilon_1`, whose hypotheses
    (:func:`~nclab.theory.bounds_theorem.hypothesis_failure` at :math:`s_K(Y) = \sqrt{N/K}`) keep
    its denominator positive.

    >>> eps1_failure(0.5, 3, 9) is None
    True
    >>> eps1_failure(1.2, 3, 9)
    'bound (11) is Theorem 3.1 at sqrt(2) eps1 = 1.697: eps1 = 1.697 >= sqrt(K-1) s_K(Y) / 2 = 1.225 (sqrt((K-1)N/(4K)) for balanced classes)'
    """
    top = 0.5 * math.sqrt((K - 1) * N / K)
    if eps1 > top:
        return f"Theorem 4.4 needs eps1 <= sqrt((K-1)N/K)/2 = {top:.4g}, got {eps1:.4g}"
    e = math.sqrt(2) * eps1
    why = hypothesis_failure(e, K, math.sqrt(N / K))
    return None if why is None else f"bound (11) is Theorem 3.1 at sqrt(2) eps1 = {e:.4g}: {why}"


def init_constants(
    N: int,
    K: int,
    L1: int,
    n_penult: int,
    gamma: float,
    beta: float,
    lambda_f: float,
    lambdas: Sequence[float],
    lambda_bars: Sequence[float],
    c0: float,
    theta_norm: float,
    x_op: float,
    b: float = 1.0,
) -> InitConstants:
    """:func:`jacot_flow`'s constants at θ0, checked (:class:`~nclab.errors.TheoryError` for an
    instance the theorem does not cover), as :class:`InitConstants` (L = 2 + ``len(lambdas)``)."""
    check_int("K", K, 2)
    check_int("N", N, K, min_label=f"K = {K}")
    require(N % K == 0, f"N = {N} is not a multiple of K = {K} (balanced classes)")
    check_int("L1", L1, 2, why="Theorem 4.4's second layer is its small one")
    check_int("n_penult", n_penult, K, min_label=f"K = {K}")
    check_number("gamma", gamma, lo=0.0, hi=1.0, lo_open=True, hi_open=True)
    check_number("beta", beta, lo=1.0)
    check_number("b", b, lo=1.0)
    check_number("lambda_f", lambda_f, lo=0.0, lo_open=True)
    lams = check_number_list("lambdas", lambdas)
    L = len(lams) + 2
    require(
        L - L1 >= 2, f"L = {L} (2 + {len(lams)} lambdas) leaves L2 = {L - L1} < 2 linear layers"
    )
    bars = check_number_list("lambda_bars", lambda_bars, L, count_name="L")
    check_number("c0", c0, lo=0.0)
    check_number("theta_norm", theta_norm, lo=0.0, lo_open=True)
    check_number("x_op", x_op, lo=0.0, lo_open=True)
    return InitConstants(
        N, K, L, L1, gamma, beta, b, x_op, lambda_f, tuple(lams), tuple(bars), c0, theta_norm
    )


def _conditions_or_why(
    c: InitConstants, eps1: float, eps2: float, lam_factor: float, n_penult: int
) -> tuple[Conditions | None, str]:
    """(:func:`conditions`, "") where Theorem 4.4 applies, else (None, why not): Assumption 4.3
    (9) fails, ε1 is out of range (:func:`eps1_failure`) or (10)'s logarithms are undefined."""
    if c.assumption_lhs < c.assumption_rhs:
        return None, (
            f"Assumption 4.3 (9) fails: lambda_f lambda_(3->L) min(...) = {c.assumption_lhs:.4g} "
            f"< 8 gamma sqrt((2/gamma)^L C_0) = {c.assumption_rhs:.4g}"
        )
    why = eps1_failure(eps1, c.K, c.N)
    if why is not None:
        return None, why
    try:
        return conditions(c, eps1, eps2, lam_factor, n_penult), ""
    except TheoryError as exc:
        return None, str(exc)


@dataclasses.dataclass(frozen=True)
class JacotFlow(Prediction):
    """Theorem 4.4 at one (ε1, ε2): Assumption 4.3 (9) at θ0 (``assumption43_lhs`` >= ``_rhs``),
    the constants α, r0, β1 of (10), λ (``lam``: ``lam_factor`` times the least of ``lam_terms``),
    the step η (the least of ``eta_terms``), the step count k, the gradient flow's time
    ``t_star`` (η → 0; ``t_phase1`` + ``t_phase2``), r (12) and bound (11) as printed
    (``bound11``) and with Theorem 3.1's Ψ² (``bound11_psi_sq``). ``applies`` is False (the
    (10)-(12) fields None) when (9) fails, ε1 is out of range or (10)'s logarithms are undefined."""

    applies: bool
    reason: str
    assumption43_lhs: float
    assumption43_rhs: float
    alpha: float
    r0: float
    beta1: float
    lam: float | None = None
    lam_terms: tuple[float, ...] = ()
    m_lam: float | None = None
    eta: float | None = None
    eta_terms: tuple[float, ...] = ()
    k: float | None = None
    t_phase1: float | None = None
    t_phase2: float | None = None
    t_star: float | None = None
    r: float | None = None
    bound11: float | None = None
    bound11_psi_sq: float | None = None


def jacot_flow(
    N: int,
    K: int,
    L1: int,
    n_penult: int,
    gamma: float,
    beta: float,
    lambda_f: float,
    lambdas: Sequence[float],
    lambda_bars: Sequence[float],
    c0: float,
    theta_norm: float,
    x_op: float,
    eps1: float,
    eps2: float,
    b: float = 1.0,
    lam_factor: float = 1.0,
) -> JacotFlow:
    r"""Jacot et al. (ICLR 2025), Theorem 4.4: Assumption 4.3 at θ0, the step conditions (10) at
    (ε1, ε2), the time t* of the gradient flow that GD at (10)'s step follows, r (12) and bound
    (11) on NC1.

    Args:
        N: training samples (balanced classes). K: classes. L1: nonlinear layers (>= 2).
        n_penult: the width :math:`n_{L-1}`. gamma: the activation (7)'s γ, in (0, 1).
        beta: the activation (7)'s β >= 1.
        lambda_f: :math:`\lambda_F = \sigma_{min}(\sigma(W_1X))` at θ0.
        lambdas: :math:`\lambda_\ell = \sigma_{min}(W_\ell)`, ℓ = 3..L (so L = 2 + their number).
        lambda_bars: λ̄_ℓ = ‖W_ℓ‖_op + min_(ℓ>=3) λ_ℓ, ℓ = 1..L.
        c0: :math:`C_0(\theta_0) = \|Z_L - Y\|_F^2/2`. theta_norm: :math:`\|\theta_0\|_2`.
        x_op: :math:`\|X\|_{op}`. b: :math:`\max(1, \max_i\|X_{:i}\|)`.
        eps1: the interpolation target :math:`\|Z_L - Y\|_F`. eps2: the balancedness target.
        lam_factor: λ as this fraction of (10)'s bound, in (0, 1].

    >>> p = jacot_flow(N=9, K=3, L1=2, n_penult=4, gamma=0.5, beta=2.0, lambda_f=4.0,
    ...                lambdas=[4.0, 4.0], lambda_bars=[5.0, 4.0, 8.0, 8.0], c0=2.0,
    ...                theta_norm=10.0, x_op=2.0, eps1=0.5, eps2=0.025)
    >>> p.applies, p.alpha, p.r0, f"{p.lam:.4g}", f"{p.t_star:.4g}"
    (True, 8.0, 2.0, '9.645e-05', '1.341e+05')
    """
    c = init_constants(
        N, K, L1, n_penult, gamma, beta, lambda_f, lambdas, lambda_bars, c0, theta_norm, x_op, b
    )
    for name, v in (("eps1", eps1), ("eps2", eps2)):
        check_number(name, v, lo=0.0, lo_open=True)
    check_number("lam_factor", lam_factor, lo=0.0, hi=1.0, lo_open=True)
    base = {
        "assumption43_lhs": c.assumption_lhs,
        "assumption43_rhs": c.assumption_rhs,
        "alpha": c.alpha,
        "r0": c.r0,
        "beta1": c.beta1,
    }
    cond, why = _conditions_or_why(c, eps1, eps2, lam_factor, n_penult)
    if cond is None:
        return JacotFlow(False, why, **base)
    fields = {f.name: getattr(cond, f.name) for f in dataclasses.fields(cond)}
    fields = {k: v for k, v in fields.items() if k not in ("eps1", "eps2", "c_lam0")}
    return JacotFlow(True, "", **base, **fields, t_star=cond.t_star)
