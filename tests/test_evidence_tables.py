"""scripts/evidence_tables.py: docs blocks generated from a fabricated ledger (claims judged per
scale, runs listed per record), deterministic, and --check failing on an out-of-date block."""

from __future__ import annotations

import importlib.util
import json
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from nclab.experiments import get_experiment
from nclab.reproduce import Check, Claim, RunSpec
from nclab.reproduce.registry import Variant

ROOT = Path(__file__).resolve().parents[1]


def _script():
    spec = importlib.util.spec_from_file_location(
        "evidence_tables", ROOT / "scripts" / "evidence_tables.py"
    )
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod  # its dataclasses look their module up
    spec.loader.exec_module(mod)
    return mod


et = _script()

CLAIM = Claim(
    id="test/acc",
    paper="P",
    where="Fig. 1",
    claim="accuracy is high",
    runs={"main": RunSpec("demo", "q", "f", medium="m", full_needs_gpu=True)},
    measured={"accuracy": "test_acc", "loss | CE": "train_loss", "depths": "depths"},
    # a statement of any instance (depends on no setting): demo has no paper preset
    checks=[Check("accuracy is high", "test_acc", ">=", 0.9, depends_on=())],
    check_paths=False,
)
PRESETS = {"q": {"train.epochs": 1}, "m": {"train.epochs": 2}, "f": {"train.epochs": 3}}
COMMAND = "nclab reproduce other/claim test/acc 'other/*' --scale {} --record --workers 2"


@pytest.fixture
def demo(monkeypatch):
    exp = get_experiment("demo")
    monkeypatch.setattr(exp, "presets", dict(PRESETS))
    return exp


def write_record(root, preset, accs, started, overrides=None, commit="0123456789abcdef", **prov):
    """A ledger record of demo's ``preset`` with one seed per test accuracy in ``accs``."""
    exp = get_experiment("demo")
    overrides = dict(overrides or {})
    mean = sum(accs) / len(accs)
    std = (sum((a - mean) ** 2 for a in accs) / len(accs)) ** 0.5
    per_seed = [
        {"test_acc": a, "train_loss": 0.01 * (i + 1), "by_depth": {"L2": {"nc1": a}}}
        for i, a in enumerate(accs)
    ]
    summary = {
        "test_acc": mean,
        "train_loss": 0.0123456,
        "depths": [2, 5, 13],
        "by_depth": {"L2": {"nc1": 0.5}, "L13": {"nc1": 1.25e-5}},
        "by_lr": {"0": {"lr0": 1.5, "eos": 0.36, "std": {"eos": 0.01}}},
        "ns": [25, 100],
        "gap": [0.3, 0.1],
        "seeds": list(range(len(accs))),
    }
    if len(accs) > 1:
        summary |= {
            "per_seed": per_seed,
            "std": {
                "test_acc": std,
                "train_loss": 0.001,
                "by_depth": {"L2": {"nc1": 0.05}},
                "gap": [0.03, 0.01],
            },
        }
    scale = {"q": "quick", "m": "medium", "f": "full"}.get(preset, preset)
    record = {
        "ledger_version": 1,
        "experiment": "demo",
        "preset": preset,
        "overrides": overrides,
        "seeds": list(range(len(accs))),
        "config": exp.config(preset, overrides).to_dict(),
        "summary": summary,
        "provenance": {
            "command": COMMAND.format(scale),
            "commit": commit,
            "dirty": False,
            "started": started,
        }
        | prov,
    }
    tag = "-" + "x" * 8 if overrides else ""
    folder = Path(root) / "runs" / "demo" / f"{preset}{tag}-s{len(accs)}"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{started.replace(':', '').replace('-', '')}-{len(accs)}.json"
    path.write_text(json.dumps(record))
    return path


def render(text, root, claims=(CLAIM,)):
    return et.updated(text, et.open_ledger(root), list(claims))


def rows_of(block: str) -> dict[str, list[str]]:
    """The table rows by their first cell."""
    out = {}
    for line in block.splitlines():
        if line.startswith("| ") and not line.startswith("| scale"):
            cells = [c.strip() for c in line.strip("|").split(" | ")]
            out[cells[0]] = cells
    return out


DOC = "# x\n\n<!-- evidence: claim test/* -->\nhand-typed, stale\n<!-- /evidence -->\n\nafter\n"


def test_a_claim_block_has_a_row_per_scale_with_verdict_values_and_provenance(demo, tmp_path):
    write_record(tmp_path, "q", [1.0, 0.95, 0.97], "2026-12-01T10:00:00Z")
    write_record(tmp_path, "m", [0.95, 0.5, 0.97], "2026-12-02T11:00:00Z", commit="fedcba987654")
    text = render(DOC, tmp_path)
    assert "hand-typed" not in text and text.endswith("<!-- /evidence -->\n\nafter\n")
    assert "**`test/acc`**: partial at medium size (accuracy-is-high fails 1/3 seeds)" in text
    assert "not run at full size (needs a GPU)" in text
    header = next(ln for ln in text.splitlines() if ln.startswith("| scale"))
    assert header == (
        "| scale | preset | seeds | accuracy | loss \\| CE | depths | outcome | recorded | commit "
        "| command |"
    )
    rows = rows_of(text)
    quick, medium, full = rows["quick"], rows["medium"], rows["full"]
    assert quick[1:6] == ["`q`", "3", "0.9733 ± 0.021", "0.01235 ± 0.001", "2, 5, 13"]
    assert quick[6:] == ["reproduced", "2026-12-01", "`0123456`", "[1]"]
    assert medium[6:] == [
        "partial (accuracy-is-high fails 1/3 seeds)",
        "2026-12-02",
        "`fedcba9`",
        "[2]",
    ]
    assert full[1:3] == ["`f`", "—"] and full[6] == "not run (needs a GPU)"
    # the commands: the record's own, without the other claims of its batched call
    assert (
        "- [1] `nclab reproduce test/acc --scale quick --record --workers 2` "
        "(one call with 2 other claims)"
    ) in text
    assert (
        "- [3] to run: `nclab reproduce test/acc --scale full --record` (on a machine with a GPU)"
        in text
    )


def test_value_globs_pick_columns_and_a_typo_is_an_error(demo, tmp_path):
    write_record(tmp_path, "q", [1.0], "2026-12-01T10:00:00Z")
    text = render(DOC.replace("test/*", "test/acc value=acc* value='loss*'"), tmp_path)
    rows = rows_of(text)
    assert rows["quick"][3:5] == ["1", "0.01235"]  # one seed: no std
    assert "depths" not in text
    with pytest.raises(et.SpecError, match="value='nope' matches no measured value"):
        render(DOC.replace("test/*", "test/acc value=nope"), tmp_path)
    with pytest.raises(et.SpecError, match="no claim matches 'nope/\\*'"):
        render(DOC.replace("test/*", "nope/*"), tmp_path)


def test_an_empty_ledger_says_not_run_and_why(demo, tmp_path):
    text = render(DOC, tmp_path / "empty")
    rows = rows_of(text)
    assert "**`test/acc`**: not run yet (no record in the ledger)." in text
    assert rows["quick"][6] == rows["medium"][6] == "not run (not yet in the ledger)"
    assert rows["full"][6] == "not run (needs a GPU)"
    assert "- [1] to run: `nclab reproduce test/acc --scale quick --record`" in text


def test_a_stale_record_judges_nothing_and_says_so(demo, tmp_path, monkeypatch):
    write_record(tmp_path, "q", [1.0, 0.95, 0.97], "2026-12-01T10:00:00Z")
    monkeypatch.setitem(demo.presets, "q", {"train.epochs": 7})  # the preset changed since
    rows = rows_of(render(DOC, tmp_path))
    assert rows["quick"][6] == "not run (the ledger's record is stale: its preset changed since)"


def test_the_output_is_deterministic_and_the_judge_takes_the_most_seeds(demo, tmp_path):
    write_record(tmp_path, "q", [1.0, 0.95, 0.97], "2026-12-01T10:00:00Z")
    write_record(tmp_path, "q", [0.5], "2026-12-03T10:00:00Z")  # newer, fewer seeds
    first = render(DOC, tmp_path)
    assert render(first, tmp_path) == first
    assert rows_of(first)["quick"][2] == "3"


def test_a_run_block_with_several_patterns_sets_their_presets_side_by_side(demo, tmp_path):
    write_record(tmp_path, "q", [1.0, 0.9], "2026-12-01T10:00:00Z")
    write_record(tmp_path, "f", [0.7, 0.8], "2026-12-02T10:00:00Z")
    doc = "<!-- evidence: run demo/q demo/f value=test_acc -->\n<!-- /evidence -->\n"
    rows = [ln.split(" | ")[0] for ln in render(doc, tmp_path).splitlines() if ln.startswith("| `")]
    assert rows == ["| `f`", "| `q`"]  # both patterns' presets, sorted; not `m`
    with pytest.raises(et.SpecError, match="no preset matching 'zzz'"):
        render("<!-- evidence: run demo/q demo/zzz -->\n<!-- /evidence -->\n", tmp_path)


def test_run_blocks_list_records_with_overrides_and_tables_per_entry(demo, tmp_path):
    write_record(tmp_path, "q", [1.0, 0.95, 0.97], "2026-12-01T10:00:00Z")
    write_record(tmp_path, "q", [0.8], "2026-12-02T10:00:00Z", overrides={"train.lr": 0.5})
    doc = "<!-- evidence: run demo/* value=test_acc value=nope -->\n<!-- /evidence -->\n"
    text = render(doc, tmp_path)
    rows = rows_of(text)
    assert rows["`f`"][-3] == "not run (not yet in the ledger)"
    lines = [ln for ln in text.splitlines() if ln.startswith("| `q`")]
    assert lines == [
        "| `q` | — | 3 | 0.9733 ± 0.021 | — | 2026-12-01 | `0123456` | [1] |",
        "| `q` | `train.lr=0.5` | 1 | 0.8 | — | 2026-12-02 | `0123456` | [1] |",
    ]
    doc = "<!-- evidence: run demo/q each=by_depth value=nc1 -->\n<!-- /evidence -->\n"
    text = render(doc, tmp_path)
    assert "| L2 | 0.5 ± 0.05 |" in text and "| L13 | 1.25e-5 |" in text
    assert "`q`, overrides —, 3 seeds, recorded 2026-12-01 at `0123456`, command [1]:" in text
    doc = "<!-- evidence: run demo/q each=ns value=gap -->\n<!-- /evidence -->\n"
    text = render(doc, tmp_path)  # a list of numbers: a row per number, the lists indexed
    assert "| 25 | 0.3 ± 0.03 |\n| 100 | 0.1 ± 0.01 |" in text
    assert "| 25 | 0.3 |\n| 100 | 0.1 |" in text  # the one-seed record: no std
    doc = "<!-- evidence: run demo/q each=by_lr value=lr0 value=eos -->\n<!-- /evidence -->\n"
    assert "| 0 | 1.5 | 0.36 ± 0.01 |" in render(doc, tmp_path)  # a row's own std tree


def test_check_mode_fails_on_an_out_of_date_block_and_passes_once_updated(demo, tmp_path):
    doc = tmp_path / "doc.md"
    doc.write_text("<!-- evidence: run demo/q value=test_acc -->\nold\n<!-- /evidence -->\n")
    ledger = tmp_path / "ledger"
    write_record(ledger, "q", [1.0], "2026-12-01T10:00:00Z")
    args = [str(doc), "--ledger", str(ledger)]
    assert et.main([*args, "--check"]) == 1
    assert "old" in doc.read_text()  # check mode writes nothing
    assert et.main(args) == 0
    assert et.main([*args, "--check"]) == 0
    write_record(ledger, "q", [1.0, 0.9, 0.8], "2026-12-05T10:00:00Z")  # a new run arrives
    assert et.main([*args, "--check"]) == 1


def test_markers_in_fenced_code_are_examples_not_blocks(demo, tmp_path):
    doc = "```markdown\n<!-- evidence: claim nope/* -->\n<!-- /evidence -->\n```\n" + DOC
    text = render(doc, tmp_path)
    assert text.startswith("```markdown\n<!-- evidence: claim nope/* -->\n<!-- /evidence -->\n```")
    assert "**`test/acc`**" in text and [b.line for b in et.blocks(doc)] == [7]


def test_malformed_blocks_are_errors():
    with pytest.raises(et.SpecError, match="without its"):
        et.blocks("<!-- evidence: claim x -->\n\n<!-- evidence: claim y -->\n<!-- /evidence -->")
    with pytest.raises(et.SpecError, match="starts with 'claim', 'run', 'bench' or 'misses'"):
        et.parse_spec("table x")
    with pytest.raises(et.SpecError, match="EXPERIMENT/PRESET patterns of one experiment"):
        et.parse_spec("run demo")
    with pytest.raises(et.SpecError, match="EXPERIMENT/PRESET patterns of one experiment"):
        et.parse_spec("run demo/a ufm/b")
    assert et.parse_spec("run demo/a 'demo/b*'").patterns == ("demo/a", "demo/b*")
    assert et.parse_spec("claim 'a/*' b value='x y'") == et.Spec("claim", ("a/*", "b"), ("x y",))


def test_numbers_are_formatted_to_a_few_significant_digits():
    assert et.fmt_mean_std(0.19951, 0.002912) == "0.1995 ± 0.0029"
    assert et.fmt_mean_std(1.0, 0.0) == "1 ± 0"
    assert et.fmt_mean_std("type-I", None) == "type-I"
    assert et.fmt_num(1.5e-14) == "1.5e-14" and et.fmt_num(2.5e7) == "2.5e7"


def test_a_variant_has_rows_of_its_own_below_the_claims_ladder(demo, tmp_path):
    """A claim's variant ("with the paper's ..."): a row per scale it runs at, its values and
    verdict from its own records, or "not run" with the command that runs the variants."""
    label = "two epochs more"
    claim = replace(CLAIM, variants=(Variant(label, {"main": {"train.epochs": 4}}, ("medium",)),))
    write_record(tmp_path, "m", [0.95, 0.97, 0.99], "2026-12-02T11:00:00Z")
    text = render(DOC, tmp_path, claims=[claim])
    row = rows_of(text)[f"medium, with {label}"]
    assert row[1:3] == ["`m`", "—"] and row[6] == "not run (not yet in the ledger)"
    assert "to run: `nclab reproduce test/acc --scale medium --variants --record`" in text
    write_record(tmp_path, "m", [0.5, 0.97, 0.6], "2026-12-03T11:00:00Z", {"train.epochs": 4})
    text = render(DOC, tmp_path, claims=[claim])
    rows = rows_of(text)
    assert rows["medium"][6] == "reproduced"  # the claim's own run, not the variant's
    row = rows[f"medium, with {label}"]
    assert row[2:4] == ["3", "0.69 ± 0.2"]  # population std 0.202
    assert row[6] == "contradicted (accuracy-is-high fails 2/3 seeds)" and row[7] == "2026-12-03"
    assert f"with {label}: contradicted at medium size (accuracy-is-high fails 2/3 seeds)" in text
