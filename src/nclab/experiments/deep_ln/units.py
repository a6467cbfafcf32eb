"""The units of a deep-ln run and the checks of its config (no torch).

``mode = "sweep"``: one unit per (depth, seed), ``units/L<depth>_seed-<s>``, the deepest the
costliest. ``mode = "monotone"`` (:mod:`.monotone`): four units per seed, ``shallow``,
``continued`` and ``embedded`` (both after ``shallow``, from its trained weights) and ``scratch``.
"""

from __future__ import annotations

from ...errors import ConfigError
from ..protocol import Unit
from .config import DeepLNConfig

ROLES = ("shallow", "continued", "embedded", "scratch")


def check(cfg: DeepLNConfig) -> None:
    """Raise :class:`~nclab.errors.ConfigError` for settings no run can use."""
    if not cfg.depths or min(cfg.depths) < 1:
        raise ConfigError(f"depths must be a non-empty list of integers >= 1, got {cfg.depths}")
    if cfg.mode != "monotone":
        return
    mc = cfg.monotone
    if not 1 <= mc.shallow < mc.deep:
        raise ConfigError(f"monotone needs 1 <= shallow < deep, got {mc.shallow}, {mc.deep}")
    if cfg.train.wd_over_depth or cfg.model.block not in ("rn1", "rn2"):
        raise ConfigError(
            "monotone compares objectives across depths: it needs one λ for every depth "
            "(train.wd_over_depth = false) and a ResNet block (rn1, rn2)"
        )


def units(cfg: DeepLNConfig) -> list[Unit]:
    seeds = [cfg.seed + i for i in range(max(1, cfg.seeds))]
    if cfg.mode == "monotone":
        return [u for s in seeds for u in _monotone_units(cfg, s)]
    return [
        Unit(f"L{d}_seed-{s}", s, {"depth": d}, cost=d)
        for d in sorted(set(cfg.depths))
        for s in seeds
    ]


def _monotone_units(cfg: DeepLNConfig, s: int) -> list[Unit]:
    mc, e = cfg.monotone, cfg.train.epochs
    shallow = f"shallow_seed-{s}"
    return [
        Unit(shallow, s, {"role": "shallow", "depth": mc.shallow, "epochs": e}),
        Unit(
            f"continued_seed-{s}",
            s,
            {"role": "continued", "depth": mc.shallow, "epochs": mc.epochs_after},
            needs=(shallow,),
        ),
        Unit(
            f"embedded_seed-{s}",
            s,
            {"role": "embedded", "depth": mc.deep, "epochs": mc.epochs_after},
            needs=(shallow,),
        ),
        Unit(
            f"scratch_seed-{s}",
            s,
            {"role": "scratch", "depth": mc.deep, "epochs": e + mc.epochs_after},
        ),
    ]
