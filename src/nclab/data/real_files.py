"""Real data sets read from files the user already has (nothing is downloaded): MNIST and
Fashion-MNIST from their IDX files, CIFAR-10 from its python pickle batches. A missing file is a
:class:`~nclab.errors.DataError` naming the files expected and the directories searched. The
loaders are re-exported by :mod:`nclab.data.real`, whose :func:`~nclab.data.real.load` dispatches by
name.
"""

from __future__ import annotations

import gzip
import pickle
import struct
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

from ..errors import DataError
from .preprocess import Split, finish

# --------------------------------------------------------------------------------------------------
# user files: IDX (MNIST, Fashion-MNIST) and CIFAR-10 pickle batches
# --------------------------------------------------------------------------------------------------

IDX_FILES = {
    "train_images": "train-images-idx3-ubyte",
    "train_labels": "train-labels-idx1-ubyte",
    "test_images": "t10k-images-idx3-ubyte",
    "test_labels": "t10k-labels-idx1-ubyte",
}
IDX_SUBDIRS = {
    "mnist": ("", "mnist", "MNIST/raw", "MNIST"),
    "fashion-mnist": ("", "fashion-mnist", "fashion_mnist", "FashionMNIST/raw", "FashionMNIST"),
}
CIFAR_DIRS = ("cifar-10-batches-py", "")
CIFAR_FILES = (*tuple(f"data_batch_{i}" for i in range(1, 6)), "test_batch")
_IDX_DTYPES = {0x08: np.uint8, 0x09: np.int8, 0x0B: ">i2", 0x0C: ">i4", 0x0D: ">f4", 0x0E: ">f8"}


def read_idx(path: str | Path) -> np.ndarray:
    """Read one IDX file (optionally gzipped): magic 0x0000 <dtype> <ndim>, big-endian int32 dims."""
    path = Path(path)
    opener = gzip.open if path.suffix == ".gz" else open
    try:
        with opener(path, "rb") as f:
            data = f.read()
    except OSError as exc:
        raise DataError(f"cannot read IDX file {path}: {exc}") from None
    if len(data) < 4 or data[0] != 0 or data[1] != 0 or data[2] not in _IDX_DTYPES:
        raise DataError(f"{path} is not an IDX file (bad magic number {data[:4].hex()})")
    ndim = data[3]
    dims = struct.unpack(f">{ndim}i", data[4 : 4 + 4 * ndim])
    dtype = np.dtype(_IDX_DTYPES[data[2]])
    n = int(np.prod(dims)) if dims else 1
    body = data[4 + 4 * ndim :]
    if len(body) != n * dtype.itemsize:
        raise DataError(
            f"{path}: header says shape {dims} ({n * dtype.itemsize} bytes), file has "
            f"{len(body)} bytes of data"
        )
    return np.frombuffer(body, dtype=dtype).reshape(dims)


def _find(
    data_dir: str | Path | None, subdirs: Sequence[str], names: Sequence[str], what: str, gz: bool
) -> dict[str, Path]:
    if data_dir is None:
        raise DataError(
            f"{what} is read from files you already have: pass --data-dir (or "
            f"data.data_dir) pointing to a folder with {', '.join(names)}"
        )
    base = Path(data_dir).expanduser()
    searched = []
    for sub in subdirs:
        d = base / sub if sub else base
        searched.append(str(d))
        found = {}
        for n in names:
            for cand in (n, n + ".gz") if gz else (n,):
                if (d / cand).is_file():
                    found[n] = d / cand
                    break
        if len(found) == len(names):
            return found
    expect = ", ".join(n + ("[.gz]" if gz else "") for n in names)
    raise DataError(
        f"{what} files not found: expected {expect} in one of "
        f"{', '.join(searched)} (nclab never downloads data)"
    )


def _idx_dataset(
    name: str, data_dir, seed, samples_per_class, test_samples_per_class, standardize, flatten
) -> Split:
    files = _find(data_dir, IDX_SUBDIRS[name], list(IDX_FILES.values()), name, gz=True)
    arr = {k: read_idx(files[v]) for k, v in IDX_FILES.items()}
    for part in ("train", "test"):
        xi, yi = arr[f"{part}_images"], arr[f"{part}_labels"]
        if xi.ndim != 3 or yi.ndim != 1 or len(xi) != len(yi):
            raise DataError(
                f"{name} {part}: images {xi.shape} and labels {yi.shape} do not match "
                "(expected N x H x W and N)"
            )
    xs = [arr[f"{p}_images"].astype(np.float32) / 255.0 for p in ("train", "test")]
    xs = [x.reshape(len(x), -1) if flatten else x[:, None] for x in xs]
    k = int(max(arr["train_labels"].max(), arr["test_labels"].max())) + 1
    return finish(
        name,
        xs[0],
        arr["train_labels"],
        xs[1],
        arr["test_labels"],
        max(k, 10),
        samples_per_class,
        test_samples_per_class,
        standardize,
        seed,
    )


def _idx_loader(name: str, doc: str) -> Callable[..., Split]:
    """The loader of the IDX data set ``name`` (MNIST and Fashion-MNIST have the same files and
    differ in their folders alone)."""

    def load(
        data_dir: str | Path | None,
        seed: int = 0,
        samples_per_class: int | None = None,
        test_samples_per_class: int | None = None,
        standardize: bool = True,
        flatten: bool = True,
    ) -> Split:
        return _idx_dataset(
            name, data_dir, seed, samples_per_class, test_samples_per_class, standardize, flatten
        )

    load.__name__ = load.__qualname__ = name.replace("-", "_")
    load.__doc__ = doc
    return load


mnist = _idx_loader(
    "mnist",
    """MNIST from the four IDX files (``train-images-idx3-ubyte`` ... , optionally ``.gz``) in
    ``data_dir``, ``data_dir/mnist`` or ``data_dir/MNIST/raw`` (torchvision's layout).""",
)
fashion_mnist = _idx_loader(
    "fashion-mnist",
    """Fashion-MNIST from its IDX files (the same names as MNIST's) in ``data_dir``,
    ``data_dir/fashion-mnist`` or ``data_dir/FashionMNIST/raw``.""",
)


def _unpickle(path: Path) -> dict:
    try:
        with open(path, "rb") as f:
            d = pickle.load(f, encoding="bytes")
    except Exception as exc:
        raise DataError(f"{path} is not a CIFAR-10 python batch ({exc})") from None
    d = {(k.decode() if isinstance(k, bytes) else k): v for k, v in d.items()}
    if "data" not in d or "labels" not in d:
        raise DataError(
            f"{path} is not a CIFAR-10 python batch (keys {sorted(d)}; expected data and labels)"
        )
    return d


def cifar10(
    data_dir: str | Path | None,
    seed: int = 0,
    samples_per_class: int | None = None,
    test_samples_per_class: int | None = None,
    standardize: bool = True,
    flatten: bool = False,
) -> Split:
    """CIFAR-10 from the python pickle batches (``data_batch_1`` .. ``data_batch_5``,
    ``test_batch``) in ``data_dir/cifar-10-batches-py`` or ``data_dir``. Images are N x 3 x 32 x 32
    in [0, 1] (``flatten=True``: N x 3072), standardised per channel."""
    files = _find(data_dir, CIFAR_DIRS, CIFAR_FILES, "cifar10", gz=False)
    parts = {}
    for split, names in (("train", CIFAR_FILES[:5]), ("test", CIFAR_FILES[5:])):
        batches = [_unpickle(files[n]) for n in names]
        x = np.concatenate([np.asarray(b["data"], dtype=np.uint8) for b in batches])
        y = np.concatenate([np.asarray(b["labels"], dtype=np.int64) for b in batches])
        if x.ndim != 2 or x.shape[1] != 3072 or len(x) != len(y):
            raise DataError(
                f"cifar10 {split}: data {x.shape}, labels {y.shape}; expected N x 3072 and N"
            )
        x = x.astype(np.float32).reshape(-1, 3, 32, 32) / 255.0
        parts[split] = (x.reshape(len(x), -1) if flatten else x, y)
    return finish(
        "cifar10",
        *parts["train"],
        *parts["test"],
        10,
        samples_per_class,
        test_samples_per_class,
        standardize,
        seed,
    )
