"""The linear-head experiment (Jacot et al. 2025): small, fast versions of the presets asserting the
paper's qualitative directions with margins, the summary and certificate, and resume."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
import torch

from nclab.experiments import get_experiment, resume_run, run_experiment
from nclab.experiments.linear_head.schema import LinearHeadSweepSummary
from nclab.experiments.protocol import as_summary
from nclab.experiments.runner import finished_units
from nclab.reproduce import all_claims, verdict
from nclab.runs import RunDir

EXP = get_experiment("linear-head")

TINY = [  # MNIST-1D, 50 per class, 3 nonlinear + 3 linear layers of width 64
    "data.samples_per_class=50",
    "data.test_samples_per_class=20",
    "model.L1=3",
    "model.L2=3",
    "model.width=64",
    "train.batch_size=50",
    "measure_from=1",
    "train.epochs=200",
    "measure_every=50",
]


@pytest.fixture(scope="module")
def tiny_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("tiny")
    cfg = EXP.config("fig1-mlp-quick", TINY)
    return run_experiment(EXP, cfg, out), out


def test_summary_layout(tiny_run):
    s, out = tiny_run
    for key in ("layers", "train_mse", "test_acc", "certificate", "seconds", "derived"):
        assert key in s
    names = [l["name"] for l in s["layers"]]
    assert names == ["Z1", "Z2", "Z3", "Z4", "Z5", "Z6"]
    kinds = [l["kind"] for l in s["layers"]]
    assert kinds == ["nonlinear"] * 3 + ["linear"] * 3
    for l in s["layers"]:
        assert set(l) >= {
            "name",
            "kind",
            "nc1_trace",
            "nc2_kappa",
            "nc3_cos",
            "balancedness",
            "negativity",
        }
        assert (l["negativity"] is None) == (l["kind"] == "linear")
        assert (l["nc3_cos"] is None) == (l["name"] != "Z5")  # Z_(L-1) with W_L only
    assert s["layers"][-1]["balancedness"] is None
    assert (out / "figures" / "collapse.png").is_file() and (
        out / "figures" / "grams.png"
    ).is_file()
    rows = [json.loads(line) for line in (out / "metrics.jsonl").read_text().splitlines()]
    assert [r["epoch"] for r in rows] == [50, 100, 150, 200]
    assert rows[-1]["layers"]["Z5"]["nc2_kappa"] == s["layers"][4]["nc2_kappa"]
    assert len(s["grams"]["Z5"]) == 10 and max(max(r) for r in s["grams"]["Z5"]) == 1.0


def test_tiny_run_collapses(tiny_run):
    """Fig. 1's directions on a tiny network: NC1 falls over training, NC2 decreases through the
    head, the linear head gets balanced."""
    s, _ = tiny_run
    d = s["derived"]
    assert s["train_acc"] == 1.0
    assert d["nc1_last"] < 0.3 * d["nc1_last_start"]
    assert d["nc2_head_decrease"] == 1.0 and d["nc2_last"] < 0.5 * d["nc2_head_input"]
    assert d["balancedness_linear_max"] < 0.7 * d["balancedness_linear_start"]
    assert d["gram_of_last"] < 0.95 * d["gram_of_last_start"]


def test_certificate_on_the_trained_network(tiny_run):
    """Theorem 3.1 evaluated on the trained network: its hypotheses read off the network, its NC1
    bound applies and holds; hypotheses that fail are reported, never a vacuous number."""
    s, _ = tiny_run
    cert = s["certificate"]
    hyp = cert["hypotheses"]
    assert cert["applies"] is True, cert
    assert cert["holds"]["nc1"] is True
    assert cert["measured"]["nc1_trace"] <= cert["bounds"]["nc1"]
    assert cert["measured"]["nc1_trace"] == pytest.approx(s["layers"][4]["nc1_trace"])
    assert hyp["N"] == 500 and hyp["K"] == 10 and hyp["s_k_y"] == pytest.approx(math.sqrt(50))
    assert hyp["eps1"] == pytest.approx(math.sqrt(s["train_mse"] * 500 * 10), rel=1e-6)
    for key, bound in cert["bounds"].items():
        if bound is None and key in ("nc2", "nc3", "kappa_wl"):
            assert key in cert["skipped"]


def test_network_quantities_against_numpy():
    from nclab.experiments.linear_head.measure import network_quantities
    from nclab.models.mlp import LinearHeadMLP

    torch.manual_seed(1)
    m = LinearHeadMLP(6, 3, [12, 9], [7, 5], bias=True)
    x = torch.randn(40, 6)
    y = torch.arange(40) % 3
    q = network_quantities(m, x, y, 3, {"nc1_trace": 0.5}, batch_size=16)
    with torch.no_grad():
        zs = [z.double().numpy() for z in m.forward_all(x)]
    ws = [w.detach().double().numpy() for w in m.weights()]
    Y = np.eye(3)[y.numpy()]
    op = lambda a: np.linalg.norm(a, 2)
    assert q.eps1 == pytest.approx(np.linalg.norm(zs[-1] - Y), rel=1e-9)
    head = ws[2:]
    eps2 = max(op(head[i + 1].T @ head[i + 1] - head[i] @ head[i].T) for i in range(2))
    assert q.eps2 == pytest.approx(eps2, rel=1e-9)
    assert q.r == pytest.approx(max(op(zs[3]), op(zs[4]), *(op(w) for w in head)), rel=1e-9)
    prod = head[2] @ head[1] @ head[0]
    sv = np.linalg.svd(prod, compute_uv=False)
    assert q.c3 == pytest.approx(sv[0] / sv[2], rel=1e-9)
    assert q.z_op == pytest.approx(op(zs[2]), rel=1e-9)
    assert q.n_penult == 5 and q.L2 == 3 and q.N == 40
    sv = np.linalg.svd(ws[-1], compute_uv=False)
    assert q.measured["kappa_wl"] == pytest.approx(sv[0] / sv[2], rel=1e-9)


def test_nc2_of_last_layer_improves_with_linear_depth(tmp_path):
    """Fig. 2 in small: NC2 of Z_(L-1) at L2 = 4 below 0.7x that at L2 = 1, over 3 seeds; the
    input of the linear head is not better at L2 = 4."""
    cfg = EXP.config(
        "fig2-depth-quick",
        [
            "data.samples_per_class=40",
            "model.L1=3",
            "model.width=48",
            "train.epochs=150",
            "train.batch_size=50",
            "measure_every=150",
            "measure_from=1",
            "sweep_values=[1, 4]",
        ],
    )
    s = run_experiment(EXP, cfg, tmp_path, seeds=3)
    one, four = s["by_depth"]["1"], s["by_depth"]["4"]
    assert one["n"] == 3 and four["n"] == 3
    assert four["nc2_last"] < 0.7 * one["nc2_last"], (one, four)
    assert four["nc2_head_input"] > 0.8 * one["nc2_head_input"]
    assert [r["L2"] for r in s["sweep"]] == [1, 4]
    assert (tmp_path / "figures" / "depth.png").is_file()
    assert len(list((tmp_path / "units").iterdir())) == 6
    # summarize returns the sweep's typed summary, whose fields the run's summary holds
    cfg = cfg.replace(seeds=3)
    typed = EXP.summarize(cfg, finished_units(EXP, cfg, RunDir(tmp_path, create=False)))
    assert isinstance(typed, LinearHeadSweepSummary)
    assert as_summary(typed) == {k: s[k] for k in as_summary(typed)}


def test_resume_gives_the_uninterrupted_numbers(tmp_path, monkeypatch):
    sets = [*TINY[:-2], "train.epochs=30", "measure_every=10", "checkpoint_every=10"]
    cfg = EXP.config("fig1-mlp-quick", sets)
    ref = run_experiment(EXP, cfg, tmp_path / "ref")

    import nclab.experiments.linear_head.train as lht

    real_fit = lht.fit_trainer

    class Interrupt(Exception):
        pass

    def interrupted_fit(trainer, *args, **kw):
        inner = trainer.train_epoch

        def train_epoch(epoch):
            if epoch == 25:
                raise Interrupt
            return inner(epoch)

        trainer.train_epoch = train_epoch
        return real_fit(trainer, *args, **kw)

    monkeypatch.setattr(lht, "fit_trainer", interrupted_fit)
    with pytest.raises(Interrupt):
        run_experiment(EXP, cfg, tmp_path / "cut")
    assert (tmp_path / "cut" / "checkpoint.pt").is_file()
    monkeypatch.setattr(lht, "fit_trainer", real_fit)
    res = resume_run(tmp_path / "cut")
    for a, b in zip(ref["layers"], res["layers"], strict=True):
        for k in ("nc1_trace", "nc2_kappa", "balancedness", "negativity", "nc3_cos"):
            assert a[k] == b[k] or a[k] == pytest.approx(b[k], rel=1e-12)
    assert res["train_mse"] == pytest.approx(ref["train_mse"], rel=1e-12)
    lines = (tmp_path / "cut" / "metrics.jsonl").read_text().splitlines()
    assert [json.loads(x)["epoch"] for x in lines] == [10, 20, 30]


def test_certificate_refuses_what_the_theorem_does_not_cover(tmp_path):
    sets = [*TINY[:-2], "train.epochs=5", "measure_every=5", "model.L2=1"]
    s = run_experiment(EXP, EXP.config("fig1-mlp-quick", sets), tmp_path / "a")
    assert s["certificate"]["applies"] is False and "at least 2" in s["certificate"]["reason"]
    sets2 = [*TINY[:-2], "train.epochs=5", "measure_every=5", "model.head_bias=true"]
    s2 = run_experiment(EXP, EXP.config("fig1-mlp-quick", sets2), tmp_path / "b")
    assert s2["certificate"]["applies"] is False and "biases" in s2["certificate"]["reason"]


def test_claims_registered_and_judged():
    claims = {c.id: c for c in all_claims() if c.id.startswith("jacot/")}
    figures = {"jacot/fig1-mlp", "jacot/fig2-depth", "jacot/fig3-nonlinear-depth"}
    # the statement inventory's claims on the same runs (NC3, NC1 against L2, the last layer)
    figures |= {"jacot/fig1-nc3", "jacot/fig2-nc1-depth", "jacot/fig3-last-negativity"}
    figures |= {"jacot/fig1-balancedness-plateau"}
    resnet = {"jacot/fig1-resnet20", "jacot/fig2-depth-resnet20"}  # GPU only: no quick preset
    resnet |= {"jacot/figA5-resnet20-mnist"}
    section5 = {"jacot/conditioning-minimiser", "jacot/ntk-bound", "jacot/edge-of-stability"}
    section5 |= {"jacot/thm31-nc2-nc3", "jacot/lr-upper-bound"}
    # issue 50: Lemma C.2 and the balanced head's kappa on Theorem 3.1's network
    section5 |= {"jacot/lemma-c2", "jacot/balanced-kappa"}
    section5 |= {"jacot/thm52-nc"}  # issue 50: Thm 3.1's bounds composed with (18)
    dynamics = {"jacot/balancedness-rate", "jacot/thm44-time"}  # full presets on a CPU too
    # Theorem 4.4 on a network that meets its hypotheses runs its own experiment
    assert claims.pop("jacot/thm44-nc1").runs["main"].experiment == "pyramid-flow"
    # issue 50: Prop. 4.5 and phase 1 of its proof, on the same runs
    for cid in ("jacot/prop45-inequality", "jacot/thm44-phase1"):
        assert claims.pop(cid).runs["main"].experiment == "pyramid-flow"
    # the 1/L2 reading of Section 5.2's step cap: lr-bound-quick at three depths
    depth = claims.pop("jacot/lr-scales-with-depth")
    assert {s.quick for s in depth.runs.values()} == {"lr-bound-quick"}
    assert sorted(s.set["model.L2"] for s in depth.runs.values()) == [1, 2, 4]
    assert set(claims) == figures | resnet | section5 | dynamics
    for c in claims.values():
        spec = c.runs["main"]
        # the ResNet20 claims run on digits at quick and medium size, but MNIST's has no CPU rung
        no_quick = c.id == "jacot/figA5-resnet20-mnist"
        assert (spec.quick is None) == no_quick and spec.full in EXP.presets
        assert spec.quick is None or spec.quick in EXP.presets
        # the rate's and Section 5's full presets run on a CPU
        assert spec.full_needs_gpu == (c.id in figures | resnet)
    fake = {
        "main": {
            "by_depth": {
                "1": {"nc2_last": 10.0, "nc2_head_input": 10.0},
                "3": {"nc2_last": 5.0},
                "5": {"nc2_last": 4.0, "nc2_head_input": 12.0},
            },
            "sweep": [{"L2": d, "train_acc": 1.0} for d in (1, 3, 5)],
        }
    }
    from nclab.reproduce.judge import scene_of
    from nclab.verdicts import Outcome, Why

    claim = claims["jacot/fig2-depth"]
    scene = scene_of(claim, "full")  # the paper's setting: nothing deviates; the sweep must fit
    v = verdict(claim, fake, scene)
    assert v.outcome is Outcome.REPRODUCED, v
    fake["main"]["by_depth"]["5"]["nc2_last"] = 9.0
    assert verdict(claim, fake, scene).outcome is Outcome.PARTIAL
    # a network of the sweep that does not fit its training set is outside the premise: the
    # run is invalid evidence (never judged), not a failing check
    fake["main"]["sweep"][1]["train_acc"] = 0.8
    v = verdict(claim, fake, scene)
    assert v.outcome is Outcome.INCONCLUSIVE and v.reasons[0].why is Why.INVALID
    assert "main: sweep[*].train_acc >= 0.99 fails on the run (0.8)" in v.invalid[0]


def test_balancedness_windows_follow_the_logged_schedule():
    """Fig. 1's three log-rates (plateau.py) on records shaped like the run's log: each record's
    ``lr`` is the rate after its epoch's scheduler step, so the first record showing the small
    rate is the drop; the linear pairs of L1 = 1, L2 = 3 are Z2 and Z3 (Z1 straddles the ReLU)."""
    from nclab.experiments.linear_head.plateau import plateau_derived

    def rec(epoch, log_b):
        lr = 1e-3 if epoch < 80 else 1e-4
        layers = {"Z1": {"balancedness": 5.0}, "Z2": {"balancedness": math.exp(log_b)}}
        layers["Z3"] = {"balancedness": math.exp(log_b + 0.5)}
        return {"epoch": epoch, "lr": lr, "layers": layers}

    # falls at 0.05 per epoch up to 50, flat to the drop at 80, falls at 0.02 per epoch after
    hist = [rec(e, -0.05 * min(e, 50) - 0.02 * max(e - 80, 0)) for e in range(10, 101, 10)]
    d = plateau_derived({"L1": 1, "L2": 3}, hist)
    assert d["balancedness_rate_before"] == pytest.approx(-0.05)  # window [10, 45]
    assert d["balancedness_rate_plateau"] == pytest.approx(0.0, abs=1e-12)  # [62.5, 80]
    assert d["balancedness_rate_after"] == pytest.approx(-0.02)  # [80, 100]
    assert d["balancedness_after_over_before"] == pytest.approx(0.4)
    assert d["balancedness_plateau_over_before"] == pytest.approx(0.0, abs=1e-10)
    # no drop (a constant schedule), or no linear pair (L2 = 1): nothing to measure
    flat = [{**r, "lr": 1e-3} for r in hist]
    assert set(plateau_derived({"L1": 1, "L2": 3}, flat).values()) == {None}
    assert set(plateau_derived({"L1": 3, "L2": 1}, hist).values()) == {None}


def test_presets_resolve():
    for name in EXP.presets:
        cfg = EXP.config(name)
        assert cfg.train.epochs > 0
    with pytest.raises(Exception, match="unknown key"):
        EXP.config("fig1-mlp-quick", ["model.depth=3"])


def test_probe_first_pass_nc3_cos_matches_second_pass():
    """measure_layers runs the probe in one pass: its nc3_cos and accuracy equal the second pass's."""
    from torch import nn

    from nclab import CollapseProbe

    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(10, 16), nn.ReLU(), nn.Linear(16, 3))
    data = [(torch.randn(32, 10), torch.randint(0, 3, (32,))) for _ in range(4)]
    two = CollapseProbe(model, ["1", "2:input"], 3, classifier="2").run(data, progress=False)
    one = CollapseProbe(model, ["1", "2:input"], 3, classifier="2", scatter="none").run(
        data, second_pass=False, progress=False
    )
    clf = "2:input"
    assert one.to_dict()[clf]["nc3_cos"] == pytest.approx(two.to_dict()[clf]["nc3_cos"], rel=1e-12)
    assert one.to_dict()[clf]["acc"] == two.to_dict()[clf]["acc"]
    assert one.stats[clf].scatter_mode == "none" and "nc3_cos" not in one.to_dict()["1"]


def test_resnet20_backbone_on_cifar_files(tmp_path):
    """The GPU preset's code path (ResNet20 + MLP head, CIFAR-10 pickles, measured from the
    backbone's output Z0) runs on a CPU with tiny files and widths."""
    from test_data_real import write_cifar

    write_cifar(tmp_path / "cifar-10-batches-py", n_per_batch=10)
    cfg = EXP.config(
        "fig1-resnet20-cifar10-gpu",
        [
            f"data.data_dir={tmp_path}",
            "train.epochs=1",
            "measure_every=1",
            "model.resnet_width=4",
            "model.width=16",
            "train.batch_size=25",
            "device=cpu",
        ],
    )
    s = run_experiment(EXP, cfg, tmp_path / "run")
    assert [l["kind"] for l in s["layers"]] == ["backbone"] + ["nonlinear"] * 3 + ["linear"] * 3
    assert s["layers"][0]["balancedness"] is None and s["layers"][0]["negativity"] is None


def test_resnet20_backbone_on_mnist_files(tmp_path):
    """App. A Fig. 5's GPU preset (the ResNet20 depth sweep on MNIST: 1 x 28 x 28 images from the
    user's IDX files) runs on a CPU with tiny files, widths and depths."""
    from test_data_real import make_idx_dir

    make_idx_dir(tmp_path / "mnist", n_train=60, n_test=30)
    cfg = EXP.config(
        "fig2-depth-resnet20-mnist-gpu",
        [
            f"data.data_dir={tmp_path}",
            "train.epochs=1",
            "measure_every=1",
            "model.resnet_width=4",
            "model.width=16",
            "train.batch_size=30",
            "sweep_values=[1, 2]",
            "sweep_weight_decays=[0.001]",
            "device=cpu",
        ],
    )
    s = run_experiment(EXP, cfg, tmp_path / "run")
    assert set(s["by_depth"]) == {"1", "2"} and s["layers"][0]["kind"] == "backbone"
    assert [l["kind"] for l in s["layers"]][1:] == ["nonlinear", "linear", "linear"]
