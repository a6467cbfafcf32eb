"""Deep regularised LayerNorm ResNets and transformers of Súkeník, Lampert & Mondelli (2025).

The appendix (proof of the main result for L-RN1) writes the L-RN1 objective as
:math:`\\mathcal{L}_{L,1}(\\theta) = \\mathcal{L}_{\\rm GUFM}(W_L, X_L)
+ \\frac{\\lambda}{2}\\sum_{l=1}^{L-1}\\|W_l\\|_F^2` with :math:`X_1 = \\mathrm{LN}(W_0X_0 + b_0)`, and
notes that a block with zero weights and biases copies its input. The main text (not in
``papers/``) is reconstructed accordingly:

* ``rn1``: :math:`X_{l+1} = \\mathrm{LN}(X_l + \\mathrm{ReLU}(W_lX_l + b_l))`, l = 1..L-1;
* ``rn2``: :math:`X_{l+1} = \\mathrm{LN}(X_l + W_l^{(2)}\\mathrm{ReLU}(W_l^{(1)}X_l + b_l))`;
* logits :math:`W_LX_L` (no bias), so :math:`(W_L, X_L)` is a point of the GUFM: every column of
  X_L lies on the LayerNorm sphere {x : 1ᵀx = 0, ‖x‖ = √d}.

The transformers (:class:`LNTransformer`, our reading of L-T11 / L-T12) classify token sequences
from a class token: X_1 = LN(token and position embeddings, with a learned class token first); each
of the L-1 blocks is an attention sub-block X <- LN(X + softmax(X W_Q (X W_K)^T / sqrt(d)) X W_V)
followed by a one-layer (``t11``) or two-layer (``t12``) ReLU sub-block as in ``rn1`` / ``rn2``; the
head reads the class token of X_L. With W_V = 0 and zero MLP weights and biases a block again copies
its input.

``LN`` has no learnable affine map and no ε inside the square root (it would put the features
strictly inside the sphere); only an all-equal pre-activation, which has no direction, is mapped to 0.
Weight decay applies to W_1 .. W_L (:meth:`LNResNet.decayed_parameters`), not to W_0 or the biases,
as in the appendix's objective.
"""

from __future__ import annotations

import math
from typing import Literal

import torch
from torch import nn

Block = Literal["rn1", "rn2"]
TransformerBlock = Literal["t11", "t12"]


def layer_norm_sphere(x: torch.Tensor) -> torch.Tensor:
    """Rows centred and scaled to norm √d: the LayerNorm of the paper (no affine map, no ε).

    >>> y = layer_norm_sphere(torch.randn(3, 8))
    >>> bool(y.sum(1).abs().max() < 1e-5), bool(((y.norm(dim=1) - 8 ** 0.5).abs() < 1e-5).all())
    (True, True)
    """
    c = x - x.mean(dim=-1, keepdim=True)
    n = c.norm(dim=-1, keepdim=True)
    return c * (math.sqrt(x.shape[-1]) / torch.where(n > 0, n, torch.ones_like(n)))


class LNResNet(nn.Module):
    """L-RN1 / L-RN2 of depth L on vectors: input layer, L-1 residual LayerNorm blocks, linear head.

    Args:
        in_dim: input dimension; width: d (features of every layer); depth: L >= 1 (L = 1 is the
        input layer and the head only); num_classes: K; block: ``"rn1"`` or ``"rn2"``.

    >>> net = LNResNet(5, 8, depth=3, num_classes=4)
    >>> net(torch.randn(10, 5)).shape, len(net.blocks)
    (torch.Size([10, 4]), 2)
    """

    def __init__(self, in_dim: int, width: int, depth: int, num_classes: int, block: Block = "rn1"):
        super().__init__()
        if depth < 1:
            raise ValueError(f"depth must be >= 1, got {depth}")
        if block not in ("rn1", "rn2"):
            raise ValueError(f"block must be 'rn1' or 'rn2', got {block!r}")
        self.block = block
        self.depth = depth
        self.inp = nn.Linear(in_dim, width)
        self.blocks = nn.ModuleList(nn.Linear(width, width) for _ in range(depth - 1))
        self.second = nn.ModuleList(
            nn.Linear(width, width, bias=False) for _ in range(depth - 1 if block == "rn2" else 0)
        )
        self.head = nn.Linear(width, num_classes, bias=False)

    def features(self, x: torch.Tensor) -> torch.Tensor:
        """X_L: the head's input, on the LayerNorm sphere."""
        h = layer_norm_sphere(self.inp(x))
        for i, lin in enumerate(self.blocks):
            u = torch.relu(lin(h))
            if self.block == "rn2":
                u = self.second[i](u)
            h = layer_norm_sphere(h + u)
        return h

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.features(x))

    def decayed_parameters(self) -> list[nn.Parameter]:
        """W_1 .. W_L: the weights the objective regularises."""
        return [m.weight for m in (*self.blocks, *self.second, self.head)]

    def other_parameters(self) -> list[nn.Parameter]:
        """W_0, b_0 and the block biases (not regularised)."""
        decayed = {id(p) for p in self.decayed_parameters()}
        return [p for p in self.parameters() if id(p) not in decayed]


class LNTransformer(nn.Module):
    """L-T11 / L-T12 of depth L on token sequences (N x T word ids): embeddings, L-1 LayerNorm
    transformer blocks (single-head attention, then a ReLU sub-block), head on the class token.

    >>> net = LNTransformer(vocab=20, seq_len=6, width=8, depth=3, num_classes=4, block="t12")
    >>> net(torch.randint(0, 20, (5, 6))).shape, len(net.decayed_parameters())
    (torch.Size([5, 4]), 11)
    """

    def __init__(
        self,
        vocab: int,
        seq_len: int,
        width: int,
        depth: int,
        num_classes: int,
        block: TransformerBlock = "t11",
    ):
        super().__init__()
        if depth < 1:
            raise ValueError(f"depth must be >= 1, got {depth}")
        if block not in ("t11", "t12"):
            raise ValueError(f"block must be 't11' or 't12', got {block!r}")
        self.block, self.depth, self.width = block, depth, width
        n = depth - 1
        self.embed = nn.Embedding(vocab, width)
        self.pos = nn.Parameter(0.1 * torch.randn(seq_len + 1, width))
        self.cls = nn.Parameter(torch.randn(width))

        def mats(bias: bool = False, count: int = n):
            return nn.ModuleList(nn.Linear(width, width, bias=bias) for _ in range(count))

        self.q, self.k, self.v = mats(), mats(), mats()
        self.mlp = mats(bias=True)
        self.second = mats(count=n if block == "t12" else 0)
        self.head = nn.Linear(width, num_classes, bias=False)

    def features(self, x: torch.Tensor) -> torch.Tensor:
        """The class token of X_L, on the LayerNorm sphere."""
        tok = self.embed(x)
        cls = self.cls.expand(tok.shape[0], 1, -1)
        h = layer_norm_sphere(torch.cat([cls, tok], 1) + self.pos[: tok.shape[1] + 1])
        scale = 1 / math.sqrt(self.width)
        for i in range(self.depth - 1):
            att = torch.softmax(self.q[i](h) @ self.k[i](h).transpose(1, 2) * scale, dim=-1)
            h = layer_norm_sphere(h + att @ self.v[i](h))
            u = torch.relu(self.mlp[i](h))
            if self.block == "t12":
                u = self.second[i](u)
            h = layer_norm_sphere(h + u)
        return h[:, 0]

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.features(x))

    def decayed_parameters(self) -> list[nn.Parameter]:
        """Every block matrix (W_Q, W_K, W_V, the ReLU sub-block's) and the head."""
        mods = (*self.q, *self.k, *self.v, *self.mlp, *self.second, self.head)
        return [m.weight for m in mods]

    def other_parameters(self) -> list[nn.Parameter]:
        """Embeddings, class token, positions and biases (not regularised)."""
        decayed = {id(p) for p in self.decayed_parameters()}
        return [p for p in self.parameters() if id(p) not in decayed]
