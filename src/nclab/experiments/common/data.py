"""The real data sets experiments train on: the settings they share and loading them.

An experiment's data config subclasses :class:`RealDataCfg`, narrowing ``name`` to the data sets it
accepts (with its default) and adding its own synthetic data's settings; :func:`load_real` loads
the real ones with :func:`nclab.data.real.load`, reading MNIST / Fashion-MNIST / CIFAR-10 files from
``data_dir`` or ``$NCLAB_DATA_DIR``.
"""

from __future__ import annotations

import os

from ...config import Config


class RealDataCfg(Config):
    """Which data set (subclasses narrow ``name``), where its files are, how much of it, and
    whether to standardise it with the training statistics."""

    name: str = "digits"
    data_dir: str | None = None
    samples_per_class: int | None = None
    test_samples_per_class: int | None = None
    standardize: bool = True


def load_real(d: RealDataCfg, seed: int, flatten: bool):
    """The :class:`~nclab.data.preprocess.Split` of the real data set ``d.name``."""
    from ...data.real import load

    return load(
        d.name,
        data_dir=d.data_dir or os.environ.get("NCLAB_DATA_DIR"),
        seed=seed,
        samples_per_class=d.samples_per_class,
        test_samples_per_class=d.test_samples_per_class,
        standardize=d.standardize,
        flatten=flatten,
    )
