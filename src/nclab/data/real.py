"""Real data sets that need no download: sklearn's bundled digits (more loaders: see issue 7)."""

from __future__ import annotations

from dataclasses import dataclass

import torch


@dataclass
class Split:
    """A labelled train/test split as float32 tensors (features N x D, labels int64)."""

    x_train: torch.Tensor
    y_train: torch.Tensor
    x_test: torch.Tensor
    y_test: torch.Tensor
    num_classes: int
    name: str = ""


def digits(test_fraction: float = 0.2, seed: int = 0, standardize: bool = True) -> Split:
    """sklearn's bundled 8x8 digits (1797 images, 10 classes), shuffled with ``seed``, standardised
    with the training statistics.

    >>> s = digits()
    >>> s.x_train.shape, s.num_classes
    (torch.Size([1438, 64]), 10)
    """
    from sklearn.datasets import load_digits

    x, y = load_digits(return_X_y=True)
    x = torch.tensor(x, dtype=torch.float32)
    y = torch.tensor(y, dtype=torch.int64)
    g = torch.Generator().manual_seed(seed)
    perm = torch.randperm(len(y), generator=g)
    n_test = int(round(test_fraction * len(y)))
    te, tr = perm[:n_test], perm[n_test:]
    xtr, xte = x[tr], x[te]
    if standardize:
        mu, sd = xtr.mean(0), xtr.std(0).clamp_min(1e-6)
        xtr, xte = (xtr - mu) / sd, (xte - mu) / sd
    return Split(xtr, y[tr], xte, y[te], 10, "digits")
