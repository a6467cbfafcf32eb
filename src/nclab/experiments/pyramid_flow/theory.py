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
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from ...theory.bounds_theorem import nc1_bound, psi


@dataclass(frozen=True)
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


@dataclass(frozen=True)
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


def conditions(c: InitConstants, eps1: float, eps2: float, lam_factor: float, n_penult: int):
    """(10)-(12) at (ε1, ε2), λ = ``lam_factor`` times (10)'s bound."""
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
        raise ValueError(f"(10)'s logarithms need 0 < a, b < 1, got a = {a:.3g}, b = {bb:.3g}")
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
