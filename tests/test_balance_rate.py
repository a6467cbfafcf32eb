"""The balancedness-rate scalars of the linear-head experiment (phase 2 of Jacot et al.'s Thm 4.4):
on synthetic records with known rates, and on a short GD run of a LinearHeadMLP."""

import math

import pytest
import torch

from nclab.experiments.linear_head.balance_rate import KEYS, pair_imbalance, rate_derived
from nclab.models.mlp import LinearHeadMLP

ETA, LAM = 0.2, 1e-3
RATE = (1 - ETA * LAM) ** 2


def records(linear_rate=RATE, straddle_rate=0.9999, epochs=2000, every=50, loss_tau=80.0):
    """Exponential imbalance (a straddling pair and two linear pairs), a loss that settles fast."""
    out = []
    for e in range(every, epochs + 1, every):
        loss = 0.01 + math.exp(-e / loss_tau)
        imb = [3.0 * straddle_rate**e, 2.0 * linear_rate**e, 1.0 * linear_rate**e]
        out.append({"epoch": e, "train_loss": loss, "imbalance": imb})
    return out


SUMMARY = {"lr": ETA, "weight_decay": LAM, "L1": 2, "epochs": 2000, "steps_per_epoch": 1}


def test_an_exact_rate_gives_zero_error():
    d = rate_derived(SUMMARY, records())
    assert set(d) == set(KEYS)
    assert d["imbalance_rate_predicted"] == pytest.approx(RATE)
    assert d["imbalance_rate_error_linear"] < 1e-9
    assert d["imbalance_log_rate_ratio_straddle"] == pytest.approx(
        math.log(0.9999) / math.log(RATE), rel=1e-9
    )
    assert d["imbalance_end_over_start"] == pytest.approx(RATE ** (2000 - 50), rel=1e-9)
    # the loss (from epoch 50) is within 10 % of its fall after 80 log(10 e^(-50/80)) = 234: 250
    assert d["loss_settled_fraction"] == pytest.approx(250 / 2000)
    # log ||D|| falls linearly from epoch 50 to 2000: within 10 % of its fall at 1805 -> 1850
    assert d["imbalance_settled_fraction"] == pytest.approx(1850 / 2000)


def test_a_wrong_rate_is_seen():
    """Momentum-like decay (a 10x faster log-rate) gives an error of 9."""
    faster = math.exp(10 * math.log(RATE))
    d = rate_derived(SUMMARY, records(linear_rate=faster))
    assert d["imbalance_rate_error_linear"] == pytest.approx(9.0, rel=1e-6)


def test_steps_per_epoch_scale_the_rate():
    d = rate_derived(SUMMARY | {"steps_per_epoch": 4}, records(linear_rate=RATE**4))
    assert d["imbalance_rate_error_linear"] < 1e-9


def test_the_rate_is_fitted_on_the_second_half():
    """An early transient (gradients not yet small) does not enter the fit."""
    recs = records()
    for r in recs[:10]:
        r["imbalance"] = [v * 5.0 for v in r["imbalance"]]
    assert rate_derived(SUMMARY, recs)["imbalance_rate_error_linear"] < 1e-9


def test_without_tracking_everything_is_none():
    recs = [{"epoch": 10, "train_loss": 1.0}, {"epoch": 20, "train_loss": 0.5}]
    assert rate_derived(SUMMARY, recs) == dict.fromkeys(KEYS)


def test_pair_imbalance_against_a_direct_computation():
    torch.manual_seed(0)
    m = LinearHeadMLP(5, 3, [7, 6], [4, 4])
    ws = [w.detach().double() for w in m.weights()]
    direct = [
        float(torch.linalg.matrix_norm(ws[i].T @ ws[i] - ws[i - 1] @ ws[i - 1].T, 2))
        for i in range(2, 5)
    ]
    assert pair_imbalance(m) == pytest.approx(direct, rel=1e-12)


def test_gradient_descent_decays_at_one_minus_eta_lambda_squared():
    """Full-batch GD with weight decay, no momentum, on a small problem: the linear pairs' measured
    log-rate is (1 - eta lam)^2's to 1e-3 once the loss has settled."""
    torch.manual_seed(0)
    g = torch.Generator().manual_seed(1)
    K, N = 3, 60
    y = torch.arange(N) % K
    x = 2.0 * torch.randn(K, 6, generator=g)[y] + torch.randn(N, 6, generator=g)
    x = x / x.std()
    m = LinearHeadMLP(6, K, [32, 32], [16, 16]).double()
    x, onehot = x.double(), torch.nn.functional.one_hot(y, K).double()
    eta, lam, epochs = 0.05, 2e-2, 1500
    opt = torch.optim.SGD(m.parameters(), lr=eta, weight_decay=lam)
    recs = []
    for e in range(1, epochs + 1):
        loss = ((m(x) - onehot) ** 2).sum() / (K * N)
        opt.zero_grad()
        loss.backward()
        opt.step()
        if e % 50 == 0:
            recs.append({"epoch": e, "train_loss": loss.item(), "imbalance": pair_imbalance(m)})
    summary = {"lr": eta, "weight_decay": lam, "L1": 2, "epochs": epochs}
    d = rate_derived(summary, recs)
    assert d["imbalance_rate_error_linear"] < 1e-3
    assert d["imbalance_end_over_start"] < 0.1
