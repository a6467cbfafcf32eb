"""Issue 12, item 8: the command line's help, lists and messages.

``nclab theory NAME --help`` lists NAME's parameters; the list, the help and the errors spell a
parameter as its option (``--lambda-w``); ``reproduce --list`` fits 80 columns; ``demo`` says where
it writes; ``--help`` and the ``--list`` verbs import no torch.
"""

from __future__ import annotations

import inspect
import json
import subprocess
import sys

import pytest

from nclab.theory import PREDICTIONS, get_prediction
from test_cli_theory import run  # main(args) -> (exit code, stdout, stderr)


def option_blocks(help_text: str) -> dict[str, str]:
    """``{"--lambda-w": "its line and continuation lines"}`` of ``nclab theory NAME --help``."""
    blocks: dict[str, str] = {}
    current = None
    for line in help_text.splitlines():
        if line.startswith("  --"):
            current = line.split()[0]
            blocks[current] = line
        elif current and line.startswith("    "):
            blocks[current] += " " + line.strip()
        else:
            current = None
    return blocks


@pytest.mark.parametrize("name", list(PREDICTIONS))
def test_theory_name_help_lists_every_parameter(name, capsys):
    code, out, _ = run(["theory", name, "--help"], capsys)
    assert code == 0 and f"Usage: nclab theory {name}" in out
    blocks = option_blocks(out)
    for p, par in inspect.signature(get_prediction(name)).parameters.items():
        block = blocks[f"--{p.replace('_', '-')}"]
        if par.default is inspect.Parameter.empty:
            assert block.endswith("[required]"), block
        else:
            assert block.endswith(f"[default {par.default!r}]"), block


def test_ufm_mse_help_gives_meaning_and_defaults(capsys):
    _, out, _ = run(["theory", "ufm-mse", "--help"], capsys)
    assert "--lambda-w FLOAT" in out and "weight decay on the classifier W" in out
    assert "number of classes" in out and "[required]" in out
    _, out, _ = run(["theory", "ufm-ce", "--help"], capsys)
    assert "--lambda-b FLOAT" in out and "[default 0.0]" in out and "[default 'none']" in out


def test_list_help_and_errors_spell_parameters_as_options(capsys):
    _, out, _ = run(["theory", "--list"], capsys)
    assert "--lambda-w" in out and "lambda_w" not in out
    base = ["theory", "ufm-mse", "--K", "3", "--n", "2", "--d", "4", "--lambda-h", "1"]
    code, _, err = run([*base, "--lambda-w", "-1"], capsys)
    assert code == 2 and "--lambda-w must be" in err and "lambda_w" not in err
    code, _, err = run([*base, "--lambda_w", "x"], capsys)  # as the user typed it
    assert code == 2 and "--lambda_w: cannot read 'x'" in err
    code, _, err = run([*base, "--lambda-v", "1"], capsys)
    assert code == 2 and "did you mean --lambda-w" in err
    code, out, _ = run(["theory", "--list", "--json"], capsys)
    assert json.loads(out)["ufm-mse"]["options"][-2:] == ["--lambda-w", "--lambda-h"]


def test_reproduce_list_gives_each_claim_whole_lines_and_its_sentence(capsys):
    """``--list`` to a file or a pipe: a line per claim (id, times, where in the paper), then the
    claim's first sentence, nothing cut; ``--verbose``: a block of plain lines per claim with
    the claim in full, never squeezed into columns."""
    from nclab.reproduce.registry import all_claims

    claims = all_claims()
    code, out, _ = run(["reproduce", "--list"], capsys)
    lines = out.rstrip("\n").splitlines()
    assert code == 0 and "…" not in out
    assert [li.split()[0] for li in lines[1 : 1 + 2 * len(claims) : 2]] == [c.id for c in claims]
    assert [li.strip() for li in lines[2 : 2 + 2 * len(claims) : 2]] == [c.sentence for c in claims]
    assert all(" ".join(c.where.split()) in out for c in claims)
    _, verbose, _ = run(["reproduce", "--list", "--verbose"], capsys)
    for c in claims:
        assert f"    claim: {' '.join(c.claim.split())}\n" in verbose
    assert max(len(li) for li in verbose.splitlines()) > 200  # long lines kept whole


def test_reproduce_output_to_a_file_breaks_no_line(capsys, tmp_path, monkeypatch):
    """The console report redirected (not a terminal): each claim's headline is one line and its
    sentence the next, whatever the width; booleans read as words."""
    import re

    from nclab.reproduce.registry import all_claims

    monkeypatch.setenv("COLUMNS", "60")
    code, out, _ = run(["reproduce", "--from-ledger", "--out", str(tmp_path / "r")], capsys)
    assert code == 0
    lines = out.splitlines()
    for c in all_claims():
        (head,) = [i for i, li in enumerate(lines) if li.startswith(f"{c.id} — ")]
        assert lines[head + 1] == f"    states: {c.sentence}"
        assert re.search(r"(reproduced|partial|contradicted|inconclusive|not run)", lines[head])
    assert "threshold True" not in out and "threshold False" not in out


def test_demo_says_where_it_writes(capsys, monkeypatch, tmp_path):
    import nclab.experiments as experiments

    seen = {}

    def fake_run(exp, cfg, out_dir, **kw):
        seen["out"] = out_dir
        return {"layers": {}, "train_acc": 1.0, "test_acc": 1.0, "seconds": 0.0}

    monkeypatch.setattr(experiments, "run_experiment", fake_run)
    monkeypatch.chdir(tmp_path)
    code, _, err = run(["demo", "--json"], capsys)
    assert code == 0 and str(seen["out"]).startswith("runs/demo-")
    assert f"writing the run directory {seen['out']} (in {tmp_path})" in err and "--out" in err
    code, _, err = run(["demo", "--json", "--out", str(tmp_path / "d")], capsys)
    assert seen["out"] == tmp_path / "d" and str(tmp_path / "d") in err
    _, out, _ = run(["demo", "--help"], capsys)
    assert "--out" in out and "runs/" in out


TORCH_FREE = [
    ["--help"],
    ["theory", "--list"],
    ["theory", "ufm-mse", "--help"],
    ["reproduce", "--list"],
    ["run", "--list"],
    ["--version"],
    ["version"],
]


@pytest.mark.parametrize("args", TORCH_FREE, ids=" ".join)
def test_help_and_list_verbs_import_no_torch(args):
    """Neither torch nor scipy.optimize (0.4 s to import): --help and --list stay under 0.5 s."""
    code = (
        "import contextlib, io, sys\n"
        "from nclab.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        "    try:\n"
        f"        main({args!r})\n"
        "    except SystemExit:\n"
        "        pass\n"
        "print('torch' in sys.modules or 'scipy.optimize' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split()[-1] == "False", out.stdout + out.stderr


def test_theory_list_shows_whole_sentences_without_markup(capsys):
    _, out, _ = run(["theory", "--list"], capsys)
    assert ":math:" not in out and ":func:" not in out and "``" not in out
    jacot = next(li for li in out.splitlines() if li.startswith("jacot-bounds:"))
    assert "et al." in jacot and "Theorem 3.1" in jacot  # not cut at "et al."


def test_run_list_says_when_an_experiment_has_no_presets(capsys, monkeypatch):
    import nclab.experiments as experiments
    from nclab.experiments.protocol import Experiment

    bare = Experiment("bare", "no presets", object, train=lambda cfg, unit, d, ctx: {})
    monkeypatch.setattr(experiments, "experiment_names", lambda: ["bare"])
    monkeypatch.setattr(experiments, "get_experiment", lambda name: bare)
    _, out, _ = run(["run", "--list"], capsys)
    assert "presets: none (nclab run NAME runs its defaults)" in out


def test_bootstrap_installs_numpy_with_torch():
    """torch imported without numpy warns 'Failed to initialize NumPy' on the first ./nclab."""
    from pathlib import Path

    script = (Path(__file__).resolve().parents[1] / "scripts" / "bootstrap.sh").read_text()
    install = [li for li in script.splitlines() if "pip install" in li and '"torch==' in li]
    assert install and all("numpy" in li for li in install)


# --- issue 27 -------------------------------------------------------------------------------------
def test_version_as_an_option_and_a_verb(capsys):
    """``nclab --version`` was "No such option"; both now print the versions (without importing
    torch: see test_help_and_list_verbs_import_no_torch)."""
    code, out, _ = run(["--version"], capsys)
    assert code == 0 and out.startswith("nclab ") and "torch " in out
    code, verb, _ = run(["version"], capsys)
    assert code == 0 and verb == out
    code, js, _ = run(["version", "--json"], capsys)
    assert json.loads(js)["torch"] == out.split("torch ")[1].split()[0]


def test_theory_list_has_no_latex(capsys):
    _, out, _ = run(["theory", "--list"], capsys)
    assert "\\" not in out, [li for li in out.splitlines() if "\\" in li]
    assert "κ(W_L)" in out and "‖Θ‖_op" in out


def test_sweep_help_shows_its_text(capsys):
    _, out, _ = run(["sweep", "--help"], capsys)
    text = " ".join(out.replace("│", " ").split())
    assert "experiment, preset, [set] and [axes] tables" in text


@pytest.mark.parametrize(
    "args, suggestion",
    [
        (["theory", "ufmm-mse"], "did you mean 'ufm-mse'"),
        (["run", "ufm", "--preset", "tb-fig2-bia"], "did you mean 'tb-fig2-bias'"),
        (["run", "ufmm"], "did you mean 'ufm'"),
        (["run", "ufm", "--preset", "tb-fig2-bias", "--set", "train.lrr=0.1"], "did you mean 'lr'"),
    ],
)
def test_unknown_names_get_the_close_ones(args, suggestion, capsys):
    code, _, err = run(args, capsys)
    assert code == 2 and suggestion in err and err.count("\n") == 1
