r"""Gaussian mixtures: K classes, each a mixture of ``modes_per_class`` isotropic Gaussians.

Mode centres are drawn once per seed, :math:`c_{k,m} \sim \mathcal N(0, \tfrac{s^2}{D} I_D)` with
``separation`` s (so their norms are about s); a sample of class k picks a mode uniformly and adds
:math:`\mathcal N(0, \sigma^2 I_D)` noise (``noise`` :math:`\sigma`, per coordinate). Several modes
per class make the classes non-linearly-separable for ``modes_per_class > 1`` with small noise —
the nonlinear part of a network has something to do before its linear head.

>>> s = gaussian_mixture(num_classes=3, modes_per_class=2, dim=5, samples_per_class=10, seed=0)
>>> s.x_train.shape, torch.bincount(s.y_train).tolist(), s.x_test.shape
(torch.Size([30, 5]), [10, 10, 10], torch.Size([30, 5]))
"""

from __future__ import annotations

import math

import torch

from ..errors import DataError
from .real import Split, standardize_split


def _check_int(name: str, v, lo: int) -> None:
    if not isinstance(v, int) or isinstance(v, bool) or v < lo:
        raise DataError(f"{name} must be an integer >= {lo}, got {v!r}")


def gaussian_mixture(
    num_classes: int = 10,
    modes_per_class: int = 3,
    dim: int = 20,
    samples_per_class: int = 100,
    test_samples_per_class: int | None = None,
    separation: float = 3.0,
    noise: float = 0.3,
    seed: int = 0,
    standardize: bool = False,
) -> Split:
    """A seeded K-class Gaussian mixture as a :class:`~nclab.data.real.Split` (balanced classes,
    samples ordered at random). The test split (default: as many samples as the training split)
    comes from the same centres.
    """
    _check_int("num_classes", num_classes, 2)
    _check_int("modes_per_class", modes_per_class, 1)
    _check_int("dim", dim, 1)
    _check_int("samples_per_class", samples_per_class, 1)
    if test_samples_per_class is None:
        test_samples_per_class = samples_per_class
    _check_int("test_samples_per_class", test_samples_per_class, 1)
    for name, v in (("separation", separation), ("noise", noise)):
        if not isinstance(v, int | float) or not math.isfinite(v) or v < 0:
            raise DataError(f"{name} must be a finite number >= 0, got {v!r}")
    g = torch.Generator().manual_seed(seed)
    centres = torch.randn(num_classes, modes_per_class, dim, generator=g) * (
        separation / math.sqrt(dim)
    )

    def draw(per_class: int) -> tuple[torch.Tensor, torch.Tensor]:
        y = torch.arange(num_classes).repeat_interleave(per_class)
        mode = torch.randint(modes_per_class, (len(y),), generator=g)
        x = centres[y, mode] + noise * torch.randn(len(y), dim, generator=g)
        perm = torch.randperm(len(y), generator=g)
        return x[perm].float(), y[perm]

    x_tr, y_tr = draw(samples_per_class)
    x_te, y_te = draw(test_samples_per_class)
    if standardize:
        x_tr, x_te = standardize_split(x_tr, x_te)
    return Split(x_tr, y_tr, x_te, y_te, num_classes, "gaussian-mixture")
