"""The README's Python block ("Measuring collapse") runs as it stands, and says which global mean
nc1 uses and how to get Papyan's."""

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def test_the_readme_python_block_runs_verbatim(tmp_path, monkeypatch, capsys):
    pytest.importorskip("transformers")
    pytest.importorskip("lightning")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    text = (ROOT / "README.md").read_text()
    section = text.split("## Measuring collapse", 1)[1].split("\n## ", 1)[0]
    (block,) = re.findall(r"```python\n(.*?)```", section, flags=re.S)
    assert "the mean of the class means" in block and 'global_mean="sample"' in block
    scope = {"__name__": "readme"}
    exec(compile(block, "README.md", "exec"), scope)
    out = capsys.readouterr().out
    metrics, papyan = scope["metrics"], scope["papyan"]
    assert {"nc1", "nc1_rank_norm", "cdnv", "nc4"} <= set(metrics)
    assert papyan["nc1"] == pytest.approx(metrics["nc1"], rel=1e-9)  # balanced: the same mean
    assert set(scope["table"]) == {"transformer"}
    lm = scope["lm"]
    assert lm.forward_passes == lm.batches and "nc1" in lm.result.notes["lm_head:input"]
    assert "next-token classes" in out and "True" in out
    assert scope["callback"].start_epoch == 3
