r"""A probabilistic context-free grammar of depth ``depth`` (*Feature Collapse*, Laurent, von Brecht &
Bresson, ICLR 2024, appendix A.5, Fig. 9): the hierarchical version of the concept/word model.

Level ``depth`` holds the K categories; level j (``depth-1`` ≥ j ≥ 1) an alphabet of ``symbols[j]``
latent symbols (concepts at level 1, meta-concepts at 2, meta-meta-concepts at 3); level 0 the
``symbols[0]`` words. Every symbol of level j ≥ 1 (and every category) has ``choices`` productions:
sequences of ``children`` symbols of level j − 1, drawn uniformly at random once (the grammar's
seed), all distinct within a level so that no segment has two parents. A sentence of class k
picks one of its productions uniformly, then each of those symbols picks one of its own, and so
on down to ``children**depth`` words. The paper's instance: depth 4, K = 100, 5 choices, 8
children, 4096 words.

:meth:`Grammar.sample` returns the words and, per level 1..depth−1, the latent symbol behind each
segment: ``latents[j-1][i, p]`` generated words ``p·c^j … (p+1)·c^j − 1`` of sentence i.

>>> g = make_grammar(K=4, symbols=(6, 5, 5), choices=3, children=2, seed=0)
>>> words, latents, y = g.sample(10, torch.Generator().manual_seed(1))
>>> words.shape, [tuple(t.shape) for t in latents], g.length
(torch.Size([10, 8]), [(10, 4), (10, 2)], 8)
>>> bool(g.generated_by(words, latents[0], level=1).all())
True
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import torch

from ..errors import ConfigError
from ..rng import generator
from .sentences import distinct_rows

__all__ = ["Grammar", "make_grammar"]


@dataclass(frozen=True)
class Grammar:
    """The productions of every level: ``rules[j]`` (n_j, choices, children) holds the symbols of
    level j−1 that symbol s of level j may produce (``rules[depth]``: the K categories')."""

    symbols: tuple[int, ...]  # alphabet sizes of levels 0 (words) .. depth-1
    K: int
    choices: int
    children: int
    rules: tuple[torch.Tensor, ...]  # rules[0] unused (None-like empty tensor)

    @property
    def depth(self) -> int:
        return len(self.symbols)

    @property
    def length(self) -> int:
        """Words per sentence: children ** depth."""
        return self.children**self.depth

    def sample(
        self, n: int, gen: torch.Generator, labels: torch.Tensor | None = None
    ) -> tuple[torch.Tensor, list[torch.Tensor], torch.Tensor]:
        """``n`` sentences (classes uniform, or ``labels``): words (n, c^depth), latents per level
        1..depth−1 (n, c^(depth−j)), labels (n,)."""
        if labels is None:
            if n < 1:
                raise ConfigError(f"n (sentences) must be >= 1, got {n}")
            labels = torch.randint(0, self.K, (n,), generator=gen)
        seq = labels[:, None]
        latents: list[torch.Tensor] = []
        for j in range(self.depth, 0, -1):
            pick = torch.randint(0, self.choices, seq.shape, generator=gen)
            seq = self.rules[j][seq, pick].reshape(seq.shape[0], -1)
            if j > 1:
                latents.append(seq)
        return seq, latents[::-1], labels

    def generated_by(self, lower: torch.Tensor, upper: torch.Tensor, level: int) -> torch.Tensor:
        """(n, positions) booleans: whether each segment of ``children`` symbols of level
        ``level − 1`` in ``lower`` is one of the productions of the symbol above it in ``upper``."""
        seg = lower.reshape(upper.shape[0], upper.shape[1], self.children)
        prods = self.rules[level][upper]  # (n, P, choices, children)
        return (prods == seg[:, :, None, :]).all(-1).any(-1)


def make_grammar(
    K: int,
    symbols: Sequence[int],
    choices: int = 5,
    children: int = 8,
    seed: int = 0,
) -> Grammar:
    """Draw the productions of a grammar of depth ``len(symbols)`` (``symbols``: alphabet sizes of
    words, concepts, meta-concepts, ...), distinct within each level."""
    symbols = tuple(int(s) for s in symbols)
    for name, v, lo in (("K", K, 2), ("choices", choices, 1), ("children", children, 1)):
        if not isinstance(v, int) or v < lo:
            raise ConfigError(f"{name} must be an integer >= {lo}, got {v!r}")
    if len(symbols) < 1 or min(symbols) < 2:
        raise ConfigError(f"symbols must list >= 1 alphabet sizes, each >= 2, got {symbols}")
    gen = generator(seed, 20)
    sizes = (*symbols, K)
    rules: list[torch.Tensor] = [torch.empty(0, dtype=torch.long)]
    for j in range(1, len(sizes)):
        n, below = sizes[j], sizes[j - 1]
        if n * choices > below**children:
            raise ConfigError(
                f"level {j}: {n} x {choices} distinct productions of {children} symbols out of "
                f"{below} do not exist"
            )
        rules.append(distinct_rows(n * choices, below, children, gen).reshape(n, choices, children))
    return Grammar(symbols, K, choices, children, tuple(rules))
