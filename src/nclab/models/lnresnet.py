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
A pre-LN L-T11 (``t11-pre``) puts LN before each sub-block instead and normalises the head's input.
:meth:`LNResNet.embed_into` puts a trained network into a deeper one with identity blocks (the
appendix's argument that the optimal objective cannot increase with depth).

Weight decay applies to W_1 .. W_L (:meth:`LNResNet.decayed_parameters`), not to W_0 or the biases,
as in the appendix's objective.
"""

from __future__ import annotations

import math
from typing import Literal

import torch
from torch import nn

Block = Literal["rn1", "rn2"]
TransformerBlock = Literal["t11", "t12", "t11-pre"]


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

    @torch.no_grad()
    def embed_into(self, depth: int, bias: float = 0.1) -> LNResNet:
        """This network inside a deeper one (``depth`` >= L): the same input layer, blocks and
        head, and ``depth - L`` new blocks after the last one, each computing the identity.

        A new block has zero weights (so the objective is unchanged: same fit, same
        regularisation) and bias ``bias``·1. An all-equal vector added before a LayerNorm is
        removed by its centring, so LN(X + ReLU(0·X + β1)) = LN(X) = X on the sphere, while the
        ReLU is active (β > 0) and the new weights get gradients; with the bias 0 too the block
        would be a stationary point (ReLU'(0) = 0) that training never leaves. In ``rn2`` the
        second matrix is 0 and the first ReLU active, for the same reason.

        >>> net = LNResNet(5, 8, depth=2, num_classes=3).double()
        >>> x = torch.randn(4, 5, dtype=torch.float64)
        >>> deep = net.embed_into(5)
        >>> len(deep.blocks), bool(torch.allclose(deep(x), net(x), rtol=1e-12, atol=1e-12))
        (4, True)
        """
        if depth < self.depth:
            raise ValueError(f"depth must be >= this network's depth {self.depth}, got {depth}")
        w = self.head.weight
        deep = LNResNet(self.inp.in_features, w.shape[1], depth, w.shape[0], self.block)
        deep = deep.to(device=w.device, dtype=w.dtype)
        missing = deep.load_state_dict(self.state_dict(), strict=False).missing_keys
        n = self.depth - 1
        for i in range(n, depth - 1):
            deep.blocks[i].weight.zero_()
            deep.blocks[i].bias.fill_(bias)
            if self.block == "rn2":
                deep.second[i].weight.zero_()
        assert all(k.startswith(("blocks.", "second.")) for k in missing), missing
        return deep

    def other_parameters(self) -> list[nn.Parameter]:
        """W_0, b_0 and the block biases (not regularised)."""
        decayed = {id(p) for p in self.decayed_parameters()}
        return [p for p in self.parameters() if id(p) not in decayed]


class LNTransformer(nn.Module):
    """L-T11 / L-T12 of depth L on token sequences: embeddings, L-1 LayerNorm transformer blocks
    (single-head attention, then a ReLU sub-block), head on the class token.

    Tokens are word ids (N x T, embedded by a table of ``vocab`` rows) or, with ``token_dim``,
    vectors (N x T x token_dim, e.g. image patches, embedded by a linear map W_0 that is not
    regularised, like the ResNet's input layer). ``block``:

    * ``t11`` / ``t12`` (post-LN): X <- LN(X + Attn(X)); X <- LN(X + MLP(X)), X_1 = LN(embeddings);
    * ``t11-pre`` (pre-LN L-T11): X <- X + Attn(LN(X)); X <- X + MLP(LN(X)), X_1 = embeddings,
      and the head reads LN(X_L) so that its input lies on the LayerNorm sphere (the GUFM applies).

    ``pad_id``: keys holding this word id are masked out of the attention (the class token, first,
    is never masked). A block with W_V = 0 and zero MLP weights and biases is the identity.

    >>> net = LNTransformer(vocab=20, seq_len=6, width=8, depth=3, num_classes=4, block="t12")
    >>> net(torch.randint(0, 20, (5, 6))).shape, len(net.decayed_parameters())
    (torch.Size([5, 4]), 11)
    >>> pre = LNTransformer(0, 4, 8, 3, 2, "t11-pre", token_dim=5)
    >>> pre(torch.randn(7, 4, 5)).shape
    torch.Size([7, 2])
    """

    def __init__(
        self,
        vocab: int,
        seq_len: int,
        width: int,
        depth: int,
        num_classes: int,
        block: TransformerBlock = "t11",
        *,
        token_dim: int | None = None,
        pad_id: int | None = None,
    ):
        super().__init__()
        if depth < 1:
            raise ValueError(f"depth must be >= 1, got {depth}")
        if block not in ("t11", "t12", "t11-pre"):
            raise ValueError(f"block must be 't11', 't12' or 't11-pre', got {block!r}")
        self.block, self.depth, self.width, self.pad_id = block, depth, width, pad_id
        n = depth - 1
        self.embed = nn.Linear(token_dim, width) if token_dim else nn.Embedding(vocab, width)
        self.pos = nn.Parameter(0.1 * torch.randn(seq_len + 1, width))
        self.cls = nn.Parameter(torch.randn(width))

        def mats(bias: bool = False, count: int = n):
            return nn.ModuleList(nn.Linear(width, width, bias=bias) for _ in range(count))

        self.q, self.k, self.v = mats(), mats(), mats()
        self.mlp = mats(bias=True)
        self.second = mats(count=n if block == "t12" else 0)
        self.head = nn.Linear(width, num_classes, bias=False)

    def _attention(self, i: int, h: torch.Tensor, mask: torch.Tensor | None) -> torch.Tensor:
        logits = self.q[i](h) @ self.k[i](h).transpose(1, 2) / math.sqrt(self.width)
        if mask is not None:
            logits = logits.masked_fill(mask[:, None, :], float("-inf"))
        return torch.softmax(logits, dim=-1) @ self.v[i](h)

    def _mlp(self, i: int, h: torch.Tensor) -> torch.Tensor:
        u = torch.relu(self.mlp[i](h))
        return self.second[i](u) if self.block == "t12" else u

    def features(self, x: torch.Tensor) -> torch.Tensor:
        """The class token of X_L (of LN(X_L) for pre-LN), on the LayerNorm sphere."""
        tok = self.embed(x)
        cls = self.cls.expand(tok.shape[0], 1, -1)
        h = torch.cat([cls, tok], 1) + self.pos[: tok.shape[1] + 1]
        mask = None
        if self.pad_id is not None and not x.is_floating_point():
            mask = torch.cat([torch.zeros_like(x[:, :1], dtype=torch.bool), x == self.pad_id], 1)
        if self.block == "t11-pre":
            for i in range(self.depth - 1):
                h = h + self._attention(i, layer_norm_sphere(h), mask)
                h = h + self._mlp(i, layer_norm_sphere(h))
            return layer_norm_sphere(h[:, 0])
        h = layer_norm_sphere(h)
        for i in range(self.depth - 1):
            h = layer_norm_sphere(h + self._attention(i, h, mask))
            h = layer_norm_sphere(h + self._mlp(i, h))
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
