"""Feature dumps split into shards: finding them, checking them, reading them in row chunks.

A shard is one of

* a ``.npz`` file with arrays ``features`` (N x D), ``labels`` (N) and optional ``weights`` (K x D),
  ``bias`` (K) (read whole: numpy cannot memory-map inside a zip);
* a pair of ``.npy`` files ``<stem>.features.npy`` and ``<stem>.labels.npy`` (optional
  ``<stem>.weights.npy``, ``<stem>.bias.npy``), memory-mapped;
* a ``.pt`` / ``.pth`` file holding a dict of those tensors, memory-mapped (``torch.load(mmap=True)``);
* a ``.safetensors`` file with those tensors, read by row slices.

:func:`find_shards` expands files, directories and glob patterns; :func:`scan` opens every shard
once, before any heavy work, and checks that it can be read and that all shards agree on D and on
the classifier: a corrupt file is a :class:`~nclab.errors.DataError` naming it.

Length: four file formats, each found, checked and read in chunks here, and the reader that
reuses its buffers and reads the next chunk ahead.
"""

from __future__ import annotations

import glob
from collections.abc import Iterator
from concurrent import futures
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import torch

from ..errors import DataError

KEYS = ("features", "labels", "weights", "bias")
SUFFIXES = (".npz", ".npy", ".pt", ".pth", ".safetensors")


@dataclass
class Shard:
    """One shard: its file(s), format, size and (after :func:`scan`) its row count and D."""

    path: Path
    kind: str  # "npz", "npy", "pt", "safetensors"
    rows: int = 0
    dim: int = 0
    top: int = 0  # largest label + 1
    nbytes: int = 0
    has_classifier: bool = False
    extra: dict[str, Path] = field(default_factory=dict)  # the .npy pair's other files

    @property
    def name(self) -> str:
        return str(self.path)


def find_shards(paths: list[str | Path]) -> list[Shard]:
    """The shards named by ``paths`` (files, directories, glob patterns), in sorted order per
    argument; a ``.npy`` pair counts once (by its ``.features.npy`` file)."""
    files: list[Path] = []
    for p in paths:
        p = Path(p)
        if p.is_dir():
            found = sorted(q for q in p.iterdir() if q.is_file() and q.suffix in SUFFIXES)
        elif p.is_file():
            found = [p]
        else:
            found = sorted(Path(q) for q in glob.glob(str(p)) if Path(q).is_file())
            if not found:
                if glob.has_magic(str(p)):
                    raise DataError(f"no file matches {str(p)!r}")
                raise DataError(f"file not found: {p}")
        files.extend(found)
    shards, seen = [], set()
    for f in files:
        if f in seen:
            continue
        seen.add(f)
        shard = _shard_of(f)
        if shard is not None:
            shards.append(shard)
    if not shards:
        raise DataError(
            f"no feature shards in {', '.join(map(str, paths))}: expected .npz, .pt, .safetensors "
            "files or <stem>.features.npy + <stem>.labels.npy pairs"
        )
    return shards


def not_npz(path: Path) -> str | None:
    """Why ``path`` cannot be a ``.npz`` file (numpy.savez writes a zip archive of .npy arrays), or
    None when it is a zip archive."""
    import zipfile

    if zipfile.is_zipfile(path):
        return None
    with open(path, "rb") as f:
        head = f.read(512)
    if head.startswith(b"\x93NUMPY"):
        what = "a single .npy array (np.save), not an archive: name it .npy, or np.savez"
    elif not head:
        what = "an empty file"
    elif all(32 <= c < 127 or c in b"\t\r\n" for c in head):
        what = "a text file"
    else:
        what = "not a zip archive"
    return f"{path} is not a .npz file (numpy.savez writes a zip of .npy arrays): it is {what}"


def short_reason(exc: BaseException) -> str:
    """The first line of an exception's message, without torch's C++ location prefix."""
    import re

    text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    text = re.sub(r"^\[enforce fail at [^\]]*\]\s*\.?\s*", "", text)
    return text[:160]


def _shard_of(f: Path) -> Shard | None:
    name = f.name
    if f.suffix == ".npz":
        return Shard(f, "npz")
    if f.suffix in (".pt", ".pth"):
        return Shard(f, "pt")
    if f.suffix == ".safetensors":
        return Shard(f, "safetensors")
    if f.suffix == ".npy":
        for key in KEYS:
            if name.endswith(f".{key}.npy"):
                stem = name[: -len(f".{key}.npy")]
                if key != "features":
                    if not (f.parent / f"{stem}.features.npy").is_file():
                        raise DataError(f"{f} has no matching {stem}.features.npy")
                    return None
                extra = {k: f.parent / f"{stem}.{k}.npy" for k in KEYS[1:]}
                extra = {k: v for k, v in extra.items() if v.is_file()}
                if "labels" not in extra:
                    raise DataError(f"{f} has no matching {stem}.labels.npy")
                return Shard(f, "npy", extra=extra)
        raise DataError(f"{f}: a .npy shard must be named <stem>.features.npy (+ .labels.npy)")
    raise DataError(f"unsupported file type {f.suffix!r} for {f}: use {', '.join(SUFFIXES)}")


# --- opening a shard ---------------------------------------------------------------------------
class Reader:
    """Row access to an open shard: ``features(i, j)`` (a torch tensor of rows i:j), ``labels``,
    ``weights``, ``bias`` (tensors or None)."""

    def __init__(self, shard: Shard):
        self.shard = shard
        try:
            self._open(shard)
        except DataError:
            raise
        except Exception as exc:
            raise DataError(
                f"cannot read shard {shard.name} as {shard.kind}: {short_reason(exc)}"
            ) from None
        for key in ("features", "labels"):
            if getattr(self, "_" + key) is None:
                raise DataError(
                    f"shard {shard.name} has no array {key!r}; expected features (N x D), labels "
                    "(N), optional weights (K x D), bias (K)"
                )

    def _open(self, shard: Shard) -> None:
        self._st = None
        arrays: dict = {}
        if shard.kind == "npz":  # features read on first use (not by the check)
            if (why := not_npz(shard.path)) is not None:
                raise DataError(f"shard {why}")
            with np.load(shard.path, allow_pickle=False) as f:
                arrays = {k: f[k] for k in f.files if k in KEYS and k != "features"}
                if "features" in f.files:
                    arrays["features"] = _NpzArray(shard.path, "features")
        elif shard.kind == "npy":
            arrays = {"features": np.load(shard.path, mmap_mode="r", allow_pickle=False)}
            for k, p in shard.extra.items():
                arrays[k] = np.load(p, mmap_mode="r", allow_pickle=False)
        elif shard.kind == "pt":
            obj = torch.load(shard.path, map_location="cpu", weights_only=True, mmap=True)
            if not isinstance(obj, dict):
                raise DataError(
                    f"shard {shard.name} must hold a dict of tensors with keys {KEYS}, "
                    f"got {type(obj).__name__}"
                )
            arrays = {k: v for k, v in obj.items() if k in KEYS}
        else:
            from safetensors import safe_open

            self._st = safe_open(str(shard.path), framework="pt")
            names = set(self._st.keys())
            arrays = {k: None for k in KEYS if k in names}
        for k, v in arrays.items():
            if isinstance(v, np.ndarray) and v.dtype.kind not in "biuf":
                raise DataError(
                    f"array {k!r} in shard {shard.name} has unsupported dtype {v.dtype}"
                )
        self._arrays = arrays
        self._features = arrays.get("features", None) if "features" in arrays else None
        if self._st is not None and "features" in arrays:
            self._features = self._st.get_slice("features")
        self._labels = None
        if "labels" in arrays:
            self._labels = self._tensor("labels")

    def _tensor(self, key: str) -> torch.Tensor | None:
        if key not in self._arrays:
            return None
        if self._st is not None:
            return self._st.get_tensor(key)
        v = self._arrays[key]
        return torch.from_numpy(np.array(v)) if isinstance(v, np.ndarray) else v  # a copy

    @property
    def shape(self) -> tuple[int, ...]:
        f = self._features
        return tuple(f.get_shape()) if self._st is not None else tuple(f.shape)

    @property
    def itemsize(self) -> int:
        """Bytes per feature value as stored."""
        f = self._features
        if self._st is not None:
            return {"F16": 2, "BF16": 2, "F32": 4}.get(f.get_dtype(), 8)
        return f.dtype.itemsize

    @property
    def labels(self) -> torch.Tensor:
        return self._labels

    def classifier(self) -> tuple[torch.Tensor | None, torch.Tensor | None]:
        return self._tensor("weights"), self._tensor("bias")

    def features(self, i: int, j: int) -> torch.Tensor:
        """Rows i:j as a torch tensor (read from disk for memory-mapped formats)."""
        f = self._features
        try:
            if self._st is not None:
                return f[i:j]
            if isinstance(f, (np.ndarray, _NpzArray)):
                return torch.from_numpy(np.array(f[i:j]))  # read from the map into memory
            return f[i:j]
        except Exception as exc:
            raise DataError(f"cannot read rows {i}:{j} of shard {self.shard.name}: {exc}") from None

    def chunks(self, rows: int) -> Iterator[tuple[torch.Tensor, torch.Tensor]]:
        """(features, labels) in chunks of ``rows`` rows.

        From a ``.npy`` shard (C order, native floats) each chunk is read from the file into one of
        two reused buffers, the next chunk in a background thread while the caller works on this
        one: a chunk is valid until the one after it is requested. The first chunk may have been
        read ahead already (:func:`prefetch`, while the previous shard was measured). (Copying rows
        out of the memory map instead faulted in every page of it and of a fresh array, chunk
        after chunk.)
        """
        n = self.shape[0]
        direct = self._direct()
        if direct is None or n <= 0:
            for i in range(0, n, rows):
                yield self.features(i, min(i + rows, n)), self._labels[i : i + rows]
            return
        rows = max(1, min(rows, n))
        ahead = _AHEAD.pop((direct[0], rows), None)
        if ahead is not None:
            buffers, pending = [ahead[0]], ahead[1]
        else:
            buffers, pending = [_take_buffer(rows * direct[3], direct[2])], None
        try:
            if n > rows:
                buffers.append(_take_buffer(rows * direct[3], direct[2]))
            if pending is None:
                pending = _reads().submit(self._read, direct, 0, min(rows, n), buffers[0])
            for i in range(0, n, rows):
                try:
                    x = pending.result()
                except OSError as exc:
                    raise DataError(
                        f"cannot read rows {i}:{i + rows} of shard {self.shard.name}: {exc}"
                    ) from None
                if i + rows < n:
                    j = min(i + 2 * rows, n)
                    buf = buffers[(i // rows + 1) % len(buffers)]
                    pending = _reads().submit(self._read, direct, i + rows, j, buf)
                yield torch.from_numpy(x), self._labels[i : i + rows]
        finally:
            if pending is not None:  # every read done: the buffers are free
                futures.wait([pending])
            _give_back(buffers)

    def _read(self, direct, i: int, j: int, buf: np.ndarray) -> np.ndarray:
        """Rows i:j of a :meth:`_direct` shard read from its file into ``buf``."""
        path, offset, dtype, dim = direct
        out = buf[: (j - i) * dim]
        view = memoryview(out.view(np.uint8))
        with open(path, "rb", buffering=0) as fh:
            fh.seek(offset + i * dim * dtype.itemsize)
            got = 0
            while got < view.nbytes:
                k = fh.readinto(view[got:])
                if not k:
                    raise DataError(
                        f"cannot read rows {i}:{j} of shard {self.shard.name}: the file is "
                        "truncated"
                    )
                got += k
        return out.reshape(j - i, dim)

    def _direct(self) -> tuple[Path, int, np.dtype, int] | None:
        """(file, offset, dtype, D) when the features are a C-ordered memory-mapped ``.npy`` array
        of native floats, which :meth:`chunks` reads with plain file reads; else None."""
        f = self._features
        if self._st is not None or not isinstance(f, np.memmap) or f.ndim != 2:
            return None
        if not (f.flags.c_contiguous and f.dtype.isnative and f.dtype.kind == "f"):
            return None
        return Path(f.filename), int(f.offset), f.dtype, int(f.shape[1])


#: chunk buffers of finished reads, reused by the next (a fresh 100 MB array is page-faulted in)
_FREE: list[np.ndarray] = []


#: first chunks read ahead (:func:`prefetch`): (file, rows) -> (buffer, future of the rows)
_AHEAD: dict[tuple[Path, int], tuple[np.ndarray, futures.Future]] = {}
_READS: list[ThreadPoolExecutor] = []


def _reads() -> ThreadPoolExecutor:
    """The thread that reads chunks in the background (one for the process)."""
    if not _READS:
        _READS.append(ThreadPoolExecutor(1, thread_name_prefix="nclab-read"))
    return _READS[0]


def prefetch(shard: Shard, rows: int) -> None:
    """Start reading the first ``rows`` rows of ``shard`` in the background, for the next
    :meth:`Reader.chunks` of it with the same ``rows`` (only ``.npy`` shards read directly; a
    shard that cannot be opened is left to that call to report)."""
    try:
        reader = Reader(shard)
        direct = reader._direct()
    except DataError:
        return
    n = reader.shape[0]
    rows = max(1, min(rows, n))
    if direct is None or n <= 0 or (direct[0], rows) in _AHEAD:
        return
    buf = _take_buffer(rows * direct[3], direct[2])
    _AHEAD[(direct[0], rows)] = (buf, _reads().submit(reader._read, direct, 0, rows, buf))


def _take_buffer(size: int, dtype: np.dtype) -> np.ndarray:
    """A flat buffer of at least ``size`` elements of ``dtype``: a free one that fits, else new."""
    for k, buf in enumerate(_FREE):
        if buf.dtype == dtype and buf.size >= size:
            return _FREE.pop(k)
    return np.empty(size, dtype=dtype)


def _give_back(buffers: list[np.ndarray]) -> None:
    """Keep the buffers of a finished read for the next (the 4 largest at most)."""
    _FREE.extend(buffers)
    _FREE.sort(key=lambda b: b.nbytes, reverse=True)
    del _FREE[4:]


def release_buffers() -> None:
    """Free the kept chunk buffers and the reads ahead nobody took (``measure_paths`` calls it
    when done)."""
    futures.wait([f for _, f in _AHEAD.values()])
    _AHEAD.clear()
    _FREE.clear()


class _NpzArray:
    """One array of a ``.npz``: its shape and dtype from the header, its data read whole on first
    indexing (numpy cannot memory-map inside a zip)."""

    def __init__(self, path: Path, key: str):
        import zipfile

        self.path, self.key, self._data = path, key, None
        with zipfile.ZipFile(path) as z, z.open(f"{key}.npy") as fh:
            fmt = np.lib.format
            version = fmt.read_magic(fh)
            read = fmt.read_array_header_1_0 if version == (1, 0) else fmt.read_array_header_2_0
            self.shape, _, self.dtype = read(fh)
        if self.dtype.kind not in "biuf":
            raise DataError(f"array {key!r} in shard {path} has unsupported dtype {self.dtype}")

    def __getitem__(self, index):
        if self._data is None:
            with np.load(self.path, allow_pickle=False) as f:
                self._data = f[self.key]
        return self._data[index]


def scan(shards: list[Shard]) -> tuple[int, torch.Tensor | None, torch.Tensor | None, int]:
    """Open every shard once and check it: features 2D, labels (N) integers, one D for all, one
    classifier (from the shards that carry one; they must agree). Fills each shard's ``rows``,
    ``dim``, ``nbytes``; returns (D, weights, bias, largest label + 1)."""
    dim, weights, bias, src, top = None, None, None, None, 0
    for sh in shards:
        r = Reader(sh)
        shape = r.shape
        if len(shape) != 2:
            raise DataError(f"features in shard {sh.name} must be 2D (N x D), got shape {shape}")
        lab = r.labels
        if lab.ndim != 1 or lab.shape[0] != shape[0]:
            raise DataError(
                f"labels in shard {sh.name} must have shape ({shape[0]},), got {tuple(lab.shape)}"
            )
        if lab.is_floating_point() or lab.is_complex():
            raise DataError(f"labels in shard {sh.name} must be integers, got {lab.dtype}")
        if dim is None:
            dim = shape[1]
        elif shape[1] != dim:
            raise DataError(
                f"shard {sh.name} has features of dimension {shape[1]}, the earlier shards {dim}"
            )
        sh.rows, sh.dim = shape[0], shape[1]
        sh.nbytes = sum(p.stat().st_size for p in [sh.path, *sh.extra.values()])
        if lab.numel():
            if int(lab.min()) < 0:
                raise DataError(f"labels in shard {sh.name} are negative (min {int(lab.min())})")
            sh.top = int(lab.max()) + 1
            top = max(top, sh.top)
        w, b = r.classifier()
        if w is not None:
            sh.has_classifier = True
            if weights is None:
                weights, bias, src = w, b, sh.name
            elif w.shape != weights.shape or not torch.equal(w, weights) or not _same(b, bias):
                raise DataError(f"shard {sh.name} carries another classifier than shard {src}")
    return dim, weights, bias, top


def _same(a, b) -> bool:
    if a is None or b is None:
        return a is None and b is None
    return a.shape == b.shape and torch.equal(a, b)
