r"""The objectives of the unconstrained-features family: one definition of each loss convention.

Every function here is written with array operators and methods only (``@``, ``*``, ``.sum(...)``,
``abs``), plus ``exp``/``log``/``amax`` taken from the array's own module, so the *same* function
evaluates numpy arrays (the theory module, the tests' minimisers) and torch tensors (the batched
solvers of :mod:`nclab.models.ufm`, autograd included). Arrays may carry any number of leading batch
dimensions; a regularisation strength may be a float or an array of the batch shape.

Conventions (Tirer & Bruna, ICML 2022, eq. (3)/(23)/(24); Súkeník et al., GUFM):

* features are **columns**: ``H`` is (d, N), N = K n samples ordered class by class (sample
  ``j`` belongs to class ``j // n``); ``Y = I_K ⊗ 1_nᵀ`` is the (K, N) one-hot target matrix;
* classifiers are (K, d), hidden weights (d, d), a bias is (K, 1);
* the fit term is averaged over the N samples, the regularisers are *not*:

.. math::
    \mathrm{MSE}(Z) = \frac{1}{2N}\|Z - Y\|_F^2,\qquad
    \mathrm{CE}(Z) = \frac1N \sum_{j} \Big(\log \sum_k e^{Z_{kj}} - Z_{y_j j}\Big),

.. math::
    f(W_1..W_L, H, b) = \mathrm{loss}\big(W_L\,\sigma(W_{L-1} \cdots \sigma(W_1 H)) + b 1^\top\big)
      + \sum_l \frac{\lambda_{W_l}}{2}\|W_l\|_F^2 + \frac{\lambda_H}{2}\|H\|_F^2
      + \frac{\lambda_b}{2}\|b\|^2

with σ the identity (linear models) or the ReLU. L = 1 is the plain UFM (eq. (3)), L = 2 the
extended UFM (eq. (23) linear, (24) ReLU). The GUFM of Súkeník et al. is L = 1 with λ_H = 0 and the
features constrained to LayerNorm outputs (each column has zero mean and norm √d); its objective is
``ufm_objective`` evaluated at such features (:func:`layernorm_project` maps onto the set).

>>> import numpy as np
>>> K, n = 3, 2
>>> Y = targets(K, n)
>>> float(mse(Y, Y)), float(mse(0 * Y, Y))  # a perfect fit, the zero predictor
(0.0, 0.5)
>>> W, H = np.eye(K), np.kron(np.eye(K), np.ones(n))
>>> float(ufm_objective([W], H, Y, [0.1], 0.2))  # 0 + 0.1/2 * 3 + 0.2/2 * 6
0.75
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import Any

Array = Any  # a numpy array or a torch tensor


def _ns(a: Array):
    """The module an array belongs to (``numpy`` or ``torch``), without importing torch here."""
    return sys.modules[type(a).__module__.partition(".")[0]]


def targets(K: int, n: int, like: Array | None = None) -> Array:
    """Y = I_K ⊗ 1_nᵀ, the (K, K n) one-hot targets, in the array type/dtype/device of ``like``."""
    if like is None or _ns(like).__name__ == "numpy":
        import numpy as np

        dtype = like.dtype if like is not None else np.float64
        return np.kron(np.eye(K, dtype=dtype), np.ones((1, n), dtype=dtype))
    xp = _ns(like)
    return xp.eye(K, dtype=like.dtype, device=like.device).repeat_interleave(n, dim=1)


def sqnorm(a: Array) -> Array:
    """Squared Frobenius norm over the last two axes (batched)."""
    return (a * a).sum((-2, -1))


def relu(a: Array) -> Array:
    """max(a, 0), elementwise; exact in floating point ((a + |a|)/2 is a or 0)."""
    return (a + abs(a)) * 0.5


def mse(z: Array, y: Array) -> Array:
    r"""Regularised-MSE fit term of Tirer & Bruna: :math:`\frac{1}{2N}\|Z-Y\|_F^2` (Z, Y: K x N)."""
    r = z - y
    return (r * r).sum((-2, -1)) / (2 * z.shape[-1])


def cross_entropy(z: Array, y: Array) -> Array:
    r"""Mean cross-entropy of the logit columns of Z (K x N) against one-hot Y (stable LSE)."""
    xp = _ns(z)
    m = xp.amax(z, -2)
    lse = xp.log(xp.exp(z - m[..., None, :]).sum(-2)) + m
    return (lse - (z * y).sum(-2)).sum(-1) / z.shape[-1]


LOSSES = {"mse": mse, "ce": cross_entropy}


def forward(weights: Sequence[Array], h: Array, relu_hidden: bool = False) -> list[Array]:
    """Pre-activations [W_1 H, W_2 A_1, ..., W_L A_{L-1}] of the deep UFM (last entry: logits)."""
    out = []
    a = h
    for i, w in enumerate(weights):
        z = w @ a
        out.append(z)
        if i < len(weights) - 1:
            a = relu(z) if relu_hidden else z
    return out


def ufm_objective(
    weights: Sequence[Array],
    h: Array,
    y: Array,
    lambda_w: Sequence[Any],
    lambda_h: Any,
    *,
    loss: str = "mse",
    relu_hidden: bool = False,
    b: Array | None = None,
    lambda_b: Any = 0.0,
    relu_input: bool = False,
) -> Array:
    r"""The deep-UFM objective of the module docstring (L = ``len(weights)``; weights W_1..W_L).

    ``lambda_w[l]`` regularises ``weights[l]``; ``b`` (K x 1, optional) is added to the logits and
    regularised by ``lambda_b`` (0: an unregularised bias). ``relu_input``: the first layer
    reads σ(H) (the plain UFM with a ReLU on its features, W σ(H)); H is regularised itself.
    """
    z = forward(weights, relu(h) if relu_input else h, relu_hidden)[-1]
    if b is not None:
        z = z + b
    total = LOSSES[loss](z, y) + lambda_h * 0.5 * sqnorm(h)
    for w, lam in zip(weights, lambda_w, strict=True):
        total = total + lam * 0.5 * sqnorm(w)
    if b is not None:
        total = total + lambda_b * 0.5 * sqnorm(b)
    return total


def ufm_mse(
    w: Array,
    h: Array,
    y: Array,
    lambda_w: Any,
    lambda_h: Any,
    b: Array | None = None,
    lambda_b: Any = 0.0,
) -> Array:
    r"""Tirer & Bruna eq. (3): :math:`\frac{1}{2N}\|WH + b1^\top - Y\|_F^2
    + \frac{\lambda_W}{2}\|W\|_F^2
    + \frac{\lambda_H}{2}\|H\|_F^2 + \frac{\lambda_b}{2}\|b\|^2` (``b=None``: bias-free)."""
    return ufm_objective([w], h, y, [lambda_w], lambda_h, b=b, lambda_b=lambda_b)


def ufm_ce(
    w: Array,
    h: Array,
    y: Array,
    lambda_w: Any,
    lambda_h: Any,
    b: Array | None = None,
    lambda_b: Any = 0.0,
) -> Array:
    """Regularised cross-entropy UFM (Zhu et al. 2021): mean CE + the same regularisers."""
    return ufm_objective([w], h, y, [lambda_w], lambda_h, loss="ce", b=b, lambda_b=lambda_b)


def extended_ufm(
    w2: Array,
    w1: Array,
    h1: Array,
    y: Array,
    lambda_w2: Any,
    lambda_w1: Any,
    lambda_h1: Any,
    relu_hidden: bool = False,
) -> Array:
    r"""Tirer & Bruna eq. (23) (linear) / (24) (ReLU):
    :math:`\frac{1}{2N}\|W_2\sigma(W_1H_1) - Y\|_F^2 + \frac{\lambda_{W_2}}{2}\|W_2\|_F^2
    + \frac{\lambda_{W_1}}{2}\|W_1\|_F^2 + \frac{\lambda_{H_1}}{2}\|H_1\|_F^2`."""
    return ufm_objective(
        [w1, w2], h1, y, [lambda_w1, lambda_w2], lambda_h1, relu_hidden=relu_hidden
    )


def gufm(w: Array, x: Array, y: Array, lam: Any, loss: str = "mse") -> Array:
    r"""GUFM objective (Súkeník et al.): :math:`\mathrm{loss}(WX) + \frac{\lambda}{2}\|W\|_F^2`
    with X on
    the LayerNorm set (columns: zero mean, norm √d). X is taken as given (no projection here)."""
    return ufm_objective([w], x, y, [lam], 0.0, loss=loss)


def layernorm_project(x: Array) -> Array:
    """Columns of x (d x N) mapped to LayerNorm outputs: zero mean over d, Euclidean norm √d."""
    d = x.shape[-2]
    c = x - x.mean(-2)[..., None, :]
    return c * (d**0.5 / ((c * c).sum(-2) ** 0.5))[..., None, :]
