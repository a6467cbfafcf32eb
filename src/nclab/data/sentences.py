r"""The concept/word sentence model of *Feature Collapse* (Laurent, von Brecht & Bresson, ICLR 2024).

``nc`` concepts partition ``nw`` words into equal contiguous blocks of ``sc = nw / nc`` words: word
id ``α·sc + β`` is the β-th word of concept α (the paper's one-hot scheme, eq. 10, 0-based). Within a
concept, word β has frequency :math:`\mu_\beta` (uniform, Zipf :math:`\mu_\beta\propto\beta^{-s}`, or
a given list). ``K`` latent variables :math:`z_k\in[n_c]^L` are drawn uniformly (optionally
distinct, as the theorems assume); a sentence of class k has its ℓ-th word drawn from concept
:math:`z_{k,\ell}` with frequencies μ. Training set: ``nspl`` sentences per class; test set: a fresh
``n_test`` (5) sentences per class from the same latents, as in the authors' code.

Everything derives from one seed through independent streams (latents, train, test), so changing
``nspl`` leaves the latents and the test set unchanged.

>>> task = make_task(nc=3, nw=12, L=5, K=4, freq="zipf", seed=0)
>>> data = make_dataset(task, nspl=10, seed=0)
>>> data.x_train.shape, data.y_train.shape, data.x_test.shape
(torch.Size([40, 5]), torch.Size([40]), torch.Size([20, 5]))
>>> bool((task.word_concept[data.x_train] == task.latents[data.y_train]).all())
True
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass

import torch

from ..errors import ConfigError
from ..rng import generator

__all__ = [
    "SentenceData",
    "SentenceTask",
    "all_latents",
    "enumerate_sentences",
    "frequencies",
    "make_dataset",
    "make_task",
]

#: stream ids of the per-seed random generators
_LATENTS, _TRAIN, _TEST = 0, 1, 2


def frequencies(
    sc: int, freq: str | Sequence[float] = "uniform", zipf_s: float = 1.0
) -> torch.Tensor:
    r"""Within-concept word frequencies :math:`\mu_1..\mu_{s_c}` (float64, summing to 1).

    ``freq``: ``"uniform"``, ``"zipf"`` (:math:`\mu_\beta\propto\beta^{-s}`, ``s = zipf_s``; s = 1 is
    the paper's) or a list of sc positive numbers summing to 1.

    >>> frequencies(4, "zipf").tolist()
    [0.48, 0.24, 0.16, 0.12]
    """
    if sc < 1:
        raise ConfigError(f"each concept needs at least one word, got sc={sc}")
    if isinstance(freq, str):
        if freq == "uniform":
            return torch.full((sc,), 1.0 / sc, dtype=torch.float64)
        if freq == "zipf":
            if not (math.isfinite(zipf_s) and zipf_s >= 0):
                raise ConfigError(f"zipf_s must be a finite number >= 0, got {zipf_s}")
            m = torch.arange(1, sc + 1, dtype=torch.float64) ** (-zipf_s)
            return m / m.sum()
        raise ConfigError(
            f"freq must be 'uniform', 'zipf' or a list of {sc} frequencies, got {freq!r}"
        )
    m = torch.as_tensor(list(freq), dtype=torch.float64)
    if m.ndim != 1 or m.numel() != sc:
        raise ConfigError(f"freq lists {m.numel()} frequencies; it needs sc = nw/nc = {sc}")
    if not torch.isfinite(m).all() or (m <= 0).any():
        raise ConfigError("every word frequency must be finite and > 0")
    if abs(float(m.sum()) - 1.0) > 1e-6:
        raise ConfigError(f"word frequencies must sum to 1, got {float(m.sum()):.9g}")
    return m / m.sum()


@dataclass(frozen=True)
class SentenceTask:
    """A classification task: concepts, word frequencies and the K latent variables.

    Attributes: ``latents`` (K, L) long in [0, nc); ``mu`` (sc,) float64 frequencies.
    """

    nc: int
    nw: int
    L: int
    latents: torch.Tensor
    mu: torch.Tensor

    @property
    def K(self) -> int:
        return int(self.latents.shape[0])

    @property
    def sc(self) -> int:
        return self.nw // self.nc

    @property
    def word_concept(self) -> torch.Tensor:
        """(nw,) concept α of each word id."""
        return torch.arange(self.nw) // self.sc

    @property
    def word_rank(self) -> torch.Tensor:
        """(nw,) rank β of each word id inside its concept (0 = most frequent under Zipf)."""
        return torch.arange(self.nw) % self.sc

    @property
    def word_freq(self) -> torch.Tensor:
        """(nw,) frequency μ_β of each word inside its concept."""
        return self.mu[self.word_rank]

    @property
    def distinct(self) -> bool:
        return int(torch.unique(self.latents, dim=0).shape[0]) == self.K

    def sample(self, nspl: int, gen: torch.Generator) -> tuple[torch.Tensor, torch.Tensor]:
        """``nspl`` sentences per class: word ids (K·nspl, L) and labels (K·nspl,), class-major."""
        if nspl < 1:
            raise ConfigError(f"nspl (sentences per class) must be >= 1, got {nspl}")
        n = self.K * nspl
        cdf = torch.cumsum(self.mu, 0)
        cdf[-1] = 1.0
        u = torch.rand(n * self.L, generator=gen, dtype=torch.float64)
        beta = torch.searchsorted(cdf, u, right=True).clamp_(max=self.sc - 1).view(n, self.L)
        labels = torch.arange(self.K).repeat_interleave(nspl)
        alpha = self.latents[labels]
        return alpha * self.sc + beta, labels


def _draw_latents(nc: int, L: int, K: int, distinct: bool, gen: torch.Generator) -> torch.Tensor:
    if not distinct:
        return torch.randint(0, nc, (K, L), generator=gen)
    total = nc**L
    if K > total:
        raise ConfigError(f"K={K} distinct latent variables do not exist: nc^L = {total}")
    if total <= 2**24:
        codes = torch.randperm(total, generator=gen)[:K]
        digits = nc ** torch.arange(L - 1, -1, -1)
        return (codes[:, None] // digits) % nc
    return distinct_rows(K, nc, L, gen)


def distinct_rows(m: int, alphabet: int, length: int, gen: torch.Generator) -> torch.Tensor:
    """``m`` distinct uniformly random sequences of ``length`` symbols of [0, alphabet) (rows):
    drawn at once, duplicates redrawn (for m much smaller than alphabet**length)."""
    z = torch.randint(0, alphabet, (m, length), generator=gen)
    for _ in range(1000):  # resample duplicates (rare when m << alphabet^length)
        _, inverse = torch.unique(z, dim=0, return_inverse=True)
        first = torch.full((int(inverse.max()) + 1,), m, dtype=torch.long).scatter_reduce(
            0, inverse, torch.arange(m), reduce="amin"
        )
        dup = torch.ones(m, dtype=torch.bool)
        dup[first] = False
        if not dup.any():
            return z
        z[dup] = torch.randint(0, alphabet, (int(dup.sum()), length), generator=gen)
    raise ConfigError("could not draw distinct rows")  # pragma: no cover


def make_task(
    nc: int,
    nw: int,
    L: int,
    K: int,
    freq: str | Sequence[float] = "uniform",
    zipf_s: float = 1.0,
    distinct: bool = False,
    seed: int = 0,
    latents: torch.Tensor | None = None,
) -> SentenceTask:
    """Validate the sizes and draw the latents (or take ``latents``, e.g. all of [nc]^L)."""
    for name, v, lo in (("nc", nc, 2), ("nw", nw, 1), ("L", L, 1), ("K", K, 2)):
        if not isinstance(v, int) or v < lo:
            raise ConfigError(f"{name} must be an integer >= {lo}, got {v!r}")
    if nw % nc:
        raise ConfigError(
            f"nw={nw} words cannot be split into nc={nc} equal concepts "
            "(nw must be a multiple of nc)"
        )
    mu = frequencies(nw // nc, freq, zipf_s)
    if latents is None:
        latents = _draw_latents(nc, L, K, distinct, generator(seed, _LATENTS))
    else:
        latents = torch.as_tensor(latents, dtype=torch.long)
        if latents.shape != (K, L) or latents.min() < 0 or latents.max() >= nc:
            raise ConfigError(
                f"latents must be a ({K}, {L}) integer tensor with values in [0, {nc})"
            )
    return SentenceTask(nc=nc, nw=nw, L=L, latents=latents, mu=mu)


def all_latents(nc: int, L: int) -> torch.Tensor:
    """Every latent variable of [nc]^L, (nc^L, L) in lexicographic order (K = nc^L, Theorem 2)."""
    return torch.tensor(list(itertools.product(range(nc), repeat=L)), dtype=torch.long)


@dataclass(frozen=True)
class SentenceData:
    """Training and test sentences of a task (word ids (N, L) long, labels (N,) long)."""

    task: SentenceTask
    x_train: torch.Tensor
    y_train: torch.Tensor
    x_test: torch.Tensor
    y_test: torch.Tensor

    def word_counts(self) -> torch.Tensor:
        """(nw,) occurrences of each word in the training set."""
        return torch.bincount(self.x_train.flatten(), minlength=self.task.nw)


def make_dataset(task: SentenceTask, nspl: int, n_test: int = 5, seed: int = 0) -> SentenceData:
    """Training set (``nspl`` per class) and test set (``n_test`` per class), vectorised.

    500k sentences of length 15 take about a second.
    """
    x, y = task.sample(nspl, generator(seed, _TRAIN))
    xt, yt = task.sample(n_test, generator(seed, _TEST))
    return SentenceData(task, x, y, xt, yt)


def enumerate_sentences(task: SentenceTask) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    r"""Every sentence of every class with its probability :math:`\mathcal D_{z_k}(x)`.

    Returns word ids (K·sc^L, L), labels and probabilities (float64, summing to 1 per class): the
    true risk is :math:`\frac1K\sum_i p_i\,\ell(h(x_i), y_i)`. For small instances only.

    >>> task = make_task(nc=2, nw=4, L=2, K=2, freq=[0.75, 0.25], distinct=True, seed=0)
    >>> x, y, p = enumerate_sentences(task)
    >>> x.shape, [round(float(p[y == k].sum()), 12) for k in range(2)]
    (torch.Size([8, 2]), [1.0, 1.0])
    """
    sc, L = task.sc, task.L
    if task.K * sc**L > 5_000_000:
        raise ConfigError(f"{task.K * sc**L} sentences are too many to enumerate")
    betas = torch.tensor(list(itertools.product(range(sc), repeat=L)), dtype=torch.long)
    probs = task.mu[betas].prod(1)
    labels = torch.arange(task.K).repeat_interleave(betas.shape[0])
    x = task.latents[labels] * sc + betas.repeat(task.K, 1)
    return x, labels, probs.repeat(task.K)
