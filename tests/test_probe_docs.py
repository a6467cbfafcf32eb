"""The probe's documentation runs: the example of docs/metrics.md's "Measuring a model" section (the
README's "Measuring collapse" block runs verbatim in tests/test_readme_block.py)."""

from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def python_block(text: str, after: str, last: bool = False) -> str:
    section = text.split(after, 1)[1].split("\n## ", 1)[0]
    blocks = [b.split("```", 1)[0] for b in section.split("```python")[1:]]
    return blocks[-1] if last else blocks[0]


def test_metrics_doc_probe_example_runs():
    code = python_block(
        (ROOT / "docs" / "metrics.md").read_text(), "## Measuring a model", last=True
    )
    exec(code, {"__name__": "probe_doc"})
