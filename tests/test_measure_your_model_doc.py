"""docs/measure-your-model.md runs as written: its Python blocks in order as one script, and the block
headed ``# file: collapse_ddp.py`` as its own script under torchrun with 2 gloo processes."""

import re
from pathlib import Path

import pytest

from torchrun import torchrun

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "measure-your-model.md"
FILE = re.compile(r"^# file: (\S+)")


def blocks() -> tuple[list[str], dict[str, str]]:
    """(the in-process blocks in order, {file name: block} for blocks headed '# file: NAME')."""
    inline, files = [], {}
    for block in re.findall(r"```python\n(.*?)```", DOC.read_text(), flags=re.S):
        m = FILE.match(block)
        if m:
            files[m.group(1)] = block
        else:
            inline.append(block)
    return inline, files


def test_the_tutorial_runs_as_one_script(tmp_path, monkeypatch, capsys):
    pytest.importorskip("accelerate", reason="the HF Trainer needs accelerate>=1.1")
    monkeypatch.chdir(tmp_path)
    inline, _ = blocks()
    assert len(inline) >= 6
    scope = {"__name__": "measure_your_model"}
    exec(compile("\n".join(inline), str(DOC), "exec"), scope)
    out = capsys.readouterr().out
    assert "ResNet18 from " in out and "token classes measured" in out
    # Lightning: the collapse metrics in the validation rows, early stopping on nc1
    rows = scope["rows"]
    assert rows and all(r["val_loss"] and r["collapse/fc:input/nc4"] for r in rows)
    assert scope["stop"].stopped_epoch > 0 and len(rows) < 20
    # the Trainer: in the evaluation's entries, and the best model kept on nc1
    entries = [e for e in scope["hf_trainer"].state.log_history if "eval_loss" in e]
    nc1 = [e["eval_collapse/classifier:input/nc1"] for e in entries]
    assert len(nc1) >= 2 and scope["hf_trainer"].state.best_metric == min(nc1)
    assert out.count("epoch ") >= 2  # the Trainer's per-epoch collapse lines
    assert scope["result"].stats["lm_head:input"].num_samples == scope["tokens"] > 0
    # the vocabulary's tokens that never occur as a next token are left out, not an error
    assert 0 < len(scope["result"].classes) < scope["vocab"]
    assert sorted(scope["metric"].skipped) == ["nc4", "ncc_acc"]


def test_the_ddp_script_runs_under_torchrun(tmp_path):
    _, files = blocks()
    script = tmp_path / "collapse_ddp.py"
    script.write_text(files["collapse_ddp.py"])
    run = torchrun(script)
    assert "2 processes against one" in run.stdout
