"""The feature-collapse experiment: training h / h*, theory beside it, resume, presets, claims."""

import json

import pytest
import torch

from nclab.errors import ConfigError
from nclab.experiments import feature_collapse as fc
from nclab.experiments import get_experiment, resume_run, run_experiment
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
}


def train(cfg):
    tr = fc.Trainer(cfg)
    for e in range(cfg.epochs):
        tr.train_epoch(e)
        if tr.converged:
            break
    return tr


def test_small_uniform_h_reaches_theorem1():
    """Type-I collapse, and the norms of Theorem 1 for this instance within a few %."""
    cfg = fc.FCConfig(
        nw=60, L=12, K=200, nspl=10, d=16, optimizer="lbfgs", epochs=30, lbfgs_history=50
    )
    tr = train(cfg)
    m, th = tr.measure(full=False), fc.theory_for(cfg)
    assert th["which"] == "fc-thm1"
    assert m["test_acc"] == 1.0 and m["collapse_type"] == "type-I"
    assert m["word_norm_mean"] == pytest.approx(th["word_norm"], rel=0.03)
    assert m["u_norm_mean"] == pytest.approx(th["u_norm"], rel=0.05)


def test_small_zipf_h_star_beats_h():
    common = dict(freq="zipf", nw=600, K=60, d=8, nspl=5, L=10)
    h = train(fc.FCConfig(**common, optimizer="lbfgs", epochs=30, lbfgs_history=50))
    hs = train(fc.FCConfig(**common, layer_norm="fixed", epochs=100))
    acc_h, acc_hs = h.measure(False)["test_acc"], hs.measure(False)["test_acc"]
    assert acc_hs >= acc_h and acc_hs >= 0.99


def test_sgd_and_lbfgs_reach_the_same_minimiser():
    """The fast path minimises the faithful objective: SGD run long approaches its solution."""
    common = dict(nw=30, L=8, K=60, nspl=10, d=12)
    lb = train(fc.FCConfig(**common, optimizer="lbfgs", epochs=30, lbfgs_history=50))
    sgd = train(fc.FCConfig(**common, epochs=1500, init_scale=0.1))
    a, b = lb.measure(False), sgd.measure(False)
    assert b["train_objective"] >= a["train_objective"] - 1e-5  # L-BFGS found the lower value
    assert b["train_objective"] == pytest.approx(a["train_objective"], rel=0.02)
    assert b["word_norm_mean"] == pytest.approx(a["word_norm_mean"], rel=0.02)
    assert b["u_norm_mean"] == pytest.approx(a["u_norm_mean"], rel=0.02)
    assert a["words"]["dir_nc1"] < 0.01 and b["words"]["dir_nc1"] < 0.05


@pytest.mark.parametrize(
    "over, match",
    [
        ({"nw": 100}, "multiple of nc"),
        ({"nspl": 0}, "nspl"),
        ({"lam": -1e-3}, ">= 0"),
        ({"lam": 0.0, "optimizer": "lbfgs"}, "no minimiser"),
        ({"freq": "pareto"}, "invalid value"),
    ],
)
def test_bad_configs(over, match):
    with pytest.raises(ConfigError, match=match):
        fc.Trainer(EXP.config("fig3-quick", over))


def test_theory_selection():
    th = fc.theory_for(fc.FCConfig())
    assert th["which"] == "fc-thm1" and round(th["word_norm"], 5) == 1.42214
    th = fc.theory_for(fc.FCConfig(freq="zipf"))
    assert th["which"] is None and th["fc-thm2"]["applies"] is False  # K != nc^L, above bound
    th = fc.theory_for(fc.FCConfig(layer_norm="fixed"))
    assert th["which"] == "fc-thm3" and th["word_rep_norm"] == pytest.approx(10.0)
    assert "no theorem" in fc.theory_for(fc.FCConfig(layer_norm="learnable"))["note"]
    assert fc.theory_for(fc.FCConfig(lam=0.0))["fc-thm1"]["applies"] is False


TINY = {"nw": 30, "L": 6, "K": 40, "d": 8, "nspl": 5, "log_every": 2, "checkpoint_every": 2}


@pytest.mark.parametrize("optimizer", ["sgd", "lbfgs"])
def test_resume_gives_the_uninterrupted_numbers(tmp_path, monkeypatch, optimizer):
    over = {**TINY, "optimizer": optimizer, "epochs": 6, "init_scale": 0.1, "lbfgs_iters": 3}
    cfg = EXP.config("fig3-quick", over)
    full = run_experiment(EXP, cfg, tmp_path / "a")
    original = fc.Trainer.train_epoch

    def crash(self, epoch):
        if epoch == 4:
            raise RuntimeError("interrupted")
        return original(self, epoch)

    monkeypatch.setattr(fc.Trainer, "train_epoch", crash)
    with pytest.raises(RuntimeError, match="interrupted"):
        run_experiment(EXP, cfg, tmp_path / "b")
    assert RunDir(tmp_path / "b").checkpoint_path.is_file()
    monkeypatch.setattr(fc.Trainer, "train_epoch", original)
    resumed = resume_run(tmp_path / "b")
    for key in ("test_acc", "train_loss", "word_norm_mean", "u_norm_mean", "steps"):
        assert resumed[key] == pytest.approx(full[key], rel=1e-6), key
    assert len(RunDir(tmp_path / "b").read_metrics()) == len(RunDir(tmp_path / "a").read_metrics())


def test_summary_keys_figures_and_claim_paths(tmp_path):
    cfg = EXP.config("fig3-quick", {**TINY, "epochs": 4})
    s = run_experiment(EXP, cfg, tmp_path / "run", preset="fig3-quick")
    assert SUMMARY_KEYS <= set(s)
    assert s["paper"]["theory_word_norm"] == 1.42214 and s["theory"]["which"] == "fc-thm1"
    assert {"pca.png", "norms.png", "curves.png"} <= {
        p.name for p in (tmp_path / "run" / "figures").iterdir()
    }
    json.dumps(s)
    for claim in CLAIMS:  # every path a claim reads exists in a summary of this experiment
        for path in list(claim.measured.values()) + list(claim.theory.values()):
            key = path.rpartition(":")[2]
            if key.startswith("theory."):
                continue
            lookup({"main": s}, key)


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
        fc.validate(cfg)
        assert cfg.figure in fc.PAPER
    assert EXP.config("fig3").epochs == 1200 and EXP.config("fig4b").epochs == 3000
    assert EXP.config("fig4c").layer_norm == "fixed" and EXP.config("fig4a").nspl == 500
    assert fc.weight_decays(EXP.config("fig4c")) == (0.0, 1e-3)


def test_learnable_layernorm_trains():
    tr = train(EXP.config("learnable-ln-quick", {**TINY, "epochs": 3}))
    assert tr.net.ln.weight.requires_grad and not torch.equal(
        tr.net.ln.weight.detach(), torch.ones(8)
    )
