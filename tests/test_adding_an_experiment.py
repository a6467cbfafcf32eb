"""docs/adding-an-experiment.md, built and run, on both of its paths:

* in the tree: the page's package, claims module and docs page are written into a temporary copy
  of the repository (``src/nclab/experiments/toy/``, ``src/nclab/reproduce/claims/toy.py``,
  ``docs/toy.md``) and nothing else; ``scripts/update_docs.py`` regenerates the docs there, and
  the suite's registry-wide tests run on the copy in a subprocess;
* as a plugin: the same blocks are a package ``toy`` in a temporary folder, registered through
  ``NCLAB_EXPERIMENTS`` / ``NCLAB_CLAIMS``, and run end to end with ``nclab run``, ``nclab run
  --resume``, ``nclab reproduce`` and ``nclab report``.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from test_cli_theory import run  # main(args) -> (exit code, stdout, stderr)

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "adding-an-experiment.md"


def doc_files() -> dict[str, str]:
    """``{"toy/config.py": source, "docs/toy.md": text}``: the page's Python blocks whose first
    line names a file (``# toy/config.py``) and its Markdown blocks whose first line does
    (``<!-- docs/toy.md -->``)."""
    out = {}
    for lang, b in re.findall(r"```(python|markdown)\n(.*?)```", DOC.read_text(), flags=re.S):
        first, _, rest = b.partition("\n")
        pattern = r"# (toy/\w+\.py)" if lang == "python" else r"<!-- (docs/\w+\.md) -->"
        m = re.fullmatch(pattern, first.strip())
        if m:
            out[m.group(1)] = rest if lang == "python" else b
    return out


PACKAGE = ("config", "presets", "train", "schema", "figures", "__init__")


@pytest.fixture
def toy(tmp_path, monkeypatch):
    """The page's package written into ``tmp_path/pkg/toy`` and registered."""
    files = doc_files()
    assert set(files) == {f"toy/{n}.py" for n in PACKAGE} | {"toy/claims.py", "docs/toy.md"}
    for name, src in files.items():
        if not name.startswith("toy/"):
            continue
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
    # each field aggregated as its type declares: the shared size kept, no spread of bookkeeping
    assert s["samples"] == 120 and "samples" not in s["std"] and s["std"]["nc1"] > 0
    assert not {"schema_version", "seconds", "versions", "seed"} & set(s["std"])
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


#: the suite's registry-wide tests: what fails when a new experiment or claim misses a piece
#: (its claims' checks at its smoke rung, its summary type, the layout, the generated docs and its
#: page, the statement inventory, its instance texts, discovery)
REGISTRY_WIDE = [
    "tests/test_claim_checks.py",
    "tests/test_summary_schema.py::test_every_experiment_declares_a_summary_type",
    "tests/test_summary_schema.py::test_summary_types_load_without_torch",
    "tests/test_summary_schema.py::test_no_registered_claim_skips_the_path_check",
    "tests/test_layout.py",
    "tests/test_docs.py",
    "tests/test_statements.py::test_the_inventory_is_sound",
    "tests/test_statements.py::test_outside_claims_are_registered_and_say_why",
    "tests/test_statements.py::test_statement_counts_of_the_real_inventory_add_up",
    "tests/test_instances.py::test_instance_text_is_the_computed_one",
    "tests/test_instances.py::test_a_quick_preset_that_is_the_paper_preset_says_paper_setting",
    "tests/test_instances.py::test_every_claim_run_names_its_paper_setting_or_why_there_is_none",
    "tests/test_instances.py::test_no_claim_has_a_hand_written_instance_text",
    "tests/test_discovery.py",
    "tests/test_diagnoses.py",
]


def _copy_of_the_tree(dest: Path) -> None:
    """The repository's files as git sees them (tracked, and untracked but not ignored), into
    ``dest``: what a contributor's checkout holds."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT,
        capture_output=True,
        check=True,
    ).stdout.decode()
    for rel in filter(None, listed.split("\0")):
        src = ROOT / rel
        if src.is_file():
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / rel)


def test_the_page_adds_an_experiment_in_the_tree(tmp_path):
    """Its package, its claims module and its docs page, written where the page says and nowhere
    else; one command for the generated docs; then the registry-wide tests pass on that tree."""
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("needs the repository's git checkout to copy")
    tree = tmp_path / "repo"
    _copy_of_the_tree(tree)
    assert not (tree / "src/nclab/experiments/toy").exists()
    files = doc_files()
    where = {f"toy/{n}.py": f"src/nclab/experiments/toy/{n}.py" for n in PACKAGE}
    where |= {"toy/claims.py": "src/nclab/reproduce/claims/toy.py", "docs/toy.md": "docs/toy.md"}
    for name, text in files.items():
        (tree / where[name]).parent.mkdir(parents=True, exist_ok=True)
        (tree / where[name]).write_text(text)
    env = {k: v for k, v in os.environ.items() if not k.startswith("NCLAB_")}
    env |= {"PYTHONPATH": str(tree / "src"), "NCLAB_TEST_CLAIMS": "toy/*", "NCLAB_PROGRESS": "0"}
    docs = subprocess.run(
        [sys.executable, "scripts/update_docs.py"],
        cwd=tree,
        env=env,
        capture_output=True,
        text=True,
    )
    assert docs.returncode == 0, docs.stdout + docs.stderr
    assert "`toy/nc1-falls`" in (tree / "docs/reproduce.md").read_text()
    assert "toy/nc1-falls" in (tree / "docs/statements.md").read_text()  # its outside= reason
    assert "not run" in (tree / "docs/toy.md").read_text()  # its blocks, filled: no record yet
    args = [sys.executable, "-m", "pytest", "-v", "-x", "-p", "no:cacheprovider", *REGISTRY_WIDE]
    suite = subprocess.run(args, cwd=tree, env=env, capture_output=True, text=True)
    assert suite.returncode == 0, suite.stdout[-4000:] + suite.stderr[-2000:]
    # the toy's claim was among those checked: each of its checks can fail at its smoke rung
    assert re.search(r"test_every_check_can_fail\[.*toy/nc1-falls.*PASSED", suite.stdout)
