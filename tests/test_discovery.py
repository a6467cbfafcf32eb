"""Experiments and claims are found where they live, not listed: every subpackage of
nclab.experiments that declares ``EXPERIMENT``, every module of nclab.reproduce.claims that defines
``CLAIMS``, and those of plugins (entry points, ``NCLAB_EXPERIMENTS`` / ``NCLAB_CLAIMS``)."""

from __future__ import annotations

import importlib
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from nclab.errors import ConfigError
from nclab.experiments import catalog
from nclab.experiments.protocol import Experiment, Smoke
from nclab.reproduce import registry

PKG = Path(__file__).resolve().parents[1] / "src" / "nclab"


def test_every_experiment_package_is_found_by_its_folder():
    folders = {
        d.name
        for d in (PKG / "experiments").iterdir()
        if (d / "__init__.py").is_file() and "EXPERIMENT = " in (d / "__init__.py").read_text()
    }
    assert "common" not in folders and {"ufm", "feature_collapse", "linear_head"} <= folders
    found = catalog.builtin_modules()
    assert found == {f.replace("_", "-"): f"nclab.experiments.{f}" for f in sorted(folders)}
    assert list(found) == sorted(found)  # a deterministic order
    for name in found:  # the folder's name is the experiment's
        assert catalog.get_experiment(name).name == name


def test_naming_the_experiments_imports_none():
    code = (
        "import sys; from nclab.experiments import experiment_names; n = experiment_names(); "
        "print(len(n), any(m.startswith('nclab.experiments.') and m.count('.') == 2 "
        "and m.split('.')[2] in {x.replace('-', '_') for x in n} for m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    count, imported = out.stdout.split()
    assert int(count) >= 10 and imported == "False"


def test_assigns_reads_top_level_assignments_only(tmp_path):
    mod = tmp_path / "m.py"
    mod.write_text("X = 1\nCLAIMS: list = []\ndef f():\n    EXPERIMENT = 2\n")
    assert catalog.assigns(mod, "CLAIMS") and catalog.assigns(mod, "X")
    assert not catalog.assigns(mod, "EXPERIMENT")
    assert not catalog.assigns(tmp_path / "missing.py", "X")


def test_a_package_declaring_another_name_is_refused(monkeypatch):
    monkeypatch.setenv(catalog.ENV, "ufm2=nclab.experiments.ufm")
    with pytest.raises(ConfigError, match="declares experiment 'ufm'.*registered as 'ufm2'"):
        catalog.get_experiment("ufm2")


def test_env_pairs_are_checked(monkeypatch):
    monkeypatch.setenv(catalog.ENV, "no-equals-sign")
    with pytest.raises(ConfigError, match="name=package"):
        catalog.modules()


def _entry_points(group_map):
    def entry_points(group):
        return [SimpleNamespace(name=n, value=v, group=group) for n, v in group_map.get(group, {})]

    return entry_points


def test_entry_points_register_experiments_and_claims(monkeypatch):
    eps = {
        catalog.ENTRY_POINTS: [("ufm-again", "nclab.experiments.ufm")],
        registry.ENTRY_POINTS: [("b", "mod_b"), ("a", "mod_a")],
    }
    monkeypatch.setattr(importlib.metadata, "entry_points", _entry_points(eps))
    catalog.entry_point_modules.cache_clear()
    try:
        assert catalog.modules()["ufm-again"] == "nclab.experiments.ufm"
        monkeypatch.setenv(registry.ENV, "mod_c, mod_a")
        mods = registry.claim_modules()
        builtin = list(registry.builtin_claim_modules())
        assert mods == [*builtin, "mod_a", "mod_b", "mod_c"]  # each once, plugins after
    finally:
        catalog.entry_point_modules.cache_clear()


def test_every_claims_module_is_found_in_name_order():
    folder = PKG / "reproduce" / "claims"
    defining = sorted(
        f"nclab.reproduce.claims.{p.stem}"
        for p in folder.glob("*.py")
        if p.stem != "__init__" and catalog.assigns(p, "CLAIMS")
    )
    assert list(registry.builtin_claim_modules()) == defining
    assert len(defining) >= 12
    ids = [c.id for c in registry.all_claims()]
    by_module = [c.id for m in defining for c in importlib.import_module(m).CLAIMS]
    assert ids == by_module  # the registry's order: the modules' by name, each module's own


def test_an_unknown_claims_module_says_where_it_was_named(monkeypatch):
    monkeypatch.setenv(registry.ENV, "no_such_claims_module")
    with pytest.raises(ConfigError, match="no_such_claims_module.*NCLAB_CLAIMS"):
        registry.all_claims()


# --- the smoke rung: declared by the experiment, beside its presets ---------------------------------


def test_every_experiment_a_claim_runs_declares_its_smoke_rung():
    """What the tests run of a claim's quick runs (tests/test_claim_checks.py) is the experiment's
    own declaration, never a table of the tests."""
    quick = {
        s.experiment for c in registry.all_claims() if c.runnable("quick") for s in c.runs.values()
    }
    missing = [e for e in sorted(quick) if not catalog.get_experiment(e).smoke.overrides]
    assert missing == []


def test_a_smoke_rung_names_existing_presets_and_keys():

    ufm = catalog.get_experiment("ufm")
    over = ufm.smoke.overrides_for("gufm-mse-rates-quick")
    assert (
        over["rates.iters"] == 40
        and ufm.smoke.overrides_for("tb-fig2-nobias")["train.steps"] == 400
    )
    args = ("x", "", ufm.config_cls, ufm.presets)
    with pytest.raises(ConfigError, match="smoke preset 'nope' is not a preset"):
        Experiment(*args, smoke=Smoke({"train.steps": 1}, presets={"nope": {}}))
    with pytest.raises(ConfigError, match="smoke: 'train.stepz'"):
        Experiment(*args, smoke=Smoke({"train.stepz": 1}))
    # the rung resolves to a valid config of every preset it cuts
    for name in catalog.experiment_names():
        exp = catalog.get_experiment(name)
        for preset in exp.smoke.presets:
            exp.config(preset, exp.smoke.overrides_for(preset))
