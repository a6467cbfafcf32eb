"""The fc-landscape experiment's settings and their checks.

``problem``: the sentence model with every latent variable (K = nc^L), its words per concept and
their law. ``search``: the width d, the weight decay as a multiple of the zero threshold λ0
(:func:`nclab.theory.feature_collapse_model.thm2_lambda_bound`: above it (0, 0) is the only
minimiser), the random starts and the stopping rule of L-BFGS, and the contrast width.
"""

from __future__ import annotations

import math
from typing import Literal

from ...config import Config
from ...errors import ConfigError
from ..common.config import ExperimentConfig, LBFGSCfg, check_enumerated, check_lbfgs

#: the relative precision of a float64 true risk (a weighted sum of K sc^L cross-entropies, each
#: exact to a few ulps): about 1e-13 for these sizes; 1e-12 leaves a factor 10 (the gap tolerance
#: adds it times |R*|, :mod:`.train`)
FLOAT_FLOOR = 1e-12


class ProblemCfg(Config):
    """``nc`` concepts of ``sc`` words, sentences of ``L`` words, all ``K = nc^L`` latent
    variables; within-concept word law ``freq`` (Zipf exponent ``zipf_s``)."""

    nc: int = 3
    L: int = 3
    sc: int = 2
    freq: Literal["uniform", "zipf"] = "uniform"
    zipf_s: float = 1.0


class SearchCfg(LBFGSCfg):
    """Width ``d``; λ = ``lam_factor`` · λ0; ``starts`` random starts of L-BFGS (the fields of
    :class:`~nclab.experiments.common.config.LBFGSCfg`); ``contrast_d`` (0: none): the same starts
    (``contrast_starts`` of them) at that width (an integer, not None, so that a run's config.toml,
    which cannot hold None, reads back the same)."""

    d: int = 8
    lam_factor: float = 0.3
    starts: int = 20
    init_min: float = 0.03
    init_max: float = 3.0
    grad_tol: float = 1e-7
    contrast_d: int = 2
    contrast_starts: int = 20


class LandscapeConfig(ExperimentConfig):
    problem: ProblemCfg = ProblemCfg()
    search: SearchCfg = SearchCfg()


def check(cfg: LandscapeConfig) -> None:
    """Raise :class:`~nclab.errors.ConfigError` for settings no run can use."""
    p, s = cfg.problem, cfg.search
    if p.nc < 2 or p.L < 1 or p.sc < 1:
        raise ConfigError(
            f"problem needs nc >= 2, L >= 1, sc >= 1, got nc={p.nc}, L={p.L}, sc={p.sc}"
        )
    if not (math.isfinite(p.zipf_s) and p.zipf_s >= 0):
        raise ConfigError(f"problem.zipf_s must be a finite number >= 0, got {p.zipf_s}")
    k = p.nc**p.L
    check_enumerated(
        k * p.sc**p.L,
        s.d * (p.nc * p.sc + k * p.L),
        ("problem.L or problem.sc", "search.d, problem.L or problem.sc"),
    )
    if s.contrast_d < 0:
        raise ConfigError(f"search.contrast_d must be >= 0 (0: no contrast), got {s.contrast_d}")
    widths = [("search.d", s.d)] + [("search.contrast_d", s.contrast_d)] * (s.contrast_d > 0)
    for name, d in widths:
        if d < p.nc - 1:
            raise ConfigError(
                f"{name}={d}: the theorems' minimisers need nc={p.nc} equiangular vectors, "
                f"so d >= nc - 1 = {p.nc - 1}"
            )
    if not (math.isfinite(s.lam_factor) and s.lam_factor > 0) or s.lam_factor == 1:
        raise ConfigError(
            f"search.lam_factor must be a finite number > 0 other than 1 (at λ0 itself the "
            f"zero solution is degenerate), got {s.lam_factor}"
        )
    if s.starts < 1 or (s.contrast_d > 0 and s.contrast_starts < 1):
        raise ConfigError(
            f"search.starts and search.contrast_starts must be >= 1, got {s.starts}, "
            f"{s.contrast_starts}"
        )
    check_lbfgs(s, "search")
