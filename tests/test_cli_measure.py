"""`nclab measure` and the CLI basics: JSON output, one-line errors with exit code 2."""

import json
import re
import subprocess
import sys

import numpy as np
import pytest
import torch

from nclab.cli import main
from reference import metrics as ref_metrics


def run_cli(args, capsys):
    code = 0
    try:
        main(args)
    except SystemExit as exc:
        code = exc.code or 0
    out = capsys.readouterr()
    return code, out.out, out.err


def make(n=120, d=6, k=3, seed=0):
    rng = np.random.default_rng(seed)
    y = np.arange(n) % k
    x = rng.normal(size=(k, d))[y] * 3 + rng.normal(size=(n, d))
    return x.astype(np.float32), y, rng.normal(size=(k, d)), rng.normal(size=k)


def test_measure_npz_json(tmp_path, capsys):
    x, y, w, b = make()
    np.savez(tmp_path / "f.npz", features=x, labels=y, weights=w, bias=b)
    code, out, _ = run_cli(["measure", str(tmp_path / "f.npz"), "--json"], capsys)
    assert code == 0
    res = json.loads(out)
    assert (res["num_samples"], res["num_classes"], res["dim"]) == (120, 3, 6)
    ref = ref_metrics(x.astype(np.float64), y, 3, w, b)
    for key, v in ref.items():
        assert res["metrics"][key] == pytest.approx(v, rel=1e-9), key


def test_measure_pt_and_table(tmp_path, capsys):
    x, y, _, _ = make()
    torch.save({"features": torch.from_numpy(x), "labels": torch.from_numpy(y)}, tmp_path / "f.pt")
    code, out, _ = run_cli(["measure", str(tmp_path / "f.pt")], capsys)
    assert code == 0 and "nc1" in out and "N=120" in out


def test_drop_empty(tmp_path, capsys):
    x, y, w, b = make()
    y = y * 2  # classes 0, 2, 4 of K=5 (weights given for 5 classes)
    w5 = np.vstack([w, np.ones((2, 6))])
    np.savez(tmp_path / "f.npz", features=x, labels=y, weights=w5)
    code, _, err = run_cli(["measure", str(tmp_path / "f.npz")], capsys)
    assert code == 2 and "no samples" in err and "--drop-empty" in err
    code, out, _ = run_cli(["measure", str(tmp_path / "f.npz"), "--drop-empty", "--json"], capsys)
    res = json.loads(out)
    assert code == 0 and res["dropped_classes"] == [1, 3] and res["num_classes"] == 3


BAD = {
    "missing array": ({"features": np.zeros((4, 2))}, "no array 'labels'"),
    "wrong shapes": ({"features": np.zeros((4, 2)), "labels": np.zeros(3, int)}, "shape (4,)"),
    "1D features": ({"features": np.zeros(4), "labels": np.zeros(4, int)}, "2D"),
    "out of range": (
        {
            "features": np.random.rand(4, 2),
            "labels": np.array([0, 1, 2, 3]),
            "weights": np.ones((3, 2)),
        },
        "[0, 3)",
    ),
    "negative label": (
        {"features": np.random.rand(4, 2), "labels": np.array([0, 1, -1, 1])},
        "[0, 2)",
    ),
    "float labels": (
        {"features": np.zeros((4, 2)), "labels": np.array([0.0, 1.5, 0, 1])},
        "labels must be integers",
    ),
    "nan": (
        {
            "features": np.array([[np.nan, 0], [1, 1], [0, 0], [2, 2]]),
            "labels": np.array([0, 1, 0, 1]),
        },
        "NaN or Inf",
    ),
    "inf": (
        {
            "features": np.array([[np.inf, 0], [1, 1], [0, 0], [2, 2]]),
            "labels": np.array([0, 1, 0, 1]),
        },
        "NaN or Inf",
    ),
    "empty class": (
        {"features": np.random.rand(4, 2), "labels": np.array([0, 2, 0, 2])},
        "no samples",
    ),
    "one class": (
        {"features": np.random.rand(4, 2), "labels": np.zeros(4, int)},
        "at least 2 classes",
    ),
    "weights shape": (
        {
            "features": np.random.rand(4, 2),
            "labels": np.array([0, 1, 0, 1]),
            "weights": np.ones((2, 3)),
        },
        "weights must have shape",
    ),
    "bias shape": (
        {
            "features": np.random.rand(4, 2),
            "labels": np.array([0, 1, 0, 1]),
            "bias": np.ones(3),
        },
        "bias must have shape (K,) = (2,)",
    ),
    "no rows": (
        {"features": np.zeros((0, 2)), "labels": np.zeros(0, int)},
        "features must have at least one row",
    ),
}


@pytest.mark.parametrize("case", list(BAD))
def test_bad_input_exits_2_with_one_line(tmp_path, capsys, case):
    arrays, match = BAD[case]
    np.savez(tmp_path / "bad.npz", **arrays)
    code, out, err = run_cli(["measure", str(tmp_path / "bad.npz"), "--json"], capsys)
    assert code == 2, err
    assert out == ""
    assert err.count("\n") == 1 and err.startswith("nclab: error:") and match in err


def test_integer_features_are_measured_as_float64():
    from nclab.measure import measure_arrays

    x, y, _, _ = make()
    xi = torch.from_numpy(np.round(x * 10)).to(torch.int32)
    yi = torch.from_numpy(y).to(torch.int32)
    assert measure_arrays(xi, yi) == measure_arrays(xi.to(torch.float64), yi.long())


def test_unreadable_and_unknown_files(tmp_path, capsys):
    (tmp_path / "x.npz").write_text("garbage")
    code, _, err = run_cli(["measure", str(tmp_path / "x.npz")], capsys)
    assert code == 2 and "x.npz is not a .npz file" in err and "text file" in err
    (tmp_path / "x.csv").write_text("1,2")
    code, _, err = run_cli(["measure", str(tmp_path / "x.csv")], capsys)
    assert code == 2 and "unsupported file type" in err


def test_version_and_help(capsys):
    code, out, _ = run_cli(["version", "--json"], capsys)
    assert code == 0 and "torch" in json.loads(out)
    code, out, _ = run_cli(["--help"], capsys)
    assert code == 0 and "measure" in out and "demo" in out


def test_console_script_exit_code(tmp_path):
    """The installed entry point really exits 2 with one line on stderr."""
    proc = subprocess.run(
        [sys.executable, "-m", "nclab", "measure", str(tmp_path / "none.npz")],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 2
    assert proc.stderr.strip().startswith("nclab: error: file not found")


# --- issue 27: no traceback after the work, errors in the user's words ----------------------------
def _npz(tmp_path, name="f.npz", **extra):
    x, y, w, b = make()
    np.savez(tmp_path / name, features=x, labels=y, **extra)
    return tmp_path / name


def test_save_stats_path_is_checked_before_measuring(tmp_path, capsys, monkeypatch):
    f = _npz(tmp_path)
    for target, match in [
        (tmp_path / "missing" / "s.pt", "the folder .*missing does not exist"),
        (tmp_path, "is a folder: give a file name"),
    ]:
        code, out, err = run_cli(["measure", str(f), "--save-stats", str(target)], capsys)
        assert code == 2 and out == "" and err.count("\n") == 1, err
        assert err.startswith("nclab: error: --save-stats") and re.search(match, err)
    monkeypatch.setattr("nclab.measure.sharded._writable", lambda p: False)  # as root, anywhere
    code, out, err = run_cli(["measure", str(f), "--save-stats", str(tmp_path / "s.pt")], capsys)
    assert code == 2 and out == "" and "not writable" in err and err.count("\n") == 1


def test_a_save_that_fails_comes_after_the_metrics(tmp_path, capsys, monkeypatch):
    f = _npz(tmp_path)

    def full_disk(*args, **kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(torch, "save", full_disk)
    args = ["measure", str(f), "--json", "--save-stats", str(tmp_path / "s.pt")]
    code, out, err = run_cli(args, capsys)
    assert code == 2 and json.loads(out)["metrics"]["nc1"] > 0  # printed before the save
    assert (
        err
        == f"nclab: error: cannot write the statistics to {tmp_path / 's.pt'}: No space left on device\n"
    )
    assert not list(tmp_path.glob("*s.pt*"))  # no partial file


def test_bad_files_in_the_users_words(tmp_path, capsys):
    (tmp_path / "text.npz").write_text("a,b\n1,2\n")
    torch.save(torch.ones(3), tmp_path / "tensor.pt")
    np.save(tmp_path / "array.npy", np.ones(3))
    (tmp_path / "array.npy").rename(tmp_path / "array.npz")
    cases = [
        (["measure", str(tmp_path / "text.npz")], "is not a .npz file (numpy.savez writes a zip"),
        (["measure", str(tmp_path / "array.npz")], "a single .npy array"),
        (["measure", "--stats", str(tmp_path / "text.npz")], "is not a statistics file"),
        (["measure", "--stats", str(tmp_path / "tensor.pt")], "a torch file holding a Tensor"),
        (["measure", "--stats", str(_npz(tmp_path))], "a .npz archive of arrays"),
        (["measure", str(_npz(tmp_path)), "--memory-gb", "-1"], "positive number of GB"),
        (["measure", str(_npz(tmp_path)), "--memory-gb", "1e-9"], "at least 0.001"),
    ]
    for args, match in cases:
        code, out, err = run_cli(args, capsys)
        assert code == 2 and err.count("\n") == 1 and match in err, (args, err)
        for internal in (
            "allow_pickle",
            "inline_container",
            "enforce fail",
            "1073741824",
            "Weights",
        ):
            assert internal not in err, (args, err)


def test_skipped_reasons_in_the_command_lines_terms(tmp_path, capsys):
    code, out, _ = run_cli(["measure", str(_npz(tmp_path)), "--json"], capsys)
    why = json.loads(out)["skipped"]["nc3"]
    assert code == 0 and "add `weights` (K x D) and `bias` (K) arrays" in why
    assert "set_classifier" not in why and "weights=" not in why


def test_workers_on_a_small_dump_run_in_this_process_and_say_so(tmp_path, capsys):
    for i in range(2):
        _npz(tmp_path, f"s{i}.npz")
    code, out, err = run_cli(["measure", str(tmp_path), "--workers", "2", "--json"], capsys)
    assert code == 0 and json.loads(out)["workers"] == 1
    assert "--workers 2: the dump is small" in err and "in this process" in err
