"""Shared helpers of the metric families: class-mean matrices and frame distances.

Argument checks live in :mod:`nclab.validation` (e.g. :func:`~nclab.validation.check_matrix`)."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Literal

import torch

from ..errors import DataError, DegenerateError
from ..validation import F64

if TYPE_CHECKING:
    from ..stats import ClassStatsBase

GlobalMean = Literal["class", "sample"]


def global_mean(stats: ClassStatsBase, mode: GlobalMean = "class") -> torch.Tensor:
    """mu_G: the mean of the class means (``"class"``, default) or of the samples (``"sample"``)."""
    if mode == "class":
        return stats.means.mean(0)
    if mode == "sample":
        w = stats.counts.to(F64)
        return (stats.means * w[:, None]).sum(0) / w.sum()
    raise DataError(f"global_mean must be 'class' or 'sample', got {mode!r}")


def centred_means(stats: ClassStatsBase, mode: GlobalMean = "class") -> torch.Tensor:
    """M^T: the K x D matrix of rows mu_c - mu_G (checks that every class has samples)."""
    stats.check_nonempty()
    return stats.means - global_mean(stats, mode)


def class_means(stats: ClassStatsBase) -> torch.Tensor:
    """H-bar^T: the K x D matrix of uncentred class means."""
    stats.check_nonempty()
    return stats.means


def frob(a: torch.Tensor, what: str) -> torch.Tensor:
    n = torch.linalg.matrix_norm(a)
    if float(n) == 0.0:
        raise DegenerateError(f"{what} is zero: its normalised form is undefined")
    return n


def frame_distance(a: torch.Tensor, target: torch.Tensor, what: str) -> float:
    """|| A A^T / ||A A^T||_F - target ||_F for a K-row matrix A (target already normalised)."""
    g = a @ a.T
    return float(torch.linalg.matrix_norm(g / frob(g, f"the Gram matrix of {what}") - target))


def etf_target(k: int, device=None) -> torch.Tensor:
    """(I - 11^T/K) / sqrt(K-1): the normalised Gram matrix of a K-vector simplex ETF."""
    if k < 2:
        raise DegenerateError("a simplex ETF needs at least 2 classes")
    eye = torch.eye(k, dtype=F64, device=device)
    return (eye - 1.0 / k) / math.sqrt(k - 1)


def of_target(k: int, device=None) -> torch.Tensor:
    """I / sqrt(K): the normalised Gram matrix of K orthonormal vectors."""
    return torch.eye(k, dtype=F64, device=device) / math.sqrt(k)


def rank_rtol(stats: ClassStatsBase, rows: int, cols: int) -> float:
    """Relative singular-value tolerance for the class-mean matrix: max(rows, cols) * eps_input.

    The statistics are float64, but they cannot be more precise than the features they came from,
    so ``eps`` is the unit roundoff of the lowest input precision seen (numpy's matrix_rank rule).
    """
    return max(rows, cols) * stats.eps if math.isfinite(stats.eps) else 0.0
