"""The fc-lemmas experiment's settings and their checks.

``problem``: the sentence model with every latent variable (K = nc^L), sc words per concept
(uniform for Theorem E's lemmas, Zipf for Theorem 2's type-III configurations), width d.
``points``: how many random points and collapse configurations the identities are evaluated at.
``system``: the feature-collapse preset whose frequencies, sizes and λ Theorem 2's system
(7)-(8) is solved for, and from how many random starts. ``latents``: the feature-collapse presets
whose latent sets assumption B is checked on, and the small K of random sets (App. C.2).
``minimise``: random starts of L-BFGS on the true risks of h and h* (Lemmas G, N; Propositions A,
B).
"""

from __future__ import annotations

import math

from pydantic import Field

from ...config import Config
from ...errors import ConfigError
from ..catalog import get_experiment
from ..common.config import ExperimentConfig, LBFGSCfg, check_enumerated, check_lbfgs

#: relative precision of an identity evaluated in float64: sums of at most ~10^5 terms each exact
#: to a few ulps (1e-16) are exact to ~1e-12; 1e-10 leaves two decades
FLOAT_TOL = 1e-10
#: a start of Theorem 2's system converged when its largest log-residual is at most this (the
#: Levenberg-Marquardt solve runs to machine precision, ~1e-15)
SOLVE_TOL = 1e-12
#: two solutions are distinct when some coordinate differs by more than this, relatively (the
#: conditioning of (150)-(151) turns a 1e-12 residual into at most ~1e-10 in the solution)
DISTINCT_TOL = 1e-8


class ProblemCfg(Config):
    """``nc`` concepts, sentences of ``L`` words, all K = nc^L latent variables, ``sc`` words per
    concept (uniform words) and ``sc_zipf`` (Zipf words, exponent ``zipf_s``), width ``d``."""

    nc: int = 3
    L: int = 3
    sc: int = 2
    sc_zipf: int = 3
    zipf_s: float = 1.0
    d: int = 8


class PointsCfg(Config):
    """``samples`` random points (entries N(0, s²), s log-uniform in [``scale_min``,
    ``scale_max``]) and ``samples`` collapse configurations of random constants."""

    samples: int = 20
    scale_min: float = 0.1
    scale_max: float = 2.0


class SystemCfg(Config):
    """Theorem 2's system on the frequencies, sizes and λ of feature-collapse's ``preset``, from
    ``starts`` random starts (log c, log r_β uniform in ±``spread`` decades around 1)."""

    preset: str = "thm2-small"
    starts: int = 50
    spread: float = 2.0


class LatentsCfg(Config):
    """Assumption B on the latent sets of feature-collapse's ``presets`` (seed = the unit's seed)
    and on ``draws`` random sets of each size in ``small_k`` (nc = 3, L = ``small_L``)."""

    presets: list[str] = Field(default_factory=lambda: ["fig3", "k50", "fig3-quick", "k50-quick"])
    small_k: list[int] = Field(default_factory=lambda: [4, 6, 10, 20])
    small_L: int = 15
    draws: int = 20


class MinimiseCfg(LBFGSCfg):
    """``starts`` random starts of L-BFGS (the fields of
    :class:`~nclab.experiments.common.config.LBFGSCfg`) on the true risk of h at λ =
    ``lam_factor`` λ0 (uniform words) and of h* at λ = ``lam_star``."""

    starts: int = 4
    lam_factor: float = 0.3
    lam_star: float = 0.01


class LemmasConfig(ExperimentConfig):
    problem: ProblemCfg = ProblemCfg()
    points: PointsCfg = PointsCfg()
    system: SystemCfg = SystemCfg()
    latents: LatentsCfg = LatentsCfg()
    minimise: MinimiseCfg = MinimiseCfg()


def check(cfg: LemmasConfig) -> None:
    """Raise :class:`~nclab.errors.ConfigError` for settings no run can use."""
    p, m = cfg.problem, cfg.minimise
    if p.nc < 2 or p.L < 1 or p.sc < 1 or p.sc_zipf < 2:
        raise ConfigError(
            f"problem needs nc >= 2, L >= 1, sc >= 1, sc_zipf >= 2, got nc={p.nc}, L={p.L}, "
            f"sc={p.sc}, sc_zipf={p.sc_zipf}"
        )
    k = p.nc**p.L
    check_enumerated(
        k * max(p.sc, p.sc_zipf) ** p.L,
        p.d * (p.nc * p.sc + k * p.L),
        ("problem.L, sc or sc_zipf", "problem.d or problem.L"),
    )
    if p.d < p.nc:
        raise ConfigError(
            f"problem.d={p.d}: type-II points need nc={p.nc} mean-zero "
            f"equiangular vectors, so d >= nc"
        )
    if not (math.isfinite(p.zipf_s) and p.zipf_s > 0):
        raise ConfigError(f"problem.zipf_s must be a finite number > 0, got {p.zipf_s}")
    pts = cfg.points
    if pts.samples < 1 or not (0 < pts.scale_min <= pts.scale_max < math.inf):
        raise ConfigError("points needs samples >= 1 and 0 < scale_min <= scale_max")
    if cfg.system.starts < 1 or not (cfg.system.spread > 0):
        raise ConfigError("system needs starts >= 1 and spread > 0")
    if any(kk < 2 for kk in cfg.latents.small_k) or cfg.latents.draws < 1:
        raise ConfigError("latents.small_k must hold sizes >= 2 and draws must be >= 1")
    if not (m.lam_factor > 0 and m.lam_factor != 1 and m.lam_star > 0):
        raise ConfigError("minimise needs lam_factor > 0 (not 1) and lam_star > 0")
    if m.starts < 1:
        raise ConfigError(f"minimise.starts must be >= 1, got {m.starts}")
    check_lbfgs(m, "minimise")
    fc = get_experiment("feature-collapse")
    for preset in [cfg.system.preset, *cfg.latents.presets]:
        if preset not in fc.presets:
            raise ConfigError(f"feature-collapse has no preset {preset!r}")
