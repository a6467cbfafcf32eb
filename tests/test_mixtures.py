"""Gaussian mixtures: shapes, balance, seeds, the mode structure, errors."""

from __future__ import annotations

import pytest
import torch

from nclab.data.mixtures import gaussian_mixture
from nclab.errors import DataError


def test_shapes_balance_and_seed():
    s = gaussian_mixture(
        num_classes=4,
        modes_per_class=3,
        dim=7,
        samples_per_class=30,
        test_samples_per_class=11,
        seed=5,
    )
    assert s.x_train.shape == (120, 7) and s.x_test.shape == (44, 7) and s.num_classes == 4
    assert torch.bincount(s.y_train).tolist() == [30] * 4
    assert torch.bincount(s.y_test).tolist() == [11] * 4
    assert s.x_train.dtype == torch.float32 and s.y_train.dtype == torch.int64
    t = gaussian_mixture(
        num_classes=4,
        modes_per_class=3,
        dim=7,
        samples_per_class=30,
        test_samples_per_class=11,
        seed=5,
    )
    assert torch.equal(s.x_train, t.x_train) and torch.equal(s.y_test, t.y_test)
    u = gaussian_mixture(num_classes=4, modes_per_class=3, dim=7, samples_per_class=30, seed=6)
    assert not torch.equal(s.x_train, u.x_train)


def test_modes_are_clusters():
    """With tiny noise every sample sits on one of its class's modes: within a class the samples
    take at most modes_per_class distinct positions, and classes do not share positions."""
    s = gaussian_mixture(
        num_classes=3,
        modes_per_class=2,
        dim=5,
        samples_per_class=200,
        noise=1e-6,
        separation=5.0,
        seed=0,
    )
    centres = []
    for c in range(3):
        x = s.x_train[s.y_train == c]
        uniq = torch.unique(torch.round(x * 1e3), dim=0)
        assert len(uniq) == 2  # both modes used, nothing else
        centres.append(uniq)
    allc = torch.cat(centres)
    assert len(torch.unique(allc, dim=0)) == 6


def test_noise_scale():
    s = gaussian_mixture(
        num_classes=2, modes_per_class=1, dim=50, samples_per_class=2000, noise=0.5, seed=1
    )
    x0 = s.x_train[s.y_train == 0]
    assert abs(float(x0.std(0).mean()) - 0.5) < 0.02


def test_standardize_option():
    s = gaussian_mixture(num_classes=3, dim=4, samples_per_class=100, standardize=True)
    assert s.x_train.mean(0).abs().max() < 1e-5


@pytest.mark.parametrize(
    "kw",
    [
        dict(num_classes=1),
        dict(modes_per_class=0),
        dict(dim=0),
        dict(samples_per_class=0),
        dict(noise=-1.0),
        dict(separation=float("inf")),
    ],
)
def test_bad_input(kw):
    with pytest.raises(DataError):
        gaussian_mixture(**kw)
