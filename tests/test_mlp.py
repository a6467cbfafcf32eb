"""MLPs with linear heads: the smoothed ReLU of eq. (7), structure, initialisation, ResNet20."""

from __future__ import annotations

import math

import pytest
import torch
from scipy.integrate import quad

from nclab.errors import ConfigError
from nclab.models.mlp import LinearHeadMLP, NonlinearLayer, SmoothReLU
from nclab.models.resnet import ResNet20, resnet20_mlp


@pytest.mark.parametrize("gamma,beta", [(0.01, 10.0), (0.2, 2.0), (0.5, 1.0)])
def test_smooth_relu_is_eq7(gamma, beta):
    """The closed form equals the paper's integral, evaluated numerically."""
    s = SmoothReLU(gamma, beta)
    c = (1 - gamma) ** 2 / (2 * math.pi * beta)

    def eq7(x):
        f = lambda u: (
            max(gamma * u, u) * math.exp(-math.pi * beta**2 * (x - u) ** 2 / (1 - gamma) ** 2)
        )
        w = 12 * (1 - gamma) / beta
        val, _ = quad(f, x - w, x + w, points=[0.0] if abs(x) < w else None, limit=200)
        return -c + beta / (1 - gamma) * val

    for x in (-3.0, -0.2, -0.01, 0.0, 0.03, 0.5, 4.0):
        got = float(s(torch.tensor(x, dtype=torch.float64)))
        assert got == pytest.approx(eq7(x), abs=1e-9)


def test_smooth_relu_assumption_42():
    """sigma' in [gamma, 1], |sigma(x)| <= |x|, sigma' beta-Lipschitz."""
    gamma, beta = 0.1, 5.0
    s = SmoothReLU(gamma, beta)
    x = torch.linspace(-3, 3, 20001, dtype=torch.float64, requires_grad=True)
    y = s(x)
    (d1,) = torch.autograd.grad(y.sum(), x, create_graph=True)
    y = y.detach()
    (d2,) = torch.autograd.grad(d1.sum(), x)
    d1, x = d1.detach(), x.detach()
    assert float(d1.min()) >= gamma - 1e-12 and float(d1.max()) <= 1 + 1e-12
    assert bool((y.abs() <= x.abs() + 1e-12).all())
    assert float(d2.abs().max()) <= beta + 1e-9
    # uniformly close to the leaky ReLU max(gamma x, x)
    gap = (y - torch.maximum(gamma * x, x)).abs().max()
    assert float(gap) <= (1 - gamma) ** 2 / (2 * math.pi * beta) + 1e-12
    with pytest.raises(ConfigError):
        SmoothReLU(gamma=1.0)


def test_structure_and_forward_all():
    m = LinearHeadMLP(10, 4, widths=[50, 20, 20], head_widths=[8, 6], activation="leaky_relu")
    assert (m.L1, m.L2, m.L) == (3, 3, 6)
    assert [tuple(w.shape) for w in m.weights()] == [
        (50, 10),
        (20, 50),
        (20, 20),
        (8, 20),
        (6, 8),
        (4, 6),
    ]
    assert isinstance(m.layers[0], NonlinearLayer) and m.layers[3].bias is None
    assert [m.is_linear(l) for l in range(1, 7)] == [False] * 3 + [True] * 3
    x = torch.randn(7, 10)
    zs = m.forward_all(x)
    assert len(zs) == 7 and torch.equal(zs[-1], m(x))
    # the linear head is linear: Z_L = W_L W_{L-1} W_{L-2} Z_{L1}
    w = m.weights()
    assert torch.allclose(zs[-1], zs[3] @ (w[5] @ w[4] @ w[3]).T, atol=1e-6)
    assert m.layer_name(1) == "layers.0" and m.layer_name(6) == "layers.5"


def test_kaiming_init_keeps_scale_through_depth():
    torch.manual_seed(0)
    x = torch.randn(512, 64)
    deep = LinearHeadMLP(64, 10, [256] * 8, [256] * 3)
    with torch.no_grad():
        zs = deep.forward_all(x)
    ratios = [float(z.pow(2).mean() / zs[0].pow(2).mean()) for z in zs[1:-1]]
    assert all(0.2 < r < 5 for r in ratios), ratios
    torch_init = LinearHeadMLP(64, 10, [256] * 8, [256] * 3, init="torch")
    with torch.no_grad():
        assert float(torch_init(x).pow(2).mean()) < 1e-3 * float(deep(x).pow(2).mean())


def test_bad_config():
    with pytest.raises(ConfigError):
        LinearHeadMLP(10, 3, [0])
    with pytest.raises(ConfigError):
        LinearHeadMLP(10, 3, [5], activation="tanh")
    with pytest.raises(ConfigError):
        LinearHeadMLP(10, 3, [5], init="xavier")


def test_resnet20_backbone():
    net = ResNet20(width=4, blocks=1)
    assert net(torch.randn(2, 3, 32, 32)).shape == (2, 16)
    full = ResNet20()
    convs = [
        m for m in full.modules() if isinstance(m, torch.nn.Conv2d) and m.kernel_size == (3, 3)
    ]
    assert len(convs) == 19  # + the classifier head = ResNet20's 20 weight layers
    m = resnet20_mlp(5, widths=[32], head_widths=[16], width=4, blocks=1)
    assert m(torch.randn(3, 3, 32, 32)).shape == (3, 5) and m.L1 == 1 and m.L2 == 2
    assert m.forward_all(torch.randn(3, 3, 32, 32))[0].shape == (3, 16)
