"""The problem description of the UFM laboratory: :class:`UFMSpec`, per-problem hyperparameters and
step-size schedules (used by :class:`nclab.models.ufm.BatchedUFM`)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import torch

from ..errors import ConfigError

LOSSES = ("mse", "ce")
BIASES = ("none", "free", "regularized")


@dataclass(frozen=True)
class UFMSpec:
    """The shape of a UFM-family problem (shared by every problem of a batch)."""

    K: int
    n: int
    d: int
    depth: int = 1  # number of weight layers L (1: plain UFM, 2: extended UFM)
    relu: bool = False  # ReLU after every hidden layer (depth >= 2)
    loss: str = "mse"
    bias: str = "none"
    layernorm: bool = False  # GUFM: features on the LayerNorm set
    # a ReLU on the features of the plain UFM, W σ(H) (Tirer & Bruna §7: GD cannot move H's
    # negative entries); depth 1, MSE, no bias, no LayerNorm
    relu_features: bool = False

    def __post_init__(self) -> None:
        for name, lo in (("K", 2), ("n", 1), ("d", 1), ("depth", 1)):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int) or v < lo:
                raise ConfigError(f"{name} must be an integer >= {lo}, got {v!r}")
        if self.loss not in LOSSES:
            raise ConfigError(f"loss must be one of {', '.join(LOSSES)}, got {self.loss!r}")
        if self.bias not in BIASES:
            raise ConfigError(f"bias must be one of {', '.join(BIASES)}, got {self.bias!r}")
        if self.relu and self.depth < 2:
            raise ConfigError("relu needs depth >= 2 (a ReLU between two weight layers)")
        if self.relu_features and (
            self.depth != 1 or self.loss != "mse" or self.bias != "none" or self.layernorm
        ):
            raise ConfigError(
                "relu_features (W σ(H)) is a plain UFM: depth 1, loss 'mse', bias 'none', "
                "no layernorm"
            )
        if self.layernorm and self.d < 2:
            raise ConfigError("layernorm features need d >= 2")

    @property
    def N(self) -> int:
        return self.K * self.n

    def layer_names(self) -> list[str]:
        """Names of the feature layers seen by the metrics, input first, classifier input last.

        depth 1: ``["H"]``; deeper: ``["H1", "Z1", ("A1",) "Z2", ...]`` with Z_l = W_l A_{l-1} the
        pre-activation and A_l = relu(Z_l) (only listed for ReLU models; linear: A_l = Z_l).
        """
        if self.depth == 1:
            return ["H"]
        names = ["H1"]
        for layer in range(1, self.depth):
            names.append(f"Z{layer}")
            if self.relu:
                names.append(f"A{layer}")
        return names


def _per_problem(name: str, value: Any, B: int, allow_zero: bool = True) -> torch.Tensor:
    t = torch.as_tensor(value, dtype=torch.float64).flatten()
    if t.numel() == 1:
        t = t.expand(B).clone()
    if t.numel() != B:
        raise ConfigError(
            f"{name} must be one value or {B} values (one per problem), got {t.numel()}"
        )
    if not torch.isfinite(t).all() or (t < 0).any() or (not allow_zero and (t == 0).any()):
        raise ConfigError(
            f"{name} must be finite and {'>= 0' if allow_zero else '> 0'}, got {t.tolist()}"
        )
    return t


def lr_factor(
    step: int,
    schedule: str = "constant",
    milestones: Sequence[int] = (),
    gamma: float = 0.1,
    total: int | None = None,
) -> float:
    """Step-size multiplier at ``step``: constant, ``"step"`` (× gamma at each milestone) or cosine.

    >>> [lr_factor(s, "step", milestones=[10, 20]) for s in (0, 10, 25)]
    [1.0, 0.1, 0.010000000000000002]
    """
    if schedule == "constant":
        return 1.0
    if schedule == "step":
        return gamma ** sum(step >= m for m in milestones)
    if schedule == "cosine":
        if not total:
            raise ConfigError("the cosine schedule needs the total number of steps")
        return 0.5 * (1 + math.cos(math.pi * min(step, total) / total))
    raise ConfigError(f"schedule must be 'constant', 'step' or 'cosine', got {schedule!r}")
