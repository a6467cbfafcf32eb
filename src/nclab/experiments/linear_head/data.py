"""The linear-head experiment's data: a real data set (flattened for the MLP, 1 x 8 x 8 images of
the digits for the ResNet20 backbone) or a Gaussian mixture, restricted to the first
``data.num_classes`` classes when set. Loaded once per run with the run's ``seed``: every unit of
a sweep (every seed included) trains on the same split."""

from __future__ import annotations

from ...data.mixtures import gaussian_mixture
from ..common.data import load_real
from .config import LinearHeadConfig


def load_data(cfg: LinearHeadConfig):
    """The training and test split (``data.num_classes`` is checked by :func:`.units.check`)."""
    split = _load_all(cfg)
    k = cfg.data.num_classes
    if k is None or k == split.num_classes:
        return split
    tr, te = split.y_train < k, split.y_test < k
    split.x_train, split.y_train = split.x_train[tr], split.y_train[tr]
    split.x_test, split.y_test = split.x_test[te], split.y_test[te]
    split.num_classes = k
    return split


def _load_all(cfg: LinearHeadConfig):
    d = cfg.data
    if d.name == "mixture":
        return gaussian_mixture(
            num_classes=10,
            modes_per_class=d.mixture_modes,
            dim=d.mixture_dim,
            samples_per_class=d.samples_per_class or 100,
            test_samples_per_class=d.test_samples_per_class,
            separation=d.mixture_separation,
            noise=d.mixture_noise,
            seed=cfg.seed,
            standardize=d.standardize,
        )
    split = load_real(d, cfg.seed, flatten=cfg.model.backbone == "none")
    if cfg.model.backbone != "none" and d.name == "digits":  # 1 x 8 x 8 images for the ResNet
        split.x_train = split.x_train.reshape(-1, 1, 8, 8)
        split.x_test = split.x_test.reshape(-1, 1, 8, 8)
    return split
