"""Real-data loaders: IDX (MNIST, Fashion-MNIST) and CIFAR-10 pickle files written here, digits,
MNIST-1D generated locally; subsampling, standardisation, seeds and the errors for missing files."""

from __future__ import annotations

import gzip
import pickle
import struct

import numpy as np
import pytest
import torch

from nclab.data import real
from nclab.errors import DataError


def write_idx(path, arr: np.ndarray, gz: bool = False) -> None:
    code = {np.dtype(np.uint8): 0x08, np.dtype(">i4"): 0x0C}[arr.dtype]
    head = bytes([0, 0, code, arr.ndim]) + struct.pack(f">{arr.ndim}i", *arr.shape)
    data = head + arr.tobytes()
    if gz:
        with gzip.open(str(path) + ".gz", "wb") as f:
            f.write(data)
    else:
        path.write_bytes(data)


def make_idx_dir(d, n_train=60, n_test=30, gz=False, seed=0):
    rng = np.random.default_rng(seed)
    d.mkdir(parents=True, exist_ok=True)
    ytr = np.arange(n_train, dtype=np.uint8) % 10
    yte = np.arange(n_test, dtype=np.uint8) % 10
    xtr = rng.integers(0, 256, (n_train, 28, 28), dtype=np.uint8)
    xte = rng.integers(0, 256, (n_test, 28, 28), dtype=np.uint8)
    write_idx(d / "train-images-idx3-ubyte", xtr, gz)
    write_idx(d / "train-labels-idx1-ubyte", ytr, gz)
    write_idx(d / "t10k-images-idx3-ubyte", xte, gz)
    write_idx(d / "t10k-labels-idx1-ubyte", yte, gz)
    return xtr, ytr, xte, yte


def test_read_idx_roundtrip(tmp_path):
    a = np.arange(24, dtype=np.uint8).reshape(2, 3, 4)
    write_idx(tmp_path / "a", a)
    assert np.array_equal(real.read_idx(tmp_path / "a"), a)
    b = np.arange(5, dtype=">i4")
    write_idx(tmp_path / "b", b, gz=True)
    assert np.array_equal(real.read_idx(tmp_path / "b.gz"), b)


def test_read_idx_rejects_bad_files(tmp_path):
    (tmp_path / "bad").write_bytes(b"\x01\x02\x03\x04rest")
    with pytest.raises(DataError, match="not an IDX file"):
        real.read_idx(tmp_path / "bad")
    a = np.arange(10, dtype=np.uint8)
    write_idx(tmp_path / "short", a)
    (tmp_path / "short").write_bytes((tmp_path / "short").read_bytes()[:-3])
    with pytest.raises(DataError, match="header says shape"):
        real.read_idx(tmp_path / "short")


@pytest.mark.parametrize("gz", [False, True])
def test_mnist_from_idx(tmp_path, gz):
    xtr, ytr, xte, yte = make_idx_dir(tmp_path / "MNIST" / "raw", gz=gz)
    s = real.mnist(tmp_path, standardize=False)
    assert s.x_train.shape == (60, 784) and s.x_test.shape == (30, 784) and s.num_classes == 10
    assert torch.allclose(
        s.x_train[5], torch.tensor(xtr[5].reshape(-1) / 255.0, dtype=torch.float32)
    )
    assert s.y_train.tolist() == ytr.tolist() and s.y_test.tolist() == yte.tolist()
    img = real.mnist(tmp_path, flatten=False, standardize=False)
    assert img.x_train.shape == (60, 1, 28, 28)


def test_fashion_mnist_subsample_and_standardize(tmp_path):
    make_idx_dir(tmp_path / "fashion-mnist", n_train=100)
    s = real.fashion_mnist(tmp_path, samples_per_class=4, test_samples_per_class=2, seed=3)
    assert torch.bincount(s.y_train).tolist() == [4] * 10
    assert torch.bincount(s.y_test).tolist() == [2] * 10
    assert s.x_train.mean(0).abs().max() < 1e-5
    assert torch.allclose(s.x_train.std(0), torch.ones(784), atol=1e-4)
    again = real.fashion_mnist(tmp_path, samples_per_class=4, test_samples_per_class=2, seed=3)
    assert torch.equal(s.x_train, again.x_train)  # fixed seed, same subsample
    other = real.fashion_mnist(tmp_path, samples_per_class=4, test_samples_per_class=2, seed=4)
    assert not torch.equal(s.x_train, other.x_train)


def test_missing_files_name_what_is_expected(tmp_path):
    with pytest.raises(DataError, match="train-images-idx3-ubyte") as e:
        real.mnist(tmp_path)
    assert "never downloads" in str(e.value) and str(tmp_path) in str(e.value)
    with pytest.raises(DataError, match="data_batch_1"):
        real.cifar10(tmp_path)
    with pytest.raises(DataError, match="--data-dir"):
        real.load("mnist", data_dir=None)


def write_cifar(d, n_per_batch=20, seed=0):
    rng = np.random.default_rng(seed)
    d.mkdir(parents=True)
    out = {}
    for name in [f"data_batch_{i}" for i in range(1, 6)] + ["test_batch"]:
        x = rng.integers(0, 256, (n_per_batch, 3072), dtype=np.uint8)
        y = [int(v) for v in rng.integers(0, 10, n_per_batch)]
        with open(d / name, "wb") as f:
            pickle.dump({b"batch_label": name.encode(), b"data": x, b"labels": y}, f)
        out[name] = (x, y)
    return out


def test_cifar10_from_pickles(tmp_path):
    raw = write_cifar(tmp_path / "cifar-10-batches-py")
    s = real.cifar10(tmp_path, standardize=False)
    assert s.x_train.shape == (100, 3, 32, 32) and s.x_test.shape == (20, 3, 32, 32)
    x0, y0 = raw["data_batch_2"]
    assert torch.allclose(
        s.x_train[20], torch.tensor(x0[0].reshape(3, 32, 32) / 255.0, dtype=torch.float32)
    )
    assert s.y_train[20:40].tolist() == y0
    st = real.cifar10(tmp_path)  # per-channel standardisation
    assert st.x_train.mean((0, 2, 3)).abs().max() < 1e-5
    flat = real.load("cifar10", data_dir=tmp_path, flatten=True)
    assert flat.x_train.shape == (100, 3072)


def test_cifar10_rejects_other_pickles(tmp_path):
    d = tmp_path / "cifar-10-batches-py"
    write_cifar(d)
    with open(d / "test_batch", "wb") as f:
        pickle.dump({b"something": 1}, f)
    with pytest.raises(DataError, match="not a CIFAR-10 python batch"):
        real.cifar10(tmp_path)


def test_digits_unchanged_and_subsampled():
    s = real.digits()
    assert s.x_train.shape == (1438, 64) and s.x_test.shape == (359, 64) and s.name == "digits"
    assert torch.isfinite(s.x_test).all() and s.x_test.abs().max() < 100
    b = real.digits(samples_per_class=30, seed=1)
    assert torch.bincount(b.y_train).tolist() == [30] * 10
    with pytest.raises(DataError, match="largest balanced size"):
        real.digits(samples_per_class=1000)


def test_mnist1d_generated_locally(monkeypatch):
    import mnist1d.data

    def no_download(*a, **k):
        raise AssertionError("get_dataset (which downloads) must not be called")

    monkeypatch.setattr(mnist1d.data, "get_dataset", no_download)
    s = real.mnist1d(num_samples=500, samples_per_class=10, test_samples_per_class=3)
    assert s.x_train.shape == (100, 40) and s.x_test.shape == (30, 40)
    full = real.mnist1d(num_samples=300, standardize=False)
    assert full.x_train.shape == (240, 40) and full.x_test.shape == (60, 40)  # 80 / 20 split
    # make_dataset seeds numpy globally; the loader restores the caller's state
    np.random.seed(123)
    want = np.random.rand()
    np.random.seed(123)
    real._mnist1d_arrays.cache_clear()
    real.mnist1d(num_samples=300)
    assert np.random.rand() == want


def test_load_dispatch_and_unknown():
    assert real.load("digits", samples_per_class=3).x_train.shape == (30, 64)
    with pytest.raises(DataError, match="unknown data set"):
        real.load("svhn")
