"""ClassStats.all_reduce with 2 gloo processes on CPU equals one process over all the data."""

import os
import socket

import pytest
import torch
import torch.distributed as dist
import torch.multiprocessing as mp

from nclab import ClassStats, collapse_metrics
from nclab.metrics import NegativityStats


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _data():
    g = torch.Generator().manual_seed(0)
    y = torch.randint(0, 4, (400,), generator=g)
    x = (100 + 3 * torch.randn(4, 10, generator=g))[y] + 0.01 * torch.randn(400, 10, generator=g)
    w = torch.randn(4, 10, generator=g)
    return x, y, w


def _worker(rank: int, world: int, port: int, out_dir: str) -> None:
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    dist.init_process_group("gloo", rank=rank, world_size=world)
    try:
        x, y, w = _data()
        shard = slice(rank * 150, 400 if rank == world - 1 else (rank + 1) * 150)  # unequal shards
        s = ClassStats(4, 10, per_class_scatter=True, scatter="full")
        s.update(x[shard], y[shard])
        s.all_reduce()
        s.decision_pass(x[shard], y[shard], w)
        s.all_reduce_second_pass()
        neg = NegativityStats(10)
        neg.update(x[shard] - 100)
        neg.all_reduce()
        torch.save(
            {
                "metrics": dict(collapse_metrics(s, w)),
                "means": s.means,
                "scatter": s.scatter,
                "class_scatter": s.class_scatter,
                "neg": neg.compute(),
                "n": s.num_samples,
            },
            os.path.join(out_dir, f"rank{rank}.pt"),
        )
    finally:
        dist.destroy_process_group()


def test_all_reduce_two_gloo_processes(tmp_path):
    mp.spawn(_worker, args=(2, _free_port(), str(tmp_path)), nprocs=2, join=True)
    x, y, w = _data()
    s = ClassStats(4, 10, per_class_scatter=True, scatter="full")
    s.update(x, y)
    s.decision_pass(x, y, w)
    expected = collapse_metrics(s, w)
    neg = NegativityStats(10)
    neg.update(x - 100)
    for rank in range(2):
        r = torch.load(tmp_path / f"rank{rank}.pt")
        assert r["n"] == 400
        torch.testing.assert_close(r["means"], s.means, rtol=1e-12, atol=1e-10)
        torch.testing.assert_close(r["scatter"], s.scatter, rtol=1e-10, atol=1e-10)
        torch.testing.assert_close(r["class_scatter"], s.class_scatter, rtol=1e-10, atol=1e-10)
        assert r["neg"] == pytest.approx(neg.compute(), rel=1e-12)
        for key, v in expected.items():
            assert r["metrics"][key] == pytest.approx(v, rel=1e-9), key


def test_all_reduce_is_a_noop_without_distributed():
    x, y, _ = _data()
    s = ClassStats(4, 10, scatter="full")
    s.update(x, y)
    before = s.scatter.clone()
    s.all_reduce()
    assert torch.equal(before, s.scatter)
