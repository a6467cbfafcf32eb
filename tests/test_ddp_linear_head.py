"""The linear-head experiment under ``torchrun --nproc_per_node 2`` (gloo, CPU): every rank reports the
same numbers, and they equal a single process's (DDP averages the shard gradients to the full-batch
gradient; the probe all-reduces its statistics)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from nclab.experiments import get_experiment, run_experiment

SETS = [
    "data.name=digits",
    "data.samples_per_class=20",
    "data.test_samples_per_class=null",
    "model.L1=2",
    "model.L2=3",
    "model.width=32",
    "train.epochs=20",
    "train.batch_size=50",
    "measure_every=10",
    "measure_from=1",
    "threads=1",
]


def torchrun(out, sets, timeout=300):
    cmd = [
        sys.executable,
        "-m",
        "torch.distributed.run",
        "--standalone",
        "--nproc_per_node",
        "2",
        "-m",
        "nclab",
        "run",
        "linear-head",
        "--preset",
        "fig1-mlp-quick",
        "--out",
        str(out),
        "--json",
    ]
    for s in sets:
        cmd += ["--set", s]
    env = dict(os.environ, OMP_NUM_THREADS="1", NCLAB_PROGRESS="0")
    res = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env)
    assert res.returncode == 0, res.stderr[-3000:]
    return json.loads((out / "summary.json").read_text())


def close(a, b, rel=1e-5):
    if a is None or b is None:
        return a is b
    return abs(a - b) <= rel * max(abs(a), abs(b), 1e-12)


def test_two_ranks_match_one_process(tmp_path):
    exp = get_experiment("linear-head")
    single = run_experiment(exp, exp.config("fig1-mlp-quick", SETS), tmp_path / "one")
    ddp = torchrun(tmp_path / "two", SETS)
    assert ddp["ddp"] == {"world_size": 2, "ranks_agree": True}
    assert single["ddp"] == {"world_size": 1}
    for k in ("train_mse", "train_acc", "test_acc"):
        assert close(single[k], ddp[k]), (k, single[k], ddp[k])
    for a, b in zip(single["layers"], ddp["layers"], strict=True):
        for k in ("nc1_trace", "nc2_kappa", "nc3_cos", "balancedness", "negativity"):
            assert close(a[k], b[k]), (a["name"], k, a[k], b[k])
    ca, cb = single["certificate"], ddp["certificate"]
    assert ca["applies"] == cb["applies"]
    for k in ("eps1", "eps2", "r", "c3", "z_op", "N"):
        assert close(ca["hypotheses"][k], cb["hypotheses"][k]), k
    # rank 0 alone wrote the log: one line per measurement
    lines = (tmp_path / "two" / "metrics.jsonl").read_text().splitlines()
    assert [json.loads(x)["epoch"] for x in lines] == [10, 20]


def test_sweep_under_two_ranks(tmp_path):
    sets = [*SETS, "sweep=linear_depth", "sweep_values=[1, 2]", "train.epochs=10"]
    s = torchrun(tmp_path / "sweep", sets)
    assert s["ddp"]["ranks_agree"] is True
    assert sorted(s["by_depth"]) == ["1", "2"]
    units = sorted(p.name for p in (tmp_path / "sweep" / "units").iterdir())
    assert len(units) == 2
    for u in units:
        assert (tmp_path / "sweep" / "units" / u / "summary.json").is_file()
