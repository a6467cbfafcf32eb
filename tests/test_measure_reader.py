"""Reading ``.npy`` shards in chunks: plain file reads into two reused buffers, the next chunk read
in a background thread (issue 28), equal to the rows of the array."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from nclab.errors import DataError
from nclab.measure import measure_paths, shards


def _write(tmp_path, x, stem="part0"):
    np.save(tmp_path / f"{stem}.features.npy", x)
    np.save(tmp_path / f"{stem}.labels.npy", np.arange(len(x)) % 3)
    return shards.find_shards([tmp_path])[0]


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16])
def test_chunks_are_the_rows_of_the_array(tmp_path, dtype):
    x = np.random.default_rng(0).standard_normal((50, 6)).astype(dtype)
    sh = _write(tmp_path, x)
    shards.scan([sh])
    reader = shards.Reader(sh)
    assert reader._direct() is not None
    rows = [c.clone() for c, _ in reader.chunks(7)]  # a chunk is valid until the next is asked
    assert [len(c) for c in rows] == [7] * 7 + [1]
    assert torch.equal(torch.cat(rows), torch.from_numpy(x))
    again = [c.clone() for c, _ in shards.Reader(sh).chunks(100)]  # one chunk; buffers reused
    assert torch.equal(again[0], torch.from_numpy(x))


def test_fortran_order_is_read_through_the_memory_map(tmp_path):
    x = np.asfortranarray(np.random.default_rng(1).standard_normal((20, 4)))
    sh = _write(tmp_path, x)
    reader = shards.Reader(sh)
    assert reader._direct() is None
    assert torch.equal(torch.cat([c for c, _ in reader.chunks(6)]), torch.from_numpy(x))


def test_a_truncated_shard_is_an_error_naming_it(tmp_path):
    x = np.random.default_rng(2).standard_normal((40, 8)).astype(np.float32)
    sh = _write(tmp_path, x)
    reader = shards.Reader(sh)  # opened, then the file shrinks under it
    with open(sh.path, "r+b") as f:
        f.truncate(f.seek(0, 2) - 100)
    with pytest.raises(DataError, match=r"rows 32:40 of shard .*part0.* truncated"):
        list(reader.chunks(16))
    with pytest.raises(DataError, match="part0"):  # opened after: the memory map refuses it
        shards.Reader(sh)


def test_measure_reads_many_chunks_per_shard_as_one(tmp_path, monkeypatch):
    g = np.random.default_rng(3)
    k, d = 5, 12
    mu = 3 * g.standard_normal((k, d))
    y = np.arange(600) % k
    x = (mu[y] + g.standard_normal((600, d))).astype(np.float32)
    np.save(tmp_path / "a.features.npy", x)
    np.save(tmp_path / "a.labels.npy", y)
    whole = measure_paths([tmp_path], show_progress=False)["metrics"]
    monkeypatch.setattr("nclab.measure.passes.chunk_rows", lambda *a: 37)
    chunked = measure_paths([tmp_path], show_progress=False)["metrics"]
    for key, value in whole.items():
        assert chunked[key] == pytest.approx(value, rel=1e-12, abs=1e-15), key


def test_the_first_chunk_read_ahead_is_the_one_measured(tmp_path):
    """measure_paths reads the next shard's first chunk while the current one is measured."""
    x = np.random.default_rng(4).standard_normal((30, 5)).astype(np.float32)
    sh = _write(tmp_path, x)
    shards.prefetch(sh, 16)
    assert len(shards._AHEAD) == 1
    got = [c.clone() for c, _ in shards.Reader(sh).chunks(16)]
    assert not shards._AHEAD and torch.equal(torch.cat(got), torch.from_numpy(x))
    shards.prefetch(sh, 16)  # never taken: released with the buffers
    shards.release_buffers()
    assert not shards._AHEAD and not shards._FREE
