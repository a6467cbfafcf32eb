"""The concept/word sentences of *Feature Collapse* (:mod:`nclab.data.sentences`) as a config
section, shared by the feature-collapse and fc-transformer experiments, and its torch-free check.

>>> check_sentences(SentenceDataCfg(nspl=0))
Traceback (most recent call last):
...
nclab.errors.ConfigError: data.nspl and data.n_test must be >= 1, got nspl=0, n_test=5
"""

from __future__ import annotations

import math
from typing import Literal

from ...config import Config
from ...errors import ConfigError


class SentenceDataCfg(Config):
    """``nc`` concepts of ``nw / nc`` words each, sentences of ``L`` words drawn from the latent
    concept sequences of ``K`` classes, word frequencies within a concept ``freq`` (Zipf exponent
    ``zipf_s``), ``nspl`` training and ``n_test`` test sentences per class (the paper's sizes:
    nc=3, nw=1200, L=15, K=1000)."""

    nc: int = 3
    nw: int = 1200
    L: int = 15
    K: int = 1000
    freq: Literal["uniform", "zipf"] = "uniform"
    zipf_s: float = 1.0
    nspl: int = 5
    n_test: int = 5


def check_sentences(d: SentenceDataCfg, where: str = "data", distinct: bool = False) -> None:
    """What :func:`~nclab.data.sentences.make_task` and ``make_dataset`` would refuse, before any
    work: sizes, ``nw`` a multiple of ``nc``, the Zipf exponent, ``K`` distinct latent sequences
    (``distinct``), at least one sentence per class."""
    for name, lo in (("nc", 2), ("nw", 1), ("L", 1), ("K", 2)):
        if getattr(d, name) < lo:
            raise ConfigError(f"{where}.{name} must be an integer >= {lo}, got {getattr(d, name)}")
    if d.nw % d.nc:
        raise ConfigError(
            f"{where}.nw={d.nw} words cannot be split into {where}.nc={d.nc} equal concepts "
            "(nw must be a multiple of nc)"
        )
    if not (math.isfinite(d.zipf_s) and d.zipf_s >= 0):
        raise ConfigError(f"{where}.zipf_s must be a finite number >= 0, got {d.zipf_s}")
    if distinct and d.K > d.nc**d.L:
        raise ConfigError(
            f"{where}.K={d.K} distinct latent variables do not exist: nc^L = {d.nc**d.L}"
        )
    if d.nspl < 1 or d.n_test < 1:
        raise ConfigError(
            f"{where}.nspl and {where}.n_test must be >= 1, got nspl={d.nspl}, n_test={d.n_test}"
        )
