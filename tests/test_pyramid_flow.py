"""The pyramid-flow experiment: the smooth activation (7) and Assumption 4.2, the config's checks
of Theorem 4.4's hypotheses, (8)-(12) on a network, the gradient flow against gradient descent."""

import math

import pytest
import torch
from scipy.integrate import quad

from nclab.errors import ConfigError
from nclab.experiments import get_experiment
from nclab.experiments.pyramid_flow import train as T
from nclab.experiments.pyramid_flow.activation import (
    smooth_relu,
    smooth_relu_prime,
    smooth_relu_second,
)
from nclab.theory import get_prediction
from nclab.theory.jacot_flow import conditions, eps1_failure

EXP = get_experiment("pyramid-flow")
GRID = torch.linspace(-3.0, 3.0, 2001, dtype=torch.float64)


def _quadrature(x: float, gamma: float, beta: float) -> float:
    """(7) as printed, by numerical integration."""
    w = (1 - gamma) / beta  # the kernel's scale: its standard deviation is w / sqrt(2 pi)

    def f(u: float) -> float:
        return max(gamma * u, u) * math.exp(-math.pi * (x - u) ** 2 / w**2)

    val, _ = quad(f, x - 12 * w, x + 12 * w, points=[0.0] if abs(x) < 12 * w else None, limit=200)
    return -((1 - gamma) ** 2) / (2 * math.pi * beta) + beta / (1 - gamma) * val


@pytest.mark.parametrize(("gamma", "beta"), [(0.5, 2.0), (0.1, 1.0), (0.9, 5.0)])
def test_closed_form_matches_quadrature_of_7(gamma, beta):
    xs = [-2.0, -0.3, -0.05, 0.0, 0.02, 0.1, 0.7, 3.0]
    got = smooth_relu(torch.tensor(xs, dtype=torch.float64), gamma, beta)
    want = [_quadrature(x, gamma, beta) for x in xs]
    assert torch.allclose(got, torch.tensor(want, dtype=torch.float64), atol=1e-10, rtol=1e-9)


@pytest.mark.parametrize(("gamma", "beta"), [(0.5, 2.0), (0.1, 1.0), (0.9, 5.0)])
def test_assumption_4_2_holds(gamma, beta):
    x = GRID.clone().requires_grad_(True)
    y = smooth_relu(x, gamma, beta)
    (d1,) = torch.autograd.grad(y.sum(), x, create_graph=True)
    (d2,) = torch.autograd.grad(d1.sum(), x)
    d1 = d1.detach()
    # the derivatives are the closed forms'
    assert torch.allclose(d1, smooth_relu_prime(GRID, gamma, beta), atol=1e-12)
    assert torch.allclose(d2, smooth_relu_second(GRID, gamma, beta), atol=1e-9)
    # (i) sigma' in [gamma, 1], (ii) |sigma(x)| <= |x|, (iii) sigma' beta-Lipschitz (|sigma''| <= beta)
    assert float(d1.min()) >= gamma - 1e-15 and float(d1.max()) <= 1 + 1e-15
    assert bool((y.detach().abs() <= GRID.abs() + 1e-15).all())
    assert float(d2.abs().max()) <= beta * (1 + 1e-12)
    assert float(d2.abs().max()) >= 0.99 * beta  # attained near 0: the constant is tight
    # and it approaches the leaky ReLU (Nguyen & Mondelli's Lemma B.1: uniformly)
    leaky = torch.maximum(gamma * GRID, GRID)
    assert (
        float((y.detach() - leaky).abs().max()) <= (1 - gamma) ** 2 / (2 * math.pi * beta) + 1e-12
    )


@pytest.mark.parametrize(
    "over, match",
    [
        ({"model.nonlinear": 1}, "L1 >= 2"),
        ({"model.widths": [12, 6]}, "L2 >= 2"),
        ({"model.widths": [8, 6, 4]}, "n1 >= N"),
        ({"model.widths": [12, 4, 6]}, "pyramidal|n2 >= n3"),
        ({"data.dim": 6}, "dim >= N"),
        ({"data.dim": 14}, "n1 >= dim"),
        ({"model.gamma": 1.0}, "γ in"),
        ({"model.beta": 0.5}, "β >= 1"),
        ({"sweep.eps1": [0.5]}, "two values"),
        ({"sweep.eps1": [0.25, 0.5]}, "decrease"),
        ({"sweep.eps1": [1.2, 0.5]}, "eps1 ="),
        ({"sweep.lam_factor": 2.0}, "lam_factor"),
        ({"init.second_scale": 0.0}, "second_scale"),
        ({"solve.check_factor": 1.0}, "check_factor"),
        ({"solve.gd_step_factor": 2.0}, "gd_step_factor"),
    ],
)
def test_bad_config_is_refused(over, match):
    with pytest.raises(ConfigError, match=match):
        EXP.config("thm44-quick", over)


def test_presets_validate():
    for preset in EXP.presets:
        EXP.config(preset, {})


@pytest.fixture(scope="module")
def quick_net():
    cfg = EXP.config("thm44-quick", {})
    X, Y, labels = T.make_data(cfg, 0)
    net = T.Network(cfg, X, Y)
    theta0 = T.init(cfg, net, 0)
    return cfg, net, theta0, labels


def test_initialisation_meets_assumption_4_3(quick_net):
    cfg, net, theta0, _ = quick_net
    c = T.constants(cfg, net, theta0)
    assert c.lambda_f == pytest.approx(cfg.init.lambda_f, rel=1e-6)
    assert all(v == pytest.approx(cfg.init.singular_value) for v in c.lambdas)
    assert c.assumption_lhs >= c.assumption_rhs
    # with a small second layer Z_L ~ 0, so C_0 ~ ||Y||^2 / 2 = N / 2 (the paper's remark)
    assert c.c0 == pytest.approx(c.N / 2, rel=0.05)


def test_hand_gradient_and_jacobian_match_autograd(quick_net):
    """The solver's numpy gradient of C_λ and Jacobian of Z_L (by hand) against torch autograd,
    at θ0 and at a random point where the nonlinear layers' pre-activations spread wide."""
    cfg, net, theta0, _ = quick_net
    g = torch.Generator().manual_seed(3)
    far = theta0 + 0.5 * torch.randn(theta0.shape, generator=g, dtype=theta0.dtype)
    for theta in (theta0, far):
        for lam in (0.0, 0.3):
            ref = torch.func.grad(lambda t, lam=lam: net.cost(t, lam))(theta)
            got = net.grad_np(theta.numpy(), lam)
            assert torch.allclose(torch.from_numpy(got), ref, rtol=1e-12, atol=1e-13)
        J = torch.func.jacrev(lambda t: net.forward(t)[-1].reshape(-1))(theta)
        got = net.out_jacobian_np(theta.numpy())
        assert got.shape == tuple(J.shape)
        assert torch.allclose(torch.from_numpy(got), J, rtol=1e-12, atol=1e-13)


def test_too_small_an_initialisation_is_refused():
    from nclab.experiments.protocol import Unit

    cfg = EXP.config("thm44-quick", {"init.lambda_f": 1.0, "init.singular_value": 1.0})
    with pytest.raises(ConfigError, match="Assumption 4.3"):
        T.train(cfg, Unit("", 0), None, None)


def test_conditions_10_and_their_time(quick_net):
    cfg, net, theta0, _ = quick_net
    c = T.constants(cfg, net, theta0)
    big, small = (conditions(c, e, 0.1 * e * e, 1.0, 4) for e in (0.5, 0.25))
    # lambda is (10)'s third term, of order eps1^2 (the paper's reading)
    assert big.lam == big.lam_terms[2] and small.lam == pytest.approx(big.lam / 4)
    # eta k -> t* as eta -> 0: (10)'s eta is so small that eta k is t* up to the ceilings
    assert big.eta * big.k / big.t_star == pytest.approx(1.0, rel=1e-6)
    assert big.eta < 1e-30 and big.k > 1e30
    # r of (12) is then of constant order: eps1 sqrt(2 / lambda) does not depend on eps1
    assert small.r == pytest.approx(big.r)
    assert small.t_star > 3.5 * big.t_star  # of order 1/lambda ~ 1/eps1^2


def test_nclab_theory_jacot_flow_gives_the_experiments_numbers(quick_net):
    """``nclab theory jacot-flow`` on the constants the experiment measures at θ0 gives the very
    numbers the experiment computes (one theorem, one place), and says when it does not apply."""
    cfg, net, theta0, _ = quick_net
    c = T.constants(cfg, net, theta0)
    cond = conditions(c, 0.5, 0.025, 1.0, 4)
    given = dict(N=c.N, K=c.K, L1=c.L1, n_penult=4, gamma=c.gamma, beta=c.beta, b=c.b)
    given |= dict(lambda_f=c.lambda_f, lambdas=list(c.lambdas), lambda_bars=list(c.lambda_bars))
    given |= dict(c0=c.c0, theta_norm=c.theta_norm, x_op=c.x_op, eps2=0.025)
    p = get_prediction("jacot-flow")(eps1=0.5, **given)
    assert p.applies and (p.alpha, p.r0, p.beta1) == (c.alpha, c.r0, c.beta1)
    assert (p.assumption43_lhs, p.assumption43_rhs) == (c.assumption_lhs, c.assumption_rhs)
    assert (p.lam, p.eta, p.k, p.t_star) == (cond.lam, cond.eta, cond.k, cond.t_star)
    assert (p.r, p.bound11, p.bound11_psi_sq) == (cond.r, cond.bound11, cond.bound11_psi_sq)
    far = get_prediction("jacot-flow")(eps1=1.2, **given)  # the config refuses it too
    assert not far.applies and far.lam is None and far.reason == eps1_failure(1.2, c.K, c.N)
    small = get_prediction("jacot-flow")(eps1=0.5, **(given | {"lambda_f": 0.1}))
    assert not small.applies and "Assumption 4.3" in small.reason


def test_flow_is_the_limit_of_gradient_descent(quick_net):
    """GD at eta and eta/2 over a short time: its distance to the flow halves with the step."""
    cfg, net, theta0, _ = quick_net
    c = T.constants(cfg, net, theta0)
    lam = conditions(c, 0.5, 0.025, 1.0, 4).lam
    top, gd = T.gd_check(
        cfg.model_copy(update={"solve": cfg.solve.model_copy(update={"gd_steps": 100})}),
        net,
        theta0,
        lam,
    )
    assert top > 0
    assert 0.4 < gd["gd_error_ratio"] < 0.6
