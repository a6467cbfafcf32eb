"""The network of pyramid-flow: Z_0 = X, Z_l = σ(W_l Z_(l-1)) for the nonlinear layers, linear
after, no biases, its parameters one flat float64 vector θ; the cost C_λ in torch (for autograd's
Hessian) and its gradient and output Jacobian by hand in numpy (what the stiff solver calls
thousands of times, checked against autograd in ``tests/test_pyramid_flow.py``).
"""

from __future__ import annotations

import math

import numpy as np
import torch
from scipy import special

from .activation import SQRT2, SQRT2PI, smooth_relu, width
from .config import PyramidFlowConfig


class Network:
    """Z_0 = X (d x N), Z_l = σ(W_l Z_(l-1)) for l <= L1, W_l Z_(l-1) after; no biases.
    Parameters are one flat float64 vector θ (W_1, ..., W_L, row-major)."""

    def __init__(self, cfg: PyramidFlowConfig, X: torch.Tensor, Y: torch.Tensor):
        m = cfg.model
        self.X, self.Y, self.L1, self.gamma, self.beta = X, Y, m.nonlinear, m.gamma, m.beta
        n = [X.shape[0], *m.widths, Y.shape[0]]
        self.shapes = [(n[i + 1], n[i]) for i in range(len(n) - 1)]
        self.L = len(self.shapes)
        self._np: tuple[np.ndarray, np.ndarray, float] | None = None

    def unflat(self, theta: torch.Tensor) -> list[torch.Tensor]:
        out, i = [], 0
        for a, b in self.shapes:
            out.append(theta[i : i + a * b].view(a, b))
            i += a * b
        return out

    def forward(self, theta: torch.Tensor) -> list[torch.Tensor]:
        """[Z_0, ..., Z_L]."""
        Z, out = self.X, [self.X]
        for ell, W in enumerate(self.unflat(theta), start=1):
            Z = W @ Z
            if ell <= self.L1:
                Z = smooth_relu(Z, self.gamma, self.beta)
            out.append(Z)
        return out

    def cost(self, theta: torch.Tensor, lam: float) -> torch.Tensor:
        """C_λ(θ) = ‖Z_L - Y‖_F² / 2 + λ ‖θ‖² / 2 (the paper's, sums not means)."""
        R = self.forward(theta)[-1] - self.Y
        return 0.5 * (R * R).sum() + 0.5 * lam * (theta * theta).sum()

    def _np_forward(self, z: np.ndarray) -> tuple[list[np.ndarray], list[np.ndarray | None]]:
        """[Z_0, ..., Z_L] and each layer's σ'(W_l Z_(l-1)) (None after the nonlinear ones), in
        numpy: the solver calls the gradient thousands of times on a network this small, where
        autograd's per-call overhead (~1 ms) is most of the cost."""
        if self._np is None:
            s = width(self.gamma, self.beta)
            self._np = (self.X.numpy(), self.Y.numpy(), s)
        X, _, s = self._np
        g, c = self.gamma, 1.0 - self.gamma
        Zs, primes, i = [X], [], 0
        for ell, (a, b) in enumerate(self.shapes, start=1):
            W = z[i : i + a * b].reshape(a, b)
            i += a * b
            A = W @ Zs[-1]
            if ell <= self.L1:
                u = A / s
                Phi = 0.5 * special.erfc(-u / SQRT2)
                phi = np.exp(-0.5 * u * u) / SQRT2PI
                Zs.append(g * A + c * (A * Phi + s * phi) - c * c / (2 * math.pi * self.beta))
                primes.append(g + c * Phi)
            else:
                Zs.append(A)
                primes.append(None)
        return Zs, primes

    def _np_back(self, z: np.ndarray, G: np.ndarray) -> np.ndarray:
        """Backpropagate G = ∂/∂Z_L (shape (..., K, N), batched over leading axes) through the
        network at θ = z: the flat ∂/∂θ, shape (..., P)."""
        Zs, primes = self._np_forward(z)
        Ws, i = [], 0
        for a, b in self.shapes:
            Ws.append(z[i : i + a * b].reshape(a, b))
            i += a * b
        grads = []
        for ell in range(self.L, 0, -1):
            grads.append((G @ Zs[ell - 1].T).reshape(*G.shape[:-2], -1))
            if ell > 1:
                G = Ws[ell - 1].T @ G
                if primes[ell - 2] is not None:
                    G = G * primes[ell - 2]
        return np.concatenate(grads[::-1], axis=-1)

    def grad_np(self, z: np.ndarray, lam: float) -> np.ndarray:
        """∇C_λ at θ = z (numpy, by hand; ``tests/test_pyramid_flow.py`` checks it against
        autograd)."""
        R = self._np_forward(z)[0][-1] - self._np[1]
        return self._np_back(z, R) + lam * z

    def cost_np(self, z: np.ndarray, lam: float) -> float:
        """C_λ at θ = z (numpy): :meth:`cost` without autograd's overhead."""
        R = self._np_forward(z)[0][-1] - self._np[1]
        return 0.5 * float(np.sum(R * R)) + 0.5 * lam * float(z @ z)

    def out_jacobian_np(self, z: np.ndarray) -> np.ndarray:
        """∂ vec(Z_L) / ∂θ (row-major vec, one row per output entry), shape (K N, P)."""
        K, N = self.Y.shape
        E = np.eye(K * N).reshape(K * N, K, N)
        return self._np_back(z, E)
