"""Real data sets, none of them downloaded: sklearn's bundled digits, MNIST-1D generated locally, and
MNIST / Fashion-MNIST (IDX files) and CIFAR-10 (python pickle batches) read from a directory the user
already has.

Every loader returns a :class:`Split` of float32 features and int64 labels, optionally subsampled to
``samples_per_class`` per class (balanced, chosen with ``seed``) and standardised with the training
statistics (per feature for vectors, per channel for images). :func:`load` dispatches by name.

No code path here downloads anything: a missing file is a :class:`~nclab.errors.DataError` naming the
files expected and the directories searched.

>>> s = digits(samples_per_class=20)
>>> s.x_train.shape, torch.bincount(s.y_train).tolist() == [20] * 10
(torch.Size([200, 64]), True)
"""

from __future__ import annotations

import functools
from pathlib import Path

import numpy as np
import torch

from ..errors import DataError
from .preprocess import Split, balanced_indices, finish, standardize_split
from .real_files import CIFAR_FILES, IDX_FILES, cifar10, fashion_mnist, mnist, read_idx

__all__ = [
    "CIFAR_FILES",
    "DATASETS",
    "IDX_FILES",
    "Split",
    "balanced_indices",
    "cifar10",
    "digits",
    "fashion_mnist",
    "finish",
    "load",
    "mnist",
    "mnist1d",
    "read_idx",
    "standardize_split",
]

#: the names :func:`load` accepts
DATASETS = ("digits", "mnist1d", "mnist", "fashion-mnist", "cifar10")

# --------------------------------------------------------------------------------------------------
# bundled / generated
# --------------------------------------------------------------------------------------------------


def digits(
    test_fraction: float = 0.2,
    seed: int = 0,
    standardize: bool = True,
    samples_per_class: int | None = None,
) -> Split:
    """sklearn's bundled 8x8 digits (1797 images, 10 classes), shuffled with ``seed`` and split
    ``test_fraction``, standardised with the training statistics.

    >>> s = digits()
    >>> s.x_train.shape, s.num_classes
    (torch.Size([1438, 64]), 10)
    """
    from sklearn.datasets import load_digits

    if not 0.0 < test_fraction < 1.0:
        raise DataError(f"test_fraction must lie in (0, 1), got {test_fraction!r}")
    x, y = load_digits(return_X_y=True)
    g = torch.Generator().manual_seed(seed)
    perm = torch.randperm(len(y), generator=g).numpy()
    n_test = int(round(test_fraction * len(y)))
    te, tr = perm[:n_test], perm[n_test:]
    return finish(
        "digits", x[tr], y[tr], x[te], y[te], 10, samples_per_class, None, standardize, seed
    )


@functools.lru_cache(maxsize=4)
def _mnist1d_arrays(num_samples: int, train_split: float, data_seed: int):
    import random

    from mnist1d.data import get_dataset_args, make_dataset  # make_dataset never downloads

    args = get_dataset_args()
    args.num_samples, args.train_split, args.seed = num_samples, train_split, data_seed
    np_state, py_state = np.random.get_state(), random.getstate()  # noqa: NPY002  # make_dataset seeds globally
    try:
        d = make_dataset(args)
    finally:
        np.random.set_state(np_state)  # noqa: NPY002 - restore what make_dataset seeded
        random.setstate(py_state)
    return (
        d["x"].astype(np.float32),
        d["y"].astype(np.int64),
        d["x_test"].astype(np.float32),
        d["y_test"].astype(np.int64),
    )


def mnist1d(
    seed: int = 0,
    samples_per_class: int | None = None,
    standardize: bool = True,
    num_samples: int = 5000,
    train_split: float = 0.8,
    data_seed: int = 42,
    test_samples_per_class: int | None = None,
) -> Split:
    """MNIST-1D (Greydanus 2020): 40-dimensional 1D signals of 10 digit templates, generated locally
    by ``mnist1d.data.make_dataset`` (never ``get_dataset``, which downloads). The package's
    defaults give a 4000/1000 split (``data_seed`` 42 is its standard data set); ``seed`` chooses the
    subsample.

    >>> s = mnist1d(num_samples=500, samples_per_class=10, test_samples_per_class=5)
    >>> s.x_train.shape, s.x_test.shape
    (torch.Size([100, 40]), torch.Size([50, 40]))
    """
    if num_samples < 10 or not 0.0 < train_split < 1.0:
        raise DataError(
            f"mnist1d needs num_samples >= 10 and train_split in (0, 1), got "
            f"{num_samples}, {train_split}"
        )
    x, y, xt, yt = _mnist1d_arrays(int(num_samples), float(train_split), int(data_seed))
    return finish(
        "mnist1d", x, y, xt, yt, 10, samples_per_class, test_samples_per_class, standardize, seed
    )


def load(
    name: str,
    data_dir: str | Path | None = None,
    seed: int = 0,
    samples_per_class: int | None = None,
    test_samples_per_class: int | None = None,
    standardize: bool = True,
    flatten: bool = True,
) -> Split:
    """Load a data set by name (:data:`DATASETS`); file-based ones read from ``data_dir``.

    >>> load("digits", samples_per_class=5).x_train.shape
    torch.Size([50, 64])
    >>> load("imagenet")
    Traceback (most recent call last):
    ...
    nclab.errors.DataError: unknown data set 'imagenet'; data sets: digits, mnist1d, mnist, fashion-mnist, cifar10
    """
    if name == "digits":
        s = digits(seed=seed, standardize=standardize, samples_per_class=samples_per_class)
        if test_samples_per_class is not None:
            g = torch.Generator().manual_seed(seed)
            keep = balanced_indices(s.y_test, test_samples_per_class, 10, g)
            s.x_test, s.y_test = s.x_test[keep], s.y_test[keep]
        return s
    if name == "mnist1d":
        return mnist1d(
            seed=seed,
            samples_per_class=samples_per_class,
            standardize=standardize,
            test_samples_per_class=test_samples_per_class,
        )
    from_files = {"mnist": mnist, "fashion-mnist": fashion_mnist, "cifar10": cifar10}
    if name in from_files:
        return from_files[name](
            data_dir,
            seed=seed,
            samples_per_class=samples_per_class,
            test_samples_per_class=test_samples_per_class,
            standardize=standardize,
            flatten=flatten,
        )
    raise DataError(f"unknown data set {name!r}; data sets: {', '.join(DATASETS)}")
