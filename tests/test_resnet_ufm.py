"""ResNet18 against the extended UFM (``nclab run resnet-ufm``): the probe's levels on ResNet18,
a tiny run end to end, resume, bad configs."""

from __future__ import annotations

import json

import pytest
import torch

from nclab import CollapseProbe
from nclab.errors import ConfigError
from nclab.experiments import get_experiment, resume_run, run_experiment
from nclab.experiments.resnet_ufm.config import LevelsCfg
from nclab.experiments.resnet_ufm.measure import network_levels
from nclab.experiments.resnet_ufm.schema import UfmRun
from nclab.experiments.resnet_ufm.train import build_network
from nclab.models.resnet18 import resnet18
from test_data_real import make_idx_dir

EXP = get_experiment("resnet-ufm")
#: a ResNet18 of width 2 on 16x16 digits, 6 per class, 3 epochs; the UFM for 40 steps
TINY = [
    "model.width=2",
    "data.samples_per_class=6",
    "data.test_samples_per_class=2",
    "train.epochs=3",
    "train.schedule.every=2",
    "train.batch_size=20",
    "measure_every=1",
    "checkpoint_every=1",
    "ufm.steps=40",
    "ufm.log_every=20",
    "ufm.n=3",
    "ufm.d=12",
]


def _probe_data(n=40, K=4, seed=0):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, 1, 16, 16, generator=g)
    y = torch.arange(n) % K
    return x, y


def test_probe_levels_are_resnet18_modules():
    """layer4.0 (avg-pooled) and fc:input are the blocks' outputs the network computes."""
    K = 4
    net = resnet18(K, in_channels=1, width=4, small_input=True).eval()
    x, y = _probe_data(K=K)
    probe = CollapseProbe(net, ["layer4.0", "fc:input"], K, reduce="avgpool", classifier="fc")
    res = probe.run([(x[:20], y[:20]), (x[20:], y[20:])], progress=False)
    with torch.no_grad():
        h = net.maxpool(net.relu(net.bn1(net.conv1(x))))
        first = net.layer4[0](net.layer3(net.layer2(net.layer1(h))))
        second = net.features(x)
    for name, feats in (("layer4.0", first.mean((2, 3))), ("fc:input", second)):
        stats = res.stats[name]
        assert stats.dim == 32  # 8 * width
        means = torch.stack([feats[y == c].mean(0) for c in range(K)]).to(torch.float64)
        torch.testing.assert_close(stats.means, means, rtol=1e-5, atol=1e-6)
    table = res.to_dict()
    assert {"nc2_w_etf", "nc2_w_of", "nc3", "nc3_of", "acc"} <= set(table["fc:input"])
    assert "nc3" not in table["layer4.0"]  # W applies to fc's input only


def test_network_levels_keys_and_no_bias():
    net = build_network(EXP.config(None, ["model.width=2"]), in_channels=1, K=4)
    assert net.fc.bias is None
    x, y = _probe_data(K=4)
    out = network_levels(net, [(x, y)], 4, LevelsCfg())
    assert set(out["first"]) == {"nc1", "nc2_etf", "nc2_of"}
    assert {"nc2_w_etf", "nc2_w_of", "nc3", "nc3_of", "acc"} <= set(out["second"])
    assert all(v is None or v >= 0 for v in out["second"].values())


@pytest.fixture(scope="module")
def tiny_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("resnet-ufm")
    cfg = EXP.config("tb-resnet18-digits-mse-quick", TINY)
    return run_experiment(EXP, cfg, out / "run"), out / "run"


def test_tiny_run_summary_and_figure(tiny_run):
    s, path = tiny_run
    assert s["K"] == 10 and s["net"]["levels"] == {"first": "layer4.0", "second": "fc:input"}
    for who in ("net", "ufm"):
        for when in ("start", "end"):
            assert set(s[who][when]) == {"first", "second"}
            assert s[who][when]["second"]["nc2_w_of"] > 0
    d = s["derived"]
    assert d["net_frame"] in ("orthogonal frame", "simplex ETF")
    assert d["same_frame"] == float((d["net_of_minus_etf"] < 0) == (d["ufm_of_minus_etf"] < 0))
    assert d["net_nc1_level_ratio"] == pytest.approx(
        s["net"]["end"]["second"]["nc1"] / s["net"]["end"]["first"]["nc1"]
    )
    assert s["ufm"]["model"].startswith("extended UFM, ReLU, MSE, bias-free: K=10")
    epochs = [json.loads(x)["epoch"] for x in (path / "metrics.jsonl").read_text().splitlines()]
    assert epochs == [0, 1, 2, 3]
    steps = [
        json.loads(x)["step"] for x in (path / "ufm" / "metrics.jsonl").read_text().splitlines()
    ]
    assert steps == [0, 20, 40]
    assert (path / "figures" / "resnet_ufm.png").is_file()
    assert not (path / "checkpoint.pt").exists()


@pytest.mark.slow
def test_ce_bias_setting_runs_the_ufm_with_a_bias(tmp_path):
    cfg = EXP.config("tb-resnet18-digits-ce-quick", [*TINY, "train.epochs=1", "ufm.steps=20"])
    s = run_experiment(EXP, cfg, tmp_path / "ce")
    assert "unregularised bias" in s["ufm"]["model"] and "CE" in s["ufm"]["model"]
    assert "bias in the last layer" in s["model"]


def test_resume_gives_the_uninterrupted_numbers(tiny_run, tmp_path, monkeypatch):
    ref, _ = tiny_run
    cfg = EXP.config("tb-resnet18-digits-mse-quick", TINY)
    import nclab.experiments.resnet_ufm.train as rt

    real_fit = rt.fit_trainer

    class Interrupt(Exception):
        pass

    def interrupted_fit(trainer, *args, **kw):
        inner = trainer.train_epoch

        def train_epoch(epoch):
            if epoch == 2:
                raise Interrupt
            return inner(epoch)

        trainer.train_epoch = train_epoch
        return real_fit(trainer, *args, **kw)

    monkeypatch.setattr(rt, "fit_trainer", interrupted_fit)
    with pytest.raises(Interrupt):
        run_experiment(EXP, cfg, tmp_path / "cut")
    assert (tmp_path / "cut" / "checkpoint.pt").is_file()
    ufm = tmp_path / "cut" / "ufm"
    assert (ufm / "finished.json").is_file()  # the UFM ran first
    assert not (ufm / "summary.json").exists()  # only the runner writes summaries
    assert UfmRun.model_validate_json((ufm / "finished.json").read_text()).steps > 0
    monkeypatch.setattr(rt, "fit_trainer", real_fit)
    res = resume_run(tmp_path / "cut")
    for who in ("net", "ufm"):
        for level in ("first", "second"):
            a, b = ref[who]["end"][level], res[who]["end"][level]
            for k, v in a.items():
                assert b[k] == pytest.approx(v, rel=1e-9, abs=1e-12), (who, level, k)
    assert res["net"]["test_acc"] == ref["net"]["test_acc"]


@pytest.mark.slow
def test_gpu_preset_reads_mnist_files_at_native_size(tmp_path):
    """The paper's MNIST preset (cut to one epoch of a width-2 network, no UFM) on IDX files."""
    make_idx_dir(tmp_path / "mnist", n_train=60, n_test=20)
    sets = ["model.width=2", "train.epochs=1", "measure_samples_per_class=3", "ufm.steps=0"]
    cfg = EXP.config("tb-resnet18-mnist-mse-gpu", [*sets, f"data.data_dir={tmp_path / 'mnist'}"])
    assert cfg.model.bias is False and cfg.train.weight_decay == 5e-4
    assert cfg.train.schedule.kind == "step" and cfg.train.schedule.every == 40
    s = run_experiment(EXP, cfg.replace(device="cpu"), tmp_path / "run")
    assert "ufm" not in s and s["derived"]["net_frame"] in ("orthogonal frame", "simplex ETF")
    assert s["net"]["end"]["second"]["acc"] is not None


@pytest.mark.parametrize(
    "bad",
    [["train.epochs=0"], ["levels.first=fc:input"], ["ufm.d=1"], ["model.width=0"]],
)
def test_bad_configs_are_refused(tmp_path, bad):
    with pytest.raises(ConfigError):
        run_experiment(EXP, EXP.config(None, [*TINY, *bad]), tmp_path / "bad")
