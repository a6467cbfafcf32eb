"""The fc-lemmas experiment: the appendix lemmas of Feature Collapse computed, and the claims
that read them failing where a lemma would not hold."""

import math

import numpy as np
import pytest
import torch

from nclab.data.sentences import all_latents, make_task
from nclab.errors import ConfigError
from nclab.experiments import get_experiment
from nclab.experiments.fc_lemmas import compute as C
from nclab.experiments.fc_lemmas.config import FLOAT_TOL
from nclab.experiments.fc_lemmas.train import procrustes
from nclab.reproduce import select
from nclab.theory.feature_collapse import fc_thm2

EXP = get_experiment("fc-lemmas")


def _problem(L=2, sc=2, freq="uniform", d=4, layer_norm="none"):
    task = make_task(3, 3 * sc, L, 3**L, freq, latents=all_latents(3, L))
    return C.Enumerated(task, d, layer_norm)


def test_presets_validate_and_bad_settings_are_refused():
    for preset in EXP.presets:
        EXP.config(preset)
    with pytest.raises(ConfigError, match="no preset"):
        EXP.config("lemmas-quick", {"system.preset": "nope"})
    with pytest.raises(ConfigError, match="d >= nc"):
        EXP.config("lemmas-quick", {"problem.d": 2})


def test_lemma_b_holds_on_the_full_set_and_not_on_a_random_one():
    full = C.lemma_b(all_latents(3, 3), 3)
    assert full["sphere_size_spread"] == 0
    assert full["mean_value_residual"] < FLOAT_TOL and full["theta_rel_gap"] < FLOAT_TOL
    part = C.lemma_b(make_task(3, 3, 3, 10, distinct=True, seed=0).latents, 3)
    assert part["sphere_size_spread"] > 0  # assumption A fails on 10 of 27 latent variables


def test_assumption_b_holds_on_the_full_set_and_fails_on_two_latents():
    assert C.assumption_b(all_latents(3, 3), 3)["holds"]
    two = torch.tensor([[0, 0, 0], [1, 1, 1]])  # one distance: too few equations
    out = C.assumption_b(two, 3)
    assert not out["holds"] and out["nullity"] > 2


def test_theorem_d_is_an_equality_at_type_i_points_and_strict_elsewhere():
    e = _problem()
    W, U = C.type_i(e, 0.7)
    r0 = float(e.risk0(W, U))
    assert r0 == pytest.approx(float(e.g(e.bilinear(W, U))), rel=1e-12)
    gen = torch.Generator().manual_seed(0)
    W = torch.randn(e.nw, e.d, generator=gen, dtype=torch.float64)
    blocks = torch.randn(e.K, e.L, e.d, generator=gen, dtype=torch.float64)
    U = (blocks - blocks.mean(0)).reshape(e.K, -1)
    assert float(e.risk0(W, U)) > float(e.g(e.bilinear(W, U))) + 1e-6


def test_lemma_k_closed_form_matches_the_enumerated_risk():
    from nclab.theory.feature_collapse import _LogTerm

    e = _problem()
    c, lam = 0.9, 0.01
    W, U = C.type_i(e, c)
    eta = 3 / 2 / math.sqrt(e.nw * e.K * e.L)
    closed = _LogTerm(3, e.L, e.K, eta).value(e.nw * c * c) + lam * e.nw * c * c
    assert float(e.risk(W, U, lam, lam)) == pytest.approx(closed, rel=1e-12)


def test_type_iii_gradient_is_aligned_and_a_random_point_is_not():
    e = _problem(sc=3, freq="zipf")
    W, U = C.type_iii(e, 0.8, torch.tensor([1.5, 1.0, 0.6], dtype=torch.float64))
    W.requires_grad_(True)
    U.requires_grad_(True)
    _, gU = torch.autograd.grad(e.risk0(W, U), (W, U))
    a = (gU * U).sum() / (U * U).sum()
    assert float((gU - a * U).norm() / gU.norm()) < FLOAT_TOL
    U2 = (U + 0.1 * torch.randn_like(U)).detach().requires_grad_(True)
    _, gU2 = torch.autograd.grad(e.risk0(W, U2), (W, U2))
    a2 = (gU2 * U2).sum() / (U2 * U2).sum()
    assert float((gU2 - a2 * U2).norm() / gU2.norm()) > 1e-3


def test_system_has_the_theory_solution_from_any_start():
    mu = np.array([0.5, 0.3, 0.2])
    ref = fc_thm2(3, 9, 3, 1e-2, mu=mu.tolist())
    rng = np.random.default_rng(0)
    for _ in range(5):
        x, res = C.solve_system(rng.uniform(-3, 3, 4), mu, 3, 3, 1e-2)
        assert res < 1e-12
        assert np.allclose(x, [ref.c, *ref.r], rtol=1e-9)


def test_procrustes_is_zero_on_a_rotation_and_counts_the_ones_direction():
    gen = torch.Generator().manual_seed(1)
    X0 = torch.randn(5, 12, generator=gen, dtype=torch.float64)
    X0 = X0 - X0.mean(0)  # columns orthogonal to 1_d
    q, _ = torch.linalg.qr(torch.randn(5, 5, generator=gen, dtype=torch.float64))
    assert procrustes(q @ X0, X0, False) < 1e-12
    shifted = X0 + 0.5  # every column moved along 1_d by 0.5 √5 ... out of reach of a rotation
    assert procrustes(shifted, X0, True) == pytest.approx(0.5 * math.sqrt(5 * 12), rel=1e-9)


def test_the_claims_fail_where_a_lemma_would_not_hold():
    """Summaries that a violated lemma would give make its claim's statement check fail."""
    summary = {
        "lemma_b": {"sphere_size_spread": 2, "mean_value_residual": 0.05},
        "lower_bound": {"thm_d_min_rel_gap": -1e-3, "equality_max_rel_err": 1e-16},
        "closed_forms": {"lemma_k_max_rel_err": 1e-4},
        "system": {"distinct": 2},
        "h": {"mean_u_max": 1e-3, "mean_u_tolerance": 1e-6},
    }
    reads = {
        "feature-collapse/lemma-b": "sphere-sizes",
        "feature-collapse/theorem-d": "strict-off-e",
        "feature-collapse/lemma-k": "closed-form",
        "feature-collapse/system-unique": "unique",
        "feature-collapse/lemma-g": "in-n",
    }
    for claim in select(list(reads)):
        chk = next(c for c in claim.checks if c.name == reads[claim.id])
        assert chk.evaluate({"main": summary})["passed"] is False, claim.id
