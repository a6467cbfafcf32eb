"""The exact one-step recursion of balancedness under (S)GD with weight decay (Jacot et al. 2025,
proof of Theorem 4.4, phase 2; derived in docs/theory-jacot.md):

    D_{k+1} = (1 - eta lam)^2 D_k + eta^2 (G_{l+1}^T G_{l+1} - G_l G_l^T),
    D = W_{l+1}^T W_{l+1} - W_l W_l^T,

for two consecutive bias-free linear layers (no nonlinearity between them), G the gradients of the
data loss (mini-batch or full), torch.optim.SGD(lr=eta, weight_decay=lam, momentum=0). Checked step
by step on a small LinearHeadMLP in float64 to ~1e-13; and where it breaks: momentum, Adam, the
pair that straddles the last nonlinear layer, a bias on the lower layer (unless it is folded in).
"""

import pytest
import torch
from torch import nn

from nclab.models.mlp import LinearHeadMLP

F64 = torch.float64
ETA, LAM = 0.05, 0.01


def problem(head_bias=False, seed=0, n=24, k=3):
    torch.manual_seed(seed)
    model = LinearHeadMLP(
        in_dim=6, num_classes=k, widths=[10, 8], head_widths=[7, 5], head_bias=head_bias
    ).double()
    g = torch.Generator().manual_seed(seed + 1)
    x = torch.randn(n, 6, generator=g, dtype=F64)
    y = nn.functional.one_hot(torch.arange(n) % k, k).to(F64)
    return model, x, y


def imbalance(w_lo, w_hi, b_lo=None):
    """D = W_{l+1}^T W_{l+1} - W_l W_l^T (- b_l b_l^T: the bias folded into [W_l b_l])."""
    d = w_hi.T @ w_hi - w_lo @ w_lo.T
    return d if b_lo is None else d - torch.outer(b_lo, b_lo)


def recursion_errors(model, opt, x, y, pairs, steps=40, batch=8, fold_bias=False):
    """Per step, the largest error of the predicted D_{k+1} over ``pairs`` (0-based indices l of
    W_l, W_{l+1}), relative to the scale ||W_{l+1}||^2 + ||W_l||^2 of the terms that cancel."""
    mods = model.linear_modules()
    errors = []
    for k in range(steps):
        sl = slice((k * batch) % len(x), (k * batch) % len(x) + batch)
        opt.zero_grad()
        nn.functional.mse_loss(model(x[sl]), y[sl], reduction="sum").mul(0.5).backward()
        with torch.no_grad():
            before, grads, bias = [], [], []
            for ell in pairs:
                lo, hi = mods[ell], mods[ell + 1]
                b = lo.bias if fold_bias and lo.bias is not None else None
                before.append(imbalance(lo.weight, hi.weight, b).clone())
                g_lo = lo.weight.grad
                if b is not None:  # [G_l g_b]: the gradient of the folded matrix [W_l b_l]
                    g_lo = torch.cat([g_lo, lo.bias.grad[:, None]], dim=1)
                grads.append((g_lo.clone(), hi.weight.grad.clone()))
                bias.append(b)
        opt.step()
        with torch.no_grad():
            worst = 0.0
            for ell, d0, (g_lo, g_hi) in zip(pairs, before, grads, strict=True):
                lo, hi = mods[ell], mods[ell + 1]
                b = lo.bias if fold_bias and lo.bias is not None else None
                d1 = imbalance(lo.weight, hi.weight, b)
                pred = (1 - ETA * LAM) ** 2 * d0 + ETA**2 * (g_hi.T @ g_hi - g_lo @ g_lo.T)
                scale = float((hi.weight**2).sum() + (lo.weight**2).sum())
                worst = max(worst, float(torch.linalg.matrix_norm(d1 - pred)) / scale)
            errors.append(worst)
    return errors


def linear_pairs(model):
    """l = L1 .. L-2 (0-based): the pairs of consecutive linear layers W_{L1+1}, ..., W_L."""
    return list(range(model.L1, model.L - 1))


def sgd(model, momentum=0.0):
    return torch.optim.SGD(model.parameters(), lr=ETA, weight_decay=LAM, momentum=momentum)


def test_the_recursion_is_exact_for_every_linear_pair():
    model, x, y = problem()
    pairs = linear_pairs(model)
    assert pairs == [2, 3]
    errors = recursion_errors(model, sgd(model), x, y, pairs)
    assert max(errors) < 1e-13


def test_the_second_order_term_is_needed():
    """Dropping eta^2 (G^T G - G G^T) is visibly wrong early on (large gradients): the check above
    can fail."""
    model, x, y = problem()
    mods = model.linear_modules()
    lo, hi = mods[2], mods[3]
    opt = sgd(model)
    opt.zero_grad()
    nn.functional.mse_loss(model(x), y, reduction="sum").mul(0.5).backward()
    with torch.no_grad():
        d0 = imbalance(lo.weight, hi.weight).clone()
        g_lo, g_hi = lo.weight.grad.clone(), hi.weight.grad.clone()
    opt.step()
    with torch.no_grad():
        d1 = imbalance(lo.weight, hi.weight)
        first = (1 - ETA * LAM) ** 2 * d0
        second = ETA**2 * (g_hi.T @ g_hi - g_lo @ g_lo.T)
        assert torch.linalg.matrix_norm(d1 - first - second) < 1e-12 * torch.linalg.matrix_norm(d1)
        assert torch.linalg.matrix_norm(d1 - first) > 1e-4 * torch.linalg.matrix_norm(d1)


def test_full_batch_gradient_descent_too():
    model, x, y = problem(seed=3)
    errors = recursion_errors(model, sgd(model), x, y, linear_pairs(model), steps=10, batch=24)
    assert max(errors) < 1e-13


@pytest.mark.parametrize(
    "case",
    ["momentum", "adam", "straddles the last nonlinear layer", "bias on the lower layer"],
)
def test_where_the_rule_breaks(case):
    model, x, y = problem(head_bias=case == "bias on the lower layer", seed=1)
    pairs = linear_pairs(model)
    opt = sgd(model)
    if case == "momentum":
        opt = sgd(model, momentum=0.9)
    elif case == "adam":
        opt = torch.optim.Adam(model.parameters(), lr=ETA, weight_decay=LAM)
    elif case == "straddles the last nonlinear layer":
        pairs = [model.L1 - 1]  # W_L1 (followed by the ReLU) and W_{L1+1}
    errors = recursion_errors(model, opt, x, y, pairs, steps=10)
    assert max(errors) > 1e-4, case


def test_a_bias_folds_into_the_lower_layer():
    """With a bias b_l on the lower layer, [W_l b_l] acts on [Z; 1]: the recursion holds exactly
    for W_{l+1}^T W_{l+1} - W_l W_l^T - b_l b_l^T (when the bias decays with the same lambda)."""
    model, x, y = problem(head_bias=True, seed=1)
    pairs = linear_pairs(model)
    errors = recursion_errors(model, sgd(model), x, y, pairs, fold_bias=True)
    assert max(errors) < 1e-13
