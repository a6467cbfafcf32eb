"""The network matched to a depth-``depth`` context-free grammar (*Feature Collapse*, appendix A.5,
Fig. 10): word embeddings, then at each level a block — an MLP (Linear, ReLU, Linear) followed by
LayerNorm — applied to the concatenation of ``children`` consecutive vectors of the level below,
with weights shared across positions within a level; the last block maps to the K logits (no
LayerNorm). ``zero_head=True`` starts that block's last Linear at zero: the logits start
constant (loss log K), so on the plateau before the task is learned the loss has no reason to
shrink them by killing the top block's ReLUs, which otherwise all die (measured with 8 children,
docs/feature-collapse.md).

Level j's output holds one vector per segment of ``children**j`` words: the representation that
should collapse onto the latent symbol (concept, meta-concept, ...) that generated the segment.

>>> net = GrammarNet(vocab=6, K=3, depth=2, children=2, widths=(4, 5), hidden=8)
>>> x = torch.randint(0, 6, (7, 4))
>>> net(x).shape, [tuple(h.shape) for h in net.levels(x)]
(torch.Size([7, 3]), [(7, 2, 5)])
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
from torch import nn

from ..errors import ConfigError

__all__ = ["GrammarNet"]


def _block(d_in: int, hidden: int, d_out: int, norm: bool) -> nn.Sequential:
    layers: list[nn.Module] = [nn.Linear(d_in, hidden), nn.ReLU(), nn.Linear(hidden, d_out)]
    if norm:
        layers.append(nn.LayerNorm(d_out))
    return nn.Sequential(*layers)


class GrammarNet(nn.Module):
    """Embedding (vocab × widths[0]) and ``depth`` blocks; ``widths[j]`` is level j's width
    (j < depth), ``hidden`` the MLPs' hidden width; ``zero_head``: the logits' Linear starts at
    zero."""

    def __init__(
        self,
        vocab: int,
        K: int,
        depth: int,
        children: int,
        widths: Sequence[int],
        hidden: int,
        zero_head: bool = False,
    ):
        super().__init__()
        widths = tuple(int(w) for w in widths)
        if len(widths) != depth or min(widths) < 1 or hidden < 1 or children < 1 or K < 2:
            raise ConfigError(
                f"need depth={depth} widths (levels 0..depth-1), each >= 1, hidden >= 1, "
                f"children >= 1 and K >= 2; got widths={widths}, hidden={hidden}"
            )
        self.depth, self.fan = depth, children
        self.emb = nn.Embedding(vocab, widths[0])
        outs = (*widths[1:], K)
        self.blocks = nn.ModuleList(
            _block(children * widths[j], hidden, outs[j], norm=j < depth - 1) for j in range(depth)
        )
        if zero_head:
            nn.init.zeros_(self.blocks[-1][2].weight)
            nn.init.zeros_(self.blocks[-1][2].bias)

    def _run(self, x: torch.Tensor, keep: bool) -> tuple[torch.Tensor, list[torch.Tensor]]:
        if x.ndim != 2 or x.shape[1] != self.fan**self.depth:
            raise ConfigError(
                f"x must be (N, {self.fan**self.depth}) word ids, got {tuple(x.shape)}"
            )
        h = self.emb(x)  # (N, P, d0)
        kept = []
        for j, block in enumerate(self.blocks):
            n, p, d = h.shape
            h = block(h.reshape(n, p // self.fan, self.fan * d))
            if keep and j < self.depth - 1:
                kept.append(h)
        return h[:, 0], kept

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Logits (N, K) of word ids (N, children**depth)."""
        return self._run(x, keep=False)[0]

    def levels(self, x: torch.Tensor) -> list[torch.Tensor]:
        """The hidden representations of levels 1..depth−1: (N, children**(depth−j), widths[j])."""
        return self._run(x, keep=True)[1]
