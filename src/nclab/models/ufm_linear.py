r"""Exact gradient descent on the plain MSE UFM in class-structured form (a fast path).

For the plain UFM with MSE loss (Tirer & Bruna eq. (3)) write the features as class means plus
within-class deviations, :math:`H = \bar H \otimes 1_n^\top + E` with every class block of E summing
to zero. One gradient-descent step with step η (η_H = m η for the features), decays
:math:`\delta_\theta = 1 - \eta_\theta\lambda_\theta` and :math:`s = \eta/N`,
:math:`C = W\bar H + b1^\top - I_K` (K x K), is *exactly*

.. math::
    W' &= \delta_W W - s\,(n\,C\bar H^\top + W E E^\top),\qquad
    b' = \delta_b b - s\,n\,C1,\\
    \bar H' &= \delta_H \bar H - m s\, W^\top C,\qquad
    E' = M E,\quad M = \delta_H I - m s\, W^\top W,

because the cross terms :math:`(C\otimes 1^\top)E^\top` and :math:`WE(\bar H\otimes 1^\top)^\top`
vanish (E's class blocks sum to zero). So E never has to be touched: with E = P E_0 and
:math:`S_0 = E_0E_0^\top`, a step costs O(d³ + K d²) per problem (P' = M P,
:math:`WEE^\top = ((WP)S_0)P^\top`) instead of three O(K d N) passes over the d x N features. The
iterates are those of plain GD on (W, H, b) in exact arithmetic (``tests/test_ufm_models.py``
checks the step against the closed-form gradient step and against autograd). H is rebuilt, and the
decomposition taken afresh from it, whenever it is read (logging, checkpoints), so an interrupted
and resumed run follows the same arithmetic as an uninterrupted one.
"""

from __future__ import annotations

import torch


class ClassStructured:
    """The state (H̄, P, E_0, S_0) of the features of B problems (H: (B, d, K n), class-major)."""

    def __init__(self, h: torch.Tensor, K: int, n: int):
        self.K, self.n = K, n
        self.decompose(h)

    def decompose(self, h: torch.Tensor) -> None:
        """Take H̄ = class means of ``h``, E_0 = h - H̄ ⊗ 1ᵀ, P = I."""
        B, d, N = h.shape
        blocks = h.reshape(B, d, self.K, self.n)
        self.hbar = blocks.mean(-1)
        self.e0 = (blocks - self.hbar[..., None]).reshape(B, d, N)
        self.s0 = torch.bmm(self.e0, self.e0.mT)
        self.p = torch.eye(d, dtype=h.dtype, device=h.device).expand(B, d, d).clone()
        self.eye_k = torch.eye(self.K, dtype=h.dtype, device=h.device)
        self.neg_eye = -self.eye_k
        self._diag: tuple | None = None  # (decay_h, decay_h * I_d), cached per step size

    def materialize(self) -> torch.Tensor:
        """H = H̄ ⊗ 1ᵀ + P E_0, (B, d, K n)."""
        return torch.baddbmm(self.hbar.repeat_interleave(self.n, dim=2), self.p, self.e0)

    def step(
        self,
        w: torch.Tensor,
        b: torch.Tensor | None,
        scale: torch.Tensor,
        decay_w: torch.Tensor,
        decay_h: torch.Tensor,
        decay_b: torch.Tensor | None,
        mult_h: float,
    ) -> None:
        """One GD step of every problem, in place on ``w``, ``b`` and this state (see module)."""
        hbar, p, n = self.hbar, self.p, self.n
        neg_i = self.neg_eye if b is None else b - self.eye_k
        cs = torch.baddbmm(neg_i, w, hbar).mul_(scale)  # s (W H̄ + b 1ᵀ - I)
        ws = w * scale
        wees = torch.bmm(torch.bmm(torch.bmm(ws, p), self.s0), p.mT)  # s W E Eᵀ
        g_h = torch.bmm(w.mT, cs)  # (before any update: every term reads the old values)
        if mult_h != 1.0:
            g_h.mul_(mult_h)
        if self._diag is None or self._diag[0] is not decay_h:
            eye = torch.eye(p.shape[-1], dtype=p.dtype, device=p.device)
            self._diag = (decay_h, eye * decay_h)
        m = torch.baddbmm(self._diag[1], ws.mT, w, alpha=-mult_h)  # decay_h I - m s WᵀW
        self.p = torch.bmm(m, p)
        w.mul_(decay_w).sub_(wees).baddbmm_(cs, hbar.mT, alpha=-float(n))
        hbar.mul_(decay_h).sub_(g_h)
        if b is not None:
            b.mul_(decay_b).sub_(cs.sum(-1, keepdim=True).mul_(n))
