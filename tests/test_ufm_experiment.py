"""The UFM laboratory (``nclab run ufm``): summaries, batching, phase grid, resume, bad configs."""

from __future__ import annotations

import json

import pytest

from nclab.errors import ConfigError, TheoryError
from nclab.experiments import resume_run, run_experiment
from nclab.experiments.ufm import EXPERIMENT
from nclab.experiments.ufm.config import problems, threshold_lambda
from nclab.experiments.ufm.measure import UNREGULARISED, theory_for
from nclab.models.ufm import BatchedUFM
from nclab.runs import RunDir

# a small, fast-converging version of Tirer & Bruna's Fig. 2 problem
SMALL = [
    "model.K=3",
    "model.n=4",
    "model.d=6",
    "model.lambda_w=0.02",
    "model.lambda_h=0.02",
    "train.lr=0.5",
    "train.steps=6000",
    "log_every=2000",
]


def run(tmp_path, preset="tb-fig2-nobias", sets=(), seeds=1, name="run"):
    cfg = EXPERIMENT.config(preset, list(SMALL) + list(sets))
    return run_experiment(EXPERIMENT, cfg, tmp_path / name, seeds=seeds, preset=preset)


def test_summary_reaches_theory(tmp_path):
    s = run(tmp_path)
    assert s["theorem"] == "Tirer & Bruna Thm 3.1"
    assert s["objective_gap"] <= 1e-10
    assert s["theory_objective"] == pytest.approx(s["theory"]["objective"])
    assert set(s["metrics"]) == {
        "nc1",
        "nc2_etf",
        "nc2_of",
        "nc2_w_etf",
        "nc2_w_of",
        "nc3",
        "nc3_of",
    }
    assert s["expected_zero"] == {"H": ["nc1", "nc2_etf", "nc2_of", "nc2_w_of", "nc3_of"]}
    assert s["collapse_max"] <= 1e-6
    assert s["metrics"]["nc2_w_etf"] > 0.1  # an orthogonal frame is not a simplex ETF
    assert set(s["theory_norms"]) == {"w_norm", "h_norm", "rho", "rho_mean"}
    assert max(s["norm_gaps"].values()) <= 1e-8
    assert s["seconds"] > 0 and s["experiment"] == "ufm"
    rd = RunDir(tmp_path / "run", create=False)
    rows = rd.read_metrics()
    assert [r["step"] for r in rows] == [0, 2000, 4000, 6000]
    assert rows[-1]["objective"] == s["objective_per_seed"]
    assert (tmp_path / "run" / "figures" / "collapse.png").stat().st_size > 10_000
    assert not rd.checkpoint_path.exists()


@pytest.mark.parametrize(
    ("sets", "layers", "theorem"),
    [
        (["model.bias=free"], None, "Tirer & Bruna Thm 3.2"),
        (
            ["model.bias=regularized", "model.lambda_b=0.5"],
            None,
            "regularised bias (docs/theory-ufm.md)",
        ),
        (["model.loss=ce"], None, "Zhu et al. 2021, Thm 3.1 (regularised CE UFM)"),
        (
            ["model.depth=2", "train.lr=0.3", "model.init={w=0.5, w1=0.5, h=0.5}"],
            ["H1", "Z1"],
            "Tirer & Bruna Thm 4.1",
        ),
        (
            [
                "model.layernorm=true",
                "model.lambda_h=0",
                "model.lambda_w=0.3",
                "train.lr=0.2",
                "train.lr_h_scale=30",
            ],
            None,
            "Súkeník et al., GUFM",
        ),
        (
            [
                "model.layernorm=true",
                "model.lambda_h=0",
                "model.lambda_w=0.3",
                "train.lr=0.2",
                "train.lr_h_scale=30",
                "model.loss=ce",
            ],
            None,
            "Súkeník et al., GUFM",
        ),
    ],
)
def test_every_model_reaches_its_theory(tmp_path, sets, layers, theorem):
    s = run(tmp_path, sets=sets)
    assert s["theorem"] == theorem
    assert s["objective_gap"] <= 1e-8, s["objective_gap"]
    assert s["collapse_max"] <= 1e-6, (s["collapse_max"], s["collapse_max_at"])
    assert max(s["norm_gaps"].values()) <= 1e-6, s["norm_gaps"]
    if layers:
        assert list(s["metrics"]) == layers


def test_relu_extended_ufm_never_beats_its_theory(tmp_path):
    """The ReLU model's landscape has spurious minima (docs/ufm.md): GD from a random start may
    stop above the theorem's value, never below it (the linear optimum is attainable)."""
    sets = [
        "model.depth=2",
        "model.relu=true",
        "model.d=10",
        "train.lr=0.3",
        "model.init={w=0.5, w1=0.5, h=0.5}",
        "train.steps=4000",
    ]
    s = run(tmp_path, sets=sets, seeds=4)
    assert s["theorem"] == "Tirer & Bruna Thm 4.2" and list(s["metrics"]) == ["H1", "Z1", "A1"]
    assert s["expected_zero"] == {"A1": ["nc1", "nc2_etf", "nc2_of", "nc2_w_of", "nc3_of"]}
    assert set(s["theory_norms"]) == {"sigma_W2", "sigma_A1"}
    for p in s["per_seed"]:
        assert p["objective"] >= s["theory_objective"] * (1 - 1e-12)
    assert s["objective_gap"] < 1.0


def test_batched_seeds_equal_single_runs(tmp_path):
    s = run(tmp_path, seeds=3, name="three")
    assert s["seeds"] == [0, 1, 2] and len(s["per_seed"]) == 3
    alone = run(tmp_path, sets=["seed=2"], name="alone")
    a, b = s["per_seed"][2]["objective"], alone["objective"]
    assert abs(a - b) <= 1e-12 * abs(b)
    assert s["objective_gap"] == max(p["objective_gap"] for p in s["per_seed"])


def test_phase_grid_is_one_batched_solve(tmp_path):
    sets = ["phase.points=3", "phase.lo=0.5", "phase.hi=1.8", "phase.seeds=2", "train.steps=4000"]
    s = run(tmp_path, sets=sets, name="phase")
    grid = s["grid"]
    assert len(grid) == 6 and [g["seed"] for g in grid] == [0, 1] * 3
    lam_star = threshold_lambda(EXPERIMENT.config("tb-fig2-nobias", SMALL))
    assert s["threshold_lambda"] == pytest.approx(lam_star)
    assert [g["collapsed"] for g in grid] == [True, True, True, True, False, False]
    assert grid[0]["criticality"] == pytest.approx(0.5)
    for g in grid:
        assert g["objective_gap"] <= 1e-8
    # a grid point equals the single run with the same lambda and seed
    lam = grid[3]["lambda"]
    alone = run(
        tmp_path,
        sets=[f"model.lambda_w={lam}", f"model.lambda_h={lam}", "seed=1", "train.steps=4000"],
        name="alone",
    )
    assert abs(alone["objective"] - grid[3]["objective"]) <= 1e-12 * alone["objective"]
    assert (tmp_path / "phase" / "figures" / "phase_diagram.png").exists()


def test_resume_ends_with_the_uninterrupted_numbers(tmp_path, monkeypatch):
    sets = [
        "checkpoint_every=1000",
        "model.depth=2",
        "model.relu=true",
        "train.lr=0.3",
        "model.init={w=0.5, w1=0.5, h=0.5}",
    ]
    full = run(tmp_path, sets=sets, seeds=2, name="full")
    calls = {"n": 0}
    real_step = BatchedUFM.step

    def crashing_step(self, factor=1.0):
        calls["n"] += 1
        if calls["n"] == 3500:
            raise KeyboardInterrupt("simulated crash")
        real_step(self, factor)

    monkeypatch.setattr(BatchedUFM, "step", crashing_step)
    with pytest.raises(KeyboardInterrupt):
        run(tmp_path, sets=sets, seeds=2, name="crash")
    rd = RunDir(tmp_path / "crash", create=False)
    assert rd.load_checkpoint()["done"] == 3000
    monkeypatch.setattr(BatchedUFM, "step", real_step)
    resumed = resume_run(tmp_path / "crash")
    assert resumed["objective_per_seed"] == full["objective_per_seed"]
    assert resumed["metrics"] == full["metrics"]
    assert rd.read_metrics() == RunDir(tmp_path / "full").read_metrics()


@pytest.mark.parametrize(
    ("sets", "error", "match"),
    [
        (["model.d=2"], TheoryError, "d >= 3"),
        (["model.lambda_w=-0.1"], TheoryError, "lambda_w must be a finite number > 0"),
        (["model.n=0"], TheoryError, "n must be an integer >= 1"),
        (["model.layernorm=true", "model.lambda_h=0", "model.d=3"], TheoryError, "d >= K\\+1"),
        (["model.layernorm=true"], ConfigError, "no feature weight decay"),
        (
            ["model.depth=2", "model.layernorm=true", "model.lambda_h=0"],
            ConfigError,
            "one weight layer",
        ),
        (["phase.points=3", "phase.lo=2", "phase.hi=1"], ConfigError, "0 < lo < hi"),
        (["train.lr=10", "train.steps=200", "log_every=100"], ConfigError, "diverged"),
    ],
)
def test_bad_configs_are_clear_errors(tmp_path, sets, error, match):
    with pytest.raises(error, match=match):
        run(tmp_path, sets=sets)


def test_unknown_key_names_the_valid_ones():
    with pytest.raises(ConfigError, match="valid keys under 'phase'"):
        EXPERIMENT.config("tb-fig2-nobias", ["phase.width=3"])


def test_every_preset_resolves_with_its_theory():
    for name in EXPERIMENT.preset_names():
        cfg = EXPERIMENT.config(name)
        probs = problems(cfg)
        assert probs, name
        pred, note = theory_for(
            cfg, probs[0]["lambda_w"], probs[0]["lambda_w1"], probs[0]["lambda_h"]
        )
        assert note, name
        # the unregularised UFM has no closed form: every interpolating point is a minimiser
        assert (pred is None) == (note == UNREGULARISED), name
        if name.endswith("-quick"):
            assert name[: -len("-quick")] in EXPERIMENT.presets
    phase = EXPERIMENT.config("tb-phase-diagram")
    assert len(problems(phase)) == 100  # 20 lambdas x 5 seeds, one batch


def test_cli_run_json(tmp_path, capsys):
    from nclab.cli import main

    out = tmp_path / "cli"
    args = ["run", "ufm", "--preset", "tb-fig2-bias", "--out", str(out), "--json"]
    for item in SMALL:
        args += ["--set", item]
    code = 0
    try:
        main(args)
    except SystemExit as exc:
        code = exc.code or 0
    captured = capsys.readouterr()
    assert code == 0, captured.err
    s = json.loads(captured.out)
    assert {"objective", "theory_objective", "objective_gap", "metrics", "seconds"} <= set(s)
    assert s["preset"] == "tb-fig2-bias" and s["objective_gap"] <= 1e-10
