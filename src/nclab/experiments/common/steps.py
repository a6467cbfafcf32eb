"""Step-based training shared by the appendix experiments (fc-transformer, fc-grammar): mini-batches
of a run that resumes anywhere (the order of epoch e is a function of (seed, e) alone, so step i's
batch needs no saved generator state) and one optimiser step."""

from __future__ import annotations

import math

import torch

from ...errors import ConfigError
from ...rng import generator


class EpochBatches:
    """Step i → (epoch, indices of its batch) over ``n`` samples reshuffled every epoch.

    >>> b = EpochBatches(n=5, batch_size=2, seed=0)
    >>> b.per_epoch, [len(b.indices(i)) for i in range(3)]
    (3, [2, 2, 1])
    >>> sorted(torch.cat([b.indices(i) for i in range(3)]).tolist())
    [0, 1, 2, 3, 4]
    """

    def __init__(self, n: int, batch_size: int, seed: int, stream: int = 10):
        self.n, self.batch_size, self.seed, self.stream = n, batch_size, seed, stream
        self.per_epoch = math.ceil(n / batch_size)
        self._perm: tuple[int, torch.Tensor] | None = None

    def epoch(self, step: int) -> float:
        return step / self.per_epoch

    def indices(self, step: int) -> torch.Tensor:
        epoch, b = divmod(step, self.per_epoch)
        if self._perm is None or self._perm[0] != epoch:
            g = generator(self.seed, self.stream + epoch)
            self._perm = (epoch, torch.randperm(self.n, generator=g))
        return self._perm[1][b * self.batch_size : (b + 1) * self.batch_size]


def optimizer_step(opt: torch.optim.Optimizer, loss: torch.Tensor) -> float:
    """Backward of ``loss``, one step of ``opt`` (gradients zeroed first); the loss as a float.
    A non-finite loss is a :class:`~nclab.errors.ConfigError` (the run diverged)."""
    value = float(loss.detach())
    if not math.isfinite(value):
        raise ConfigError(f"training diverged (loss {value}); lower lr")
    opt.zero_grad(set_to_none=True)
    loss.backward()
    opt.step()
    return value
