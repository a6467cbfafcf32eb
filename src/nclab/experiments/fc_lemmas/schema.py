"""The structure of an ``fc-lemmas`` summary (:func:`.train.train`, written since issue 50): each
appendix lemma of *Feature Collapse* evaluated on the enumerated true risk, with the numbers a
claim compares (relative residuals of identities, the smallest gap of a strict inequality, the
distances of minimisers to the sets the lemmas put them in)."""

from __future__ import annotations

from ..schema import Num, Record, Summary


class LemmaB(Record):
    """Lemma B (i)-(iii) on one latent set (:func:`.compute.lemma_b`)."""

    K: int
    L: int
    sphere_size_spread: int  # max over r of max_k |S_r(k)| - min_k |S_r(k)|
    concept_balance_dev: Num  # max |(1/K) Σ Z_k - 11ᵀ/nc| · nc
    zzt_dev: Num  # max |ZZᵀ / (KL/nc) - I|
    mean_value_residual: Num  # (iii) least-squares residual / max |lhs|
    theta_rel_gap: Num  # fitted θ_r against nc r / ((nc-1) L)


class AssumptionB(Record):
    """The symmetric solutions of (43) on one latent set (:func:`.compute.assumption_b`)."""

    name: str
    K: int
    L: int
    pairs: int
    nullity: int
    gap: Num  # third smallest eigenvalue of the scatter / largest
    span_in_null: Num  # I and 11ᵀ solve (43): their Rayleigh quotient / largest (sanity)
    holds: bool


class SmallK(Record):
    """Assumption B on ``draws`` random sets of K distinct latent variables (App. C.2)."""

    K: int
    L: int
    draws: int
    holds: int
    fraction: Num


class Latents(Record):
    full: AssumptionB  # K = nc^L (Lemma C)
    presets: list[AssumptionB]
    presets_all_hold: bool
    small: list[SmallK]
    smallest_k_all_hold: int | None = None  # the smallest K of small at which every draw holds


class LowerBound(Record):
    """Theorem D (49)-(50), Lemma D (53)-(54) and Lemma E (58) at random points projected onto N
    and at type-I points (in N ∩ E), uniform and Zipf words."""

    samples: int
    thm_d_min_gap: Num  # min over random points of R0 - g(⟨Û, WQᵀZ⟩) (> 0: (50))
    thm_d_min_rel_gap: Num  # the same over R0
    lemma_d_min_gap: Num  # min over random points (not projected) of R0 - log Σ |S_r| e^-N(r)
    lemma_e_max_rel_err: Num  # max |N(r) - θ_r ⟨Û, WQᵀZ⟩ / K| / max_r |N(r)| on N
    equality_max_rel_err: Num  # max over type-I points of |R0 - g| / R0 ((49))
    lemma_d_equality_max_rel_err: Num  # the same for Lemma D's bound (53)
    random_equimargin_min: Num  # min over random points of the equimargin spread (not in E)
    float_tol: Num


class TypeIPoints(Record):
    """Lemma I (Ω^I_c ⊂ E ∩ N ∩ B^I_c) and Lemma P (Ω^II_c ⊂ E ∩ N ∩ B^II_c) at collapse
    configurations of random constants; Lemma J's converse at points of N ∩ B^I_c outside
    Ω^I_c."""

    samples: int
    type_i_equimargin_max: Num  # max equimargin spread (0: in E)
    type_i_mean_u_max: Num  # max ‖Σ_k Û_k‖ / (√K ‖Û‖) (0: in N)
    type_ii_equimargin_max: Num
    type_ii_mean_u_max: Num
    # Lemma J (E ∩ N ∩ B^I_c ⊂ Ω^I_c): points of N ∩ B^I_c whose F is not equiangular
    non_omega_equimargin_min: Num  # min equimargin spread (> 0: not in E)
    non_omega_gram_dev_min: Num  # min ‖FᵀF - equiangular Gram‖ / ‖·‖ (> 0: not in Ω)
    non_omega_mean_u_max: Num  # in N (sanity)


class Bilinear(Record):
    """Lemma F / Claim A (:func:`.compute.bilinear`)."""

    maximum: Num
    claim_a_value: Num
    value_at_b: Num
    max_rel_gap: Num
    value_rel_gap: Num
    constraint_rel_gap: Num
    multiplicity: int
    nc: int
    angle_sine: Num


class ClosedForms(Record):
    """Lemma K (91) and Lemma R (123) against the enumerated regularised risk."""

    samples: int
    lemma_k_max_rel_err: Num
    lemma_r_max_rel_err: Num  # uniform and Zipf words (Theorem 3 holds for any μ)


class TypeIIIGradient(Record):
    """Proposition C: at type-III configurations of random (c, r_β), ∂R0/∂U = a U (one scalar)
    and ∂R0/∂w_(α,β) = b_β w_(α,β) (one scalar per rank); at Theorem 2's solution the regularised
    risk is critical."""

    samples: int
    u_form_residual_max: Num  # max ‖∂R0/∂U - a U‖ / ‖∂R0/∂U‖
    w_form_residual_max: Num  # max over points and ranks, relative
    critical_at_solution: Num  # max |∇R| at (7)-(8)'s solution / max |∇R0| there


class System(Record):
    """Proposition D: (150)-(151) solved from random starts on a feature-collapse preset's
    frequencies."""

    preset: str
    nc: int
    L: int
    sc: int
    lam: Num
    lam_bound: Num
    starts: int
    converged: int  # starts ending with max |residual| <= SOLVE_TOL
    converged_fraction: Num
    distinct: int  # distinct solutions among them (relative distance > DISTINCT_TOL)
    max_rel_dev: Num  # max over converged ends of max |x - x_fc_thm2| / |x_fc_thm2|
    ordered: bool  # r_1 >= r_2 >= ... >= r_sc > 0 at every converged end
    r_min: Num
    solve_tol: Num
    distinct_tol: Num


class Minimisers(Record):
    """Random starts of L-BFGS on the true risk of one network, against the theory's minimiser
    (h: Theorem 1, type I; h*: Theorem 3, type II)."""

    network: str
    lam: Num
    starts: int
    converged: int
    at_global: int  # ends within gap_tolerance of the closed-form value
    gap_max: Num
    gap_tolerance: Num
    mean_u_max: Num  # max over ends at the global value of ‖Σ_k Û_k‖_F (Lemma G / N)
    mean_u_tolerance: Num  # √(n_U) g / λ: the stopping rule's bound on it
    omega_dist_max: Num  # max distance to Ω (Procrustes over rotations of the theory's point)
    omega_tolerance: Num  # √n g / μ (times LayerNorm's Lipschitz constant for h*)
    equimargin_max: Num  # Lemma H / O: max equimargin spread at the ends (0 in E)
    equimargin_tolerance: Num


class FcLemmasSummary(Summary):
    nc: int
    L: int
    K: int
    d: int
    float_tol: Num
    lemma_b: LemmaB
    latents: Latents
    lower_bound: LowerBound
    collapse_points: TypeIPoints
    bilinear: Bilinear
    closed_forms: ClosedForms
    type_iii: TypeIIIGradient
    system: System
    h: Minimisers
    h_star: Minimisers


SUMMARY = FcLemmasSummary
