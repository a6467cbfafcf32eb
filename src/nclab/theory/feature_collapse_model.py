r"""The data model and loss convention of Laurent, von Brecht & Bresson, *Feature Collapse* (ICLR
2024): the objective every nclab model of the paper minimises (:func:`regularised_risk`), the
within-concept word frequencies (:func:`word_frequencies`) and equiangular frames
(:func:`equiangular_frame`). The theorems are in :mod:`nclab.theory.feature_collapse`, which
re-exports these names (import them from there); this module imports nothing from it.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from .params import check_int, check_multiple, check_number, check_probabilities, require

__all__ = [
    "check_model_parameters",
    "equiangular_frame",
    "regularised_risk",
    "word_frequencies",
    "words_per_concept",
]


def regularised_risk(
    mean_loss: Any, sq_norm_w: Any, sq_norm_u: Any, lam_w: float, lam_u: float
) -> Any:
    r"""The objective of the paper's networks: :math:`\bar\ell + \frac{\lambda_W}{2}\|W\|_F^2 +
    \frac{\lambda_U}{2}\|U\|_F^2` (eqs. 2, 3, 5, 9). Array-agnostic (floats, numpy, torch).

    ``mean_loss`` is the mean cross-entropy: over the training sentences (empirical risk) or the
    class-averaged expectation over sentences (true risk). ``h``: ``lam_w = lam_u = λ``;
    ``h*``: ``lam_w = 0``.

    >>> regularised_risk(1.0, 4.0, 2.0, 0.1, 0.1)
    1.3
    """
    return mean_loss + 0.5 * lam_w * sq_norm_w + 0.5 * lam_u * sq_norm_u


def word_frequencies(
    sc: int, mu: Sequence[float] | None = None, zipf: bool = False, s: float = 1.0
) -> np.ndarray:
    r"""Within-concept word frequencies :math:`\mu_1..\mu_{s_c}`: uniform, Zipf
    (:math:`\mu_\beta\propto\beta^{-s}`) or a given list (validated: positive, summing to 1).

    >>> word_frequencies(3, zipf=True).round(4).tolist()
    [0.5455, 0.2727, 0.1818]
    """
    check_int("sc (words per concept)", sc, 1)
    require(
        not (mu is not None and zipf),
        "give either --mu (a list of frequencies) or --zipf, not both",
    )
    if mu is not None:
        return check_probabilities(
            "mu", mu, sc, size_label=f"sc = nw/nc = {sc}", why="Theorems 2 and 3 assume mu_beta > 0"
        )
    if zipf:
        check_number("s (the Zipf exponent)", s, lo=0.0)
        m = np.arange(1, sc + 1, dtype=np.float64) ** (-s)
        return m / m.sum()
    return np.full(sc, 1.0 / sc)


def equiangular_frame(nc: int, d: int, mean_zero: bool = False, seed: int = 0) -> np.ndarray:
    r"""A d×nc equiangular matrix F (Definition D): :math:`F1 = 0`,
    :math:`F^\top F = \frac{n_c}{n_c-1}I - \frac{1}{n_c-1}11^\top` (unit columns, cosines
    :math:`-1/(n_c-1)`), randomly rotated. ``mean_zero`` adds :math:`1_d^\top F = 0` (Definition F).

    >>> F = equiangular_frame(3, 5)
    >>> np.allclose(F.T @ F, 1.5 * np.eye(3) - 0.5), np.allclose(F.sum(1), 0)
    (True, True)
    """
    need = nc if mean_zero else nc - 1
    kind = "mean-zero equiangular" if mean_zero else "equiangular"
    require(d >= need, f"{nc} {kind} vectors need d >= {need}, got d={d}")
    rng = np.random.default_rng(seed)
    # V: orthonormal basis of the complement of 1 in R^nc, so F^T F = nc/(nc-1) V V^T
    v = np.linalg.qr(np.eye(nc) - 1.0 / nc)[0][:, : nc - 1]
    basis = rng.standard_normal((d, d))
    if mean_zero:
        basis[:, 0] = 1.0
    q, _ = np.linalg.qr(basis)
    q = q[:, 1:] if mean_zero else q  # orthonormal columns, orthogonal to 1_d when mean_zero
    return math.sqrt(nc / (nc - 1)) * q[:, : nc - 1] @ v.T


def check_model_parameters(nc: int, L: int, K: int, lam: float) -> None:
    """The sizes and the weight decay every theorem of the paper needs (K <= nc^L, lam > 0)."""
    check_int("nc (number of concepts)", nc, 2)
    check_int("L (sentence length)", L, 1)
    check_int("K (number of classes)", K, 2)
    require(K <= nc**L, f"K={K} distinct latent variables do not exist: at most nc^L = {nc**L}")
    check_number("lam", lam, lo=0.0)
    require(
        lam != 0,
        "lam = 0: the risk has no minimiser (it decreases to 0 as the weights "
        "grow); the theorems need lam > 0",
    )


def thm2_lambda_bound(nc: int, L: int, mu: np.ndarray, K: int | None = None) -> float:
    r"""Theorem 2's bound on the weight decay, :math:`\sqrt{L \sum_\beta \mu_\beta^2 /
    (n_c K)}`: the system (7)–(8) has a solution iff λ is below it (above it only W = U = 0 is
    critical). ``mu``: the within-concept word frequencies; ``K``: the number of latent variables
    (classes). The theorem assumes all of them, :math:`K = n_c^L`, and states the bound as
    :math:`\sqrt{L \sum \mu^2 / n_c^{L+1}}` (the default, ``K=None``); the 1/K is the
    probability of a class in the risk, so a run with K < n_c^L classes (the paper's experiments:
    K = 1000, n_c^L = 3^15) reads it with its own K.

    >>> round(thm2_lambda_bound(3, 3, word_frequencies(3, zipf=True)), 6)
    0.122468
    >>> thm2_lambda_bound(3, 3, word_frequencies(3, zipf=True), K=27) == thm2_lambda_bound(
    ...     3, 3, word_frequencies(3, zipf=True))
    True
    """
    k = nc**L if K is None else K
    if k < 1:
        raise ValueError(f"K must be >= 1, got {K}")
    return math.sqrt(L * float(np.sum(np.asarray(mu, dtype=float) ** 2)) / (nc * k))


def words_per_concept(nc: int, nw: int) -> int:
    """nw words in nc concepts of equal size: the words per concept, sc = nw / nc."""
    check_multiple("nw", nw, nc, of_label=f"nc = {nc}", why="the concepts have equal sizes")
    return nw // nc
