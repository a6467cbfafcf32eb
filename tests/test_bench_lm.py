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
    "max_err_plain", "nonfinite_ours", "nonfinite_plain", "err_ours", "err_plain", "undefined", "values", "times", "targets_met",
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
    assert out["undefined"] == {}  # every metric defined on the smoke corpus
    assert out["nonfinite_ours"] == [] and out["nonfinite_plain"] == []
    assert out["ours_s"] > 0 and out["plain_s"] > 0 and out["ratio"] > 0
    assert out["ours_peak_bytes"] > 0 and out["plain_peak_bytes"] > 0
    assert out["targets_met"] is None  # the timing targets are not judged on a smoke run


def test_a_metric_undefined_in_the_truth_is_left_out_unless_a_side_gives_it_a_number():
    """GNC2's log kernel is infinite where two normalised class means coincide (classes seen only
    after the same first token of a row): the truth's inf leaves the key out of the errors, and a
    side that gave it a number, or none where the truth has one, is wrong (inf)."""
    import importlib.util
    import math

    spec = importlib.util.spec_from_file_location("bench_lm", ROOT / "benchmarks" / "bench_lm.py")
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    truth = {"gnc2": math.inf, "cdnv": 2.0, "nc4": 0.5}
    assert bench.rel_errors({"gnc2": None, "cdnv": 2.0, "nc4": 0.25}, truth) == {
        "cdnv": 0.0,
        "nc4": 0.5,
    }
    assert bench.rel_errors({"gnc2": 1.0, "cdnv": None}, truth) == {
        "gnc2": math.inf,
        "cdnv": math.inf,
    }
