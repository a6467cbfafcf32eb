"""Feature Collapse Theorems 1-3 against the exact true risk, minimised numerically.

The instances are enumerable: nc=3 concepts, L=3, K = nc^L = 27 (every latent variable, so the
symmetry Assumption 1 holds exactly), a few words per concept; the true risk sums the cross-entropy
of every sentence weighted by its probability (divided by K), plus the weight decay in the same
convention as the networks (nclab.theory.feature_collapse.regularised_risk). L-BFGS in float64 from
a random start; d exceeds min(nw, KL), so the risk of h has no spurious local minimum (App. H).
"""

import json
import math

import numpy as np
import pytest
import torch

from nclab.cli import main
from nclab.data.sentences import all_latents, enumerate_sentences, make_task
from nclab.errors import TheoryError
from nclab.models.wordnet import WordNet
from nclab.theory import get_prediction
from nclab.theory.feature_collapse import (
    equiangular_frame,
    fc_thm1,
    fc_thm2,
    fc_thm3,
    word_frequencies,
)

NC, L, K = 3, 3, 27
RTOL = 1e-4


def full_task(sc, freq="uniform"):
    return make_task(NC, NC * sc, L, K, freq=freq, latents=all_latents(NC, L))


def true_risk_net(task, d, layer_norm="none", seed=0):
    g = torch.Generator().manual_seed(seed)
    net = WordNet(
        task.nw,
        task.L,
        d,
        task.K,
        layer_norm=layer_norm,
        ln_eps=0.0,
        init_scale=1.0,
        generator=g,
        dtype=torch.float64,
    )
    with torch.no_grad():
        net.U.mul_(3.0)
    return net


def minimise(task, net, lam_w, lam_u, rounds=4, max_iter=1500):
    """L-BFGS on the exact true risk; returns (objective, max |gradient|)."""
    x, y, p = enumerate_sentences(task)
    weights = p.double() / task.K
    params = [net.W, net.U]
    opt = torch.optim.LBFGS(
        params,
        lr=1,
        max_iter=max_iter,
        tolerance_grad=1e-11,
        tolerance_change=1e-16,
        history_size=50,
        line_search_fn="strong_wolfe",
    )

    def closure():
        opt.zero_grad()
        f = net.objective(x, y, lam_w, lam_u, weights=weights)
        f.backward()
        return f

    for _ in range(rounds):
        opt.step(closure)
    f = closure()
    return float(f.detach()), max(float(q.grad.abs().max()) for q in params)


def rel(a, b):
    return abs(a - b) / abs(b)


# --------------------------------------------------------------------------------------------------
# closed forms: the paper's numbers, consistency, errors
# --------------------------------------------------------------------------------------------------


def test_paper_values():
    assert round(fc_thm1(nc=3, nw=1200, L=15, K=1000, lam=1e-3).word_norm, 5) == 1.42214
    assert round(fc_thm1(nc=3, nw=1200, L=15, K=50, lam=1e-3).word_norm, 5) == 0.61602


def test_theorem2_uniform_reduces_to_theorem1():
    for lam in (0.01, 0.1):
        p1, p2 = fc_thm1(NC, 9, L, K, lam), fc_thm2(NC, 9, L, lam)
        assert p2.r == pytest.approx([p1.word_norm] * 3, rel=1e-9)
        assert p2.c == pytest.approx(p1.u_norm, rel=1e-9)
        assert p2.objective == pytest.approx(p1.objective, rel=1e-12)
        assert p2.lam_bound == pytest.approx(p1.lam_max, rel=1e-12)


def test_cli_json(capsys):
    try:
        main(
            [
                "theory",
                "fc-thm1",
                "--nc",
                "3",
                "--nw",
                "1200",
                "--L",
                "15",
                "--K",
                "1000",
                "--lam",
                "1e-3",
                "--json",
            ]
        )
    except SystemExit as exc:
        assert not exc.code
    out = json.loads(capsys.readouterr().out)
    assert out["name"] == "fc-thm1" and round(out["prediction"]["word_norm"], 5) == 1.42214
    assert {"tau", "word_norm", "u_norm"} <= set(out["prediction"])
    try:
        main(
            [
                "theory",
                "fc-thm2",
                "--nc",
                "3",
                "--nw",
                "9",
                "--L",
                "3",
                "--lam",
                "0.01",
                "--zipf",
                "--json",
            ]
        )
    except SystemExit as exc:
        assert not exc.code
    out = json.loads(capsys.readouterr().out)
    assert len(out["prediction"]["r"]) == 3 and out["prediction"]["c"] > 0
    assert get_prediction("fc-thm3") is fc_thm3


@pytest.mark.parametrize(
    "call, match",
    [
        (lambda: fc_thm1(3, 1201, 15, 1000, 1e-3), "multiple of nc"),
        (lambda: fc_thm1(3, 1200, 15, 1000, 0.0), "no minimiser"),
        (lambda: fc_thm1(3, 1200, 15, 1000, -1.0), ">= 0"),
        (lambda: fc_thm1(3, 9, 2, 10, 0.1), "do not exist"),
        (lambda: fc_thm1(4, 8, 3, 10, 0.1, d=2), "d >= 3"),
        (lambda: fc_thm3(3, 15, 1000, 1e-3, d=2), "d >= 3"),
        (lambda: fc_thm2(3, 9, 3, 0.2, zipf=True), "above Theorem 2's bound"),
        (lambda: fc_thm2(3, 9, 3, 0.01, mu=[0.5, 0.3, 0.1]), "sum to 1"),
        (lambda: fc_thm2(3, 9, 3, 0.01, mu=[0.5, 0.5]), "sc = nw/nc = 3"),
        (lambda: fc_thm2(3, 9, 3, 0.01, mu=[1 / 3] * 3, zipf=True), "not both"),
    ],
)
def test_out_of_hypothesis_errors(call, match):
    with pytest.raises(TheoryError, match=match):
        call()


def test_flags_outside_exact_assumptions():
    p = fc_thm1(3, 1200, 15, 1000, 1e-3)
    assert p.applies and not p.assumption_exact and "approximately" in p.reason
    q = fc_thm2(3, 9, 3, 0.01, zipf=True, K=20)
    assert not q.applies and "K = nc^L" in q.reason
    z = fc_thm1(NC, 6, L, K, 0.2)  # above lam_max
    assert z.tau == 0 and z.structure == "zero" and z.objective == pytest.approx(math.log(K))


def test_lemma_k_risk_of_type1_configurations():
    """H(n_w c^2) is the exact true risk of every type-I configuration (Lemma K), any c."""
    task = full_task(2)
    net = true_risk_net(task, d=5)
    f = torch.as_tensor(equiangular_frame(NC, 5, seed=1))  # d x nc
    x, y, p = enumerate_sentences(task)
    pred = fc_thm1(NC, task.nw, L, K, 0.05)
    g = pred.eta * task.nw  # so that H(t) uses t = nw c^2
    for c in (0.3, 1.0, 2.5):
        cu = c * math.sqrt(task.nw / (K * L))
        with torch.no_grad():
            net.W.copy_(c * f.T[task.word_concept])
            net.U.copy_((cu * f.T[task.latents]).reshape(K, -1))
        risk = float(net.objective(x, y, 0.05, 0.05, weights=p / K).detach())
        t = task.nw * c * c
        h = L * math.log1p((NC - 1) * math.exp(-g / task.nw * t)) + 0.05 * t
        assert risk == pytest.approx(h, rel=1e-12)


# --------------------------------------------------------------------------------------------------
# Theorems against the numerically minimised exact true risk
# --------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("lam_frac", [0.1, 0.9])  # lam = 0.9 lam_max: near the zero threshold
def test_theorem1_global_minimum(lam_frac):
    task = full_task(2)
    lam = lam_frac * fc_thm1(NC, task.nw, L, K, 0.01).lam_max
    pred = fc_thm1(NC, task.nw, L, K, lam, d=8)
    net = true_risk_net(task, d=8)
    f, gmax = minimise(task, net, lam, lam)
    assert gmax < 1e-7
    assert rel(f, pred.objective) < RTOL
    wn, un = net.W.detach().norm(dim=1), net.u_blocks().detach().norm(dim=2)
    assert float((wn / pred.word_norm - 1).abs().max()) < RTOL
    assert float((un / pred.u_norm - 1).abs().max()) < RTOL
    # type-I: words of a concept share one direction; the three directions are equiangular
    dirs = net.W.detach() / wn[:, None]
    means = torch.stack([dirs[task.word_concept == a].mean(0) for a in range(NC)])
    assert torch.allclose(dirs, means[task.word_concept], atol=1e-4)
    assert torch.allclose(
        means @ means.T, torch.full((3, 3), -0.5).fill_diagonal_(1.0).double(), atol=1e-4
    )


def test_theorem1_above_threshold_zero_solution():
    task = full_task(2)
    lam = 1.1 * fc_thm1(NC, task.nw, L, K, 0.01).lam_max
    pred = fc_thm1(NC, task.nw, L, K, lam)
    net = true_risk_net(task, d=8)
    f, _ = minimise(task, net, lam, lam, rounds=2)
    assert pred.tau == 0.0 and rel(f, pred.objective) < RTOL
    assert float(net.W.detach().norm()) < 1e-3 and float(net.U.detach().norm()) < 1e-3


@pytest.mark.parametrize("lam", [0.01, 0.1])
def test_theorem3_global_minimum(lam):
    task = full_task(3, freq="zipf")  # any frequencies: Theorem 3 does not depend on them
    d = 4
    pred = fc_thm3(NC, L, K, lam, d=d)
    net = true_risk_net(task, d=d, layer_norm="fixed")
    f, gmax = minimise(task, net, 0.0, lam)
    assert gmax < 1e-6
    assert rel(f, pred.objective) < RTOL
    un = net.u_blocks().detach().norm(dim=2)
    assert float((un / pred.u_norm - 1).abs().max()) < RTOL
    assert float(net.U.detach().norm()) == pytest.approx(pred.tau, rel=RTOL)
    reps = net.word_representations().detach()
    assert torch.allclose(reps.norm(dim=1), torch.full((task.nw,), math.sqrt(d)).double())
    means = torch.stack([reps[task.word_concept == a].mean(0) for a in range(NC)])
    assert torch.allclose(reps, means[task.word_concept], atol=1e-3)  # type-II collapse


@pytest.mark.parametrize("lam_frac", [0.08, 0.9])  # 0.9: near the bound of Theorem 2
def test_theorem2_critical_point_and_minimum(lam_frac):
    task = full_task(3, freq="zipf")
    lam = lam_frac * fc_thm2(NC, 9, L, 1e-3, zipf=True).lam_bound
    pred = fc_thm2(NC, task.nw, L, lam, zipf=True)
    d = 10
    x, y, p = enumerate_sentences(task)
    # (i) the type-III configuration of the system (7)-(8) is a critical point (the theorem)
    net = true_risk_net(task, d=d)
    f = torch.as_tensor(equiangular_frame(NC, d, seed=2))
    r = torch.tensor(pred.r, dtype=torch.float64)
    with torch.no_grad():
        net.W.copy_(r[task.word_rank][:, None] * f.T[task.word_concept])
        net.U.copy_((pred.c * f.T[task.latents]).reshape(K, -1))
    risk = net.objective(x, y, lam, lam, weights=p / K)
    risk.backward()
    assert rel(float(risk.detach()), pred.objective) < 1e-10
    assert max(float(q.grad.abs().max()) for q in (net.W, net.U)) < 1e-10
    # (ii) it is also the numerical global minimum (the paper conjectures it)
    net = true_risk_net(task, d=d, seed=1)
    fmin, gmax = minimise(task, net, lam, lam)
    assert gmax < 1e-7 and rel(fmin, pred.objective) < RTOL
    norms = net.W.detach().norm(dim=1)
    assert float((norms / r[task.word_rank] - 1).abs().max()) < RTOL
    assert float((net.u_blocks().detach().norm(dim=2) / pred.c - 1).abs().max()) < RTOL


def test_word_frequencies():
    assert word_frequencies(4).tolist() == [0.25] * 4
    np.testing.assert_allclose(
        word_frequencies(3, zipf=True, s=2.0), np.array([1, 1 / 4, 1 / 9]) / (1 + 1 / 4 + 1 / 9)
    )


@pytest.mark.slow
@pytest.mark.parametrize("nc, Ls, sc", [(2, 4, 2), (4, 2, 2)])
def test_theorems_other_instances(nc, Ls, sc):
    task = make_task(nc, nc * sc, Ls, nc**Ls, latents=all_latents(nc, Ls))
    kk = nc**Ls
    lam = 0.5 * fc_thm1(nc, task.nw, Ls, kk, 0.01).lam_max
    pred = fc_thm1(nc, task.nw, Ls, kk, lam)
    net = true_risk_net(task, d=task.nw + 2)
    f, _ = minimise(task, net, lam, lam)
    assert rel(f, pred.objective) < RTOL
    assert float((net.W.detach().norm(dim=1) / pred.word_norm - 1).abs().max()) < RTOL
    zt = make_task(nc, nc * sc, Ls, kk, freq="zipf", latents=all_latents(nc, Ls))
    p3 = fc_thm3(nc, Ls, kk, 0.05, d=nc + 1)
    net = true_risk_net(zt, d=nc + 1, layer_norm="fixed")
    f, _ = minimise(zt, net, 0.0, 0.05)
    assert rel(f, p3.objective) < RTOL
