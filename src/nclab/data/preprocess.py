"""Shared preprocessing of the data sets: the :class:`Split` container, balanced per-class
subsampling with a fixed seed, and standardisation with the training statistics."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from ..errors import DataError


@dataclass
class Split:
    """A labelled train/test split as float32 tensors (features N x D or N x C x H x W, labels int64)."""

    x_train: torch.Tensor
    y_train: torch.Tensor
    x_test: torch.Tensor
    y_test: torch.Tensor
    num_classes: int
    name: str = ""

    @property
    def input_shape(self) -> tuple[int, ...]:
        return tuple(self.x_train.shape[1:])


# --------------------------------------------------------------------------------------------------
# shared preprocessing: balanced subsampling and standardisation
# --------------------------------------------------------------------------------------------------


def balanced_indices(
    y: torch.Tensor, per_class: int, num_classes: int, generator: torch.Generator
) -> torch.Tensor:
    """``per_class`` random indices of each class (sorted by position), or a DataError naming the
    classes that have fewer samples."""
    if not isinstance(per_class, int) or per_class < 1:
        raise DataError(f"samples_per_class must be a positive integer, got {per_class!r}")
    counts = torch.bincount(y, minlength=num_classes)
    short = [c for c in range(num_classes) if int(counts[c]) < per_class]
    if short:
        have = ", ".join(f"class {c}: {int(counts[c])}" for c in short[:5])
        raise DataError(
            f"samples_per_class = {per_class} but some classes have fewer samples "
            f"({have}); the largest balanced size is {int(counts.min())}"
        )
    idx = []
    for c in range(num_classes):
        pos = (y == c).nonzero().flatten()
        idx.append(pos[torch.randperm(len(pos), generator=generator)[:per_class]])
    return torch.cat(idx).sort().values


def standardize_split(
    x_train: torch.Tensor, x_test: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor]:
    """Standardise with the training statistics: per feature (N x D) or per channel (N x C x ...).
    Constant features keep scale 1 (they are only centred)."""
    dims = (0,) if x_train.ndim == 2 else (0, *range(2, x_train.ndim))
    mu = x_train.mean(dims, keepdim=True)
    sd = x_train.std(dims, keepdim=True)
    sd = torch.where(sd > 1e-6, sd, torch.ones_like(sd))
    return (x_train - mu) / sd, (x_test - mu) / sd


def finish(
    name: str,
    x_tr,
    y_tr,
    x_te,
    y_te,
    num_classes: int,
    samples_per_class: int | None,
    test_samples_per_class: int | None,
    standardize: bool,
    seed: int,
) -> Split:
    """Subsample (balanced, seeded), standardise and wrap arrays as a :class:`Split`."""
    # copies: the arrays may be read-only (IDX buffers) or cached (MNIST-1D)
    x_tr = torch.tensor(np.asarray(x_tr), dtype=torch.float32)
    x_te = torch.tensor(np.asarray(x_te), dtype=torch.float32)
    y_tr = torch.tensor(np.asarray(y_tr), dtype=torch.int64)
    y_te = torch.tensor(np.asarray(y_te), dtype=torch.int64)
    g = torch.Generator().manual_seed(seed)
    if samples_per_class is not None:
        keep = balanced_indices(y_tr, samples_per_class, num_classes, g)
        x_tr, y_tr = x_tr[keep], y_tr[keep]
    if test_samples_per_class is not None:
        keep = balanced_indices(y_te, test_samples_per_class, num_classes, g)
        x_te, y_te = x_te[keep], y_te[keep]
    if standardize:
        x_tr, x_te = standardize_split(x_tr, x_te)
    return Split(x_tr.contiguous(), y_tr, x_te.contiguous(), y_te, num_classes, name)
