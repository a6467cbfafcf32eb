"""The integrations under 2 gloo processes (one spawn for all checks): CollapseMetric's sync, and the
callbacks' measurements over loaders that pad their shards (a DistributedSampler, an accelerate-
prepared loader), on a loader of their own and in the framework's loop (a session fed by the
loop's forward passes, the padding left out by ``real_rows``), equal one process over the whole
data set; the per-rank sample counts say no sample was counted twice."""

import importlib.util
import os
import socket

import pytest
import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from torch import nn
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset

from nclab.integrations import real_rows
from nclab.integrations._measure import Measurement
from nclab.integrations.torchmetrics import CollapseMetric

HAS_ACCELERATE = importlib.util.find_spec("accelerate") is not None
N = 61  # odd: a DistributedSampler pads one rank's shard with a repeated sample


def _data():
    g = torch.Generator().manual_seed(0)
    y = torch.arange(N) % 3
    x = (5 + 2 * torch.randn(3, 6, generator=g, dtype=torch.float64))[y]
    x = x + torch.randn(N, 6, generator=g, dtype=torch.float64)
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(6, 8), nn.Tanh(), nn.Linear(8, 3)).double()
    return TensorDataset(x, y), model


def _measure(model, loader):
    m = Measurement(["1", "2:input"], 3, "collapse", None, True, None, {"classifier": "2"})
    result, values = m(model, loader, None)
    return values, result.stats["1"].num_samples


def _in_loop(model, loader, budget="2GB"):
    """What the callbacks do in the validation loop: the loop's own forward passes feed a session;
    ``budget``: a small one takes the one-pass route on one rank only."""
    m = Measurement(["1", "2:input"], 3, "collapse", None, True, None, {"classifier": "2"}, budget)
    session = m.session(model)
    session.attach()
    with torch.no_grad():
        for batch in loader:
            model(batch[0])
            session.add(batch)
    result = session.finish(rows=real_rows(loader))
    session.detach()
    return m.values(result), result.stats["1"].num_samples


def _metric(ds, rank):
    x, y = ds.tensors
    lo, hi = (0, 25) if rank == 0 else (25, N)  # unequal shards
    metric = CollapseMetric(3, 6, classifier=(torch.ones(3, 6, dtype=torch.float64), None))
    for i in range(lo, hi, 10):
        metric.update(x[i : min(i + 10, hi)], y[i : min(i + 10, hi)])
    return metric.compute(), int(metric.state[:3].sum())


def _worker(rank: int, world: int, port: int, out_dir: str, accelerate: bool) -> None:
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    dist.init_process_group("gloo", rank=rank, world_size=world)
    try:
        ds, model = _data()
        out = {"metric": _metric(ds, rank)}
        padded = DataLoader(ds, batch_size=8, sampler=DistributedSampler(ds, shuffle=True))
        out["sampler"] = _measure(model, padded)
        out["sampler_loop"] = _in_loop(model, padded)
        # rank 0's features outgrow the cache: both ranks take the one-pass route together
        out["degraded_loop"] = _in_loop(model, padded, 1200 if rank == 0 else "2GB")
        if accelerate:
            from accelerate.data_loader import prepare_data_loader

            prepared = prepare_data_loader(
                DataLoader(ds, batch_size=8),
                num_processes=world,
                process_index=rank,
                put_on_device=False,
            )
            out["accelerate_batches"] = sum(len(b[1]) for b in prepared)  # padded: 64
            out["accelerate"] = _measure(model, prepared)
            out["accelerate_loop"] = _in_loop(model, prepared)
        torch.save(out, os.path.join(out_dir, f"rank{rank}.pt"))
    finally:
        dist.destroy_process_group()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_two_gloo_processes_equal_one(tmp_path):
    args = (2, _free_port(), str(tmp_path), HAS_ACCELERATE)
    mp.spawn(_worker, args=args, nprocs=2, join=True)
    ds, model = _data()
    x, y = ds.tensors
    one = CollapseMetric(3, 6, classifier=(torch.ones(3, 6, dtype=torch.float64), None))
    one.update(x, y)
    expected_metric = one.compute()
    expected, n = _measure(model, DataLoader(ds, batch_size=8))
    assert n == N
    loaders = ["sampler", "sampler_loop"]
    loaders += ["accelerate", "accelerate_loop"] if HAS_ACCELERATE else []
    local_ns = []
    for rank in range(2):
        r = torch.load(tmp_path / f"rank{rank}.pt")
        metric, local_n = r["metric"]
        local_ns.append(local_n)
        assert set(metric) == set(expected_metric)
        for key, value in expected_metric.items():
            assert metric[key] == pytest.approx(value, rel=1e-12, abs=1e-12), key
        if HAS_ACCELERATE:
            assert r["accelerate_batches"] > (N + 1) // 2  # the prepared loader itself pads
        for name in loaders:
            values, count = r[name]
            assert count == N, name  # every sample once over both ranks
            assert set(values) == set(expected)
            for key, value in expected.items():
                assert values[key] == pytest.approx(value, rel=1e-12, abs=1e-12), (name, key)
    assert local_ns == [25, N - 25]  # compute() synced, then gave each rank its own state back
    one_pass = Measurement(["1", "2:input"], 3, "collapse", None, False, None, {"classifier": "2"})
    _, expected_one_pass = one_pass(model, DataLoader(ds, batch_size=8), None)
    for rank in range(2):
        values, count = torch.load(tmp_path / f"rank{rank}.pt")["degraded_loop"]
        assert count == N and set(values) == set(expected_one_pass)
        for key, value in expected_one_pass.items():
            assert values[key] == pytest.approx(value, rel=1e-12, abs=1e-12), key
