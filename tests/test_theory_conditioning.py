"""Proposition 5.1 / Theorem 5.2 of Jacot et al. (nclab.theory.jacot_conditioning): the formulas,
the exponent 1/L2 of kappa(W_L) from the balancedness identity, the bounds on constructed
interpolating ReLU networks and after gradient descent on a tiny problem, and the hypotheses."""

import itertools
import math

import numpy as np
import pytest
import torch

from nclab.errors import TheoryError
from nclab.theory.jacot_conditioning import jacot_conditioning, log_kappa_product_bound

F64 = torch.float64


def kappa(w: torch.Tensor) -> float:
    s = torch.linalg.svdvals(w)
    k = min(w.shape)
    return float(s[0] / s[k - 1])


def orthonormal(n: int, g: torch.Generator) -> torch.Tensor:
    q, _ = torch.linalg.qr(torch.randn(n, n, generator=g, dtype=F64))
    return q


def balanced_head(K: int, width: int, L2: int, g: torch.Generator, spread: float = 3.0):
    """W_l = U_l S U_{l-1}^T (K x width at the top, width x width below) with the same K singular
    values in every layer: exactly balanced, W_l W_l^T = W_{l+1}^T W_{l+1}."""
    s = torch.linspace(1.0, spread, K, dtype=F64)
    us = [orthonormal(width, g) for _ in range(L2)] + [orthonormal(K, g)]
    ws = []
    for ell in range(L2):
        rows = K if ell == L2 - 1 else width
        sig = torch.zeros(rows, width, dtype=F64)
        sig[range(K), range(K)] = s
        left = us[ell + 1][:rows, :rows] if ell == L2 - 1 else us[ell + 1]
        ws.append(left @ sig @ us[ell].T)
    return ws


def product(ws):
    out = ws[0]
    for w in ws[1:]:
        out = w @ out
    return out


# --------------------------------------------------------------------------------------------------
# the formulas
# --------------------------------------------------------------------------------------------------


def test_17_against_the_printed_formula():
    K, L1, c, s, e, x = 4, 3, 2.5, 5.0, 0.7, 9.0
    printed = math.exp(0.5 * (c + L1 * K * math.log(K) - 2 * K * math.log((s - e) / x)))
    p = jacot_conditioning(K=K, L1=L1, L2=2, x_op=x, s_k_y=s, eps1=e, theta_sq=(L1 + 2) * K + c)
    assert p.applies and p.source == "proposition 5.1" and p.slack == pytest.approx(c)
    assert p.kappa_product_bound == pytest.approx(printed, rel=1e-12)
    assert p.log_kappa_product_bound == pytest.approx(math.log(printed), rel=1e-12)
    assert "balanced" in p.kappa_wl_needs


def test_18_against_the_printed_formula_with_exponent_one_over_L2():
    K, L1, L2, c, s, e, x = 3, 2, 5, 7.0, 4.0, 0.5, 6.0
    lam = e * e / (K * L2 + c)
    first = (x / (s - e)) ** K * math.exp(0.5 * (c - L1 * K + L1 * K * math.log(K)))
    p = jacot_conditioning(K=K, L1=L1, L2=L2, x_op=x, s_k_y=s, eps1=e, c=c, lam=lam)
    assert p.applies and p.source == "theorem 5.2" and p.kappa_wl_needs == ""
    assert p.kappa_product_bound == pytest.approx(first, rel=1e-12)
    # (18) second line, with 1/L2 where the paper prints 1/L1
    second = (x / (s - e)) ** (K / L2) * math.exp((c - L1 * K + L1 * K * math.log(K)) / (2 * L2))
    assert p.kappa_wl_bound == pytest.approx(second, rel=1e-12)
    printed = (x / (s - e)) ** (K / L1) * math.exp((c - L1 * K + L1 * K * math.log(K)) / (2 * L1))
    assert p.kappa_wl_printed == pytest.approx(printed, rel=1e-12)


def test_theorem_defaults_eps1_to_the_smallest_allowed():
    p = jacot_conditioning(K=3, L1=2, L2=4, x_op=2.0, N=30, c=8.0, lam=1e-3)
    assert p.eps1 == pytest.approx(math.sqrt(1e-3 * (3 * 4 + 8)))
    assert p.lam_max == pytest.approx(1e-3)
    # without lam: the bound for every lambda <= lam_max
    q = jacot_conditioning(K=3, L1=2, L2=4, x_op=2.0, N=30, c=8.0, eps1=p.eps1)
    assert q.kappa_product_bound == pytest.approx(p.kappa_product_bound)


def test_bounds_grow_with_the_norm_and_the_interpolation_error():
    base = dict(K=3, L1=2, L2=3, x_op=5.0, N=30)
    a = jacot_conditioning(**base, eps1=0.1, theta_sq=20.0).kappa_product_bound
    assert jacot_conditioning(**base, eps1=0.1, theta_sq=22.0).kappa_product_bound > a
    assert jacot_conditioning(**base, eps1=1.0, theta_sq=20.0).kappa_product_bound > a


def test_huge_bounds_are_inf_with_a_finite_log():
    p = jacot_conditioning(K=10, L1=3, L2=2, x_op=1e3, N=100, eps1=0.1, theta_sq=5000.0)
    assert p.kappa_product_bound == math.inf and math.isfinite(p.log_kappa_product_bound)
    assert p.to_dict()["kappa_product_bound"] == math.inf  # JSON: null, named in non_finite


# --------------------------------------------------------------------------------------------------
# which exponent: the balancedness identity
# --------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("L2", [2, 3, 5])
def test_balanced_layers_give_kappa_wl_to_the_power_L2(L2):
    g = torch.Generator().manual_seed(L2)
    ws = balanced_head(K=4, width=6, L2=L2, g=g)
    for lo, hi in itertools.pairwise(ws):
        assert torch.linalg.matrix_norm(hi.T @ hi - lo @ lo.T, 2) < 1e-12
    k_prod, k_wl = kappa(product(ws)), kappa(ws[-1])
    assert k_wl == pytest.approx(k_prod ** (1 / L2), rel=1e-10)
    for L1 in {1, 2, 4} - {L2}:  # the printed exponent 1/L1 is wrong unless L1 = L2
        assert abs(k_prod ** (1 / L1) - k_wl) > 0.05


def test_critical_points_of_weight_decay_are_balanced():
    """Gradient descent on a deep linear head with weight decay converges to a critical point; its
    layers are balanced there and kappa(W_L) = kappa(W_{L:L1+1})^(1/L2) (the proof of Thm 5.2)."""
    g = torch.Generator().manual_seed(0)
    K, n, L2, lam, eta = 3, 12, 3, 0.1, 0.05
    y = torch.nn.functional.one_hot(torch.arange(n) % K, K).T.to(F64)
    # head inputs: class directions of different scales plus noise (a well-conditioned minimiser)
    scales = torch.tensor([[1.0], [0.7], [0.5]], dtype=F64)
    z = torch.cat([y * scales, 0.3 * torch.randn(2, n, generator=g, dtype=F64)])
    shapes = [(5, 5), (5, 5), (K, 5)]
    ws = [(0.7 * torch.randn(*s, generator=g, dtype=F64)).requires_grad_() for s in shapes]
    for _ in range(3500):
        loss = 0.5 * ((product(ws) @ z - y) ** 2).sum() + 0.5 * lam * sum((w**2).sum() for w in ws)
        grads = torch.autograd.grad(loss, ws)
        with torch.no_grad():
            for w, gr in zip(ws, grads, strict=True):
                w -= eta * gr
    ws = [w.detach() for w in ws]
    assert max(float(gr.abs().max()) for gr in grads) < 1e-8
    for lo, hi in itertools.pairwise(ws):
        assert torch.linalg.matrix_norm(hi.T @ hi - lo @ lo.T, 2) < 1e-10
    assert kappa(product(ws)) > 1.5  # not trivially conditioned
    assert kappa(ws[-1]) == pytest.approx(kappa(product(ws)) ** (1 / L2), rel=1e-9)


# --------------------------------------------------------------------------------------------------
# the bounds hold on networks
# --------------------------------------------------------------------------------------------------


def relu_part(x: torch.Tensor, widths, g: torch.Generator, scale: float):
    """Random ReLU layers; returns the weights and Z_L1 (features as columns)."""
    ws, z = [], x
    for a, b in zip([x.shape[0], *widths[:-1]], widths, strict=True):
        w = scale * torch.randn(b, a, generator=g, dtype=F64) / math.sqrt(a)
        ws.append(w)
        z = torch.relu(w @ z)
    return ws, z


@pytest.mark.parametrize("seed", range(6))
def test_proposition_51_holds_on_interpolating_relu_networks(seed):
    """Nonlinear part random (ReLU, wide enough that Z_L1 has rank N), linear head = a factorisation
    of Y Z_L1^+ (+ noise, so eps1 > 0) into L2 layers, balanced or not: kappa of the head's product
    never exceeds (17) evaluated at the network's own eps1 and ||theta||^2."""
    g = torch.Generator().manual_seed(seed)
    K, N, L1, L2 = 3, 9, 1 + seed % 3, 2 + seed % 2
    x = torch.randn(4, N, generator=g, dtype=F64)
    y = torch.nn.functional.one_hot(torch.arange(N) % K, K).T.to(F64)
    nonlin, z = relu_part(x, [16] * L1, g, scale=0.5 + 0.5 * seed)
    m = y @ torch.linalg.pinv(z) + 0.01 * torch.randn(K, z.shape[0], generator=g, dtype=F64)
    u, s, vt = torch.linalg.svd(m, full_matrices=False)
    root = torch.diag(s ** (1 / L2))
    tilt = torch.eye(K, dtype=F64) + 0.3 * seed * torch.randn(K, K, generator=g, dtype=F64)
    lin = [root @ vt] + [root for _ in range(L2 - 2)] + [u @ root]
    lin[0], lin[1] = tilt @ lin[0], lin[1] @ torch.linalg.inv(tilt)  # unbalance, same product
    assert torch.allclose(product(lin), m, atol=1e-10)
    eps1 = float(torch.linalg.matrix_norm(product(lin) @ z - y))
    theta_sq = sum(float((w**2).sum()) for w in nonlin + lin)
    x_op = float(torch.linalg.matrix_norm(x, 2))
    p = jacot_conditioning(K=K, L1=L1, L2=L2, x_op=x_op, N=N, eps1=eps1, theta_sq=theta_sq)
    assert p.applies, p.reason
    assert kappa(m) <= p.kappa_product_bound


def interpolating_nonlinear_part(x, y, width, g):
    """Two ReLU layers with Z_2 = relu(W_2 relu(W_1 X)) = Y exactly: W_2 = (Y - (1 - Y)/2) Z_1^+,
    so the pre-activations of the zeros are -1/2, away from ReLU's kink."""
    w1 = torch.randn(width, x.shape[0], generator=g, dtype=F64) / math.sqrt(x.shape[0])
    z1 = torch.relu(w1 @ x)
    w2 = (y - 0.5 * (1 - y)) @ torch.linalg.pinv(z1)
    assert torch.allclose(torch.relu(w2 @ z1), y, atol=1e-10)
    return [w1, w2]


def test_theorem_52_after_gradient_descent_from_the_competitor():
    """The proof's argument on a tiny problem: from the network of Theorem 5.2's proof (a nonlinear
    part with Z_L1 = Y, identity linear layers; loss lambda (K L2 + c) / 2), gradient descent with
    lambda = eps1^2 / (K L2 + c) only lowers the regularised loss, so every iterate has
    ||Z_L - Y|| <= eps1 and ||theta||^2 <= K L2 + c; (18) bounds kappa of the product there, and
    kappa(W_L), the layers staying balanced (D_0 = 0), obeys the bound with exponent 1/L2."""
    g = torch.Generator().manual_seed(3)
    K, N, L1, L2, eta = 3, 9, 2, 4, 0.02
    x = torch.randn(5, N, generator=g, dtype=F64)
    y = torch.nn.functional.one_hot(torch.arange(N) % K, K).T.to(F64)
    nonlin = interpolating_nonlinear_part(x, y, 24, g)
    c = sum(float((w**2).sum()) for w in nonlin)
    eps1_target = 0.5 * math.sqrt(N / K)
    lam = eps1_target**2 / (K * L2 + c)
    params = [w.clone().requires_grad_() for w in nonlin]
    params += [torch.eye(K, dtype=F64).requires_grad_() for _ in range(L2)]

    def objective():
        z = x
        for w in params[:L1]:
            z = torch.relu(w @ z)
        z = product(params[L1:]) @ z
        return 0.5 * ((z - y) ** 2).sum() + 0.5 * lam * sum((w**2).sum() for w in params), z

    losses = []
    for _ in range(1500):
        loss, z = objective()
        losses.append(float(loss.detach()))
        grads = torch.autograd.grad(loss, params)
        with torch.no_grad():
            for w, gr in zip(params, grads, strict=True):
                w -= eta * gr
    assert losses[0] == pytest.approx(0.5 * lam * (K * L2 + c), rel=1e-10)
    assert all(b <= a + 1e-12 for a, b in itertools.pairwise(losses))
    assert losses[-1] < 0.9 * losses[0]  # it moved
    lin = [w.detach() for w in params[L1:]]
    eps1 = float(torch.linalg.matrix_norm(z.detach() - y))
    theta_sq = sum(float((w.detach() ** 2).sum()) for w in params)
    assert eps1 <= eps1_target and theta_sq <= K * L2 + c
    p = jacot_conditioning(K=K, L1=L1, L2=L2, x_op=float(torch.linalg.matrix_norm(x, 2)), N=N,
                           c=c, lam=lam)  # fmt: skip
    assert p.applies and p.eps1 == pytest.approx(eps1_target)
    assert kappa(product(lin)) <= p.kappa_product_bound
    assert kappa(lin[-1]) <= p.kappa_wl_bound
    assert kappa(lin[-1]) == pytest.approx(kappa(product(lin)) ** (1 / L2), rel=1e-3)


# --------------------------------------------------------------------------------------------------
# hypotheses and invalid instances
# --------------------------------------------------------------------------------------------------


def test_hypotheses_fail_with_a_reason():
    p = jacot_conditioning(K=2, L1=1, L2=2, x_op=1.0, N=8, eps1=2.0, theta_sq=10.0)
    assert not p.applies and p.reason.startswith("approximate interpolation fails")
    assert p.kappa_product_bound is None
    q = jacot_conditioning(K=2, L1=1, L2=2, x_op=1.0, N=8, eps1=0.1, c=3.0, lam=1.0)
    assert not q.applies and "lambda = 1 > eps1^2 / (K L2 + c)" in q.reason
    # lam from the theorem's own eps1 that is too large for s_K(Y)
    r = jacot_conditioning(K=2, L1=1, L2=2, x_op=1.0, N=8, c=3.0, lam=10.0)
    assert not r.applies and "approximate interpolation fails" in r.reason


@pytest.mark.parametrize(
    "kwargs,match",
    [
        (dict(K=1, L1=1, L2=2, x_op=1.0, N=4, eps1=0.1, theta_sq=1.0), "K must be"),
        (dict(K=2, L1=0, L2=2, x_op=1.0, N=4, eps1=0.1, theta_sq=1.0), "L1 must be"),
        (dict(K=2, L1=1, L2=2, x_op=-1.0, N=4, eps1=0.1, theta_sq=1.0), "x_op must be"),
        (dict(K=2, L1=1, L2=2, x_op=1.0, N=4, eps1=0.1), "give either theta_sq"),
        (dict(K=2, L1=1, L2=2, x_op=1.0, N=4, eps1=0.1, theta_sq=1.0, c=1.0), "not both"),
        (dict(K=2, L1=1, L2=2, x_op=1.0, N=4, theta_sq=1.0), "needs eps1"),
        (dict(K=2, L1=1, L2=2, x_op=1.0, N=4, c=1.0), "needs eps1 or lam"),
        (dict(K=2, L1=1, L2=2, x_op=1.0, N=5, eps1=0.1, theta_sq=1.0), "not a multiple"),
        (dict(K=2, L1=1, L2=2, x_op=1.0, eps1=0.1, theta_sq=1.0), "give N"),
        (dict(K=2, L1=1, L2=2, x_op=1.0, N=4, eps1=0.1, c=1.0, lam=0.0), "lam must be"),
    ],
)
def test_invalid_instances_raise(kwargs, match):
    with pytest.raises(TheoryError, match=match):
        jacot_conditioning(**kwargs)


def test_log_bound_is_the_log_of_the_bound():
    v = log_kappa_product_bound(3, 2, 1.0, 4.0, 0.5, 7.0)
    assert np.isclose(v, 0.5 * (1.0 + 6 * math.log(3) - 6 * math.log(3.5 / 7.0)))


def test_cli_json(capsys):
    import json

    from nclab.cli import main

    args = ["theory", "jacot-conditioning", "--K", "3", "--L1", "2", "--L2", "4", "--x-op", "2"]
    with pytest.raises(SystemExit) as ok:
        main([*args, "--N", "30", "--c", "8", "--lam", "1e-3", "--json"])
    assert ok.value.code in (0, None)
    out = json.loads(capsys.readouterr().out)["prediction"]
    assert out["applies"] and out["source"] == "theorem 5.2"
    assert out["kappa_wl_bound"] == pytest.approx(out["kappa_product_bound"] ** 0.25)
    with pytest.raises(SystemExit) as exc:
        main([*args, "--N", "30", "--json"])
    assert exc.value.code == 2
