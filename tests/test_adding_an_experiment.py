"""docs/adding-an-experiment.md, built and run: the page's code blocks are written into a package
``toy`` in a temporary folder, registered through ``NCLAB_EXPERIMENTS`` / ``NCLAB_CLAIMS``, and run
end to end with ``nclab run``, ``nclab run --resume``, ``nclab reproduce`` and ``nclab report``."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest

from test_cli_theory import run  # main(args) -> (exit code, stdout, stderr)

DOC = Path(__file__).resolve().parents[1] / "docs" / "adding-an-experiment.md"


def doc_files() -> dict[str, str]:
    """``{"toy/config.py": source}``: the page's Python blocks whose first line names a file."""
    blocks = re.findall(r"```python\n(.*?)```", DOC.read_text(), flags=re.S)
    out = {}
    for b in blocks:
        first, _, rest = b.partition("\n")
        m = re.fullmatch(r"# (toy/\w+\.py)", first.strip())
        if m:
            out[m.group(1)] = rest
    return out


@pytest.fixture
def toy(tmp_path, monkeypatch):
    """The page's package written into ``tmp_path/pkg/toy`` and registered."""
    files = doc_files()
    names = ("config", "presets", "train", "schema", "figures")
    assert set(files) == {f"toy/{n}.py" for n in names} | {
        "toy/__init__.py",
        "toy/claims.py",
    }
    for name, src in files.items():
        p = tmp_path / "pkg" / name
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(src)
    monkeypatch.syspath_prepend(str(tmp_path / "pkg"))
    monkeypatch.setenv("NCLAB_EXPERIMENTS", "toy=toy")
    monkeypatch.setenv("NCLAB_CLAIMS", "toy.claims")
    yield tmp_path
    for mod in [m for m in sys.modules if m == "toy" or m.startswith("toy.")]:
        del sys.modules[mod]


def test_the_page_runs_end_to_end(toy, capsys):
    out = toy / "runs" / "toy"
    code, stdout, err = run(
        ["run", "toy", "--preset", "toy-quick", "--seeds", "2", "--out", str(out), "--json"],
        capsys,
    )
    assert code == 0, err
    s = json.loads(stdout)
    assert s["experiment"] == "toy" and s["preset"] == "toy-quick" and s["seeds"] == [0, 1]
    assert len(s["per_seed"]) == 2 and s["seconds"] > 0
    assert s["nc1"] < 0.5 * s["nc1_start"]  # the phenomenon the claim states
    assert sorted(p.name for p in (out / "units").iterdir()) == ["seed-0", "seed-1"]
    assert (out / "figures" / "nc1.png").is_file()
    # its code is outside nclab's tree: the run names it by path and content digest
    source = json.loads((out / "provenance.json").read_text())["source"]
    assert source["module"] == "toy" and source["path"] == str((toy / "pkg" / "toy").resolve())
    assert len(source["sha256"]) == 64

    # an interrupted run: seed 1 and the run's summary lost; --resume retrains only seed 1
    kept = (out / "units" / "seed-0" / "metrics.jsonl").stat().st_mtime_ns
    (out / "units" / "seed-1" / "summary.json").unlink()
    (out / "summary.json").unlink()
    code, stdout, err = run(["run", "--resume", str(out), "--json"], capsys)
    assert code == 0, err
    again = json.loads(stdout)
    assert (out / "units" / "seed-0" / "metrics.jsonl").stat().st_mtime_ns == kept
    assert [p["nc1"] for p in again["per_seed"]] == [p["nc1"] for p in s["per_seed"]]
    assert again["nc1"] == s["nc1"]  # the retrained seed gives the same numbers

    # the figures again, from the run directory alone
    (out / "figures" / "nc1.png").unlink()
    code, stdout, err = run(["report", str(out), "--json"], capsys)
    assert code == 0, err
    assert json.loads(stdout)["figures"] == [str(out / "figures" / "nc1.png")]
    assert (out / "figures" / "nc1.png").is_file()


def test_the_page_claim_is_judged(toy, capsys):
    rep = toy / "reproduce"
    args = ["reproduce", "toy/*", "--out", str(rep), "--workers", "1", "--json"]
    code, stdout, err = run(args, capsys)
    assert code == 0, err
    (claim,) = json.loads(stdout)
    assert claim["id"] == "toy/nc1-falls" and claim["outcome"] == "reproduced"
    assert claim["checks"][0]["value"] < 0.5
    assert (rep / "runs" / "toy" / "toy-quick-s2" / "summary.json").is_file()
    code, stdout, err = run(["report", str(rep), "--json"], capsys)
    assert code == 0 and json.loads(stdout)[0]["outcome"] == "reproduced"


def test_a_bad_setting_fails_before_any_work(toy, capsys):
    code, _, err = run(["run", "toy", "--set", "train.lr=-1", "--out", str(toy / "x")], capsys)
    assert code == 2 and "train.lr > 0" in err
    assert not (toy / "x").exists()
