"""nclab.models.ufm: closed-form gradients, the GD step, batching, convergence to the theory."""

from __future__ import annotations

import pytest
import torch

from nclab.errors import ConfigError
from nclab.models.ufm import BatchedUFM, UFMSpec, lr_factor
from nclab.theory import objectives as O
from nclab.theory.extended_ufm import deep_linear_ufm, extended_ufm
from nclab.theory.ufm import ufm_ce, ufm_mse, ufm_mse_bias

SPECS = [
    UFMSpec(3, 4, 5),
    UFMSpec(3, 4, 5, bias="free"),
    UFMSpec(3, 4, 5, bias="regularized"),
    UFMSpec(3, 4, 5, loss="ce"),
    UFMSpec(3, 4, 5, loss="ce", bias="regularized"),
    UFMSpec(3, 4, 5, depth=2),
    UFMSpec(3, 4, 5, depth=2, relu=True),
    UFMSpec(3, 4, 5, depth=3, relu=True, loss="ce"),
    UFMSpec(3, 4, 5, layernorm=True),
    UFMSpec(3, 4, 5, layernorm=True, loss="ce"),
    UFMSpec(3, 4, 5, relu_features=True),  # W σ(H) (Tirer & Bruna §7)
]


def make(spec, seeds=(0, 1, 2), **kw):
    args = dict(
        lambda_w=[0.01, 0.02, 0.03][: len(seeds)], lambda_h=0.005, lambda_w1=0.007, lambda_b=0.1
    )
    if spec.layernorm:
        args["lambda_h"] = 0.0
    args.update(kw)
    return BatchedUFM(spec, seeds=list(seeds), **args)


def autograd_objective(m, params):
    L = m.spec.depth
    lam = [m._lam(i) for i in range(len(params))]
    return O.ufm_objective(
        params[:L],
        params[L],
        m.y,
        lam[:L],
        lam[L],
        loss=m.spec.loss,
        relu_hidden=m.spec.relu,
        b=params[L + 1] if m.has_bias else None,
        lambda_b=lam[-1] if m.has_bias else 0.0,
        relu_input=m.spec.relu_features,
    )


@pytest.mark.parametrize("spec", SPECS, ids=str)
def test_closed_form_gradients_match_autograd(spec):
    m = make(spec)
    params = [p.clone().requires_grad_() for p in m.params]
    f = autograd_objective(m, params)
    assert torch.equal(f.detach(), m.objective())  # one definition of the objective
    grads = torch.autograd.grad(f.sum(), params)
    for name, mine, ref in zip(m.param_names, m.gradients(), grads, strict=True):
        assert torch.allclose(mine, ref, rtol=1e-12, atol=1e-15), name


@pytest.mark.parametrize("spec", [*SPECS[:8], SPECS[10]], ids=str)
@pytest.mark.parametrize("momentum", [0.0, 0.9])
def test_step_is_gradient_descent(spec, momentum):
    """step() == theta - lr * grad (plain), or heavy ball v = mu v + grad, theta -= lr v."""
    m = make(spec, lr=[0.1, 0.05, 0.2], momentum=momentum, lr_h_scale=2.0)
    lr = m.lr[:, None, None]
    mult = [2.0 if i == spec.depth else 1.0 for i in range(len(m.params))]
    vel = [torch.zeros_like(p) for p in m.params]
    ref = [p.clone() for p in m.params]
    for _ in range(3):
        grads = m.gradients()
        for i, (p, g) in enumerate(zip(ref, grads, strict=True)):
            vel[i] = momentum * vel[i] + g
            p -= mult[i] * lr * vel[i]
        m.step()
        for p, q in zip(m.params, ref, strict=True):
            assert torch.allclose(p, q, rtol=1e-13, atol=1e-15)
        ref = [p.clone() for p in m.params]


@pytest.mark.parametrize("spec", [SPECS[0], SPECS[2], SPECS[4], SPECS[6], SPECS[9]], ids=str)
def test_batched_equals_unbatched(spec):
    """Problems batched together end where each one alone ends (<= 1e-12 relative, float64)."""
    lams, lrs, seeds = [0.01, 0.02, 0.004], [0.1, 0.05, 0.2], [3, 1, 4]
    kw = dict(lambda_h=0.0) if spec.layernorm else {}
    batch = make(spec, seeds=seeds, lambda_w=lams, lr=lrs, **kw)
    for _ in range(400):
        batch.step()
    for b in range(3):
        alone = make(spec, seeds=[seeds[b]], lambda_w=lams[b], lr=lrs[b], **kw)
        for _ in range(400):
            alone.step()
        for p, q in zip(batch.params, alone.params, strict=True):
            assert torch.allclose(p[b], q[0], rtol=1e-12, atol=1e-14)
        assert abs(float(batch.objective()[b] - alone.objective()[0])) <= 1e-12 * float(
            alone.objective()[0]
        )


@pytest.mark.parametrize("bias", ["none", "free", "regularized"])
def test_class_structured_path_equals_generic_gd(bias):
    """The exact class-structured form of the MSE UFM (ufm_linear) follows the generic GD path."""
    kw = dict(
        lambda_w=[0.01, 0.03, 0.002],
        lambda_h=[0.02, 0.001, 0.005],
        lambda_b=0.3,
        lr=[0.1, 0.3, 0.05],
        lr_h_scale=1.5,
    )
    fast = BatchedUFM(UFMSpec(3, 4, 5, bias=bias), seeds=[0, 1, 2], **kw)
    slow = BatchedUFM(UFMSpec(3, 4, 5, bias=bias), seeds=[0, 1, 2], structured=False, **kw)
    assert fast._fast and not slow._fast
    for t in range(1, 1201):
        fast.step()
        slow.step()
        if t % 400 == 0:  # reading H rebuilds it and restarts the decomposition
            for p, q in zip(fast.params, slow.params, strict=True):
                assert torch.allclose(p, q, rtol=1e-11, atol=1e-13)
    assert torch.allclose(fast.objective(), slow.objective(), rtol=1e-12, atol=0)


def test_float32_and_init_scales():
    m = BatchedUFM(
        UFMSpec(3, 4, 5, depth=2),
        seeds=[0],
        lambda_w=0.01,
        lambda_h=0.01,
        dtype=torch.float32,
        init={"w": 0.1, "w1": 0.2, "h": 0.3},
    )
    assert all(p.dtype == torch.float32 for p in m.params)
    m64 = BatchedUFM(
        UFMSpec(3, 4, 5, depth=2),
        seeds=[0],
        lambda_w=0.01,
        lambda_h=0.01,
        init={"w": 0.1, "w1": 0.2, "h": 0.3},
    )
    for p, q in zip(m.params, m64.params, strict=True):  # same draws, cast
        assert torch.allclose(p.double(), q, rtol=1e-6)
    g = torch.Generator().manual_seed(0)
    h = torch.randn(5, 12, generator=g, dtype=torch.float64) * 0.3
    assert torch.equal(m64.h[0], h)  # features drawn first, from the problem's own seed
    for _ in range(50):
        m.step()
    assert torch.isfinite(m.objective()).all()


def converge(spec, steps, **kw):
    m = BatchedUFM(spec, seeds=[0, 1], **kw)
    for _ in range(steps):
        m.step()
    return m


def test_gd_reaches_ufm_mse_theory():
    K, n, d, lam = 3, 4, 6, 0.02
    pred = ufm_mse(K=K, n=n, d=d, lambda_w=lam, lambda_h=lam)
    m = converge(UFMSpec(K, n, d), 6000, lambda_w=lam, lambda_h=lam, lr=0.5)
    gap = (m.objective() - pred.objective).abs() / pred.objective
    assert float(gap.max()) <= 1e-10
    hbar = m.h.reshape(2, d, K, n).mean(-1)
    gram = hbar.mT @ hbar
    assert torch.allclose(
        gram, pred.rho * torch.eye(K, dtype=gram.dtype).expand(2, K, K), atol=1e-8 * pred.rho
    )
    assert torch.allclose(m.classifier, pred.scale * hbar.mT, atol=1e-8)


@pytest.mark.parametrize("lambda_b", [0.0, 0.5])
def test_gd_reaches_ufm_mse_bias_theory(lambda_b):
    K, n, d, lam = 3, 4, 6, 0.02
    pred = ufm_mse_bias(K=K, n=n, d=d, lambda_w=lam, lambda_h=lam, lambda_b=lambda_b)
    spec = UFMSpec(K, n, d, bias="free" if lambda_b == 0 else "regularized")
    m = converge(spec, 6000, lambda_w=lam, lambda_h=lam, lambda_b=lambda_b, lr=0.5)
    assert float(((m.objective() - pred.objective).abs() / pred.objective).max()) <= 1e-10
    assert torch.allclose(m.b, torch.full_like(m.b, pred.b), atol=1e-8)
    hbar = m.h.reshape(2, d, K, n).mean(-1)
    target = pred.rho * (torch.eye(K, dtype=torch.float64) - 1 / K) + pred.rho_mean / K
    assert torch.allclose(hbar.mT @ hbar, target.expand(2, K, K), atol=1e-8)


def test_gd_reaches_ufm_ce_theory():
    K, n, d, lam = 3, 4, 6, 0.02
    pred = ufm_ce(K=K, n=n, d=d, lambda_w=lam, lambda_h=lam)
    m = converge(UFMSpec(K, n, d, loss="ce"), 6000, lambda_w=lam, lambda_h=lam, lr=0.5)
    assert float(((m.objective() - pred.objective).abs() / pred.objective).max()) <= 1e-10
    assert torch.allclose(
        m.classifier.norm(dim=-1), torch.full((2, K), pred.w_norm, dtype=torch.float64), rtol=1e-6
    )


@pytest.mark.parametrize("depth", [2, 3])
def test_gd_reaches_deep_linear_theory(depth):
    K, n, d, lam = 3, 4, 6, 0.02
    pred = (
        extended_ufm(K=K, n=n, d=d, lambda_w2=lam, lambda_w1=lam, lambda_h1=lam)
        if depth == 2
        else deep_linear_ufm(K=K, n=n, d=d, lambda_w=lam, lambda_h=lam, L=depth)
    )
    m = converge(
        UFMSpec(K, n, d, depth=depth),
        6000,
        lambda_w=lam,
        lambda_h=lam,
        lr=0.3,
        init={"w": 0.5, "w1": 0.5, "h": 0.5},
    )
    assert float(((m.objective() - pred.objective).abs() / pred.objective).max()) <= 1e-10
    sigma_w2 = pred.sigma_w2 if depth == 2 else pred.sigma_w[-1]
    sv = torch.linalg.svdvals(m.classifier)
    assert torch.allclose(sv, torch.full_like(sv, sigma_w2), rtol=1e-6)


def test_bad_configurations_are_errors():
    with pytest.raises(ConfigError, match="n must be"):
        UFMSpec(K=3, n=0, d=4)
    with pytest.raises(ConfigError, match="K must be"):
        UFMSpec(K=1, n=3, d=4)
    with pytest.raises(ConfigError, match="relu needs depth"):
        UFMSpec(K=3, n=3, d=4, relu=True)
    with pytest.raises(ConfigError, match="relu_features"):
        UFMSpec(K=3, n=3, d=4, depth=2, relu_features=True)
    with pytest.raises(ConfigError, match="loss must be"):
        UFMSpec(K=3, n=3, d=4, loss="hinge")
    spec = UFMSpec(K=3, n=3, d=4)
    with pytest.raises(ConfigError, match="lambda_h must be finite and >= 0"):
        BatchedUFM(spec, seeds=[0], lambda_w=0.1, lambda_h=-0.1)
    with pytest.raises(ConfigError, match="lambda_w must be one value or 2 values"):
        BatchedUFM(spec, seeds=[0, 1], lambda_w=[0.1, 0.2, 0.3], lambda_h=0.1)
    with pytest.raises(ConfigError, match="lr must be finite and > 0"):
        BatchedUFM(spec, seeds=[0], lambda_w=0.1, lambda_h=0.1, lr=0.0)
    with pytest.raises(ConfigError, match="lambda_b > 0"):
        BatchedUFM(UFMSpec(3, 3, 4, bias="regularized"), seeds=[0], lambda_w=0.1, lambda_h=0.1)
    with pytest.raises(ConfigError, match="unknown init keys"):
        BatchedUFM(spec, seeds=[0], lambda_w=0.1, lambda_h=0.1, init={"v": 1.0})
    with pytest.raises(ConfigError, match="seeds"):
        BatchedUFM(spec, seeds=[], lambda_w=0.1, lambda_h=0.1)


def test_state_roundtrip_and_schedules():
    m = make(SPECS[6], momentum=0.5)
    for _ in range(5):
        m.step()
    state = m.state_dict()
    for _ in range(5):
        m.step()
    other = make(SPECS[6], momentum=0.5)
    other.load_state_dict(state)
    for _ in range(5):
        other.step()
    assert all(torch.equal(p, q) for p, q in zip(m.params, other.params, strict=True))
    with pytest.raises(ConfigError, match="does not match"):
        make(SPECS[6], seeds=(5, 6, 7)).load_state_dict(state)
    assert lr_factor(5, "cosine", total=10) == pytest.approx(0.5)
    with pytest.raises(ConfigError, match="schedule"):
        lr_factor(0, "linear")
