"""Benchmark runs in the ledger (nclab.evidence.bench): a script's last-line JSON recorded with its
provenance and the machine's load, refused from a dirty tree unless asked, nothing recorded when
the script fails, and the docs' ``bench`` blocks drawn from the records."""

from __future__ import annotations

import json
import textwrap

import pytest

from nclab.errors import RunError
from nclab.evidence import bench
from nclab.evidence.bench import benchmark_records, record_benchmark
from test_cli_theory import run as cli
from test_evidence_tables import et

SCRIPT = """
import json, sys
print("(a) timing something")
ratio = float(sys.argv[1]) if len(sys.argv) > 1 else 2.5
print(json.dumps({"ratio": ratio, "a_s": 1.25, "b_s": 3.5, "per": {"x": [1, 2]}}))
"""


@pytest.fixture
def clean(monkeypatch):
    """The tree counts as clean at a known commit (the test checkout itself may have changes)."""
    monkeypatch.setattr(bench, "git_state", lambda: ("c0ffee" * 6 + "abcd", False))


def _script(tmp_path, body=SCRIPT, name="bench_fake.py"):
    path = tmp_path / name
    path.write_text(textwrap.dedent(body))
    return path


def test_a_benchmark_is_recorded_with_its_result_and_provenance(tmp_path, clean, capsys):
    led = tmp_path / "ledger"
    path = record_benchmark(_script(tmp_path), ["4.5"], label="idle", root=led)
    assert "(a) timing something" in capsys.readouterr().out  # shown as it runs
    assert path.parent == led / "benchmarks" / "bench_fake"
    rec = json.loads(path.read_text())
    assert rec["benchmark"] == "bench_fake" and rec["label"] == "idle" and rec["args"] == ["4.5"]
    assert rec["result"] == {"ratio": 4.5, "a_s": 1.25, "b_s": 3.5, "per": {"x": [1, 2]}}
    prov = rec["provenance"]
    assert prov["command"].startswith("python ") and prov["command"].endswith("bench_fake.py 4.5")
    assert prov["commit"].startswith("c0ffee") and prov["dirty"] is False
    assert prov["seconds"] > 0 and prov["started"] and prov["versions"]["torch"]
    assert isinstance(prov["load_before"], float) and isinstance(prov["load_after"], float)
    (r,) = benchmark_records(led)
    assert r.result["ratio"] == 4.5 and r.args == ("4.5",) and r.path == path


def test_dirty_trees_failed_scripts_and_missing_json_record_nothing(tmp_path, monkeypatch):
    led = tmp_path / "ledger"
    script = _script(tmp_path)
    monkeypatch.setattr(bench, "git_state", lambda: ("abc", True))
    with pytest.raises(RunError, match="uncommitted changes.*--allow-dirty"):
        record_benchmark(script, root=led, echo=False)
    path = record_benchmark(script, root=led, allow_dirty=True, echo=False)
    assert json.loads(path.read_text())["provenance"]["dirty"] is True
    path.unlink()
    failing = _script(tmp_path, "import sys\nprint('{}')\nsys.exit(3)\n", "bench_fail.py")
    with pytest.raises(RunError, match="exit 3"):
        record_benchmark(failing, root=led, allow_dirty=True, echo=False)
    no_json = _script(tmp_path, "print('done')\n", "bench_text.py")
    with pytest.raises(RunError, match="not a JSON object.*done"):
        record_benchmark(no_json, root=led, allow_dirty=True, echo=False)
    with pytest.raises(RunError, match="no such benchmark"):
        record_benchmark(tmp_path / "nope.py", root=led, echo=False)
    assert benchmark_records(led) == []


def test_the_cli_passes_arguments_through_and_lists(tmp_path, clean, capsys):
    led = tmp_path / "ledger"
    args = ["evidence", "bench", str(_script(tmp_path)), "--label", "busy", "--ledger", str(led)]
    code, out, err = cli([*args, "--json", "--", "7"], capsys)
    assert code == 0, err
    recorded = json.loads(out)["recorded"]
    assert json.loads(open(recorded).read())["result"]["ratio"] == 7.0
    code, out, _ = cli(["evidence", "list", "--benchmarks", "--ledger", str(led), "--json"], capsys)
    (row,) = json.loads(out)
    assert row["benchmark"] == "bench_fake" and row["label"] == "busy" and row["path"] == recorded


def test_bench_blocks_are_drawn_from_the_records(tmp_path, clean):
    led = tmp_path / "ledger"
    script = _script(tmp_path)
    record_benchmark(script, ["2"], label="idle, 2 threads", root=led, echo=False)
    record_benchmark(script, ["3"], label="busy", root=led, echo=False)
    spec = et.parse_spec("bench bench_fake 'label=idle*' value=ratio value=per.x.1 value=missing")
    text = "\n".join(et.bench_block(spec, led))
    assert "| idle, 2 threads | 2 | 2 | — |" in text and "busy" not in text
    assert "[1] `python " in text and "bench_fake.py 2`" in text and "`c0ffeec` " in text
    spec = et.parse_spec("bench bench_fake rows=a,b value={row}_s value=ratio")
    rows = [x for x in et.bench_block(spec, led) if x.startswith("| busy")]
    assert [x.split(" | ")[1:4] for x in rows] == [["a", "1.25", "3"], ["b", "3.5", "3"]]
    spec = et.parse_spec("bench bench_other value=ratio")
    assert et.bench_block(spec, led) == [
        "`benchmarks/bench_other.py`: not run (not yet in the ledger)."
    ]
    for bad in ("bench bench_fake", "bench a b value=x", "claim x rows=a", "run demo/q label=x"):
        with pytest.raises(et.SpecError):
            et.parse_spec(bad)


def test_ledger_files_read_their_keys_and_lists_as_tuples():
    """Run and benchmark records are read one way (``LedgerFile.load``): a renamed key is found,
    a tuple field holds a tuple (records stay hashable), every field is the file's value."""
    import json

    from nclab.evidence.bench import benchmark_records
    from nclab.evidence.ledger import Ledger

    bench = benchmark_records()
    assert bench, "the committed ledger has benchmark records"
    b = bench[0]
    data = json.loads(b.path.read_text())
    assert b.name == data["benchmark"] and b.label == data["label"]
    assert isinstance(b.args, tuple) and list(b.args) == data["args"]
    run = next(iter(Ledger().records()))
    data = json.loads(run.path.read_text())
    assert isinstance(run.seeds, tuple) and list(run.seeds) == data["seeds"]
    assert run.experiment == data["experiment"] and run.started == data["provenance"]["started"]
    hash(run.seeds)
