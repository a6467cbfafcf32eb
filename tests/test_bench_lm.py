"""``benchmarks/bench_lm.py --smoke`` runs in seconds and its last line is the JSON object that
``nclab evidence bench`` records (the same keys as a full-size run)."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
KEYS = {
    "benchmark", "smoke", "tokens", "samples", "vocab_size", "classes", "dim", "layers",
    "seq_len", "batch_size", "threads", "ours_s", "plain_s", "ratio", "ours_forward_passes",
    "plain_forward_passes", "ours_peak_bytes", "plain_peak_bytes", "max_err_ours",
    "max_err_plain", "err_ours", "err_plain", "values", "times", "targets_met",
}  # fmt: skip


def test_bench_lm_smoke_prints_the_json_of_a_full_run():
    pytest.importorskip("transformers")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), str(ROOT / "tests")])}
    run = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "bench_lm.py"), "--smoke"],
        capture_output=True, text=True, env=env, timeout=300,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr[-2000:]
    out = json.loads(run.stdout.strip().splitlines()[-1])
    assert set(out) == KEYS and out["benchmark"] == "bench_lm" and out["smoke"] is True
    # ours runs the model once over the corpus, the plain way three times
    assert out["plain_forward_passes"] == 3 * out["ours_forward_passes"] > 0
    assert 0 < out["classes"] < out["vocab_size"] and out["samples"] > 0
    assert out["max_err_ours"] < 1e-10  # float64, against the float64 truth
    assert 0 < out["max_err_plain"] < 1e-3  # float32: close, not exact
    study = {"cdnv", "nc2_equinorm", "nc2_equiangle", "gnc2", "unc3", "nc4"}
    assert set(out["err_plain"]) == study and set(out["err_ours"]) == study | {"nc1", "ncc_acc"}
    assert out["ours_s"] > 0 and out["plain_s"] > 0 and out["ratio"] > 0
    assert out["ours_peak_bytes"] > 0 and out["plain_peak_bytes"] > 0
    assert out["targets_met"] is None  # the timing targets are not judged on a smoke run
