"""Instance texts are computed from the presets, and each paper value has one home.

Every registered claim's instance text, for both modes, is checked against a recomputation from
the resolved configs done here (its own flattening, bookkeeping and comparison): the kind of
instance, every differing key with its values, no key that does not differ, the keys the paper
leaves open. The claims hold no hand-written instance text, and the claim modules no number that
the experiments' ``PAPER`` (what the paper reports) holds.
"""

import ast
import importlib
import io
import re
import tokenize
from dataclasses import fields
from pathlib import Path

import pytest

from nclab.config import valid_keys
from nclab.errors import ConfigError
from nclab.evidence import Ledger, default_root
from nclab.experiments import get_experiment
from nclab.experiments.protocol import Experiment, PaperSetting
from nclab.reproduce import Claim, RunSpec, all_claims
from nclab.reproduce.instance import fmt_value, paper_preset
from nclab.reproduce.judge import from_ledger
from nclab.reproduce.registry import claim_modules, select

MODES = ("quick", "medium", "full")


def _flat(data, prefix=""):
    out = {}
    for key, value in data.items():
        if isinstance(value, dict) and value:
            out.update(_flat(value, f"{prefix}{key}."))
        else:
            out[prefix + key] = value
    return out


def _setting(experiment, preset, overrides=None):
    """The resolved config of ``preset`` as dotted keys, bookkeeping keys left out."""
    exp = get_experiment(experiment)
    skip = set(exp.bookkeeping_keys())
    cfg = exp.config(preset, dict(overrides or {}))
    return {k: v for k, v in _flat(cfg.to_dict()).items() if k not in skip}


def _named(key: str, text: str) -> bool:
    """Whether the dotted ``key`` appears in ``text`` as a key (not inside a longer one)."""
    return re.search(rf"(?<![\w.]){re.escape(key)} ", text) is not None


def _parts(text: str, aliases: list[str]) -> dict[str, str]:
    """The part of a claim's text about each run (several runs: ``"alias: ..."`` in turn)."""
    if len(aliases) == 1:
        return {aliases[0]: text}
    starts, at = [], 0
    for alias in aliases:
        at = text.index(f"{alias}: ", at)
        starts.append(at)
    ends = [*starts[1:], len(text)]
    return {a: text[i:j] for a, i, j in zip(aliases, starts, ends, strict=True)}


def _runs():
    for c in all_claims():
        for mode in MODES:
            if c.runnable(mode):
                yield c, mode


@pytest.mark.parametrize("claim,mode", list(_runs()), ids=lambda x: getattr(x, "id", x))
def test_instance_text_is_the_computed_one(claim, mode):
    whole = claim.instance(mode)
    kinds, several = [], len(claim.runs) > 1
    parts = _parts(whole, list(claim.runs))
    for alias, spec in claim.runs.items():
        text = parts[alias]
        exp = get_experiment(spec.experiment)
        ours = _setting(spec.experiment, spec.preset(mode), spec.set)
        paper, _ = paper_preset(spec)
        # our own instance is compared with our full run (its overrides too: a claim's runs may
        # differ only in them); a paper preset with the paper's setting, our overrides being ours
        ref = (
            _setting(spec.experiment, paper)
            if paper
            else _setting(spec.experiment, spec.full, spec.set)
        )
        differ = [k for k in ours.keys() | ref.keys() if ours.get(k) != ref.get(k)]
        same = [k for k in ours if k not in differ]
        label = "paper" if paper else "full"
        if paper is None:
            kinds.append("ours")
            assert "no preset runs the paper's setting (" in text, (claim.id, text)
        elif differ:
            kinds.append("smaller")
        else:
            kinds.append("paper")
            # the full mode names what the paper leaves open, with the preset's values
            for key in exp.paper[paper].unstated:
                assert f"{key} {fmt_value(ref[key])}" in text, (claim.id, key, text)
        setting = exp.paper.get(paper, PaperSetting())
        for key in differ:
            assert _named(key, text), (claim.id, mode, key, text)
            mine = f"{key} {fmt_value(ours.get(key, '—'))}"
            assert mine in text, (claim.id, mine, text)
            if key not in setting.unused:
                which = "paper preset" if key in setting.unstated else label
                assert f"{mine} ({which}: {fmt_value(ref.get(key, '—'))})" in text, (key, text)
        for key in same:  # a key named in the text differs, or is one the paper leaves open
            if _named(key, text):
                assert key in setting.unstated and kinds[-1] == "paper", (claim.id, key, text)
    if set(kinds) == {"paper"}:
        assert whole.startswith("paper setting"), (claim.id, whole)
    elif set(kinds) == {"ours"} and not several:
        assert whole.startswith("our instance: no preset runs the paper's setting ("), whole
    else:
        assert whole.startswith("smaller: "), (claim.id, whole)


def test_a_quick_preset_that_is_the_paper_preset_says_paper_setting():
    seen = 0
    for c in all_claims():
        specs = c.runs.values()
        if all(s.quick is not None and s.quick == paper_preset(s)[0] for s in specs):
            seen += 1
            assert c.instance("quick") == c.instance("full"), c.id
            assert c.instance("quick").startswith("paper setting"), c.id
    assert seen >= 3  # the ufm claims whose quick preset is the paper's figure


def test_every_claim_run_names_its_paper_setting_or_why_there_is_none():
    """No registered run falls back to the default ("declares no paper setting"): each has a
    paper preset (declared by its experiment) or an explicit ``no_paper`` reason."""
    for c in all_claims():
        for alias, spec in c.runs.items():
            paper, reason = paper_preset(spec)
            assert paper is not None or spec.no_paper, (c.id, alias, reason)
            if paper is not None:
                assert paper in get_experiment(spec.experiment).paper, (c.id, paper)


def test_paper_presets_declare_existing_keys_and_their_unstated_keys_reach_the_full_text():
    declared = 0
    for name in ("feature-collapse", "fc-transformer", "fc-grammar", "ufm", "resnet-ufm"):
        exp = get_experiment(name)
        keys = set(valid_keys(exp.config_cls))
        for preset, setting in exp.paper.items():
            declared += 1
            assert preset in exp.presets
            assert setting.unstated, f"{name} {preset}: the paper leaves something open"
            assert set(setting.unstated) | set(setting.unused) <= keys, (name, preset)
    for name in ("linear-head", "deep-ln"):
        exp = get_experiment(name)
        keys = set(valid_keys(exp.config_cls))
        assert exp.paper, name
        for setting in exp.paper.values():
            assert set(setting.unstated) | set(setting.unused) <= keys, name
    assert declared >= 20
    for c in all_claims():
        text = c.instance("full")
        if not text.startswith("paper setting"):
            continue
        for spec in c.runs.values():
            exp = get_experiment(spec.experiment)
            for key in exp.paper[paper_preset(spec)[0]].unstated:
                assert _named(key, text), (c.id, key, text)


def test_a_paper_setting_with_a_key_the_config_lacks_is_refused():
    demo = get_experiment("demo")
    with pytest.raises(ConfigError, match="train.momentm"):
        Experiment(
            "demo2",
            "doc",
            demo.config_cls,
            {"p": {}},
            paper={"p": PaperSetting(unstated=("train.momentm",))},
        )
    with pytest.raises(ConfigError, match="not a preset"):
        Experiment("demo2", "doc", demo.config_cls, {}, paper={"p": PaperSetting()})
    with pytest.raises(ConfigError, match="not both"):
        RunSpec("demo", "q", "f", paper="p", no_paper="why")


def test_no_claim_has_a_hand_written_instance_text():
    assert "smaller" not in {f.name for f in fields(Claim)}
    with pytest.raises(TypeError):
        Claim(  # the keyword smaller= is what is refused
            id="x/y",
            paper="p",
            where="w",
            claim="c",
            runs={"main": RunSpec("demo", None, "f")},
            measured={},
            checks=[],
            smaller={"quick": "typed by hand"},
            check_paths=False,
        )
    for module in claim_modules():
        source = Path(importlib.import_module(module).__file__).read_text()
        assert "smaller=" not in source and "instance=" not in source, module


# --- paper values: one home ----------------------------------------------------------------------


def _numbers(value):
    if isinstance(value, bool):
        return
    if isinstance(value, int | float):
        yield float(value)
    elif isinstance(value, dict):
        for v in value.values():
            yield from _numbers(v)
    elif isinstance(value, list | tuple):
        for v in value:
            yield from _numbers(v)


def _reported():
    """Every number the experiments' ``PAPER`` (what the paper reports) holds, by experiment."""
    out = {}
    for name in ("feature-collapse", "fc-transformer", "fc-grammar"):
        package = importlib.import_module(
            get_experiment(name).config_cls.__module__.rpartition(".")[0]
        )
        out[name] = set(_numbers(package.PAPER))
    return out


def test_claim_modules_hold_no_number_the_paper_values_hold():
    """A number the paper reports lives in the experiment's PAPER; no claim module types it again,
    as a number or inside a string (0 and 1 are everywhere: not distinctive)."""
    reported = _reported()
    # 1e-4 (App. A.1's final loss) is also the UFM claims' tolerance on a relative gap
    every = set().union(*reported.values()) - {0.0, 1.0, 1e-4}
    assert {1.42214, 0.61602, 1.41, 0.13, 0.45, 0.66} <= every
    for module in claim_modules():
        mod = importlib.import_module(module)
        source = Path(mod.__file__).read_text()
        # only the modules whose claims run those experiments: another paper's module may hold
        # the same number by chance, as a number (jacot/thm44-nc1's solver tolerance 1e-3 is
        # Feature Collapse's λ) or in prose (a noise norm of 0.45)
        experiments = {s.experiment for c in mod.CLAIMS for s in c.runs.values()}
        if experiments & set(reported):
            tokens = tokenize.generate_tokens(io.StringIO(source).readline)
            numbers = {
                float(ast.literal_eval(t.string.replace("_", "")))
                for t in tokens
                if t.type == tokenize.NUMBER and not t.string.endswith("j")
            }
            assert not numbers & every, (module, sorted(numbers & every))
            strings = [
                n.value
                for n in ast.walk(ast.parse(source))
                if isinstance(n, ast.Constant) and isinstance(n.value, str)
            ]
            typed = {float(m) for s in strings for m in re.findall(r"\d+\.\d+", s)}
            assert not typed & every, (module, sorted(typed & every))


def test_feature_collapse_claims_report_the_experiments_paper_values():
    """What the Feature Collapse claims report as the paper's numbers are PAPER's, and their texts
    quote them."""
    reported = _reported()["feature-collapse"]
    seen = 0
    for c in all_claims():
        if {s.experiment for s in c.runs.values()} != {"feature-collapse"}:
            continue
        for label, value in c.paper_values.items():
            if isinstance(value, int | float) and not isinstance(value, bool):
                seen += 1
                assert float(value) in reported, (c.id, label, value)
    assert seen >= 15
    fig3 = next(c for c in all_claims() if c.id == "feature-collapse/fig3")
    assert "1.41 ± 0.13 measured vs 1.42214 predicted" in fig3.claim
    assert fig3.paper_values["word norm (fc-thm1)"] == 1.42214


def test_the_instance_judged_names_the_seeds_of_the_run_judged():
    """A recorded run of the same preset may hold more seeds than the claim runs (a claim that
    shares it runs more): the instance text of the scale judged counts those, so a run with the
    paper's seed count is the paper's setting, and one with fewer says so."""
    (fig2,) = select(["tirer-bruna/fig2-bias-free"])  # the paper gives no seed count
    assert fig2.instance("full").endswith("seeds 3")
    assert fig2.instance("full", {"main": 5}).endswith("seeds 5")
    (jacot,) = select(["jacot/fig1-resnet20"])  # the paper: 5 seeds; the medium preset runs 3
    (spec,) = jacot.runs.values()
    assert spec.seeds_at("full") == 5 and "(paper: 5)" not in jacot.instance("full")
    assert "seeds 3 (paper: 5)" in jacot.instance("full", {"main": 3})
    ledger = Ledger(default_root())
    res = from_ledger(fig2, "full", ledger)
    recorded = len(ledger.find("ufm", "tb-fig2-nobias", {})[0].seeds)
    assert res.seeds == recorded and res.instance.endswith(f"seeds {recorded}")
