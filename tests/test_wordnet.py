"""The word networks h / h* and their training kernels (nclab.models.wordnet)."""

import copy
import math

import pytest
import torch
import torch.nn.functional as F

from nclab.errors import ConfigError
from nclab.models.wordnet import WordNet, full_batch_objective, sgd_step


def make(layer_norm="none", dtype=torch.float64, scale=1.0, seed=0):
    return WordNet(
        12,
        3,
        5,
        4,
        layer_norm=layer_norm,
        init_scale=scale,
        generator=torch.Generator().manual_seed(seed),
        dtype=dtype,
    )


@pytest.mark.parametrize("layer_norm", ["none", "fixed"])
def test_forward_by_hand(layer_norm):
    net = make(layer_norm)
    x = torch.tensor([[0, 5, 11], [3, 3, 7]])
    W, U = net.W.detach(), net.U.detach()
    out = torch.zeros(2, 4, dtype=torch.float64)
    for i in range(2):
        for k in range(4):
            for ell in range(3):
                w = W[x[i, ell]]
                if layer_norm == "fixed":  # (w - mean) / sqrt(var + eps), biased variance
                    w = (w - w.mean()) / math.sqrt(float(((w - w.mean()) ** 2).mean()) + 1e-5)
                out[i, k] += float(U[k, ell * 5 : (ell + 1) * 5] @ w)
    assert torch.allclose(net(x), out, atol=1e-12)


def test_init_like_the_authors():
    net = WordNet(1200, 15, 100, 1000, generator=torch.Generator().manual_seed(0))
    assert float(net.W.detach().std()) == pytest.approx(1e-3, rel=0.02)  # N(0, 1) / 1000
    bound = 1e-3 / math.sqrt(1500)  # kaiming-uniform default of nn.Linear, / 1000
    umax = float(net.U.detach().abs().max())
    assert 0.99 * bound < umax <= bound


@pytest.mark.parametrize("layer_norm", ["none", "fixed", "learnable"])
def test_sgd_step_equals_torch_sgd(layer_norm):
    net = make(layer_norm)
    ref = copy.deepcopy(net)
    groups = [
        {"params": [ref.emb.weight], "weight_decay": 0.02},
        {"params": [ref.clf.weight], "weight_decay": 0.03},
    ]
    if layer_norm == "learnable":
        groups.append({"params": list(ref.ln.parameters()), "weight_decay": 0.0})
    opt = torch.optim.SGD(groups, lr=0.1)
    g = torch.Generator().manual_seed(1)
    for _ in range(6):
        x, y = torch.randint(0, 12, (7, 3), generator=g), torch.randint(0, 4, (7,), generator=g)
        with torch.set_grad_enabled(layer_norm == "learnable"):
            ours = sgd_step(net, x, y, 0.1, 0.02, 0.03)
        opt.zero_grad()
        loss = F.cross_entropy(ref(x), y)
        loss.backward()
        opt.step()
        assert float(ours) == pytest.approx(float(loss.detach()), rel=1e-12)
    assert torch.allclose(net.W, ref.W, atol=1e-13) and torch.allclose(net.U, ref.U, atol=1e-13)


@pytest.mark.parametrize("layer_norm", ["none", "fixed"])
@pytest.mark.parametrize("method", ["direct", "table"])
def test_full_batch_objective(layer_norm, method):
    net = make(layer_norm)
    g = torch.Generator().manual_seed(2)
    x, y = torch.randint(0, 12, (50, 3), generator=g), torch.randint(0, 4, (50,), generator=g)
    lam_w = 0.0 if layer_norm == "fixed" else 0.01
    f, ce = full_batch_objective(net, x, y, lam_w, 0.01, method=method, chunk=17)
    ref = net.objective(x, y, lam_w, 0.01)
    assert float(f.detach()) == pytest.approx(float(ref.detach()), rel=1e-12)
    assert float(ce.detach()) == pytest.approx(
        float(F.cross_entropy(net(x), y).detach()), rel=1e-12
    )
    f.backward()
    gw = net.W.grad.clone()
    net.zero_grad()
    ref.backward()
    assert torch.allclose(gw, net.W.grad, atol=1e-12)


def test_objective_convention():
    """mean CE + lam_w/2 ||W||^2 + lam_u/2 ||U||^2 (paper eqs. 2-3, 5, 9)."""
    net = make()
    x, y = torch.tensor([[1, 2, 3]]), torch.tensor([2])
    ce = F.cross_entropy(net(x), y)
    want = ce + 0.05 * net.W.pow(2).sum() + 0.1 * net.U.pow(2).sum()
    got = net.objective(x, y, 0.1, 0.2).detach()
    assert float(got) == pytest.approx(float(want.detach()), rel=1e-12)


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"nw": 0}, "nw must be"),
        ({"layer_norm": "batch"}, "layer_norm must be"),
        ({"init_scale": 0.0}, "init_scale"),
    ],
)
def test_bad_configs(kwargs, match):
    args = {"nw": 6, "L": 2, "d": 3, "K": 2, **kwargs}
    with pytest.raises(ConfigError, match=match):
        WordNet(**args)
    with pytest.raises(ConfigError, match="method"):
        full_batch_objective(
            make(),
            torch.zeros(1, 3, dtype=torch.long),
            torch.zeros(1).long(),
            0.0,
            0.0,
            method="magic",
        )
