r"""Batched gradient-descent solvers of the unconstrained-features family.

One :class:`BatchedUFM` holds B independent problems of the same shape (configurations × seeds):
every parameter carries a leading batch dimension and one :meth:`BatchedUFM.step` updates all B problems
with batched matrix products, each with its own regularisation strengths and step size.

Models (``UFMSpec``), all in the convention of :mod:`nclab.theory.objectives` (its functions compute
the objective here; the gradients below are its closed-form derivatives, checked against autograd
in ``tests/test_ufm_models.py``):

* plain UFM (``depth=1``), MSE or CE, bias-free / unregularised bias / regularised bias
  (Tirer & Bruna eq. (3); Zhu et al. for CE); with ``relu_features`` the bias-free MSE model
  W σ(H) (Tirer & Bruna §7), whose H gets no fit gradient where it is <= 0;
* extended UFM (``depth=2``), linear or ReLU (Tirer & Bruna eq. (23)/(24));
* deep UFM (``depth=L``): W_L σ(W_{L-1} ··· σ(W_1 H)), linear or ReLU;
* GUFM (``layernorm=True``, Súkeník et al.): features projected after every step onto the LayerNorm
  set (zero mean over the d coordinates, norm √d), weight decay on W only (projected GD).

Gradients, with R = ∂loss/∂Z = (Z - Y)/N (MSE) or (softmax(Z) - Y)/N (CE), A_0 = H,
A_l = σ(W_l A_{l-1}):

.. math:: \nabla_{W_L} = R A_{L-1}^\top,\quad D_{L-1} = W_L^\top R,\quad
          D_l \leftarrow D_l \odot 1[W_l A_{l-1} > 0]\ (\text{ReLU}),\quad
          \nabla_{W_l} = D_l A_{l-1}^\top,\quad D_{l-1} = W_l^\top D_l,\quad \nabla_H = D_0,

plus λθ for each regularised parameter and ∇_b = R1 + λ_b b. Plain GD (default) folds the step size
into R and updates in place: θ ← (1 - ηλ)θ - η∇_fit; heavy-ball momentum is optional.

Length: one class, whose gradients, fast paths and caches share private state.

>>> m = BatchedUFM(UFMSpec(K=3, n=4, d=5), seeds=[0, 1], lambda_w=0.01, lambda_h=0.01, lr=0.1)
>>> before = m.objective()
>>> for _ in range(100):
...     m.step()
>>> bool((m.objective() < before).all()), tuple(m.objective().shape)
(True, (2,))
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import torch

from ..errors import ConfigError
from ..theory import objectives as O
from .ufm_linear import ClassStructured
from .ufm_spec import BIASES, LOSSES, UFMSpec, _per_problem, lr_factor

__all__ = ["BIASES", "LOSSES", "BatchedUFM", "UFMSpec", "lr_factor"]


def _check_options(momentum: float, lr_h_scale: float, dtype: torch.dtype, init) -> dict:
    """Check the solver's scalar options; returns the init stds with their defaults filled in."""
    if not 0 <= momentum < 1:
        raise ConfigError(f"momentum must lie in [0, 1), got {momentum}")
    if not (math.isfinite(lr_h_scale) and lr_h_scale > 0):
        raise ConfigError(f"lr_h_scale must be > 0, got {lr_h_scale}")
    if dtype not in (torch.float64, torch.float32):
        raise ConfigError(f"dtype must be torch.float64 or torch.float32, got {dtype}")
    init = {"w": 1.0, "w1": 1.0, "h": 1.0, "b": 1.0} | dict(init or {})
    unknown = set(init) - {"w", "w1", "h", "b"}
    if unknown:
        raise ConfigError(f"unknown init keys {sorted(unknown)}; valid: w, w1, h, b")
    return init


class BatchedUFM:
    """B problems of one :class:`UFMSpec`, trained together by (projected) gradient descent.

    Args:
        spec: the model.
        seeds: one seed per problem; problem i is initialised from ``torch.Generator`` seeded with
            ``seeds[i]`` exactly as a batch of one would be (batched == unbatched).
        lambda_w: weight decay of the classifier W_L (one value or one per problem).
        lambda_w1: weight decay of the hidden layers W_1..W_{L-1} (default: ``lambda_w``).
        lambda_h: weight decay of the free features H (0 for the GUFM).
        lambda_b: weight decay of the bias (used with ``bias="regularized"``).
        lr: step size (one or one per problem); ``lr_h_scale`` multiplies it for H.
        momentum: heavy-ball momentum (0: plain gradient descent).
        init: std of the N(0, std²) initialisation per parameter: keys ``w`` (classifier),
            ``w1`` (hidden layers), ``h`` (features), ``b`` (bias); default 1.
        dtype, device: of the parameters (float64 by default).
        structured: run the plain MSE UFM under plain GD in its exact class-structured form
            (:mod:`nclab.models.ufm_linear`, the same iterates at a fraction of the cost); False
            forces the generic batched path.
    """

    def __init__(
        self,
        spec: UFMSpec,
        seeds: Sequence[int],
        lambda_w: Any,
        lambda_h: Any,
        lambda_w1: Any = None,
        lambda_b: Any = 0.0,
        lr: Any = 0.1,
        momentum: float = 0.0,
        lr_h_scale: float = 1.0,
        init: dict[str, float] | None = None,
        dtype: torch.dtype = torch.float64,
        device: str | torch.device = "cpu",
        structured: bool = True,
    ):
        self.spec = spec
        seeds = [int(s) for s in seeds]
        if not seeds:
            raise ConfigError("seeds must name at least one problem")
        B = self.B = len(seeds)
        self.seeds = seeds
        init = _check_options(momentum, lr_h_scale, dtype, init)
        self.momentum, self.lr_h_scale = float(momentum), float(lr_h_scale)
        self.dtype, self.device = dtype, torch.device(device)
        lam_w = _per_problem("lambda_w", lambda_w, B)
        lam_w1 = lam_w if lambda_w1 is None else _per_problem("lambda_w1", lambda_w1, B)
        lam_h = _per_problem("lambda_h", lambda_h, B)
        lam_b = _per_problem("lambda_b", lambda_b if spec.bias == "regularized" else 0.0, B)
        if spec.bias == "regularized" and (lam_b == 0).any():
            raise ConfigError("bias='regularized' needs lambda_b > 0 (bias='free' is lambda_b = 0)")
        self.lr = _per_problem("lr", lr, B, allow_zero=False)
        L = spec.depth
        # regularisation strengths, one (B,) tensor per parameter, in parameter order
        self.lambdas = [lam_w1] * (L - 1) + [lam_w, lam_h] + ([lam_b] if self.has_bias else [])
        self._params = self._init_params(init)
        self.velocity = [torch.zeros_like(p) for p in self._params] if self.momentum else None
        self.y = O.targets(spec.K, spec.n, self._params[0])
        self._neg_y = (-self.y).unsqueeze(0)
        self.steps_done = 0
        self._cache: tuple | None = None
        # plain GD keeps H = alpha * H~ with a per-problem scalar alpha, so the weight decay of H
        # costs a (B,1,1) product instead of a pass over the (B, d, N) features
        self._alpha = torch.ones(B, 1, 1, dtype=dtype, device=self.device)
        self._scaled = False
        self._since_sync = 0
        # the plain MSE UFM under plain GD runs in class-structured form (exact, see ufm_linear)
        self._fast = (
            structured
            and spec.depth == 1
            and spec.loss == "mse"
            and (not spec.layernorm and not self.momentum)
            and not spec.relu_features
        )
        self._cs = ClassStructured(self._params[L], spec.K, spec.n) if self._fast else None
        self._stale = False

    # --- parameters ------------------------------------------------------------------------------
    @property
    def has_bias(self) -> bool:
        return self.spec.bias != "none"

    @property
    def param_names(self) -> list[str]:
        L = self.spec.depth
        names = [f"W{i}" for i in range(1, L + 1)] + ["H"]
        return names + (["b"] if self.has_bias else [])

    @property
    def params(self) -> list[torch.Tensor]:
        """The parameters [W_1, .., W_L, H, (b)], each with a leading batch dimension."""
        self._sync_h()
        return self._params

    def _sync_h(self) -> None:
        """Bring H up to date: rebuild it from the class-structured state (and take that state
        afresh from it), or fold a pending scale into it (H~ <- alpha H~, alpha <- 1)."""
        if self._stale:
            h = self._params[self.spec.depth]
            h.copy_(self._cs.materialize())
            self._cs.decompose(h)
            self._stale = False
        if self._scaled:
            self._params[self.spec.depth].mul_(self._alpha)
            self._alpha.fill_(1.0)
            self._scaled = False
        self._since_sync = 0

    @property
    def weights(self) -> list[torch.Tensor]:
        return self._params[: self.spec.depth]

    @property
    def h(self) -> torch.Tensor:
        return self.params[self.spec.depth]

    @property
    def b(self) -> torch.Tensor | None:
        return self.params[-1] if self.has_bias else None

    def _init_params(self, init: dict[str, float]) -> list[torch.Tensor]:
        s, L = self.spec, self.spec.depth
        bias = self.has_bias
        shapes = [(s.d, s.d)] * (L - 1) + [(s.K, s.d), (s.d, s.N)] + ([(s.K, 1)] if bias else [])
        scales = [init["w1"]] * (L - 1) + [init["w"], init["h"]] + ([init["b"]] if bias else [])
        per_problem = []
        for seed in self.seeds:
            g = torch.Generator().manual_seed(seed)

            def draw(i: int, g=g) -> torch.Tensor:
                return torch.randn(shapes[i], generator=g, dtype=torch.float64) * scales[i]

            # features first, then W_1..W_L, then b (draws on the CPU in float64: every dtype and
            # device starts from the same point)
            h = draw(L)
            ws = [draw(i) for i in range(L)]
            rest = [draw(L + 1)] if self.has_bias else []
            per_problem.append([*ws, h, *rest])
        params = [
            torch.stack([p[i] for p in per_problem]).to(self.device, self.dtype)
            for i in range(len(shapes))
        ]
        if s.layernorm:
            params[L] = O.layernorm_project(params[L])
        return params

    # --- objective and gradients ------------------------------------------------------------------
    def _lam(self, i: int) -> torch.Tensor:
        return self.lambdas[i].to(self.device, self.dtype)

    def objective(self) -> torch.Tensor:
        """(B,) objective values, computed by :func:`nclab.theory.objectives.ufm_objective`."""
        s, L = self.spec, self.spec.depth
        with torch.no_grad():
            lam = [self._lam(i) for i in range(len(self.params))]
            return O.ufm_objective(
                self.weights,
                self.h,
                self.y,
                lam[:L],
                lam[L],
                loss=s.loss,
                relu_hidden=s.relu,
                b=self.b,
                lambda_b=lam[-1] if self.has_bias else 0.0,
                relu_input=s.relu_features,
            )

    def forward(self) -> tuple[list[torch.Tensor], list[torch.Tensor], torch.Tensor]:
        """(activations A_0 = H .. A_{L-1}, pre-activations Z_1 .. Z_{L-1}, logits)."""
        acts, pres = [self.h], []
        a = self.h.clamp_min(0) if self.spec.relu_features else self.h
        for w in self.weights[:-1]:
            z = torch.bmm(w, a)
            pres.append(z)
            a = z.clamp_min(0) if self.spec.relu else z
            acts.append(a)
        logits = torch.bmm(self.weights[-1], a)
        if self.has_bias:
            logits = logits + self.b
        return acts, pres, logits

    def _fit_grads(
        self, scale: torch.Tensor, skip_h: bool = False, neg_y_scaled: torch.Tensor | None = None
    ) -> tuple[list, torch.Tensor]:
        """Closed-form gradients of the fit term, times ``scale`` (B,1,1), in parameter order.

        Returns (grads, d0) with grads[H] = W_1ᵀ d0; with ``skip_h`` grads[H] is left None so the
        caller can fuse W_1ᵀ d0 into the update of H (``baddbmm_``). ``neg_y_scaled`` = -Y·scale
        (MSE): the scale then rides on the last layer's weights instead of a pass over R.
        """
        s, ws, L = self.spec, self.weights, self.spec.depth
        h = self._params[L]  # the true H is alpha * h while a scale is pending
        alpha = self._alpha if self._scaled else None
        fold = s.loss == "mse" and neg_y_scaled is not None
        w_in = ws[0] * alpha if alpha is not None else ws[0]  # the layer that reads H
        acts, pres = [h], []
        a = h
        if s.relu_features:  # W σ(H): the classifier reads σ(H)
            a = h.clamp_min(0)
            acts = [a]
        for i, w in enumerate(ws[:-1]):
            z = torch.bmm(w_in if i == 0 else w, a)
            pres.append(z)
            a = z.clamp_min(0) if s.relu else z
            acts.append(a)
        w_last = w_in if L == 1 else ws[-1]
        b = self._params[-1] if self.has_bias else None
        if fold:  # scale * (Z - Y) in one product
            w_last = w_last * scale
            base = neg_y_scaled if b is None else torch.addcmul(neg_y_scaled, b, scale)
            r = torch.baddbmm(base, w_last, a)
        elif s.loss == "mse":
            base = self._neg_y if b is None else b + self._neg_y
            r = torch.baddbmm(base, w_last, a)  # Z - Y
        else:
            z = torch.bmm(w_last, a) if b is None else torch.baddbmm(b, w_last, a)
            # softmax over the classes, written out: torch.softmax over a non-last dim goes
            # through a parallel kernel that is very slow on tiny, oversubscribed CPUs
            e = (z - z.amax(dim=1, keepdim=True)).exp_()
            r = e.div_(e.sum(dim=1, keepdim=True)).sub_(self.y)
        if not fold:
            r.mul_(scale)
        grads: list = [None] * len(self._params)
        grads[L - 1] = torch.bmm(r, acts[-1].mT)
        if self.has_bias:
            grads[L + 1] = r.sum(-1, keepdim=True)
        dz = r
        for i in range(L - 1, 0, -1):
            dz = torch.bmm(ws[i].mT, dz)
            if s.relu:
                dz = dz * (pres[i - 1] > 0)
            grads[i - 1] = torch.bmm(dz, acts[i - 1].mT)
        if alpha is not None:
            grads[0].mul_(alpha)  # the gradient of W_1 reads the true H = alpha h
        if not skip_h:
            grads[L] = torch.bmm(ws[0].mT, dz)
            if s.relu_features:  # no fit gradient through σ where H <= 0
                grads[L].mul_(h > 0)
        return grads, dz

    def gradients(self) -> list[torch.Tensor]:
        """Full closed-form gradients (fit + weight decay) of :meth:`objective`, parameter order."""
        self._sync_h()
        scale = torch.full((self.B, 1, 1), 1.0 / self.spec.N, dtype=self.dtype, device=self.device)
        grads, _ = self._fit_grads(scale)
        return [
            g + self._lam(i)[:, None, None] * p
            for i, (g, p) in enumerate(zip(grads, self.params, strict=True))
        ]

    # --- one step ---------------------------------------------------------------------------------
    def _cached(self, lr_factor: float) -> tuple[torch.Tensor, list[torch.Tensor], list[float]]:
        """(lr (B,1,1), decay factors 1 - eta*lambda and step multipliers, per parameter)."""
        if self._cache is None or self._cache[0] != lr_factor:
            lr = (self.lr * lr_factor).to(self.device, self.dtype)[:, None, None]
            L = self.spec.depth
            mult = [self.lr_h_scale if i == L else 1.0 for i in range(len(self._params))]
            decay = [1 - m * lr * self._lam(i)[:, None, None] for i, m in enumerate(mult)]
            scale = lr / self.spec.N
            self._cache = (lr_factor, lr, decay, mult, scale, self._neg_y * scale)
        return self._cache[1], self._cache[2], self._cache[3]

    def step(self, lr_factor: float = 1.0) -> None:
        """One (projected) gradient-descent step of every problem; ``lr_factor`` scales the step."""
        lr, decay, mult = self._cached(float(lr_factor))
        L = self.spec.depth
        params = self._params
        if self._fast:
            b = params[L + 1] if self.has_bias else None
            self._cs.step(
                params[0],
                b,
                self._cache[4],
                decay[0],
                decay[L],
                decay[L + 1] if b is not None else None,
                mult[L],
            )
            self._stale = True
        elif self.velocity is None and self.spec.relu_features:
            # W σ(H): the masked gradient of H cannot be fused into one product
            grads, _ = self._fit_grads(lr / self.spec.N)
            for i, (p, g) in enumerate(zip(params, grads, strict=True)):
                p.mul_(decay[i]).sub_(g, alpha=mult[i])
        elif self.velocity is None and not self.spec.layernorm:
            # plain GD: theta <- (1 - eta lambda) theta - eta grad_fit, the step size folded into
            # R. H = alpha h: the decay goes into alpha, and the step into h through the old W_1:
            # h <- h - (W_1 / alpha_new)ᵀ d0 (one fused baddbmm_ over the features)
            scale, neg_y_scaled = self._cache[4], self._cache[5]
            grads, d0 = self._fit_grads(scale, skip_h=True, neg_y_scaled=neg_y_scaled)
            alpha = self._alpha * decay[L]
            params[L].baddbmm_((params[0] / alpha).mT, d0, alpha=-mult[L])
            self._alpha, self._scaled = alpha, True
            for i, (p, g) in enumerate(zip(params, grads, strict=True)):
                if i != L:
                    p.mul_(decay[i]).sub_(g)
            self._since_sync += 1
            if self._since_sync >= 64:  # keep alpha far from underflow
                self._sync_h()
        elif self.velocity is None:
            grads, d0 = self._fit_grads(lr / self.spec.N, skip_h=True)
            params[L].mul_(decay[L]).baddbmm_(params[0].mT, d0, alpha=-mult[L])  # old W_1
            for i, (p, g) in enumerate(zip(params, grads, strict=True)):
                if i != L:
                    p.mul_(decay[i]).sub_(g)
        else:
            self._sync_h()
            grads, _ = self._fit_grads(torch.full_like(lr, 1.0 / self.spec.N))
            for i, (p, g, v) in enumerate(zip(params, grads, self.velocity, strict=True)):
                v.mul_(self.momentum).add_(g).add_(self._lam(i)[:, None, None] * p)
                p.sub_(mult[i] * lr * v)
        if self.spec.layernorm:
            params[L].copy_(O.layernorm_project(params[L]))
        self.steps_done += 1

    # --- what the metrics see ---------------------------------------------------------------------
    def layer_features(self) -> dict[str, torch.Tensor]:
        """Feature matrices (B, D, N) by layer name (:meth:`UFMSpec.layer_names`), input first."""
        acts, pres, _ = self.forward()
        if self.spec.depth == 1:  # W σ(H): the classifier's input is σ(H)
            return {"H": self.h.clamp_min(0) if self.spec.relu_features else self.h}
        out = {"H1": self.h}
        for layer in range(1, self.spec.depth):
            out[f"Z{layer}"] = pres[layer - 1]
            if self.spec.relu:
                out[f"A{layer}"] = acts[layer]
        return out

    @property
    def classifier(self) -> torch.Tensor:
        """W_L, (B, K, d): the classifier acting on the last feature layer."""
        return self.weights[-1]

    # --- state ------------------------------------------------------------------------------------
    def state_dict(self) -> dict[str, Any]:
        return {
            "params": [p.detach().cpu().clone() for p in self.params],
            "velocity": [v.cpu().clone() for v in self.velocity] if self.velocity else None,
            "steps_done": self.steps_done,
            "seeds": list(self.seeds),
        }

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self._sync_h()
        if state["seeds"] != self.seeds or len(state["params"]) != len(self._params):
            raise ConfigError("checkpoint does not match this batch of problems (seeds/parameters)")
        for p, q in zip(self.params, state["params"], strict=True):
            if p.shape != q.shape:
                raise ConfigError(
                    f"checkpoint parameter shape {tuple(q.shape)} != {tuple(p.shape)}"
                )
            p.copy_(q.to(self.device, self.dtype))
        if self.velocity is not None and state["velocity"] is not None:
            for v, q in zip(self.velocity, state["velocity"], strict=True):
                v.copy_(q.to(self.device, self.dtype))
        if self._cs is not None:
            self._cs.decompose(self._params[self.spec.depth])
        self.steps_done = int(state["steps_done"])
