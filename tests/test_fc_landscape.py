"""The fc-landscape experiment: random starts on the enumerated true risk of h against the
theorems' global value (App. H's Theorem G; the zero solution above Theorem 2's bound)."""

import math

import pytest

from nclab.errors import ConfigError
from nclab.experiments import get_experiment, run_experiment
from nclab.experiments.fc_landscape.config import LandscapeConfig, ProblemCfg, SearchCfg
from nclab.experiments.fc_landscape.train import TrueRisk, theory_point
from nclab.theory.feature_collapse import fc_thm1

EXP = get_experiment("fc-landscape")
#: nc = 3, L = 2 (K = 9): a few seconds
TINY = {"problem.L": 2, "search.starts": 2, "search.contrast_starts": 2}


@pytest.mark.parametrize(
    "over, match",
    [
        ({"search.lam_factor": 1.0}, "other than 1"),
        ({"search.lam_factor": -0.5}, "lam_factor"),
        ({"search.d": 1}, "d >= nc - 1"),
        ({"search.contrast_d": 1}, "contrast_d=1"),
        ({"problem.L": 12}, "sentences"),
        ({"search.grad_tol": 0.0}, "grad_tol"),
        ({"search.init_min": 2.0, "search.init_max": 1.0}, "init_min <= init_max"),
        ({"search.starts": 0}, "starts"),
        ({"search.contrast_d": -1}, "contrast_d must be >= 0"),
        ({"problem.nc": 1}, "nc >= 2"),
    ],
)
def test_bad_config_is_refused(over, match):
    with pytest.raises(ConfigError, match=match):
        EXP.config("no-spurious-quick", over)


def test_presets_validate():
    for preset in EXP.presets:
        EXP.config(preset)


@pytest.mark.parametrize("freq, sc", [("uniform", 2), ("zipf", 3)])
def test_bound_is_the_exact_zero_threshold(freq, sc):
    """Theorem 2's bound sqrt(L Σ μ² / nc^(L+1)) is ‖∇f(0)‖_op of the enumerated risk for
    K = nc^L (uniform words: Theorem 1's λ_max too)."""
    cfg = LandscapeConfig(problem=ProblemCfg(freq=freq, sc=sc), search=SearchCfg(d=4, contrast_d=0))
    risk = TrueRisk(cfg, 4)
    assert risk.zero_threshold() == pytest.approx(risk.lam0, rel=1e-12)
    if freq == "uniform":
        assert risk.lam0 == pytest.approx(fc_thm1(3, 6, 3, 27, 0.01).lam_max, rel=1e-12)


def test_theory_point_is_critical_with_its_closed_form_risk():
    for freq, factor in (("uniform", 0.3), ("zipf", 0.8), ("zipf", 1.2)):
        cfg = LandscapeConfig(
            problem=ProblemCfg(freq=freq, sc=3), search=SearchCfg(d=5, lam_factor=factor)
        )
        risk = TrueRisk(cfg, 5)
        which, _, theta, value = theory_point(risk)
        expected = {"uniform": "fc-thm1", "zipf": "fc-thm2"}[freq] if factor < 1 else "zero"
        assert which == expected
        theta.requires_grad_(True)
        f = risk.flat(theta)
        f.backward()
        assert float(f.detach()) == pytest.approx(value, rel=1e-12)
        assert float(theta.grad.abs().max()) < 1e-12


def test_run_no_spurious_tiny(tmp_path):
    s = run_experiment(EXP, EXP.config("no-spurious-quick", TINY), tmp_path / "run")
    m, c = s["main"], s["contrast"]
    assert s["problem"]["K"] == 9 and m["hypothesis"] and not c["hypothesis"]
    assert m["global_solution"] == "fc-thm1" and m["global_proven"]
    assert m["converged"] == m["starts"] == 2
    assert m["gap_max"] <= m["gap_tolerance"] and m["at_global"] == 2
    assert 0 < m["gap_tolerance"] < 1e-8 and m["min_curvature"] > 0
    assert m["norm_min_over_global"] == pytest.approx(1.0, abs=1e-5)
    assert s["lam"] == pytest.approx(0.3 * s["lam_threshold"])
    assert c["d"] == 2 and c["starts"] == 2


def test_run_zero_above_the_bound_tiny(tmp_path):
    over = {**TINY, "search.starts": 2}
    s = run_experiment(EXP, EXP.config("thm2-zero-quick", over), tmp_path / "run")
    m = s["main"]
    assert s["contrast"] is None and m["global_solution"] == "zero"
    assert m["global_objective"] == pytest.approx(math.log(9))
    # at (0, 0) the Hessian's smallest eigenvalue is λ - λ0
    assert m["min_curvature"] == pytest.approx(s["lam"] - s["lam_threshold"], rel=1e-8)
    assert m["norm_max"] <= m["zero_norm_tolerance"]


def test_min_curvature_reads_the_chunked_hessian_exactly():
    """The Hessian comes in chunks of rows (memory); it is the Hessian torch.func.hessian gives."""
    import torch

    from nclab.experiments.common.lbfgs import FLAT
    from nclab.experiments.fc_landscape.train import min_curvature

    cfg = LandscapeConfig(problem=ProblemCfg(sc=2), search=SearchCfg(d=5, lam_factor=0.3))
    risk = TrueRisk(cfg, 5)
    theta = 0.3 * torch.randn(
        risk.n_params, dtype=torch.float64, generator=torch.Generator().manual_seed(0)
    )
    H = torch.func.hessian(risk.flat)(theta)
    ev = torch.linalg.eigvalsh(0.5 * (H + H.T))
    top = float(ev.abs().max())
    mu, _ = min_curvature(risk, theta)
    assert mu == pytest.approx(float(ev[ev > FLAT * top].min()), rel=1e-9)
