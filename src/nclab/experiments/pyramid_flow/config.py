"""The pyramid-flow experiment's settings and their checks.

``data``: a Gaussian mixture of ``num_classes`` balanced classes in ``dim`` dimensions, every
input scaled to norm 1 (so the b of Theorem 4.4 is 1). ``model``: the widths n1..n_(L-1) of the
hidden layers (the output width is K), how many of the L layers are nonlinear (L1; the rest are
linear, L2 = L - L1 >= 2; n1 >= dim), the activation (7)'s γ and β. ``init``: the first layer orthogonal,
scaled so that λ_F = σ_min(σ(W1 X)) is ``lambda_f``; the second layer Gaussian with operator
scale ``second_scale`` (small); layers 3..L with orthonormal rows times ``singular_value`` (so
every λ_l is that value). ``sweep``: ε1 (largest first), ε2 = ``eps2_per_eps1_sq`` ε1², and λ =
``lam_factor`` times (10)'s bound on λ. ``solve``: the tolerances of the stiff solver of the
gradient flow, the factor of its check solve, and the short gradient-descent comparison.
"""

from __future__ import annotations

import itertools
import math

from pydantic import Field

from ...config import Config
from ...errors import ConfigError
from ...theory.jacot_flow import eps1_failure
from ..common.config import ExperimentConfig


class DataCfg(Config):
    num_classes: int = 3
    samples_per_class: int = 3
    dim: int = 12
    separation: float = 1.0


class ModelCfg(Config):
    widths: list[int] = Field(default_factory=lambda: [12, 6, 4])
    nonlinear: int = 2
    gamma: float = 0.5
    beta: float = 2.0


class InitCfg(Config):
    lambda_f: float = 4.0
    second_scale: float = 1e-3
    singular_value: float = 4.0


class SweepCfg(Config):
    eps1: list[float] = Field(default_factory=lambda: [0.5, 0.25, 0.125])
    eps2_per_eps1_sq: float = 0.1
    lam_factor: float = 1.0


class SolveCfg(Config):
    """LSODA (scipy: stiff BDF once the flow is stiff) at ``rtol``, ``atol``; the check solve of the smallest ε1 at ``check_factor``
    times both; gradient descent for ``gd_steps`` steps of ``gd_step_factor`` / λ_max(H C_λ(θ0))
    and twice as many of half that step, against the flow at the same time (``gd_rtol``)."""

    rtol: float = 1e-8
    atol: float = 1e-10
    check_factor: float = 0.01
    gd_steps: int = 400
    gd_step_factor: float = 0.5
    gd_rtol: float = 1e-12


class PyramidFlowConfig(ExperimentConfig):
    data: DataCfg = DataCfg()
    model: ModelCfg = ModelCfg()
    init: InitCfg = InitCfg()
    sweep: SweepCfg = SweepCfg()
    solve: SolveCfg = SolveCfg()


def _positive(name: str, value: float) -> None:
    if not (math.isfinite(value) and value > 0):
        raise ConfigError(f"{name} must be a finite number > 0, got {value}")


def check(cfg: PyramidFlowConfig) -> None:
    """Raise :class:`~nclab.errors.ConfigError` for settings no run can use, or that break
    Theorem 4.4's hypotheses before any draw (Assumption 4.1, 4.2's γ and β, the range of ε1).

    Length: one test and one message per setting; a table of rules would hide the messages."""
    d, m, i, s, v = cfg.data, cfg.model, cfg.init, cfg.sweep, cfg.solve
    if d.num_classes < 2 or d.samples_per_class < 2 or d.dim < 1:
        raise ConfigError(
            "data needs num_classes >= 2, samples_per_class >= 2 and dim >= 1, got "
            f"{d.num_classes}, {d.samples_per_class}, {d.dim}"
        )
    _positive("data.separation", d.separation)
    N, K = d.num_classes * d.samples_per_class, d.num_classes
    L = len(m.widths) + 1
    if m.nonlinear < 2 or L - m.nonlinear < 2:
        raise ConfigError(
            f"Theorem 4.4 needs L1 >= 2 nonlinear layers (its second layer is the small one) and "
            f"L2 >= 2 linear ones; model.widths gives L = {L}, model.nonlinear = {m.nonlinear}"
        )
    if d.dim < N:
        raise ConfigError(
            f"data.dim = {d.dim} < N = {N}: the first layer's output has rank <= dim, so "
            "λ_F = σ_min(σ(W1 X)) would be ~0 and Assumption 4.3 unreachable; take dim >= N"
        )
    n = [*m.widths, K]
    if n[0] < N:
        raise ConfigError(f"Assumption 4.1 needs n1 >= N = {N}, got model.widths[0] = {n[0]}")
    if n[0] < d.dim:
        raise ConfigError(
            f"model.widths[0] = {n[0]} < data.dim = {d.dim}: the orthogonal first layer keeps X's "
            "singular values (so λ_F > 0) only when n1 >= dim"
        )
    if any(a < b for a, b in itertools.pairwise(n[1:])):
        raise ConfigError(f"Assumption 4.1 needs n2 >= n3 >= ... >= nL = K, got {n[1:]}")
    if not 0 < m.gamma < 1 or not (math.isfinite(m.beta) and m.beta >= 1):
        raise ConfigError(f"Assumption 4.2 needs γ in (0, 1) and β >= 1, got {m.gamma}, {m.beta}")
    for name in ("lambda_f", "second_scale", "singular_value"):
        _positive(f"init.{name}", getattr(i, name))
    if len(s.eps1) < 2:
        raise ConfigError(f"sweep.eps1 needs at least two values (NC1 against eps1), got {s.eps1}")
    if any(b >= a for a, b in zip(s.eps1, s.eps1[1:], strict=False)):
        raise ConfigError(f"sweep.eps1 must decrease strictly, got {s.eps1}")
    for e in s.eps1:
        _positive("sweep.eps1 values", e)
        why = eps1_failure(e, K, N)  # the theorem's range, and Theorem 3.1's for bound (11)
        if why is not None:
            raise ConfigError(f"sweep.eps1 = {e}: {why}")
    _positive("sweep.eps2_per_eps1_sq", s.eps2_per_eps1_sq)
    if not 0 < s.lam_factor <= 1:
        raise ConfigError(f"sweep.lam_factor must be in (0, 1] ((10)'s bound), got {s.lam_factor}")
    for name in ("rtol", "atol", "check_factor", "gd_step_factor", "gd_rtol"):
        _positive(f"solve.{name}", getattr(v, name))
    if v.check_factor >= 1:
        raise ConfigError(f"solve.check_factor must be < 1 (a tighter solve), got {v.check_factor}")
    if v.gd_step_factor >= 2:
        raise ConfigError(
            f"solve.gd_step_factor must be < 2 (GD is unstable at 2 / λ_max), got {v.gd_step_factor}"
        )
    if v.gd_steps < 1:
        raise ConfigError(f"solve.gd_steps must be >= 1, got {v.gd_steps}")
