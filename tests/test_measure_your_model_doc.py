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


def section(title: str) -> str:
    """The text of the section whose heading starts with ``## title`` (up to the next one)."""
    text = DOC.read_text()
    start = text.index(f"\n## {title}")
    end = text.find("\n## ", start + 1)
    return text[start : end if end > 0 else len(text)]


def test_the_language_model_section_runs_verbatim(tmp_path, monkeypatch, capsys):
    """Section 8 on its own (its blocks import what they use): the model runs once over the
    corpus, the notes say why nc1 understates, and what it prints is what the page shows."""
    pytest.importorskip("transformers")
    monkeypatch.chdir(tmp_path)
    text = section("8. Language models")
    code = re.findall(r"```python\n(.*?)```", text, flags=re.S)
    assert len(code) == 2
    scope = {"__name__": "language_models"}
    exec(compile("\n".join(code), str(DOC), "exec"), scope)
    out = capsys.readouterr().out
    lm = scope["lm"]
    assert lm.forward_passes == lm.batches > 0
    assert lm.vocab_size == 50257 and 0 < len(lm.result.classes) < 50257
    assert "rank(Sigma_B)" in lm.result.notes["lm_head:input"]["nc1"]
    assert set(scope["deep"].result.to_dict()) == {"transformer.h.0", "lm_head:input"}
    shown = re.findall(r"```text\n(.*?)```", text, flags=re.S)
    assert out.splitlines()[0] == shown[0].splitlines()[0]  # tokens, classes, passes
    assert "noted: nc1, nc2_etf, nc2_w_etf, nc2_of, nc2_w_of" in out
    assert "noted: nc1, nc2_etf, nc2_w_etf, nc2_of, nc2_w_of" in shown[1]
    values = lm.result.to_dict()["lm_head:input"]
    for line in shown[0].splitlines()[1:]:  # the printed values, to the digits shown
        key, value = line.split()
        assert f"{values[key]:.4g}" == value, key
