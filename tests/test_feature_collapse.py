"""The feature-collapse experiment: training h / h*, theory beside it, resume, presets, claims."""

import json
from pathlib import Path

import pytest
import torch

from nclab.config import apply_overrides
from nclab.errors import ConfigError
from nclab.experiments import get_experiment, resume_run, run_experiment
from nclab.experiments.feature_collapse import PAPER, FCConfig
from nclab.experiments.feature_collapse.config import check, weight_decays
from nclab.experiments.feature_collapse.summary import theory_for
from nclab.experiments.feature_collapse.train import Trainer
from nclab.experiments.runner import remeasure
from nclab.experiments.schema import schema_version, validate_summary
from nclab.reproduce import all_claims, lookup
from nclab.reproduce.claims.laurent import CLAIMS
from nclab.runs import RunDir

EXP = get_experiment("feature-collapse")
SUMMARY_KEYS = {
    "test_acc",
    "train_loss",
    "word_norm_mean",
    "word_norm_std",
    "u_norm_mean",
    "collapse_type",
    "embedding_metrics",
    "theory",
    "paper",
    "seconds",
    "untrained",
    "pca_singular_values",
}
LBFGS = {"train.optimizer": "lbfgs", "train.epochs": 30, "train.lbfgs_history": 50}


def config(over: dict | None = None) -> FCConfig:
    """The default config with dotted overrides (``{"data.nw": 60}``), checked."""
    cfg = apply_overrides(FCConfig(), over or {})
    check(cfg)
    return cfg


def train(cfg):
    tr = Trainer(cfg)
    for e in range(cfg.train.epochs):
        tr.train_epoch(e)
        if tr.converged:
            break
    return tr


def test_small_uniform_h_reaches_theorem1():
    """Type-I collapse, and the norms of Theorem 1 for this instance within a few %."""
    cfg = config(
        {"data.nw": 60, "data.L": 12, "data.K": 200, "data.nspl": 10, "model.d": 16} | LBFGS
    )
    tr = train(cfg)
    m, th = tr.measure(full=False), theory_for(cfg)
    assert th["which"] == "fc-thm1"
    assert m["test_acc"] == 1.0 and m["collapse_type"] == "type-I"
    assert m["word_norm_mean"] == pytest.approx(th["word_norm"], rel=0.03)
    assert m["u_norm_mean"] == pytest.approx(th["u_norm"], rel=0.05)


def test_small_zipf_h_star_beats_h():
    common = {"data.freq": "zipf", "data.nw": 600, "data.K": 60, "model.d": 8, "data.nspl": 5}
    common |= {"data.L": 10}
    h = train(config(common | LBFGS))
    hs = train(config(common | {"model.layer_norm": "fixed", "train.epochs": 100}))
    acc_h, acc_hs = h.measure(False)["test_acc"], hs.measure(False)["test_acc"]
    assert acc_hs >= acc_h and acc_hs >= 0.99


def test_sgd_and_lbfgs_reach_the_same_minimiser():
    """The fast path minimises the faithful objective: SGD run long approaches its solution."""
    common = {"data.nw": 30, "data.L": 8, "data.K": 60, "data.nspl": 10, "model.d": 12}
    lb = train(config(common | LBFGS))
    sgd = train(config(common | {"train.epochs": 1500, "model.init_scale": 0.1}))
    a, b = lb.measure(False), sgd.measure(False)
    assert b["train_objective"] >= a["train_objective"] - 1e-5  # L-BFGS found the lower value
    assert b["train_objective"] == pytest.approx(a["train_objective"], rel=0.02)
    assert b["word_norm_mean"] == pytest.approx(a["word_norm_mean"], rel=0.02)
    assert b["u_norm_mean"] == pytest.approx(a["u_norm_mean"], rel=0.02)
    assert a["words"]["dir_nc1"] < 0.01 and b["words"]["dir_nc1"] < 0.05


@pytest.mark.parametrize(
    "over, match",
    [
        ({"data.nw": 100}, "multiple of nc"),
        ({"data.nspl": 0}, "nspl"),
        ({"train.weight_decay": -1e-3}, ">= 0"),
        ({"train.weight_decay_w": -1e-3}, ">= 0"),
        ({"train.weight_decay": 0.0, "train.optimizer": "lbfgs"}, "no minimiser"),
        ({"data.freq": "pareto"}, "invalid value"),
        ({"train.momentum": 0.9}, "momentum"),
        ({"train.schedule.kind": "multistep"}, "schedule"),
        ({"data.K": 10, "data.L": 2, "data.distinct": True}, "distinct latent"),
        ({"device": "gpu"}, "device must be"),
    ],
)
def test_bad_configs(over, match):
    """A bad setting fails when the config is resolved, before any work, naming the field."""
    with pytest.raises(ConfigError, match=match):
        EXP.config("fig3-quick", over)


def test_theory_selection():
    th = theory_for(FCConfig())
    assert th["which"] == "fc-thm1" and round(th["word_norm"], 5) == 1.42214
    th = theory_for(config({"data.freq": "zipf"}))
    assert th["which"] is None and th["fc-thm2"]["applies"] is False  # K != nc^L, above bound
    th = theory_for(config({"model.layer_norm": "fixed"}))
    assert th["which"] == "fc-thm3" and th["word_rep_norm"] == pytest.approx(10.0)
    assert "no theorem" in theory_for(config({"model.layer_norm": "learnable"}))["note"]
    assert theory_for(config({"train.weight_decay": 0.0}))["fc-thm1"]["applies"] is False


TINY = {"data.nw": 30, "data.L": 6, "data.K": 40, "model.d": 8, "data.nspl": 5}
TINY |= {"log_every": 2, "checkpoint_every": 2}


@pytest.mark.parametrize("optimizer", ["sgd", "lbfgs"])
def test_resume_gives_the_uninterrupted_numbers(tmp_path, monkeypatch, optimizer):
    over = {**TINY, "train.optimizer": optimizer, "train.epochs": 6, "model.init_scale": 0.1}
    cfg = EXP.config("fig3-quick", over | {"train.lbfgs_iters": 3})
    full = run_experiment(EXP, cfg, tmp_path / "a")
    original = Trainer.train_epoch

    def crash(self, epoch):
        if epoch == 4:
            raise RuntimeError("interrupted")
        return original(self, epoch)

    monkeypatch.setattr(Trainer, "train_epoch", crash)
    with pytest.raises(RuntimeError, match="interrupted"):
        run_experiment(EXP, cfg, tmp_path / "b")
    assert RunDir(tmp_path / "b").checkpoint_path.is_file()
    monkeypatch.setattr(Trainer, "train_epoch", original)
    resumed = resume_run(tmp_path / "b")
    for key in ("test_acc", "train_loss", "word_norm_mean", "u_norm_mean", "steps"):
        assert resumed[key] == pytest.approx(full[key], rel=1e-6), key
    assert len(RunDir(tmp_path / "b").read_metrics()) == len(RunDir(tmp_path / "a").read_metrics())


def test_summary_keys_figures_and_claim_paths(tmp_path):
    cfg = EXP.config("fig3-quick", {**TINY, "train.epochs": 4})
    s = run_experiment(EXP, cfg, tmp_path / "run", preset="fig3-quick")
    assert SUMMARY_KEYS <= set(s)
    assert s["paper"]["theory_word_norm"] == 1.42214 and s["theory"]["which"] == "fc-thm1"
    assert {"pca.png", "norms.png", "curves.png"} <= {
        p.name for p in (tmp_path / "run" / "figures").iterdir()
    }
    json.dumps(s)
    again = remeasure(tmp_path / "run", figures=False)  # one seed: the run directory's unit
    assert again["remeasured"] is True and again["figures"] == s["figures"]
    for key in ("test_acc", "word_norm_mean", "untrained", "pca_singular_values", "seconds"):
        assert again[key] == s[key], key
    for claim in CLAIMS:  # every path a claim reads exists in a summary of this experiment
        for path in list(claim.measured.values()) + list(claim.theory.values()):
            key = path.rpartition(":")[2]
            if key.startswith("theory."):
                continue
            lookup({"main": s}, key)


def test_remeasure_and_redraw_from_the_run_directory(tmp_path):
    """A finished run of two seeds measured again from its units' final_state.pt gives the same
    summaries (the PCA singular values included); its figures are drawn again from the directory
    alone, each unit's in its own."""
    cfg = EXP.config("fig3-quick", {**TINY, "train.epochs": 4})
    s = run_experiment(EXP, cfg, tmp_path / "run", seeds=2, preset="fig3-quick")
    assert len(s["figures"]) == 6
    for png in (tmp_path / "run").rglob("*.png"):
        png.unlink()
    again = remeasure(tmp_path / "run")
    assert again["remeasured"] is True and again["seeds"] == [0, 1]
    keys = ("test_acc", "word_norm_mean", "word_nc1_vs_untrained", "untrained", "steps")
    for key in (*keys, "pca_singular_values", "seconds", "preset"):
        assert again[key] == s[key], key
    for old, new in zip(s["per_seed"], again["per_seed"], strict=True):
        assert {k: new[k] for k in keys} == {k: old[k] for k in keys}
        assert new["pca_singular_values"] == old["pca_singular_values"]
    figures = {str(Path(f).relative_to(tmp_path / "run")) for f in again["figures"]}
    assert figures == {
        f"units/seed-{seed}/figures/{name}.png"
        for seed in (0, 1)
        for name in ("pca", "norms", "curves")
    }
    assert all(Path(f).is_file() for f in again["figures"])
    assert RunDir(tmp_path / "run").read_summary()["figures"] == again["figures"]
    # the runner wrote every summary, stamped and checked: the units' and the run's
    version = schema_version("feature-collapse")
    assert again["schema_version"] == version
    for seed in (0, 1):
        unit = RunDir(tmp_path / "run" / "units" / f"seed-{seed}").read_summary()
        assert unit["schema_version"] == version and unit["remeasured"] is True
        assert unit["seconds"] == s["per_seed"][seed]["seconds"]
        validate_summary("feature-collapse", unit, unit=True)


def test_presets_and_claims_are_consistent():
    ids = [c.id for c in all_claims()]
    assert {
        "feature-collapse/fig3",
        "feature-collapse/k50",
        "feature-collapse/fig4b-vs-fig4c",
    } <= set(ids)
    for claim in CLAIMS:
        for spec in claim.runs.values():
            assert spec.quick in EXP.presets and spec.full in EXP.presets
    for name in EXP.presets:
        cfg = EXP.config(name)
        check(cfg)
        assert cfg.figure in PAPER
    assert EXP.config("fig3").train.epochs == 1200 and EXP.config("fig4b").train.epochs == 3000
    assert EXP.config("fig4c").model.layer_norm == "fixed" and EXP.config("fig4a").data.nspl == 500
    assert weight_decays(EXP.config("fig4c")) == (0.0, 1e-3)


@pytest.mark.skipif(torch.cuda.is_available(), reason="checks a machine without CUDA")
def test_cuda_without_a_gpu_is_refused_before_any_work():
    with pytest.raises(ConfigError, match="no CUDA device"):
        EXP.config("no-wd-fig3-quick", {"device": "cuda"})


def test_the_five_million_step_runs_are_gpu_work():
    """App. A.1's presets (and their medium fractions) train where CUDA is (auto) and their
    claims' full scale is GPU work; the quick presets, and every other preset, train on the CPU."""
    for name in EXP.presets:
        want = "auto" if name.startswith("no-wd-") and not name.endswith("-quick") else "cpu"
        assert EXP.config(name).device == want, name
    by_id = {c.id: c for c in all_claims()}
    for cid in ("no-weight-decay", "no-wd-fig3", "no-wd-fig6a", "no-wd-loss"):
        claim = by_id[f"feature-collapse/{cid}"]
        assert claim.needs_gpu("full") and not claim.needs_gpu("medium"), cid
    assert not by_id["feature-collapse/fig3"].needs_gpu("full")


def test_learnable_layernorm_trains():
    tr = train(EXP.config("learnable-ln-quick", {**TINY, "train.epochs": 3}))
    assert tr.net.ln.weight.requires_grad and not torch.equal(
        tr.net.ln.weight.detach(), torch.ones(8)
    )


def test_u_norms_paired_with_sampled_frequencies():
    """§2.2's mechanism: u_{k,ℓ}'s norm against the mean frequency of the words sampled at
    (k, ℓ); a network built to follow it exactly gives Spearman 1, one built against it -1, and
    uniform words give nothing to pair."""
    from nclab.data.sentences import make_dataset, make_task
    from nclab.experiments.feature_collapse.measure import u_vs_sampled_frequency
    from nclab.models.wordnet import WordNet

    task = make_task(3, 30, 4, 20, "zipf", seed=1)
    data = make_dataset(task, 5, seed=1)
    K, L, d = task.K, task.L, 3
    freq = task.word_freq.double()[data.x_train]
    mean = torch.zeros(K, L, dtype=torch.float64).index_add_(0, data.y_train, freq) / 5
    net = WordNet(task.nw, L, d, K, dtype=torch.float64)
    for sign in (1.0, -1.0):
        with torch.no_grad():
            norms = 1.0 + sign * mean  # one direction per block, norm set by the frequency
            net.U.copy_(
                (norms[..., None] * torch.ones(d, dtype=torch.float64) / d**0.5).reshape(K, -1)
            )
        out = u_vs_sampled_frequency(net, task, data)
        assert out["spearman"] == pytest.approx(sign, abs=1e-3) and out[
            "spearman_within"
        ] == pytest.approx(sign)
        assert out["spearman_within_abs"] == pytest.approx(1.0, abs=1e-3) and out["groups"] > 0
        assert out["u_norm_cv_within"] > 0
    uniform = make_task(3, 30, 4, 20, "uniform", seed=1)
    out = u_vs_sampled_frequency(net, uniform, make_dataset(uniform, 5, seed=1))
    assert out["spearman_within"] is None and out["groups"] == 0
