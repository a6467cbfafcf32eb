"""Random streams: an independent torch generator per (seed, stream), so that one seed gives every
part of a run (latents, train and test sets, batches, initialisation) its own reproducible stream,
and changing one part leaves the others' draws unchanged.

>>> a, b = generator(0, 1), generator(0, 1)
>>> bool((torch.rand(3, generator=a) == torch.rand(3, generator=b)).all())
True
>>> bool((torch.rand(3, generator=generator(0, 1)) == torch.rand(3, generator=generator(0, 2))).any())
False
"""

from __future__ import annotations

import numpy as np
import torch

__all__ = ["generator"]


def generator(seed: int, stream: int) -> torch.Generator:
    """An independent torch generator for (seed, stream), via numpy's SeedSequence."""
    state = np.random.SeedSequence([int(seed), int(stream)]).generate_state(2, dtype=np.uint32)
    return torch.Generator().manual_seed(int(state[0]) << 31 | int(state[1] >> 1))
