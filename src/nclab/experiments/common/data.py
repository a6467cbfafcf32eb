"""Loading the real data sets experiments train on: :func:`load_real` loads the data set a
:class:`~nclab.experiments.common.config.RealDataCfg` names with :func:`nclab.data.real.load`,
reading MNIST / Fashion-MNIST / CIFAR-10 files from ``data_dir`` or ``$NCLAB_DATA_DIR``."""

from __future__ import annotations

import os

from ...data.real import load
from .config import RealDataCfg


def load_real(d: RealDataCfg, seed: int, flatten: bool):
    """The :class:`~nclab.data.preprocess.Split` of the real data set ``d.name``."""
    return load(
        d.name,
        data_dir=d.data_dir or os.environ.get("NCLAB_DATA_DIR"),
        seed=seed,
        samples_per_class=d.samples_per_class,
        test_samples_per_class=d.test_samples_per_class,
        standardize=d.standardize,
        flatten=flatten,
    )
