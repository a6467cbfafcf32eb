r"""A synthetic binary sentiment task, the CPU stand-in for IMDB (Súkeník et al.'s language panel).

IMDB reviews are labelled positive or negative; most of their words carry no sentiment, a few do,
they can appear anywhere in the review, and some disagree with the review's label. The concept/word
model of :mod:`nclab.data.sentences` has none of these traits (its class is a fixed sequence of
concepts, one per position), so this model is built on them instead:

* a vocabulary of ``vocab`` word ids: 0 is padding, ids ``1 .. n_polar`` are positive words, the next
  ``n_polar`` negative, the rest neutral; within each group word frequencies follow Zipf's law
  :math:`p_r \propto r^{-1}` (as natural text does);
* a review of class y ∈ {0 = negative, 1 = positive} has a length drawn uniformly from
  ``[min_len, seq_len]`` (padded with 0 to ``seq_len``); each word is polar with probability
  ``polar_rate``, and a polar word agrees with the label with probability ``agreement``.

The Bayes classifier counts agreeing against disagreeing polar words; a short review can have none,
so the task is not separable by its polar words alone (test accuracy below 100 %), while a network
can still fit its training set. Train and test sets are balanced (``n_train`` / ``n_test`` per
class) and drawn from independent streams of ``seed``.

>>> s = make_sentiment(n_train=50, n_test=20, seed=0)
>>> s.x_train.shape, s.num_classes, s.vocab, int(s.y_train.sum())
(torch.Size([100, 32]), 2, 200, 50)
>>> bool((s.x_train[:, 0] != 0).all()), bool((s.x_train < s.vocab).all())
(True, True)
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from ..errors import DataError


@dataclass
class TokenSplit:
    """Labelled token sequences (N x T word ids, int64; ``pad_id`` pads short ones)."""

    x_train: torch.Tensor
    y_train: torch.Tensor
    x_test: torch.Tensor
    y_test: torch.Tensor
    num_classes: int
    vocab: int
    pad_id: int | None = 0
    name: str = ""


def _zipf(n: int) -> torch.Tensor:
    p = 1.0 / torch.arange(1, n + 1, dtype=torch.float64)
    return p / p.sum()


def _reviews(n: int, label: int, cfg: dict, g: torch.Generator) -> torch.Tensor:
    T, lo, P, V = cfg["seq_len"], cfg["min_len"], cfg["n_polar"], cfg["vocab"]
    lengths = torch.randint(lo, T + 1, (n,), generator=g)
    neutral = 1 + 2 * P + torch.multinomial(_zipf(V - 1 - 2 * P), n * T, True, generator=g)
    polar_rank = torch.multinomial(_zipf(P), n * T, True, generator=g)
    agree = torch.rand(n * T, generator=g) < cfg["agreement"]
    positive = agree if label == 1 else ~agree
    polar = 1 + polar_rank + P * (~positive).long()  # 1..P positive, P+1..2P negative
    is_polar = torch.rand(n * T, generator=g) < cfg["polar_rate"]
    x = torch.where(is_polar, polar, neutral).view(n, T)
    return x.masked_fill(torch.arange(T)[None, :] >= lengths[:, None], 0)


def make_sentiment(
    n_train: int = 100,
    n_test: int = 100,
    vocab: int = 200,
    seq_len: int = 32,
    min_len: int = 8,
    n_polar: int = 20,
    polar_rate: float = 0.2,
    agreement: float = 0.8,
    seed: int = 0,
) -> TokenSplit:
    """The synthetic sentiment task (module docstring): ``n_train`` / ``n_test`` reviews per class."""
    if n_train < 1 or n_test < 0:
        raise DataError(f"n_train must be >= 1 and n_test >= 0, got {n_train}, {n_test}")
    if not 1 <= min_len <= seq_len:
        raise DataError(f"need 1 <= min_len <= seq_len, got min_len={min_len}, seq_len={seq_len}")
    if not (n_polar >= 1 and vocab > 1 + 2 * n_polar):
        raise DataError(f"need n_polar >= 1 and vocab > 1 + 2 n_polar, got {n_polar}, {vocab}")
    if not (0 <= polar_rate <= 1 and 0 <= agreement <= 1):
        raise DataError(
            f"polar_rate and agreement must lie in [0, 1], got {polar_rate}, {agreement}"
        )
    cfg = {
        "seq_len": seq_len,
        "min_len": min_len,
        "n_polar": n_polar,
        "vocab": vocab,
        "agreement": agreement,
        "polar_rate": polar_rate,
    }
    parts = []
    for stream, n in ((1, n_train), (2, n_test)):
        g = torch.Generator().manual_seed(1_000_003 * int(seed) + stream)
        xs = [_reviews(n, y, cfg, g) for y in (0, 1)]
        parts += [torch.cat(xs), torch.arange(2).repeat_interleave(n)]
    return TokenSplit(*parts, num_classes=2, vocab=vocab, pad_id=0, name="sentiment")
