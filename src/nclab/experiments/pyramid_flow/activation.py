r"""The smooth activation (7) of Jacot et al. (ICLR 2025) in closed form, and its derivatives.

(7) is the Gaussian smoothing of the leaky ReLU :math:`\max(\gamma u, u)`, shifted so that
:math:`\sigma(0) = 0`:

.. math::

    \sigma(x) = -\frac{(1-\gamma)^2}{2\pi\beta} + \frac{\beta}{1-\gamma}\int_{-\infty}^{\infty}
    \max(\gamma u, u)\, e^{-\pi\beta^2(x-u)^2/(1-\gamma)^2}\,du .

The kernel is the density of :math:`N(x, s^2)` times :math:`(1-\gamma)/\beta`, with
:math:`s = (1-\gamma)/(\beta\sqrt{2\pi})`, so the integral term is
:math:`E[\max(\gamma u, u)]` for :math:`u \sim N(x, s^2)`; with
:math:`\max(\gamma u, u) = \gamma u + (1-\gamma)\max(u, 0)` and the mean of a rectified normal,

.. math::

    \sigma(x) = \gamma x + (1-\gamma)\big(x\,\Phi(x/s) + s\,\varphi(x/s)\big)
    - \frac{(1-\gamma)^2}{2\pi\beta},

:math:`\sigma'(x) = \gamma + (1-\gamma)\Phi(x/s) \in [\gamma, 1]` and
:math:`\sigma''(x) = (1-\gamma)\varphi(x/s)/s \le (1-\gamma)/(s\sqrt{2\pi}) = \beta`: Assumption
4.2 (i) and (iii); (ii) :math:`|\sigma(x)| \le |x|` follows from :math:`\sigma(0) = 0` (the shift
equals :math:`(1-\gamma)s\varphi(0)`) and (i). ``tests/test_pyramid_flow.py`` checks the closed
form against quadrature of (7) and (i)-(iii) on a grid.

>>> import torch
>>> float(smooth_relu(torch.tensor(0.0, dtype=torch.float64), 0.5, 2.0))
0.0
"""

from __future__ import annotations

import math

import torch

SQRT2 = math.sqrt(2.0)
SQRT2PI = math.sqrt(2.0 * math.pi)


def width(gamma: float, beta: float) -> float:
    """The standard deviation s = (1 - γ) / (β √(2π)) of (7)'s Gaussian kernel."""
    return (1.0 - gamma) / (beta * SQRT2PI)


def smooth_relu(x: torch.Tensor, gamma: float, beta: float) -> torch.Tensor:
    """σ(x) of (7), elementwise, in closed form (differentiable by autograd)."""
    s = width(gamma, beta)
    u = x / s
    Phi = 0.5 * torch.special.erfc(-u / SQRT2)
    phi = torch.exp(-0.5 * u * u) / SQRT2PI
    return (
        gamma * x + (1.0 - gamma) * (x * Phi + s * phi) - (1.0 - gamma) ** 2 / (2 * math.pi * beta)
    )


def smooth_relu_prime(x: torch.Tensor, gamma: float, beta: float) -> torch.Tensor:
    """σ'(x) = γ + (1 - γ) Φ(x / s)."""
    u = x / width(gamma, beta)
    return gamma + (1.0 - gamma) * 0.5 * torch.special.erfc(-u / SQRT2)


def smooth_relu_second(x: torch.Tensor, gamma: float, beta: float) -> torch.Tensor:
    """σ''(x) = (1 - γ) φ(x / s) / s (at most β, at x = 0)."""
    s = width(gamma, beta)
    u = x / s
    return (1.0 - gamma) * torch.exp(-0.5 * u * u) / (SQRT2PI * s)
