"""Lemmas G and N of *Feature Collapse* read on trained weights (issue 50): U's distance to
N = {Σ_k Û_k = 0} and its bound from the full-batch gradient, and the claims on it, which fail on a
summary where U is further from N than the bound allows or no nearer than as initialised."""

import math

import pytest
import torch

from nclab.data.sentences import make_dataset, make_task
from nclab.experiments.feature_collapse.measure import common_u, u_offset
from nclab.models.wordnet import WordNet, full_batch_objective
from nclab.reproduce import select

F64 = torch.float64
CLAIMS = {
    "feature-collapse/lemma-g-trained": ("fig3", "fig4a"),
    "feature-collapse/lemma-n-trained": ("fig3_ln", "fig4c"),
}


def _net_and_data(layer_norm: str = "none", seed: int = 0):
    task = make_task(3, 12, 4, 9, seed=seed)
    data = make_dataset(task, 6, seed=seed)
    gen = torch.Generator().manual_seed(seed)
    net = WordNet(12, 4, 5, 9, layer_norm, init_scale=1.0, generator=gen, dtype=F64)
    return net, data


@pytest.mark.parametrize("layer_norm", ["none", "fixed"])
def test_the_cross_entropy_is_blind_to_the_common_part(layer_norm):
    """Lemma G's (and N's) argument: adding one vector to every class's u_{k,ℓ} leaves the
    cross-entropy unchanged; the distance to N is that vector's norm times √K."""
    net, data = _net_and_data(layer_norm)
    with torch.no_grad():
        _, before = full_batch_objective(net, data.x_train, data.y_train, 0.0, 0.0)
        v = torch.randn(net.L * net.d, generator=torch.Generator().manual_seed(1), dtype=F64)
        centred = net.clf.weight - net.clf.weight.mean(0)
        net.clf.weight.copy_(centred + v)
        _, after = full_batch_objective(net, data.x_train, data.y_train, 0.0, 0.0)
    assert float(after) == pytest.approx(float(before), rel=1e-12)
    assert u_offset(net)["norm"] == pytest.approx(math.sqrt(net.K) * float(v.norm()), rel=1e-12)


@pytest.mark.parametrize("layer_norm", ["none", "fixed"])
def test_the_distance_to_n_is_within_the_gradients_bound(layer_norm):
    """‖Σ_k Û_k‖_F / √K <= ‖∇_U F‖_F / λ_U at any weights, with near equality where the common
    part dominates the gradient (a large common shift)."""
    net, data = _net_and_data(layer_norm)
    lam = 1e-2
    out = common_u(net, data, lam, lam)
    assert 0 < out["norm"] <= out["bound"] * (1 + 1e-12)
    assert out["relative"] <= out["relative_bound"] * (1 + 1e-12)
    assert out["excess"] == pytest.approx(lam / 2 * out["norm"] ** 2)
    with torch.no_grad():
        net.clf.weight.add_(100.0)  # the same shift for every class
    shifted = common_u(net, data, lam, lam)
    assert shifted["norm"] <= shifted["bound"] * (1 + 1e-12)
    assert shifted["norm"] > 0.99 * shifted["bound"] / math.sqrt(1.0)  # the shift is the gradient
    assert common_u(net, data, 0.0, 0.0)["bound"] is None  # no weight decay, no minimiser


def test_a_centred_u_is_in_n():
    net, _ = _net_and_data()
    with torch.no_grad():
        net.clf.weight.sub_(net.clf.weight.mean(0))
    assert u_offset(net)["relative"] < 1e-15


def _summary(relative: float, bound: float, untrained: float) -> dict:
    return {
        "common_u": {"relative": relative, "relative_bound": bound},
        "untrained": {"u_common_relative": untrained},
    }


@pytest.mark.parametrize("claim_id", sorted(CLAIMS))
def test_the_claims_pass_in_n_and_fail_off_it(claim_id):
    claim = select([claim_id])[0]
    aliases = CLAIMS[claim_id]
    assert set(claim.runs) == set(aliases)
    checks = {c.name: c for c in claim.checks}
    for alias in aliases:
        inside, nearer = checks[f"{alias}-in-n"], checks[f"{alias}-nearer-n"]
        assert inside.kind == nearer.kind == "statement"
        assert inside.depends_on == () and nearer.depends_on is None
        good = {alias: _summary(1e-7, 1e-3, 0.03)}
        assert inside.evaluate(good)["passed"] and nearer.evaluate(good)["passed"]
        # further from N than the gradient allows: the lemma's argument would be wrong
        assert inside.evaluate({alias: _summary(2e-3, 1e-3, 0.03)})["passed"] is False
        # no nearer N than the untrained network: training did not approach a minimiser
        assert nearer.evaluate({alias: _summary(0.03, 1.0, 0.03)})["passed"] is False
        # a record made before the field: not a number, no pass
        assert inside.evaluate({alias: {"common_u": None}})["passed"] is False
