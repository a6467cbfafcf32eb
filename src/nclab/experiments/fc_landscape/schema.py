"""The structure of an ``fc-landscape`` summary (:func:`.train.train`): the problem, λ against the
zero threshold λ0 (closed form and the exact ‖∇f(0)‖_op), and the random starts at the main width
and at the contrast width, against the theory's global value."""

from __future__ import annotations

from typing import Literal

from ..schema import Num, Record, Summary


class Problem(Record):
    """All K = nc^L latent variables, nw = nc · sc words, the enumerated sentences."""

    nc: int
    L: int
    K: int
    nw: int
    KL: int
    freq: str
    zipf_s: Num
    sentences: int
    n_params: int


class Starts(Record):
    """The random starts at one width ``d``, against the theory's solution there."""

    d: int
    hypothesis: bool  # Theorem G's d > min(nw, KL)
    global_solution: Literal["zero", "fc-thm1", "fc-thm2"]
    global_proven: bool  # False for Theorem 2's point (the paper conjectures it global)
    global_objective: Num  # its risk by the closed form
    global_norm: Num  # its ‖(W, U)‖_F
    global_risk_evaluated: Num  # the true risk evaluated at it (sanity)
    global_grad_max: Num  # max |∇R| there (sanity: it is critical)
    min_curvature: Num  # μ: the smallest non-flat Hessian eigenvalue there
    gap_tolerance: Num  # n g² / (2 μ) + FLOAT_FLOOR |R*|
    starts: int
    converged: int  # starts that met max |∇R| <= grad_tol
    converged_fraction: Num
    at_global: int  # starts whose risk is within gap_tolerance of the global value
    fraction_at_global: Num
    gap_max: Num  # max over starts of R(end) - R*
    gap_min: Num
    rel_gap_max: Num
    grad_max: Num
    rounds_max: int
    norm_min: Num  # min / max over starts of ‖(W, U)‖_F at the end
    norm_max: Num
    zero_norm_tolerance: Num = None  # the zero solution: √n g / μ
    norm_min_over_global: Num = None  # a non-zero solution: the norms / its norm
    norm_max_over_global: Num = None


class FcLandscapeSummary(Summary):
    problem: Problem
    lam: Num
    lam_factor: Num
    lam_threshold: Num  # λ0 = sqrt(L Σ μ² / nc^(L+1)) (Theorem 2's bound)
    lam_threshold_numeric: Num  # ‖∇f(0)‖_op of the enumerated risk
    lam_threshold_rel_gap: Num
    grad_tol: Num
    main: Starts
    contrast: Starts | None = None


SUMMARY = FcLandscapeSummary
