"""The structure of a ``pyramid-flow`` summary (:func:`.train.train`): the network and Theorem
4.4's constants at θ0, one entry per ε1 of the sweep (the conditions (10), the time t*, what the
gradient flow reached there, bounds (11)-(12)), the scalars the claim reads, and the solver's
checks."""

from __future__ import annotations

from ..schema import Num, Record, Summary


class SweepEntry(Record):
    """One ε1: (10)'s λ (its three terms), η and k (astronomical: also as log10), the time t* =
    t_phase1 + t_phase2 of η k as η → 0, and at θ(t*) of the flow: NC1(Z_(L-1)), ‖Z_L - Y‖_F
    against (25)'s √2 ε1, the linear layers' imbalance against ε2, the norms against r (12),
    bound (11) as printed and with Theorem 3.1's Ψ²."""

    eps1: Num
    eps2: Num
    lam: Num
    lam_bound_terms: list[Num]
    eta_bound: Num
    eta_bound_terms: list[Num]
    log10_eta_bound: Num
    k_bound: Num
    log10_k_bound: Num
    t_phase1: Num
    t_phase2: Num
    t_star: Num
    eta_k_over_t_star: Num  # (10)'s η k / t*: 1 up to the ceilings
    gd_steps_at_stability: Num  # t* λ_max(H C_λ(θ0)) / 2: GD steps at the stability limit
    solver_steps: Num
    solve_seconds: Num
    m_lam: Num
    phase1_level: Num  # 2 λ m_λ, Prop. 4.5's level of C_λ
    r: Num
    nc1: Num
    nc1_over_init: Num
    interp: Num
    interp_over_bound: Num
    cost: Num
    imbalance: Num
    imbalance_over_eps2: Num
    r_ratio: Num  # max(‖Z_(L-2)‖, ‖Z_(L-1)‖, ‖W_l‖ linear) / r
    bound11: Num
    bound11_psi_sq: Num
    nc1_over_bound11: Num
    bound11_over_nc1_init: Num
    theta_norm: Num
    # written since issue 50: phase 1 of the proof along the flow (:mod:`.phase1`)
    log_inv_lam: Num = None  # log(1/λ)
    prop45_points: Num = None  # solver steps inside B(θ0, r0) where (14)'s rhs > 0
    prop45_points_outside: Num = None  # solver steps of the phase-1 solve outside the ball
    prop45_ratio_min: Num = None  # min over them of ‖∇C_λ‖² / ((α/4)(C_λ - λ m_λ))
    prop45_lhs_at_min: Num = None  # (14)'s two sides where that ratio is smallest
    prop45_rhs_at_min: Num = None
    pl13_ratio_min: Num = None  # min in the ball of ‖∇C_0‖² / ((α/2) C_0)
    phase1_time: Num = None  # τ1: the first time C_λ <= 2 λ m_λ
    phase1_time_over_bound: Num = None  # τ1 / t_phase1 ((15) as η -> 0)
    phase1_dist_over_bound: Num = None  # ‖θ(τ1) - θ0‖ / (8 sqrt(C_λ(θ0) / α)) (16)
    phase1_dist_over_r0: Num = None  # ‖θ(τ1) - θ0‖ / r0 (16)
    phase1_envelope_max: Num = (
        None  # max_(t <= τ1) (C_λ - λ m_λ) / ((C_λ(θ0) - λ m_λ) e^(-α t / 8))
    )


class PyramidFlowSummary(Summary):
    N: Num
    K: Num
    L: Num
    L1: Num
    widths: list[Num]
    n_params: Num
    gamma: Num
    beta: Num
    b: Num
    x_op: Num
    lambda_f: Num
    lambda_min_linear: Num  # min over l >= 3 of λ_l
    c0: Num
    theta0_norm: Num
    assumption43_lhs: Num
    assumption43_rhs: Num
    assumption43_margin: Num  # lhs / rhs of (9): >= 1
    alpha: Num
    beta1: Num
    r0: Num
    hessian_top_init: Num
    nc1_init: Num
    sweep: list[SweepEntry]
    nc1_largest_eps1: Num
    nc1_smallest_eps1: Num
    nc1_step_ratio_max: Num  # max over the sweep of NC1(next eps1) / NC1(this one)
    interp_over_bound_max: Num
    imbalance_over_eps2_max: Num
    r_ratio_max: Num
    nc1_over_bound11_max: Num
    bound11_over_nc1_init_min: Num
    t_star_max: Num
    log10_k_bound_max: Num
    log10_eta_bound_min: Num
    gd_steps_at_stability_max: Num
    # written since issue 50: phase 1 over the sweep (:func:`.phase1.sweep_fields`)
    prop45_ratio_min: Num = None
    pl13_ratio_min: Num = None
    prop45_points_min: Num = None
    phase1_time_over_bound_max: Num = None
    phase1_dist_over_bound_max: Num = None
    phase1_dist_over_r0_max: Num = None
    phase1_envelope_max: Num = None
    phase1_time_largest_lam: Num = None  # τ1 at the sweep's first (largest) ε1
    phase1_time_smallest_lam: Num = None  # τ1 at its last
    t_phase1_smallest_lam: Num = None  # (15)'s time there
    log_inv_lam_range: Num = None  # log(1/λ) from the first ε1 to the last
    phase1_time_slope: Num = None  # least squares of τ1 against log(1/λ)
    phase1_slope_exponent_max: Num = None  # local exponents of that slope (0: logarithmic)
    phase1_slope_exponent_min: Num = None
    check_nc1_rel_diff: Num  # the smallest eps1 solved again at check_factor x the tolerances
    check_theta_rel_diff: Num
    gd_eta: Num
    gd_time: Num
    gd_error: Num  # ‖θ_GD(η) - θ_flow‖ at the same time
    gd_half_error: Num  # the same at η / 2
    gd_error_ratio: Num  # gd_half_error / gd_error: 1/2 at first order
    gd_half_error_rel: Num  # gd_half_error / ‖θ_flow - θ0‖


SUMMARY = PyramidFlowSummary
