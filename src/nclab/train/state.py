"""What a checkpoint holds to resume training exactly, built once from the training's parts.

>>> import torch
>>> model = torch.nn.Linear(2, 2)
>>> opt = torch.optim.SGD(model.parameters(), lr=0.1)
>>> g = torch.Generator().manual_seed(0)
>>> st = TrainState(model=model, optimizer=opt, generators=g)
>>> sorted(st.state_dict())
['gen', 'model', 'opt']
>>> saved = st.state_dict()
>>> first = torch.randperm(5, generator=g)
>>> st.load_state_dict(saved)     # the generator is back where it was
>>> bool((torch.randperm(5, generator=g) == first).all())
True
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import torch


class TrainState:
    """Model, optimiser, scheduler, random generators and any other ``state_dict()`` holders.

    ``generators`` is one :class:`torch.Generator` (saved as ``"gen"``) or a mapping name ->
    generator; ``extra`` objects are saved under their keyword with their own ``state_dict()``.
    Parts given as None are skipped. The checkpoint is a plain dict, so ``torch.save`` takes it.
    """

    def __init__(
        self,
        model: torch.nn.Module | None = None,
        optimizer: torch.optim.Optimizer | None = None,
        scheduler: Any | None = None,
        generators: torch.Generator | Mapping[str, torch.Generator] | None = None,
        **extra: Any,
    ):
        self.parts: dict[str, Any] = {}
        for key, part in (("model", model), ("opt", optimizer), ("sched", scheduler)):
            if part is not None:
                self.parts[key] = part
        if isinstance(generators, torch.Generator):
            generators = {"gen": generators}
        self.generators = dict(generators or {})
        self.parts.update({k: v for k, v in extra.items() if v is not None})

    def state_dict(self) -> dict[str, Any]:
        out = {k: part.state_dict() for k, part in self.parts.items()}
        out.update({k: g.get_state() for k, g in self.generators.items()})
        return out

    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        for k, part in self.parts.items():
            part.load_state_dict(state[k])
        for k, g in self.generators.items():
            g.set_state(state[k])
