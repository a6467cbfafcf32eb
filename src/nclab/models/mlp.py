r"""MLPs with deep linear heads (Jacot, Súkeník, Wang & Mondelli, ICLR 2025, eq. (1)).

:math:`Z_0 = X` (or the output of a backbone), :math:`Z_\ell = \sigma(W_\ell Z_{\ell-1})` for the
:math:`L_1` nonlinear layers and :math:`Z_\ell = W_\ell Z_{\ell-1}` for the :math:`L_2` linear
layers, the last of which has K outputs. The activation is ReLU, leaky ReLU, or the smoothed ReLU of
the paper's eq. (7) (:class:`SmoothReLU`), which satisfies Assumption 4.2.

Module names (for :class:`~nclab.CollapseProbe`): layer :math:`\ell` (1-based) is
``layers.{ℓ-1}``; a nonlinear layer is a :class:`NonlinearLayer` whose ``linear`` submodule outputs
the pre-activation :math:`W_\ell Z_{\ell-1}` (for negativity); a linear layer is a plain
``nn.Linear`` (bias-free by default, as the theory assumes).

>>> m = LinearHeadMLP(in_dim=40, num_classes=10, widths=[64] * 3, head_widths=[32, 32])
>>> m.L1, m.L2, [tuple(w.shape) for w in m.weights()][-3:]
(3, 3, [(32, 64), (32, 32), (10, 32)])
>>> m(torch.randn(5, 40)).shape
torch.Size([5, 10])
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import torch
from torch import nn

from ..errors import ConfigError

ACTIVATIONS = ("relu", "leaky_relu", "smooth_relu")


class SmoothReLU(nn.Module):
    r"""The smoothed leaky ReLU of Jacot et al., eq. (7) (Nguyen & Mondelli 2020, Lemma B.1):

    .. math:: \sigma(x) = -\frac{(1-\gamma)^2}{2\pi\beta} + \frac{\beta}{1-\gamma}
       \int \max(\gamma u, u)\, e^{-\pi\beta^2(x-u)^2/(1-\gamma)^2}\, du

    The kernel is a Gaussian of standard deviation :math:`\tau = (1-\gamma)/(\beta\sqrt{2\pi})`,
    which gives the closed form :math:`\sigma(x) = \gamma x + (1-\gamma)\,[x\Phi(x/\tau) +
    \tau(\varphi(x/\tau) - \varphi(0))]`: :math:`\sigma(0) = 0`, :math:`\sigma' = \gamma +
    (1-\gamma)\Phi(x/\tau) \in [\gamma, 1]`, :math:`\sigma''\le\beta` (Assumption 4.2), and
    :math:`|\sigma(x) - \max(\gamma x, x)| \le (1-\gamma)\tau\varphi(0)`.

    >>> s = SmoothReLU(gamma=0.1, beta=10.0)
    >>> float(s(torch.tensor(0.0))), round(float(s(torch.tensor(5.0))), 4)
    (0.0, 4.9871)
    """

    def __init__(self, gamma: float = 0.01, beta: float = 10.0):
        super().__init__()
        if not 0.0 < gamma < 1.0 or beta < 1.0:
            raise ConfigError(
                f"SmoothReLU needs gamma in (0, 1) and beta >= 1 (Assumption 4.2), "
                f"got gamma={gamma}, beta={beta}"
            )
        self.gamma, self.beta = gamma, beta
        self.tau = (1.0 - gamma) / (beta * math.sqrt(2.0 * math.pi))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        t = x / self.tau
        phi = torch.exp(-0.5 * t * t) / math.sqrt(2.0 * math.pi)
        phi0 = 1.0 / math.sqrt(2.0 * math.pi)
        return self.gamma * x + (1.0 - self.gamma) * (
            x * torch.special.ndtr(t) + self.tau * (phi - phi0)
        )

    def extra_repr(self) -> str:
        return f"gamma={self.gamma}, beta={self.beta}"


def make_activation(
    name: str, negative_slope: float = 0.01, gamma: float = 0.01, beta: float = 10.0
) -> nn.Module:
    """``relu``, ``leaky_relu`` (``negative_slope``) or ``smooth_relu`` (eq. (7), ``gamma``,
    ``beta``)."""
    if name == "relu":
        return nn.ReLU()
    if name == "leaky_relu":
        return nn.LeakyReLU(negative_slope)
    if name == "smooth_relu":
        return SmoothReLU(gamma, beta)
    raise ConfigError(f"unknown activation {name!r}; activations: {', '.join(ACTIVATIONS)}")


class NonlinearLayer(nn.Module):
    """:math:`Z_\\ell = \\sigma(W_\\ell Z_{\\ell-1} + b_\\ell)`; ``linear`` outputs the pre-activation."""

    def __init__(self, d_in: int, d_out: int, act: nn.Module, bias: bool = True):
        super().__init__()
        self.linear = nn.Linear(d_in, d_out, bias=bias)
        self.act = act

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.act(self.linear(x))


class LinearHeadMLP(nn.Module):
    r"""Backbone (optional) -> L1 nonlinear layers -> L2 linear layers (the last has K outputs).

    Args:
        in_dim: input dimension (the backbone's output dimension when a backbone is given).
        num_classes: K.
        widths: widths of the L1 nonlinear layers (the first may be wide, >= N, as in the theory).
        head_widths: widths of the L2 - 1 hidden linear layers (L2 = len(head_widths) + 1).
        activation: ``relu``, ``leaky_relu`` or ``smooth_relu``.
        bias: biases in the nonlinear layers. head_bias: biases in the linear head (the theory has
            none).
        backbone: a module applied first (e.g. :class:`~nclab.models.resnet.ResNet20`), its output
            flattened.
        init: ``"kaiming"`` (default): He-normal weights in the nonlinear layers (gain sqrt(2)),
            :math:`\mathcal N(0, 1/n_{\ell-1})` in the linear head, zero biases, so signals keep
            their scale through depth; ``"torch"``: PyTorch's default ``nn.Linear`` initialisation
            (its variance 1/(3 n_in) shrinks deep networks' outputs towards zero).
        init_scale: multiplies every initial weight.
    """

    def __init__(
        self,
        in_dim: int,
        num_classes: int,
        widths: Sequence[int],
        head_widths: Sequence[int] = (),
        activation: str = "relu",
        bias: bool = True,
        head_bias: bool = False,
        backbone: nn.Module | None = None,
        negative_slope: float = 0.01,
        gamma: float = 0.01,
        beta: float = 10.0,
        init: str = "kaiming",
        init_scale: float = 1.0,
    ):
        super().__init__()
        for name, ws in (("widths", widths), ("head_widths", head_widths)):
            if any(not isinstance(w, int) or w < 1 for w in ws):
                raise ConfigError(f"{name} must be positive integers, got {list(ws)}")
        if in_dim < 1 or num_classes < 2:
            raise ConfigError(f"need in_dim >= 1 and num_classes >= 2, got {in_dim}, {num_classes}")
        self.backbone = backbone
        self.L1, self.L2 = len(widths), len(head_widths) + 1
        self.num_classes = num_classes
        self.layers = nn.ModuleList()
        d = in_dim
        for w in widths:
            act = make_activation(activation, negative_slope, gamma, beta)
            self.layers.append(NonlinearLayer(d, w, act, bias=bias))
            d = w
        for w in [*head_widths, num_classes]:
            self.layers.append(nn.Linear(d, w, bias=head_bias))
            d = w
        if init not in ("kaiming", "torch"):
            raise ConfigError(f"init must be 'kaiming' or 'torch', got {init!r}")
        with torch.no_grad():
            for ell, lin in enumerate(self.linear_modules(), start=1):
                if init == "kaiming":
                    std = math.sqrt((2.0 if ell <= self.L1 else 1.0) / lin.weight.shape[1])
                    lin.weight.normal_(0.0, std)
                    if lin.bias is not None:
                        lin.bias.zero_()
                lin.weight.mul_(init_scale)

    @property
    def L(self) -> int:
        return self.L1 + self.L2

    def linear_modules(self) -> list[nn.Linear]:
        """The nn.Linear of every layer, W_1 .. W_L."""
        return [m.linear if isinstance(m, NonlinearLayer) else m for m in self.layers]

    def weights(self) -> list[torch.Tensor]:
        """W_1 .. W_L (n_l x n_{l-1}, nn.Linear's layout)."""
        return [m.weight for m in self.linear_modules()]

    def layer_name(self, ell: int) -> str:
        """Module name of layer ``ell`` (1-based); its output is Z_ell."""
        if not 1 <= ell <= self.L:
            raise ConfigError(f"layer index must be in 1..{self.L}, got {ell}")
        return f"layers.{ell - 1}"

    def is_linear(self, ell: int) -> bool:
        return ell > self.L1

    def features_in(self, x: torch.Tensor) -> torch.Tensor:
        """Z_0: the input, or the flattened backbone output."""
        if self.backbone is not None:
            x = self.backbone(x)
        return x.flatten(1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        z = self.features_in(x)
        for layer in self.layers:
            z = layer(z)
        return z

    def forward_all(self, x: torch.Tensor) -> list[torch.Tensor]:
        """[Z_0, Z_1, ..., Z_L] for a batch (rows are samples)."""
        zs = [self.features_in(x)]
        for layer in self.layers:
            zs.append(layer(zs[-1]))
        return zs
