"""Deep regularised LayerNorm ResNets (Súkeník et al.): the model, the exact objective, the GUFM
lower bound, and the depth experiment end to end."""

import json
import math
from pathlib import Path

import pytest
import torch

from nclab.errors import ConfigError
from nclab.evidence import Ledger
from nclab.experiments import get_experiment, resume_run, run_experiment
from nclab.experiments.deep_ln.measure import fit_loss, measure, theory_for
from nclab.experiments.deep_ln.schema import DeepLnSweepSummary
from nclab.experiments.deep_ln.summary import by_depth
from nclab.experiments.protocol import Unit, UnitResult, as_summary
from nclab.experiments.runner import finished_units
from nclab.experiments.schema import read_summary_versioned, validate_summary
from nclab.models.lnresnet import LNResNet, LNTransformer, layer_norm_sphere
from nclab.reproduce import all_claims, verdict
from nclab.runs import RunDir

EXP = get_experiment("deep-ln")
LEDGER = Path(__file__).resolve().parents[1] / "evidence"
TINY = [
    "data.samples_per_class=20",
    "data.test_samples_per_class=5",
    "model.width=16",
    "depths=[1, 4]",
    "train.epochs=40",
    "log_every=10",
    "checkpoint_every=10",
]


@pytest.mark.parametrize("block", ["rn1", "rn2"])
def test_features_lie_on_the_layernorm_sphere(block):
    torch.manual_seed(0)
    net = LNResNet(7, 12, depth=5, num_classes=3, block=block).double()
    h = net.features(torch.randn(50, 7, dtype=torch.float64))
    assert h.sum(1).abs().max() < 1e-12
    assert (h.norm(dim=1) - math.sqrt(12)).abs().max() < 1e-12
    # W_1 .. W_L are regularised: one (rn1) or two (rn2) matrices per block, plus the head
    per_block = 1 if block == "rn1" else 2
    assert len(net.decayed_parameters()) == 4 * per_block + 1
    assert {id(p) for p in net.decayed_parameters()}.isdisjoint(map(id, net.other_parameters()))
    assert len(net.decayed_parameters()) + len(net.other_parameters()) == len(
        list(net.parameters())
    )


@pytest.mark.parametrize("block", ["t11", "t12"])
def test_transformer_class_token_on_the_sphere_and_zero_blocks_copy(block):
    torch.manual_seed(4)
    net = LNTransformer(vocab=30, seq_len=5, width=12, depth=4, num_classes=3, block=block)
    net = net.double()
    x = torch.randint(0, 30, (20, 5))
    h = net.features(x)
    assert h.sum(1).abs().max() < 1e-12 and (h.norm(dim=1) - math.sqrt(12)).abs().max() < 1e-12
    # per block W_Q, W_K, W_V and one (t11) or two (t12) ReLU-block matrices, plus the head
    assert len(net.decayed_parameters()) == 3 * (4 if block == "t11" else 5) + 1
    # zero W_V and zero ReLU sub-block: the block is the identity (attention output is 0)
    with torch.no_grad():
        before = net.features(x)
        net.depth += 1
        for mods in (net.q, net.k, net.v, net.mlp, *((net.second,) if block == "t12" else ())):
            extra = torch.nn.Linear(12, 12, bias=mods is net.mlp).double()
            torch.nn.init.zeros_(extra.weight)
            if extra.bias is not None:
                torch.nn.init.zeros_(extra.bias)
            if mods is net.q or mods is net.k:
                torch.nn.init.normal_(extra.weight)  # queries/keys do not matter when W_V = 0
            mods.append(extra)
        torch.testing.assert_close(net.features(x), before, rtol=1e-12, atol=1e-12)


def test_layer_norm_of_a_constant_row_is_zero_not_nan():
    out = layer_norm_sphere(torch.ones(2, 5))
    assert torch.equal(out, torch.zeros(2, 5))


def test_a_zero_block_copies_its_input():
    """The proof's monotonicity in L: a block with zero weights and biases is the identity, so a
    deeper network can do anything a shallower one does, at the same regularisation cost."""
    torch.manual_seed(1)
    shallow = LNResNet(6, 10, depth=3, num_classes=4).double()
    deep = LNResNet(6, 10, depth=5, num_classes=4).double()
    with torch.no_grad():
        deep.inp.load_state_dict(shallow.inp.state_dict())
        deep.head.load_state_dict(shallow.head.state_dict())
        for i, blk in enumerate(deep.blocks):
            if i < len(shallow.blocks):
                blk.load_state_dict(shallow.blocks[i].state_dict())
            else:
                blk.weight.zero_()
                blk.bias.zero_()
    x = torch.randn(30, 6, dtype=torch.float64)
    torch.testing.assert_close(deep(x), shallow(x), rtol=1e-12, atol=1e-12)
    with torch.no_grad():
        reg = [sum(float((p * p).sum()) for p in n.decayed_parameters()) for n in (shallow, deep)]
    assert reg[0] == pytest.approx(reg[1], rel=1e-12)


@pytest.mark.parametrize("loss", ["ce", "mse"])
def test_measured_objective_and_the_gufm_lower_bound(loss):
    """measure() reports exactly fit + λ/2 Σ‖W_l‖², and L_GUFM(W_L, X_L) >= L*_GUFM holds for a
    network after some gradient steps (K = 3, d = 8 >= K + 1)."""
    g = torch.Generator().manual_seed(2)
    x = torch.randn(60, 5, generator=g)
    y = torch.arange(60) % 3
    torch.manual_seed(3)
    net = LNResNet(5, 8, depth=4, num_classes=3)
    lam = 0.01
    theory = theory_for(loss, 3, 8, lam)
    onehot = torch.nn.functional.one_hot(y, 3).float()
    opt = torch.optim.Adam(net.parameters(), lr=1e-2)
    for _ in range(150):
        obj = fit_loss(net(x), y, onehot, loss)
        obj = obj + lam / 2 * sum((p * p).sum() for p in net.decayed_parameters())
        opt.zero_grad()
        obj.backward()
        opt.step()
    m = measure(net, x, y, x[:0], y[:0], lam, loss, theory)
    net64 = net.double()
    with torch.no_grad():
        z = net64(x.double())
        ref_fit = (
            torch.nn.functional.cross_entropy(z, y)
            if loss == "ce"
            else ((z - onehot.double()) ** 2).sum() / (2 * len(y))
        )
        ref = float(ref_fit) + lam / 2 * sum(
            float((p * p).sum()) for p in net64.decayed_parameters()
        )
    assert m["objective"] == pytest.approx(ref, rel=1e-6)
    assert m["objective"] >= m["gufm_objective"] >= theory.objective
    assert m["objective_gap"] == pytest.approx(m["objective"] - theory.objective, rel=1e-12)
    assert m["sphere_error"] < 1e-5
    assert m["nc2"] == (m["nc2_etf"] if loss == "ce" else m["nc2_of"])
    assert m["test_acc"] is None


@pytest.fixture(scope="module")
def tiny_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("deep-ln")
    cfg = EXP.config("rn1-ce-quick", [*TINY, "seeds=2"])
    return out, run_experiment(EXP, cfg, out, seeds=2)


def test_tiny_run_summary(tiny_run):
    out, s = tiny_run
    assert s["depths"] == [1, 4] and set(s["by_depth"]) == {"L1", "L4"}
    row = s["by_depth"]["L4"]
    assert set(row["std"]) >= {"nc1", "objective"}  # two seeds: mean and std
    assert s["lower_bound_holds"] is True and s["min_margin_to_gufm_optimum"] >= 0
    assert s["sphere_error_max"] < 1e-4
    assert s["theory"]["last"]["structure"] == "simplex_etf"
    assert s["trend"]["first_depth"] == 1 and s["trend"]["last_depth"] == 4
    assert s["trend"]["nc1_ratio"] == pytest.approx(row["nc1"] / s["by_depth"]["L1"]["nc1"])
    assert (out / "figures" / "depth.png").stat().st_size > 10_000
    units = sorted(p.name for p in (out / "units").iterdir())
    assert units == ["L1_seed-0", "L1_seed-1", "L4_seed-0", "L4_seed-1"]
    lines = (out / "units" / "L4_seed-0" / "metrics.jsonl").read_text().splitlines()
    assert [json.loads(x)["epoch"] for x in lines] == [10, 20, 30, 40]


#: what a depth's seeds share (their value, no std) and what the runner writes of each unit (left
#: out of a depth's row): neither is averaged over seeds
SHARED = {"depth", "weight_decay", "theory"}
BOOKKEEPING = {"seed", "schema_version", "seconds", "versions", "remeasured"}


def test_a_depths_seeds_aggregate_as_the_unit_type_declares(tiny_run):
    """Each depth's row: the mean and std of every measurement, the depth, λ and GUFM optimum its
    seeds share, and the list of its seeds; before, the row held the mean seed (0.5), the mean wall
    time and schema version, and a std of each of them and of the depth."""
    out, s = tiny_run
    for d in (1, 4):
        row = s["by_depth"][f"L{d}"]
        units = [
            json.loads((out / "units" / f"L{d}_seed-{i}" / "summary.json").read_text())
            for i in (0, 1)
        ]
        assert row["seed"] == [0, 1] and row["depth"] == d
        assert {k: row[k] for k in SHARED} == {k: units[0][k] for k in SHARED}
        assert not (BOOKKEEPING - {"seed"}) & set(row)
        assert not (SHARED | BOOKKEEPING) & set(row["std"])
        a, b = units[0]["nc1"], units[1]["nc1"]
        assert row["nc1"] == pytest.approx((a + b) / 2, rel=1e-12)
        assert row["std"]["nc1"] == pytest.approx(abs(a - b) / 2, rel=1e-12)
        validate_summary("deep-ln", {**row, "seed": 0.5}, unit=True)  # as recorded before


def test_summarize_returns_the_sweeps_typed_summary(tiny_run):
    """``summarize`` returns :class:`DeepLnSweepSummary`; the run's summary is its fields and what
    the runner adds (each seed's summary, the seeds, the run's bookkeeping)."""
    out, s = tiny_run
    cfg = EXP.config("rn1-ce-quick", [*TINY, "seeds=2"])
    typed = EXP.summarize(cfg, finished_units(EXP, cfg, RunDir(out, create=False)))
    assert isinstance(typed, DeepLnSweepSummary)
    fields = as_summary(typed)
    assert fields == {k: s[k] for k in fields}
    runner = {"by_seed", "seed", "seeds", "experiment", "preset", "schema_version", "seconds"}
    assert set(s) - set(fields) <= runner | {"versions", "figures"}


def test_recorded_sweeps_read_and_aggregate_to_the_recorded_measurements():
    """The ledger's sweeps, some recorded when a depth's row held the mean of every number (the
    mean seed a float): each still reads, and each depth's seeds (``by_seed``) aggregate to the
    recorded mean and std of every measurement, the recorded depth, and the seeds' list (their
    mean where the record holds the mean)."""
    sweeps = [r for r in Ledger(LEDGER).records() if r.experiment == "deep-ln"]
    sweeps = [r.summary for r in sweeps if "by_depth" in r.summary]
    assert sweeps
    for s in sweeps:
        read_summary_versioned("deep-ln", s)
        units = [
            UnitResult(Unit(key, row["seed"], {"depth": row["depth"]}), row, None)
            for one in s["by_seed"]
            for key, row in one["by_depth"].items()
        ]
        for d, new in by_depth(units).items():
            old = s["by_depth"][f"L{d}"]
            if isinstance(old["seed"], float):  # the mean seed
                assert old["seed"] == sum(new["seed"]) / len(new["seed"])
            else:
                assert old["seed"] == new["seed"]
            measured = set(new) - SHARED - BOOKKEEPING - {"std", "per_seed"}
            assert new["depth"] == old["depth"] and measured
            assert {k: new[k] for k in measured} == {k: old[k] for k in measured}
            assert new["std"] == {k: v for k, v in old["std"].items() if k in measured}


def test_resume_skips_finished_units_and_repeats_numbers(tiny_run, tmp_path):
    out, s = tiny_run
    cfg = EXP.config("rn1-ce-quick", [*TINY, "seeds=2"])
    part = tmp_path / "part"
    run_experiment(EXP, cfg.replace(depths=[1]), part, seeds=2)  # finish the L=1 units only
    import shutil

    shutil.copytree(part / "units", tmp_path / "cut" / "units")
    (tmp_path / "cut" / "units" / "L1_seed-0" / "summary.json").unlink()  # one unit to redo
    cut = tmp_path / "cut"
    RunDir(cut).write_config(cfg, experiment="deep-ln", preset="rn1-ce-quick", seeds=1)
    res = resume_run(cut)
    for d in ("L1", "L4"):
        for k in ("nc1", "nc2", "objective"):
            assert res["by_depth"][d][k] == pytest.approx(s["by_depth"][d][k], rel=1e-12)


def test_bad_depths_are_a_config_error(tmp_path):
    from nclab.errors import ConfigError

    with pytest.raises(ConfigError, match="depths"):
        run_experiment(EXP, EXP.config("rn1-ce-quick", [*TINY, "depths=[]"]), tmp_path / "x")


def test_transformer_on_sentences_end_to_end(tmp_path):
    sets = [
        "model.width=12",
        "depths=[1, 3]",
        "train.epochs=30",
        "log_every=10",
        "data.nspl=8",
        "data.num_classes=4",
    ]
    s = run_experiment(EXP, EXP.config("t11-ce-quick", sets), tmp_path / "t")
    assert s["depths"] == [1, 3] and s["lower_bound_holds"] is True
    assert s["num_classes"] == 4 and s["sphere_error_max"] < 1e-4
    assert s["by_depth"]["L3"]["theory"]["d"] == 12


def test_block_and_data_must_match(tmp_path):
    from nclab.errors import ConfigError

    with pytest.raises(ConfigError, match="needs token data"):
        run_experiment(EXP, EXP.config("rn1-ce-quick", [*TINY, "model.block=t11"]), tmp_path / "a")
    with pytest.raises(ConfigError, match="vector data"):
        run_experiment(EXP, EXP.config("t11-ce-quick", ["model.block=rn1"]), tmp_path / "b")


def test_mse_needs_d_above_k(tmp_path):
    from nclab.errors import TheoryError

    cfg = EXP.config("rn1-mse-quick", [*TINY, "model.width=8"])  # K = 10 > d - 1
    with pytest.raises(TheoryError, match="d >= K\\+1"):
        run_experiment(EXP, cfg, tmp_path / "x")


def test_claims_judge_the_tiny_run(tiny_run):
    _, s = tiny_run
    claims = {c.id: c for c in all_claims() if c.id.startswith("sukenik/") and "depth-" in c.id}
    assert set(claims) >= {
        "sukenik/rn1-depth-ce",
        "sukenik/rn2-depth-ce",
        "sukenik/rn1-depth-mse",
        "sukenik/t11-depth-ce",
        "sukenik/t12-depth-ce",
        "sukenik/t11-pre-depth-ce",
        "sukenik/t11-img-depth-ce",
    }
    v = verdict(claims["sukenik/rn1-depth-ce"], {"main": s})
    assert v.outcome.judged
    names = {r.name for r in v.checks}
    assert {"nc1-slope", "nc2-w-slope", "nc3-cos-dist-slope", "gap-shrinks"} <= names
    # the lower bound is a property of the code (X_L on the sphere), tested, not a claim's check
    assert "lower-bound" not in names and s["lower_bound_holds"] is True


@pytest.mark.slow
def test_quick_preset_shows_collapse_growing_with_depth(tmp_path):
    s = run_experiment(EXP, EXP.config("rn1-ce-quick"), tmp_path / "q")
    assert s["trend"]["nc1_ratio"] < 0.5 and s["trend"]["nc2_ratio"] < 0.5
    assert s["trend"]["objective_gap_ratio"] < 0.8 and s["lower_bound_holds"]


def test_units_in_two_processes_give_the_same_numbers(tiny_run, tmp_path):
    """``workers=2`` trains the units in spawned processes: same units, same numbers, same summary."""
    out, s = tiny_run
    cfg = EXP.config("rn1-ce-quick", [*TINY, "seeds=2", "workers=2"])
    par = run_experiment(EXP, cfg, tmp_path / "par", seeds=2)
    assert sorted(p.name for p in (tmp_path / "par" / "units").iterdir()) == sorted(
        p.name for p in (out / "units").iterdir()
    )
    for d in ("L1", "L4"):
        for k in ("nc1", "nc2", "nc3", "objective", "train_acc"):
            assert par["by_depth"][d][k] == pytest.approx(s["by_depth"][d][k], rel=1e-9), (d, k)
    with pytest.raises(ConfigError, match="workers"):
        run_experiment(EXP, EXP.config("rn1-ce-quick", [*TINY, "workers=0"]), tmp_path / "w0")


def test_gap_ratio_is_the_median_of_the_seeds_ratios():
    """One shallow network that failed to train (gap 0.3) must not make depth look helpful: the
    ratio of the seed means is 0.36, each seed's own ratio 1.2, 0.15, 1.2 (median 1.2)."""
    from nclab.experiments.deep_ln.summary import trend

    def row(gaps):
        units = [{"objective_gap": g, "nc1": 0.1} for g in gaps]
        return {"objective_gap": sum(gaps) / len(gaps), "nc1": 0.1, "per_seed": units}

    t = trend({2: row([0.04, 0.3, 0.04]), 8: row([0.048, 0.045, 0.048])})
    assert t["objective_gap_ratio"] == pytest.approx(0.141 / 0.38, rel=1e-12)
    assert t["objective_gap_ratio_per_seed"] == pytest.approx([1.2, 0.15, 1.2])
    assert t["objective_gap_ratio_median"] == pytest.approx(1.2)
