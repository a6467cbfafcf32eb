"""Sharded dumps: every format, bad shards, workers and Ray equal to one process, saved stats."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch

from nclab.errors import DataError
from nclab.measure import measure_arrays, measure_paths, measure_saved

N, D, K = 600, 6, 5


def _data(seed=0):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, K, N)
    y[:K] = np.arange(K)
    x = (3 * rng.normal(size=(K, D))[y] + rng.normal(size=(N, D))).astype(np.float32)
    return x, y, rng.normal(size=(K, D)), rng.normal(size=K)


def _write(tmp, fmt, x, y, w, b, parts=4):
    """Split into ``parts`` shards of format ``fmt`` in the directory ``tmp``; the classifier goes
    into the first shard only."""
    tmp.mkdir(exist_ok=True)
    for i, idx in enumerate(np.array_split(np.arange(len(y)), parts)):
        arrays = {"features": x[idx], "labels": y[idx]}
        if i == 0:
            arrays.update(weights=w, bias=b)
        stem = tmp / f"part{i:02d}"
        if fmt == "npz":
            np.savez(f"{stem}.npz", **arrays)
        elif fmt == "npy":
            for k, v in arrays.items():
                np.save(f"{stem}.{k}.npy", v)
        elif fmt == "pt":
            torch.save(
                {k: torch.from_numpy(np.asarray(v)) for k, v in arrays.items()}, f"{stem}.pt"
            )
        else:
            from safetensors.torch import save_file

            save_file(
                {k: torch.from_numpy(np.ascontiguousarray(v)) for k, v in arrays.items()},
                f"{stem}.safetensors",
            )
    return tmp


def _close(a, b, rel=1e-10):
    assert a.keys() == b.keys()
    for k in a:
        assert a[k] == pytest.approx(b[k], rel=rel, abs=1e-13), k


@pytest.mark.parametrize("fmt", ["npz", "npy", "pt", "safetensors"])
def test_every_format_equals_in_memory(tmp_path, fmt):
    x, y, w, b = _data()
    ref = measure_arrays(torch.from_numpy(x), torch.from_numpy(y), torch.tensor(w), torch.tensor(b))
    d = _write(tmp_path / fmt, fmt, x, y, w, b)
    res = measure_paths([d], show_progress=False)
    assert (res["num_samples"], res["num_classes"], res["dim"], res["shards"]) == (N, K, D, 4)
    _close(res["metrics"], ref["metrics"])
    assert "nc3_wh" in res["metrics"] and "gnc2" in res["metrics"]


def test_glob_several_files_and_an_empty_shard(tmp_path):
    x, y, w, b = _data()
    d = _write(tmp_path / "s", "npz", x, y, w, b)
    np.savez(d / "zz_empty.npz", features=np.zeros((0, D), np.float32), labels=np.zeros(0, int))
    res = measure_paths([str(d / "part0*.npz"), d / "zz_empty.npz"], show_progress=False)
    ref = measure_paths(
        [d / "part00.npz", d / "part01.npz", d / "part02.npz", d / "part03.npz"],
        show_progress=False,
    )
    assert res["empty_shards"] == [str(d / "zz_empty.npz")]
    assert res["metrics"] == ref["metrics"]


def test_bad_shards_are_named(tmp_path):
    x, y, w, b = _data()
    d = _write(tmp_path / "s", "npz", x, y, w, b)
    (d / "part02.npz").write_bytes(b"not a zip file at all")
    with pytest.raises(DataError, match="part02.npz"):
        measure_paths([d], show_progress=False)
    d2 = _write(tmp_path / "t", "npz", x, y, w, b)
    np.savez(d2 / "part09.npz", features=np.zeros((3, D + 1), np.float32), labels=np.zeros(3, int))
    with pytest.raises(DataError, match=r"part09.npz has features of dimension 7"):
        measure_paths([d2], show_progress=False)
    d3 = _write(tmp_path / "u", "npy", x, y, w, b)
    (d3 / "part01.labels.npy").unlink()
    with pytest.raises(DataError, match="part01.labels.npy"):
        measure_paths([d3], show_progress=False)


def test_workers_equal_one_process_and_saved_stats(tmp_path, monkeypatch):
    from nclab.measure import sharded

    x, y, w, b = _data(1)
    d = _write(tmp_path / "s", "npy", x, y, w, b, parts=5)
    one = measure_paths([d], save_stats=tmp_path / "one.pt", per_class=True, show_progress=False)
    monkeypatch.setattr(sharded, "POOL_MIN_BYTES", 0)  # a real pool, even on this tiny dump
    two = measure_paths(
        [d], workers=2, save_stats=tmp_path / "two.pt", per_class=True, show_progress=False
    )
    assert (one["workers"], two["workers"]) == (1, 2)
    _close(two["metrics"], one["metrics"], rel=1e-12)
    assert "nc4_class_mean" in one["metrics"] and "top5_acc" in one["metrics"]
    pc = one["per_class"]
    assert all(len(v) == K for v in pc.values()) and sum(pc["count"]) == N
    assert np.mean(pc["cdnv"]) == pytest.approx(one["metrics"]["cdnv"], rel=1e-12)
    saved = measure_saved(tmp_path / "one.pt")
    for k, v in saved["metrics"].items():
        assert v == one["metrics"][k], k
    assert saved["num_samples"] == N


def test_cli_shards_json(tmp_path, capsys):
    from nclab.cli import main

    x, y, w, b = _data()
    d = _write(tmp_path / "s", "pt", x, y, w, b)
    try:
        main(["measure", str(d), "--json", "--save-stats", str(tmp_path / "st.pt")])
    except SystemExit as exc:
        assert not exc.code
    res = json.loads(capsys.readouterr().out)
    try:
        main(["measure", "--stats", str(tmp_path / "st.pt"), "--json", "--memory-gb", "0.001"])
    except SystemExit as exc:
        assert not exc.code
    again = json.loads(capsys.readouterr().out)
    assert again["metrics"] == res["metrics"] and "nc3_wh" in res["metrics"]


@pytest.mark.slow
def test_ray_equals_one_process(tmp_path):
    pytest.importorskip("ray")
    x, y, w, b = _data(2)
    d = _write(tmp_path / "s", "safetensors", x, y, w, b)
    one = measure_paths([d], show_progress=False)
    ray = measure_paths([d], workers=2, backend="ray", show_progress=False)
    _close(ray["metrics"], one["metrics"], rel=1e-12)


def test_pass2_tasks_get_a_snapshot_not_the_merged_statistics(tmp_path, monkeypatch):
    """Pass-2 tasks must not receive the object the main thread adds their sums into: a pool
    pickles task arguments later, in a feeder thread, and torch's pickler copies each tensor into
    shared memory, so an in-place addition made meanwhile was lost (once in CI, with workers=2)."""
    from nclab.measure import passes

    x, y, w, b = _data(1)
    d = _write(tmp_path / "s", "npy", x, y, w, b, parts=3)
    sent, added_into = [], []
    original_map, original_add = passes.Executor.map, passes.add_second

    def spy_map(self, fn, args, shared, consume):
        if fn is passes.second_pass:
            sent.append(shared[0])
        return original_map(self, fn, args, shared, consume)

    def spy_add(stats, part, views):
        added_into.append(stats)
        return original_add(stats, part, views)

    monkeypatch.setattr(passes.Executor, "map", spy_map)
    monkeypatch.setattr(passes, "add_second", spy_add)
    measure_paths([d], show_progress=False)
    assert len(sent) == 1 and len(added_into) == 3
    assert all(s is added_into[0] for s in added_into) and sent[0] is not added_into[0]
    assert sent[0].basis_scatter is None and sent[0].pass2_count == 0
    assert added_into[0].pass2_count == N


def test_a_small_dump_is_measured_in_this_process(tmp_path, monkeypatch):
    """Issue 27: --workers 2 on a small dump took 9.2 s against 2.9 s with one process (the pool's
    start-up); below POOL_MIN_BYTES it runs in this process, and says so."""
    from nclab.measure import passes

    x, y, w, b = _data(1)
    d = _write(tmp_path / "s", "npy", x, y, w, b, parts=3)
    pools = []
    monkeypatch.setattr(passes.Executor, "__enter__", lambda self: pools.append(self) or self)
    res = measure_paths([d], workers=2, show_progress=False)
    assert res["workers"] == 1 and pools[0].workers == 1


def test_labels_beyond_k_name_their_shard(tmp_path):
    x, y, _, _ = _data(1)
    for i, part in enumerate(np.array_split(np.arange(N), 3)):
        labels = y[part] + (K if i == 1 else 0)  # the second shard's labels run past K
        np.savez(tmp_path / f"p{i}.npz", features=x[part], labels=labels)
    with pytest.raises(DataError, match=rf"labels in shard .*p1.npz go up to {2 * K - 1}, but K"):
        measure_paths([tmp_path], num_classes=K, show_progress=False)


def test_skipped_reasons_in_the_apis_terms(tmp_path):
    x, y, _, _ = _data(1)
    np.savez(tmp_path / "f.npz", features=x, labels=y)
    for res in (
        measure_arrays(torch.from_numpy(x), torch.from_numpy(y)),
        measure_paths([tmp_path]),
    ):
        why = res["skipped"]["nc3"]
        assert "pass weights=" in why and "set_classifier" not in why
