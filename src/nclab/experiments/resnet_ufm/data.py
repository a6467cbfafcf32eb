"""The training images of a resnet-ufm run: any data set of :func:`nclab.data.real.load` as an
(N, C, H, W) tensor, small ones resized so that a ResNet18's four stages have room.

>>> from nclab.experiments.resnet_ufm.config import DataCfg
>>> s = load_images(DataCfg(name="digits", samples_per_class=5, image_size=16), seed=0)
>>> tuple(s.x_train.shape), s.num_classes
((50, 1, 16, 16), 10)
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

from ...data.preprocess import Split
from ..common.data import load_real
from .config import DataCfg

#: the image shape of the data sets loaded as vectors: digits (8x8), MNIST-1D (one row of 40)
_VECTOR_SHAPES = {"digits": (1, 8, 8), "mnist1d": (1, 1, 40)}


def _as_images(x: torch.Tensor, name: str, size: int) -> torch.Tensor:
    if name in _VECTOR_SHAPES:
        x = x.reshape(len(x), *_VECTOR_SHAPES[name])
    if size and tuple(x.shape[-2:]) != (size, size):
        x = F.interpolate(x, size=(size, size), mode="bilinear", align_corners=False)
    return x.contiguous()


def load_images(d: DataCfg, seed: int) -> Split:
    """The split of ``d.name`` as images (N, C, H, W), resized to ``d.image_size`` when given
    (digits and MNIST-1D always: they have no room for four stride-2 stages otherwise)."""
    s = load_real(d, seed, flatten=False)
    size = d.image_size or (16 if s.name in _VECTOR_SHAPES else 0)
    s.x_train = _as_images(s.x_train, s.name, size)
    s.x_test = _as_images(s.x_test, s.name, size)
    return s
