"""nclab.curvature against dense Jacobians and Hessians of tiny float64 models (to 1e-6 relative)."""

import itertools
import os

import pytest
import torch
from torch import nn

from nclab.curvature import hessian_top_eigenvalue, ntk_operator_norm
from nclab.errors import ConfigError, DataError

F64 = torch.float64
DEVICE = os.environ.get("NCLAB_TEST_DEVICE", "cuda")


def mlp(widths=(3, 5, 4, 2), act=nn.Tanh, bias=True, seed=0):
    torch.manual_seed(seed)
    layers = []
    for i, (a, b) in enumerate(itertools.pairwise(widths)):
        layers.append(nn.Linear(a, b, bias=bias))
        if i < len(widths) - 2:
            layers.append(act())
    return nn.Sequential(*layers).double()


def data(n=7, d=3, k=2, seed=1):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(n, d, generator=g, dtype=F64), torch.randn(n, k, generator=g, dtype=F64)


def flat_fn(model, names=None):
    """``f(theta_flat, x)`` with the named (default: all) parameters as one vector."""
    named = dict(model.named_parameters())
    names = list(names or named)
    shapes = [named[n].shape for n in names]
    sizes = [named[n].numel() for n in names]
    others = {k: v.detach() for k, v in named.items() if k not in names}

    def f(theta, x):
        views = (t.view(s) for t, s in zip(theta.split(sizes), shapes, strict=True))
        parts = dict(zip(names, views, strict=True))
        return torch.func.functional_call(model, (parts, others), (x,))

    theta = torch.cat([named[n].detach().reshape(-1) for n in names])
    return f, theta


def dense_ntk(model, x, names=None):
    f, theta = flat_fn(model, names)
    jac = torch.func.jacrev(lambda t: f(t, x).reshape(-1))(theta)  # (N K) x P
    return jac @ jac.T


def dense_hessian(model, loss_fn, x, y, names=None):
    f, theta = flat_fn(model, names)
    return torch.func.hessian(lambda t: loss_fn(f(t, x), y))(theta)


def rel(a, b):
    return abs(a - b) / abs(b)


mse_mean = nn.MSELoss()


def mse_sum(out, y):
    return 0.5 * ((out - y) ** 2).sum()


# --------------------------------------------------------------------------------------------------
# the NTK
# --------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("method", ["power", "lanczos"])
@pytest.mark.parametrize("act", [nn.Tanh, nn.ReLU])
@pytest.mark.parametrize("batch_size", [None, 3])
def test_ntk_norm_equals_the_dense_kernel(method, act, batch_size):
    model = mlp(act=act)
    x, _ = data()
    truth = float(torch.linalg.eigvalsh(dense_ntk(model, x))[-1])
    est = ntk_operator_norm(model, x, method=method, batch_size=batch_size, tol=1e-9)
    assert est.converged and est.method == method
    assert rel(est.value, truth) < 1e-6
    # the maximiser A is an eigenvector of Theta, output-shaped, unit norm
    a = est.vector
    assert a.shape == (7, 2)
    theta = dense_ntk(model, x)
    assert torch.allclose(theta @ a.reshape(-1), truth * a.reshape(-1), atol=1e-5 * truth)
    assert abs(float(torch.linalg.vector_norm(a)) - 1.0) < 1e-12


def test_ntk_norm_is_the_max_of_the_papers_ratio():
    """||Theta||_op = max_A ||grad Tr[Z A^T]||^2 / ||A||_F^2: the ratio at the returned A is the
    value, and no random A exceeds it."""
    model = mlp()
    x, _ = data()
    est = ntk_operator_norm(model, x, tol=1e-10)

    def ratio(a):
        model.zero_grad()
        (model(x) * a).sum().backward()
        g2 = sum(float((p.grad**2).sum()) for p in model.parameters())
        return g2 / float((a**2).sum())

    assert rel(ratio(est.vector), est.value) < 1e-8
    g = torch.Generator().manual_seed(5)
    assert all(ratio(torch.randn(7, 2, generator=g, dtype=F64)) <= est.value for _ in range(20))


def test_ntk_of_a_subset_of_parameters():
    model = mlp()
    x, _ = data()
    names = ["4.weight"]
    truth = float(torch.linalg.eigvalsh(dense_ntk(model, x, names))[-1])
    est = ntk_operator_norm(model, x, params=names, tol=1e-10)
    assert rel(est.value, truth) < 1e-6
    # the last layer's NTK is Z_2 Z_2^T (x) I_K
    z2 = model[:4](x).detach()
    assert rel(est.value, float(torch.linalg.matrix_norm(z2, 2)) ** 2) < 1e-6


def test_ntk_is_deterministic_and_does_not_touch_the_model():
    model = mlp()
    x, _ = data()
    before = {k: v.clone() for k, v in model.state_dict().items()}
    a = ntk_operator_norm(model, x, seed=3)
    b = ntk_operator_norm(model, x, seed=3)
    assert a.value == b.value
    assert all(torch.equal(before[k], v) for k, v in model.state_dict().items())
    assert all(p.grad is None for p in model.parameters())


# --------------------------------------------------------------------------------------------------
# the Hessian
# --------------------------------------------------------------------------------------------------


def test_hessian_top_eigenvalue_equals_the_dense_hessian():
    model = mlp(seed=2)
    x, y = data()
    h = dense_hessian(model, mse_mean, x, y)
    evals = torch.linalg.eigvalsh(h)
    assert evals[0] < 0 < evals[-1]  # an indefinite Hessian (residuals are not zero)
    est = hessian_top_eigenvalue(model, mse_mean, (x, y), tol=1e-10)
    assert est.converged and rel(est.value, float(evals[-1])) < 1e-6
    flat = torch.cat([v.reshape(-1) for v in est.vector.values()])
    assert torch.allclose(h @ flat, est.value * flat, atol=1e-6 * est.value)


def test_power_iteration_gives_the_largest_magnitude():
    model = mlp(seed=2)
    x, y = data()
    evals = torch.linalg.eigvalsh(dense_hessian(model, mse_mean, x, y))
    top = float(evals[evals.abs().argmax()])
    est = hessian_top_eigenvalue(model, mse_mean, (x, y), method="power", max_iter=5000, tol=1e-9)
    assert est.converged and rel(est.value, top) < 1e-6


@pytest.mark.parametrize("batch_size", [1, 2, 4])
def test_hessian_is_independent_of_the_chunking(batch_size):
    model = mlp(seed=3)
    x, y = data()
    whole = hessian_top_eigenvalue(model, mse_mean, (x, y), tol=1e-10).value
    split = hessian_top_eigenvalue(model, mse_mean, (x, y), batch_size=batch_size, tol=1e-10).value
    assert rel(split, whole) < 1e-9
    summed = hessian_top_eigenvalue(
        model, mse_sum, (x, y), reduction="sum", batch_size=batch_size, tol=1e-10
    ).value
    # 1/2 sum = (N K / 2) mean: the Hessians differ by that factor
    assert rel(summed, whole * 7 * 2 / 2) < 1e-9


def test_cross_entropy_and_weight_decay():
    model = mlp(widths=(3, 6, 3), seed=4)
    x, _ = data(k=3)
    labels = torch.tensor([0, 1, 2, 0, 1, 2, 0])
    ce = nn.CrossEntropyLoss()
    truth = float(torch.linalg.eigvalsh(dense_hessian(model, ce, x, labels))[-1])
    est = hessian_top_eigenvalue(model, ce, (x, labels), weight_decay=0.3, tol=1e-10)
    assert rel(est.value, truth + 0.3) < 1e-6


def test_gauss_newton_at_interpolation_equals_the_ntk():
    """At Y = f(theta) the Hessian of 1/2||f - Y||^2 is J^T J, whose top eigenvalue is ||Theta||_op
    (the paper's eq. (19) with zero residual): the two functions agree."""
    model = mlp(seed=5)
    x, _ = data()
    y = model(x).detach()
    ntk = ntk_operator_norm(model, x, tol=1e-10).value
    sharp = hessian_top_eigenvalue(model, mse_sum, (x, y), reduction="sum", tol=1e-10).value
    assert rel(sharp, ntk) < 1e-8


def test_a_subset_of_parameters_in_the_hessian():
    model = mlp(seed=6)
    x, y = data()
    names = ["2.weight", "2.bias"]
    truth = float(torch.linalg.eigvalsh(dense_hessian(model, mse_mean, x, y, names))[-1])
    est = hessian_top_eigenvalue(model, mse_mean, (x, y), params=names, tol=1e-10)
    assert rel(est.value, truth) < 1e-6 and set(est.vector) == set(names)


# --------------------------------------------------------------------------------------------------
# errors
# --------------------------------------------------------------------------------------------------


def test_errors_say_what_came():
    model = mlp()
    x, y = data()
    with pytest.raises(DataError, match="model must be a torch.nn.Module"):
        ntk_operator_norm(lambda t: t, x)
    with pytest.raises(DataError, match="inputs must be a torch.Tensor"):
        ntk_operator_norm(model, x.numpy())
    with pytest.raises(DataError, match="inputs are on meta"):
        ntk_operator_norm(model, torch.empty(3, 3, device="meta"))
    with pytest.raises(ConfigError, match="method must be"):
        ntk_operator_norm(model, x, method="arnoldi")
    with pytest.raises(ConfigError, match="unknown parameter names"):
        ntk_operator_norm(model, x, params=["nope"])
    with pytest.raises(ConfigError, match="batch_size must be"):
        ntk_operator_norm(model, x, batch_size=0)
    with pytest.raises(DataError, match="batch must be a pair"):
        hessian_top_eigenvalue(model, mse_mean, x)
    with pytest.raises(DataError, match="one row per input"):
        hessian_top_eigenvalue(model, mse_mean, (x, y[:3]))
    with pytest.raises(ConfigError, match="reduction must be"):
        hessian_top_eigenvalue(model, mse_mean, (x, y), reduction="none")


def test_not_converged_is_reported():
    model = mlp()
    x, _ = data()
    est = ntk_operator_norm(model, x, max_iter=1, tol=1e-12)
    assert not est.converged and est.iterations == 1 and est.residual > 0


# --------------------------------------------------------------------------------------------------
# on an accelerator (skipped without CUDA; NCLAB_TEST_DEVICE=cpu runs them on the CPU)
# --------------------------------------------------------------------------------------------------


@pytest.mark.skipif(
    DEVICE == "cuda" and not torch.cuda.is_available(), reason="needs a CUDA device"
)
def test_on_the_inputs_device_equals_the_cpu():
    model = mlp(seed=7)
    x, y = data()
    cpu_ntk = ntk_operator_norm(model, x, tol=1e-10).value
    cpu_h = hessian_top_eigenvalue(model, mse_mean, (x, y), tol=1e-10).value
    model.to(DEVICE)
    ntk = ntk_operator_norm(model, x.to(DEVICE), tol=1e-10, batch_size=4)
    h = hessian_top_eigenvalue(model, mse_mean, (x.to(DEVICE), y.to(DEVICE)), tol=1e-10)
    assert ntk.vector.device.type == DEVICE
    assert rel(ntk.value, cpu_ntk) < 1e-9 and rel(h.value, cpu_h) < 1e-9
