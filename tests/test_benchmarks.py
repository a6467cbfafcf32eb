"""Benchmarks that cannot rot: every script in ``benchmarks/`` runs its ``--smoke`` mode (tiny
sizes, the same code) as ``nclab evidence bench`` runs it, in a fresh process, and its last line
is the JSON object of its full-size run: the keys the docs' ``bench`` tables read, the keys of its
newest full-size records in the ledger, and its own agreement checks between ours and the plain
reference. ``bench_lm.py`` has its own smoke test."""

from __future__ import annotations

import json
from concurrent.futures import Future, ThreadPoolExecutor
from importlib.util import find_spec
from pathlib import Path
from typing import Any

import pytest

from nclab.evidence.bench import benchmark_records, record_benchmark
from nclab.evidence.ledger import default_root
from test_evidence_tables import et

ROOT = Path(__file__).resolve().parents[1]
BENCHMARKS = ROOT / "benchmarks"
#: scripts smoke-tested elsewhere
ELSEWHERE = {"bench_lm"}

#: per script: the keys of its headline figures (ratios and agreement)
HEADLINE: dict[str, tuple[str, ...]] = {
    "bench_callbacks": ("overhead.lightning", "overhead.transformers", "overhead_today.lightning",
                        "agreement.lightning", "agreement.transformers", "seconds.lightning.with"),
    "bench_curvature": ("ntk_time_ratio", "ntk_memory_ratio", "ntk_rel_diff",
                        "hessian_time_ratio", "hessian_memory_ratio", "hessian_rel_diff"),
    "bench_feature_collapse": ("step_ratio", "time_to_result_ratio", "ttr_plain_s_extrapolated",
                               "rel_diff_W", "rel_diff_U", "converged"),
    "bench_metrics": ("a_ratio_inmem", "b_ratio_inmem", "c_ratio_stream", "b_inmem_over_floor",
                      "c_relerr_inmem", "c_relerr_ref"),
    "bench_probe": ("time_ratio", "memory_ratio", "max_rel_diff"),
    "bench_scale": ("ratio", "a_max_err_ours", "floor_ratio_bound", "targets_met",
                    "vocab_peak_gb", "vocab_max_err_ours", "b100k_completed",
                    "c_workers2_speedup", "c_workers2_equal"),
    "bench_ufm": ("ratio", "ratio_generic", "objectives_agree", "max_rel_objective_diff"),
}  # fmt: skip


def _agree(name: str, r: dict[str, Any]) -> None:
    """The script's own accuracy figures at smoke size: ours agrees with the reference."""
    if name == "bench_callbacks":
        assert max(r["agreement"].values()) < 1e-6
    elif name == "bench_curvature":
        assert r["ntk_rel_diff"] < 1e-3 and r["hessian_rel_diff"] < 1e-3
    elif name == "bench_feature_collapse":
        assert r["rel_diff_W"] < 1e-4 and r["rel_diff_U"] < 1e-4
    elif name == "bench_metrics":
        assert max(r[f"{c}_relerr_{w}"] for c in "abc" for w in ("inmem", "stream")) < 1e-10
    elif name == "bench_probe":
        assert r["max_rel_diff"] < 1e-3
    elif name == "bench_scale":
        assert r["a_max_err_ours"] < 1e-10 and r["vocab_max_err_ours"] < 1e-10
        assert r["b100k_completed"] and r["c_workers2_equal"]
    elif name == "bench_ufm":
        assert r["objectives_agree"]


#: keys of full-size records the smoke run does not produce, and why
NOT_IN_SMOKE = {
    # Ray is left out of --smoke: starting it takes most of a minute
    "bench_scale": {"c_ray2_seconds", "c_ray2_speedup", "c_ray2_equal"},
}
SMOKE_ARGS = {"--smoke", "--quick"}
#: optional packages (the dev extras) a script needs
NEEDS = {"bench_callbacks": ("lightning", "transformers")}


def _smoke(name: str, keys: set) -> set:
    """``keys`` (dotted, or tuples of parts) less those a smoke run of ``name`` leaves out
    (:data:`NOT_IN_SMOKE`, matched on the top-level key)."""
    skip = NOT_IN_SMOKE.get(name, set())
    return {k for k in keys if (k.split(".") if isinstance(k, str) else k)[0] not in skip}


def scripts() -> list[str]:
    return sorted(p.stem for p in BENCHMARKS.glob("bench_*.py"))


def test_every_benchmark_has_a_smoke_test():
    assert set(scripts()) - ELSEWHERE == set(HEADLINE)


def _has(result: Any, path: str | tuple[str, ...]) -> bool:
    """Whether ``path`` (dotted, or its parts) exists in ``result`` (a ``None`` on the way: the
    benchmark's "did not happen", e.g. a criterion not met at smoke size, counts as present)."""
    for part in path.split(".") if isinstance(path, str) else path:
        if result is None:
            return True
        if isinstance(result, list) and part.isdigit():
            if int(part) >= len(result):
                return False
            result = result[int(part)]
        elif isinstance(result, dict) and part in result:
            result = result[part]
        else:
            return False
    return True


def _paths(result: dict[str, Any], prefix: tuple[str, ...] = ()) -> set[tuple[str, ...]]:
    """The paths (tuples of keys: a key may hold a dot) of every key of ``result``, nested
    dicts included."""
    out = set()
    for k, v in result.items():
        out.add((*prefix, k))
        if isinstance(v, dict):
            out |= _paths(v, (*prefix, k))
    return out


def docs_keys(name: str) -> set[str]:
    """The result keys the docs' ``bench NAME`` tables read (``{row}`` expanded)."""
    keys = set()
    for doc in (ROOT / "docs").glob("*.md"):
        for block in et.blocks(doc.read_text(), str(doc)):
            spec = et.parse_spec(block.spec)
            if spec.kind == "bench" and spec.patterns[0] == name:
                keys |= {v.replace("{row}", r) for v in spec.values for r in spec.rows or [""]}
    return keys


def recorded_keys(name: str) -> dict[str, set[tuple[str, ...]]]:
    """The key paths of the newest full-size ledger record of ``name`` per argument list (the
    same script with ``--skip a,floor`` and with ``--skip b,b64,c`` write different keys), by
    record path."""
    newest = {}
    for r in benchmark_records(default_root(), name):  # oldest first
        if not SMOKE_ARGS & set(r.args):
            newest[r.args] = r
    return {str(r.path): _paths(r.result) for r in newest.values()}


def _run_smoke(name: str, root: Path) -> Path:
    """``nclab evidence bench benchmarks/NAME.py -- --smoke`` into the ledger at ``root``."""
    args = ["--smoke"] + (["--data-dir", str(root / "data")] if name == "bench_scale" else [])
    script = BENCHMARKS / f"{name}.py"
    return record_benchmark(script, args, "smoke", root=root, allow_dirty=True, echo=False)


@pytest.fixture(scope="module")
def smoke_runs(request, tmp_path_factory) -> dict[str, Future]:
    """The ``--smoke`` runs of the scripts whose tests were selected, two at a time: the suite
    runs on one core, and a smoke run is mostly a fresh process importing torch (the first test
    waits for them all)."""
    root = tmp_path_factory.mktemp("ledger")
    test = test_smoke_prints_the_full_size_json_line.__name__
    items = request.session.items  # doctests among them have no originalname
    selected = {i.callspec.params["name"] for i in items if getattr(i, "originalname", "") == test}
    runnable = [n for n in selected if all(find_spec(m) for m in NEEDS.get(n, ()))]
    with ThreadPoolExecutor(2) as pool:
        return {name: pool.submit(_run_smoke, name, root / name) for name in runnable}


@pytest.mark.parametrize("name", sorted(HEADLINE))
def test_smoke_prints_the_full_size_json_line(name, smoke_runs):
    if name not in smoke_runs:
        pytest.skip(f"{name} needs {', '.join(NEEDS[name])} (the dev extras)")
    path = smoke_runs[name].result()
    result = json.loads(path.read_text())["result"]
    missing = [k for k in HEADLINE[name] if not _has(result, k)]
    assert not missing, f"{name} --smoke: no {missing} in its JSON line"
    missing = sorted(k for k in _smoke(name, docs_keys(name)) if not _has(result, k))
    assert not missing, f"{name} --smoke: the docs' bench tables read {missing}, not printed"
    for where, keys in recorded_keys(name).items():
        missing = sorted(k for k in _smoke(name, keys) if not _has(result, k))
        assert not missing, f"{name} --smoke lacks {missing} of the full-size record {where}"
    _agree(name, result)
