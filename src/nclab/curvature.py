r"""Curvature of a network without forming a Jacobian or a Hessian: the operator norm of the
neural tangent kernel and the top eigenvalue of the loss Hessian, by matrix-free iterations.

**NTK.** For outputs :math:`Z = f_\theta(X)` (one row per sample) and the Jacobian
:math:`J = \partial\,\mathrm{vec}(Z)/\partial\theta \in \mathbb R^{NK\times P}`, the NTK is
:math:`\Theta = JJ^\top` and (Jacot et al. 2025, Prop. 5.3)

.. math:: \|\Theta\|_{op} = \max_A \frac{\|\nabla_\theta \mathrm{Tr}[Z A^\top]\|_2^2}{\|A\|_F^2}
          = \max_A \frac{\|J^\top \mathrm{vec}(A)\|^2}{\|A\|_F^2}.

:func:`ntk_operator_norm` iterates :math:`A \mapsto J(J^\top A)`: :math:`J^\top A` is one
vector-Jacobian product (``torch.func.vjp``, a backward pass), :math:`J v` one Jacobian-vector
product (``torch.func.jvp``, a forward-mode pass). Memory is that of a forward/backward pass on one
batch, a few vectors of size :math:`P` and the iteration's vectors of size :math:`NK` (Lanczos keeps
one per iteration); :math:`J` (:math:`NK \times P`) is never formed.

**Hessian.** :func:`hessian_top_eigenvalue` iterates Hessian-vector products
:math:`v \mapsto \nabla^2_\theta \mathcal L\, v` (reverse-over-reverse: ``vjp`` of ``grad``), where
:math:`\mathcal L(\theta) = \sum_b w_b\,\ell(f_\theta(X_b), Y_b) + \frac{\lambda}{2}\|\theta\|^2`
over the batches :math:`b` of the data (:math:`w_b = n_b/N` for a loss that averages over samples,
1 for one that sums).

Both run on the inputs' device and in the parameters' dtype, split the data into ``batch_size``
chunks (products are sums over chunks, so the result does not depend on the chunking) and use
either Lanczos with full re-orthogonalisation (``method="lanczos"``, the default: the largest
algebraic eigenvalue, usually in far fewer products) or power iteration (``method="power"``: the
eigenvalue of largest magnitude). Both stop when the residual :math:`\|Mv - \theta v\| \le` ``tol`` :math:`|\theta|`
(the eigenvalue is then accurate to about ``tol``:sup:`2` relative to the spectral gap).

>>> import torch
>>> torch.manual_seed(0)  # doctest: +ELLIPSIS
<torch._C.Generator object at ...>
>>> lin = torch.nn.Linear(3, 2, bias=False).double()
>>> x = torch.randn(5, 3, dtype=torch.float64)
>>> est = ntk_operator_norm(lin, x, tol=1e-10)
>>> # a linear layer's NTK is X X^T (x) I_K: its norm is ||X||_op^2
>>> abs(est.value - torch.linalg.matrix_norm(x, 2).item() ** 2) < 1e-9, est.converged
(True, True)
>>> mse = lambda out, y: 0.5 * ((out - y) ** 2).sum()
>>> h = hessian_top_eigenvalue(lin, mse, (x, torch.zeros(5, 2, dtype=torch.float64)), reduction="sum")
>>> abs(h.value - est.value) < 1e-9  # Gauss-Newton: the Hessian of 1/2||XW^T - Y||^2 is J^T J
True
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import torch
from torch import nn

from .errors import ConfigError, DataError

__all__ = ["CurvatureEstimate", "hessian_top_eigenvalue", "ntk_operator_norm"]

Params = dict[str, torch.Tensor]


@dataclasses.dataclass(frozen=True)
class CurvatureEstimate:
    """An extreme eigenvalue found by :func:`ntk_operator_norm` or :func:`hessian_top_eigenvalue`.

    ``value``: the eigenvalue; ``vector``: its eigenvector (for the NTK an output-shaped matrix
    :math:`A`, unit Frobenius norm; for the Hessian a dict of parameter-shaped tensors, unit norm);
    ``iterations``: operator applications; ``residual``: :math:`\\|Mv - \\text{value}\\,v\\|`;
    ``converged``: the residual met ``tol``; ``method``: ``"power"`` or ``"lanczos"``.
    """

    value: float
    vector: Any
    iterations: int
    residual: float
    converged: bool
    method: str

    def __float__(self) -> float:
        return self.value


# --------------------------------------------------------------------------------------------------
# parameters as one flat vector
# --------------------------------------------------------------------------------------------------


def _select_params(model: nn.Module, names: Iterable[str] | None) -> Params:
    """The differentiated parameters (detached): all that require grad, or those named."""
    if not isinstance(model, nn.Module):
        raise DataError(f"model must be a torch.nn.Module, got {type(model).__name__}")
    named = dict(model.named_parameters())
    if names is None:
        chosen = {k: p for k, p in named.items() if p.requires_grad}
    else:
        names = list(names)
        unknown = [n for n in names if n not in named]
        if unknown:
            raise ConfigError(
                f"params: unknown parameter names {unknown}; the model has {list(named)}"
            )
        chosen = {n: named[n] for n in names}
    if not chosen:
        raise ConfigError("the model has no parameter to differentiate (params is empty)")
    return {k: p.detach() for k, p in chosen.items()}


def _flatten(tensors: Params) -> torch.Tensor:
    return torch.cat([t.reshape(-1) for t in tensors.values()])


def _unflatten(flat: torch.Tensor, like: Params) -> Params:
    out, i = {}, 0
    for k, t in like.items():
        out[k] = flat[i : i + t.numel()].view_as(t)
        i += t.numel()
    return out


def _functional(model: nn.Module, params: Params) -> Callable[[Params, torch.Tensor], torch.Tensor]:
    """``f(p, x)``: the model's output with the parameters ``p`` (the others and buffers as they are)."""
    fixed = {k: v.detach() for k, v in model.named_parameters() if k not in params}
    fixed |= dict(model.named_buffers())

    def f(p: Params, x: torch.Tensor) -> torch.Tensor:
        return torch.func.functional_call(model, (p, fixed), (x,))

    return f


def _chunks(n: int, batch_size: int | None) -> list[slice]:
    if batch_size is None:
        return [slice(0, n)]
    if not isinstance(batch_size, int) or isinstance(batch_size, bool) or batch_size < 1:
        raise ConfigError(f"batch_size must be a positive integer or None, got {batch_size!r}")
    return [slice(i, min(i + batch_size, n)) for i in range(0, n, batch_size)]


def _check_inputs(inputs: Any, params: Params, name: str = "inputs") -> None:
    if not isinstance(inputs, torch.Tensor):
        raise DataError(
            f"{name} must be a torch.Tensor (one row per sample), got {type(inputs).__name__}"
        )
    if inputs.ndim < 1 or inputs.shape[0] == 0:
        raise DataError(f"{name} must have at least one sample, got shape {tuple(inputs.shape)}")
    devices = {p.device for p in params.values()}
    if devices != {inputs.device}:
        raise DataError(
            f"{name} are on {inputs.device} but the parameters on {sorted(map(str, devices))}: "
            "move the model to the inputs' device"
        )


def _start(shape: tuple[int, ...], like: torch.Tensor, seed: int) -> torch.Tensor:
    """A reproducible random unit start vector (drawn on the CPU, then moved)."""
    g = torch.Generator().manual_seed(seed)
    v = torch.randn(shape, generator=g, dtype=torch.float64).to(like.device, like.dtype)
    return v / torch.linalg.vector_norm(v)


# --------------------------------------------------------------------------------------------------
# the two iterations on a symmetric operator of flat vectors
# --------------------------------------------------------------------------------------------------


def _check_iteration(method: str, max_iter: int, tol: float) -> None:
    if method not in ("power", "lanczos"):
        raise ConfigError(f"method must be 'power' or 'lanczos', got {method!r}")
    if not isinstance(max_iter, int) or isinstance(max_iter, bool) or max_iter < 1:
        raise ConfigError(f"max_iter must be a positive integer, got {max_iter!r}")
    if not (isinstance(tol, int | float) and math.isfinite(tol) and tol > 0):
        raise ConfigError(f"tol must be a finite number > 0, got {tol!r}")


def _power(matvec, v: torch.Tensor, max_iter: int, tol: float):
    """Power iteration: (value, vector, iterations, residual, converged)."""
    value, resid = 0.0, math.inf
    for it in range(1, max_iter + 1):
        w = matvec(v)
        value = float(torch.dot(v, w))
        resid = float(torch.linalg.vector_norm(w - value * v))
        if resid <= tol * abs(value):
            return value, v, it, resid, True
        norm = torch.linalg.vector_norm(w)
        if float(norm) == 0.0:  # v is in the kernel: the operator is zero on the start's span
            return 0.0, v, it, 0.0, True
        v = w / norm
    return value, v, max_iter, resid, False


def _lanczos(matvec, q: torch.Tensor, max_iter: int, tol: float):
    """Lanczos with full re-orthogonalisation: the largest algebraic eigenvalue of the Krylov
    space's tridiagonal matrix, (value, Ritz vector, iterations, residual, converged)."""
    basis: list[torch.Tensor] = []
    alphas: list[float] = []
    betas: list[float] = []
    max_iter = min(max_iter, q.numel())
    for it in range(1, max_iter + 1):
        basis.append(q)
        w = matvec(q)
        alphas.append(float(torch.dot(q, w)))
        stack = torch.stack(basis)
        for _ in range(2):  # twice is enough (Kahan-Parlett)
            w = w - stack.T @ (stack @ w)
        beta = float(torch.linalg.vector_norm(w))
        t = torch.diag(torch.tensor(alphas, dtype=torch.float64))
        if betas:
            off = torch.tensor(betas, dtype=torch.float64)
            t += torch.diag(off, 1) + torch.diag(off, -1)
        evals, evecs = torch.linalg.eigh(t)
        value, s = float(evals[-1]), evecs[:, -1]
        resid = beta * abs(float(s[-1]))
        if resid <= tol * abs(value) or beta <= 1e-300 or it == max_iter:
            vec = s.to(stack.device, stack.dtype) @ stack
            return value, vec / torch.linalg.vector_norm(vec), it, resid, resid <= tol * abs(value)
        betas.append(beta)
        q = w / beta
    raise AssertionError("unreachable")  # pragma: no cover


def _iterate(matvec, start: torch.Tensor, method: str, max_iter: int, tol: float):
    run = _power if method == "power" else _lanczos
    with torch.no_grad():
        return run(matvec, start.reshape(-1), max_iter, tol)


# --------------------------------------------------------------------------------------------------
# the NTK
# --------------------------------------------------------------------------------------------------


def _ntk_matvec(f, params: Params, inputs: torch.Tensor, chunks: list[slice], out_shape):
    """``vec(A) -> vec(J (J^T A))`` over the chunks: sum of VJPs, then one JVP per chunk."""

    def matvec(a_flat: torch.Tensor) -> torch.Tensor:
        a = a_flat.view(out_shape)
        jta = None
        for sl in chunks:
            _, vjp_fn = torch.func.vjp(lambda p: f(p, inputs[sl]), params)  # noqa: B023
            (g,) = vjp_fn(a[sl])
            jta = g if jta is None else {k: jta[k] + g[k] for k in g}
        outs = [torch.func.jvp(lambda p: f(p, inputs[sl]), (params,), (jta,))[1] for sl in chunks]  # noqa: B023
        return torch.cat(outs).reshape(-1)

    return matvec


def ntk_operator_norm(
    model: nn.Module,
    inputs: torch.Tensor,
    *,
    params: Sequence[str] | None = None,
    batch_size: int | None = None,
    method: str = "lanczos",
    max_iter: int = 500,
    tol: float = 1e-5,
    seed: int = 0,
) -> CurvatureEstimate:
    r"""The operator norm of the empirical NTK of ``model`` on ``inputs``:
    :math:`\|\Theta\|_{op} = \max_A \|\nabla_\theta \mathrm{Tr}[Z A^\top]\|_2^2 / \|A\|_F^2` with
    :math:`Z` = ``model(inputs)`` (:math:`N` rows), i.e. the top eigenvalue of
    :math:`\Theta = JJ^\top`, by Lanczos (default) or power iteration on
    :math:`A \mapsto J(J^\top A)` with ``torch.func`` vjp/jvp, never forming :math:`J`. Both
    converge to the same value; Lanczos needs far fewer products when the top of the spectrum is
    clustered (about 9x fewer on ``benchmarks/bench_curvature.py --quick``).

    Args:
        model: any module whose output's first axis is the sample axis; evaluated as it is (call
            ``model.eval()`` first for dropout or batch normalisation).
        inputs: the samples (first axis), on the parameters' device.
        params: names of the parameters to differentiate (``model.named_parameters()``); default
            every parameter that requires grad. E.g. only the linear head's, for a bound on its
            contribution.
        batch_size: samples per vjp/jvp (default: all at once); the result does not depend on it.
        method, max_iter, tol, seed: the iteration, its budget, the relative residual at which it
            stops, and the seed of the random start.

    Returns a :class:`CurvatureEstimate` whose ``vector`` is the maximising :math:`A`
    (output-shaped, unit Frobenius norm).

    >>> import torch
    >>> net = torch.nn.Sequential(torch.nn.Linear(2, 3), torch.nn.Tanh(), torch.nn.Linear(3, 2))
    >>> est = ntk_operator_norm(net, torch.randn(4, 2), batch_size=3)
    >>> est.vector.shape, est.value > 0
    (torch.Size([4, 2]), True)
    """
    _check_iteration(method, max_iter, tol)
    p = _select_params(model, params)
    _check_inputs(inputs, p)
    f = _functional(model, p)
    with torch.no_grad():
        out_shape = f(p, inputs[:1]).shape[1:]
    out_shape = (inputs.shape[0], *out_shape)
    matvec = _ntk_matvec(f, p, inputs, _chunks(inputs.shape[0], batch_size), out_shape)
    start = _start(out_shape, next(iter(p.values())), seed)
    value, vec, it, resid, ok = _iterate(matvec, start, method, max_iter, tol)
    return CurvatureEstimate(value, vec.view(out_shape), it, resid, ok, method)


# --------------------------------------------------------------------------------------------------
# the Hessian
# --------------------------------------------------------------------------------------------------


def _hvp_matvec(f, loss_fn, params: Params, batch, chunks, weights, weight_decay: float):
    """``v -> H v`` for the weighted sum of chunk losses (+ weight decay): vjp of grad per chunk."""
    inputs, targets = batch

    def matvec(v_flat: torch.Tensor) -> torch.Tensor:
        v = _unflatten(v_flat, params)
        total = weight_decay * v_flat if weight_decay else torch.zeros_like(v_flat)
        for sl, w in zip(chunks, weights, strict=True):

            def loss(p, sl=sl):
                return loss_fn(f(p, inputs[sl]), targets[sl])

            # reverse-over-reverse: H is symmetric, so the VJP of the gradient is H v (the
            # forward-over-reverse jvp of grad fails on some losses' backward, e.g. mse_loss)
            (hv,) = torch.func.vjp(torch.func.grad(loss), params)[1](v)
            total = total + w * _flatten(hv)
        return total

    return matvec


def _check_batch(batch: Any, params: Params) -> tuple[torch.Tensor, torch.Tensor]:
    if not (isinstance(batch, tuple | list) and len(batch) == 2):
        raise DataError(f"batch must be a pair (inputs, targets), got {type(batch).__name__}")
    inputs, targets = batch
    _check_inputs(inputs, params)
    if not isinstance(targets, torch.Tensor) or targets.shape[:1] != inputs.shape[:1]:
        raise DataError(
            f"targets must be a tensor with one row per input ({inputs.shape[0]}), got "
            f"{tuple(targets.shape) if isinstance(targets, torch.Tensor) else type(targets).__name__}"
        )
    return inputs, targets


def hessian_top_eigenvalue(
    model: nn.Module,
    loss_fn: Callable[[torch.Tensor, torch.Tensor], torch.Tensor],
    batch: tuple[torch.Tensor, torch.Tensor],
    *,
    reduction: str = "mean",
    weight_decay: float = 0.0,
    params: Sequence[str] | None = None,
    batch_size: int | None = None,
    method: str = "lanczos",
    max_iter: int = 100,
    tol: float = 1e-5,
    seed: int = 0,
) -> CurvatureEstimate:
    r"""The top eigenvalue of the Hessian of the training loss (the "sharpness"), by
    Hessian-vector products :math:`v \mapsto \nabla^2_\theta\mathcal L\,v` (``torch.func``:
    vjp of grad), never forming :math:`\nabla^2_\theta\mathcal L`, with

    .. math:: \mathcal L(\theta) = \sum_b w_b\,\ell(f_\theta(X_b), Y_b) + \frac{\lambda}{2}\|\theta\|^2,

    :math:`\ell` = ``loss_fn(outputs, targets)`` on the chunks :math:`b` of ``batch`` =
    ``(inputs, targets)``; :math:`w_b = n_b/N` when ``loss_fn`` averages over its samples
    (``reduction="mean"``, e.g. ``nn.MSELoss()``) and 1 when it sums (``"sum"``), so the value is
    that of the loss on the whole batch whatever ``batch_size``; :math:`\lambda` = ``weight_decay``
    (coupled L2 as in ``torch.optim.SGD(weight_decay=)``, adds :math:`\lambda` to every eigenvalue).

    With ``method="lanczos"`` (default) the largest algebraic eigenvalue; ``"power"`` gives the one
    of largest magnitude (the same unless the most negative curvature dominates). Gradient descent
    with step :math:`\eta` is stable only while this is below :math:`2/\eta` (Cohen et al. 2021).
    Other arguments as :func:`ntk_operator_norm`; ``vector`` is a dict of parameter-shaped tensors.

    >>> import torch
    >>> lin = torch.nn.Linear(2, 1, bias=False).double()
    >>> x = torch.eye(2, dtype=torch.float64) * torch.tensor([[1.0], [3.0]], dtype=torch.float64)
    >>> mse = torch.nn.MSELoss()  # mean over 2 samples: H = 2 X^T X / 2 = diag(1, 9)
    >>> est = hessian_top_eigenvalue(lin, mse, (x, torch.zeros(2, 1, dtype=torch.float64)))
    >>> round(est.value, 8), est.converged
    (9.0, True)
    """
    _check_iteration(method, max_iter, tol)
    if reduction not in ("mean", "sum"):
        raise ConfigError(f"reduction must be 'mean' or 'sum', got {reduction!r}")
    if not (isinstance(weight_decay, int | float) and math.isfinite(weight_decay)):
        raise ConfigError(f"weight_decay must be a finite number, got {weight_decay!r}")
    p = _select_params(model, params)
    inputs, targets = _check_batch(batch, p)
    n = inputs.shape[0]
    chunks = _chunks(n, batch_size)
    weights = [(c.stop - c.start) / n if reduction == "mean" else 1.0 for c in chunks]
    f = _functional(model, p)
    matvec = _hvp_matvec(f, loss_fn, p, (inputs, targets), chunks, weights, float(weight_decay))
    flat = _flatten(p)
    start = _start(tuple(flat.shape), flat, seed)
    value, vec, it, resid, ok = _iterate(matvec, start, method, max_iter, tol)
    return CurvatureEstimate(value, _unflatten(vec, p), it, resid, ok, method)
