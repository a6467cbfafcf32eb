"""ResNet20 for 32x32 images (He, Zhang, Ren & Sun 2016, §4.2), the backbone of Jacot et al.'s CIFAR-10
experiments (ICLR 2025, §6: "ResNet20 with an added MLP head").

Three stages of ``blocks`` basic blocks (two 3x3 convolutions with batch norm) at 16, 32, 64 channels,
stride 2 between stages, 1x1-convolution shortcuts where the shape changes, global average pooling:
the output is a (N, 4 * width) feature vector. ``blocks=3`` is ResNet20 (6n + 2 = 20 layers).
:func:`resnet20_mlp` puts a :class:`~nclab.models.mlp.LinearHeadMLP` head on it.

>>> net = resnet20_mlp(num_classes=10, widths=[64], head_widths=[64, 64])
>>> net(torch.randn(2, 3, 32, 32)).shape
torch.Size([2, 10])
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
from torch import nn

from .mlp import LinearHeadMLP


class BasicBlock(nn.Module):
    def __init__(self, c_in: int, c_out: int, stride: int = 1):
        super().__init__()
        self.conv1 = nn.Conv2d(c_in, c_out, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(c_out)
        self.conv2 = nn.Conv2d(c_out, c_out, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(c_out)
        self.shortcut: nn.Module = nn.Identity()
        if stride != 1 or c_in != c_out:
            self.shortcut = nn.Sequential(
                nn.Conv2d(c_in, c_out, 1, stride, bias=False), nn.BatchNorm2d(c_out)
            )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = torch.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        return torch.relu(out + self.shortcut(x))


class ResNet20(nn.Module):
    """CIFAR ResNet (6 * blocks + 2 layers) without its classifier: images -> (N, 4 * width)."""

    def __init__(self, in_channels: int = 3, width: int = 16, blocks: int = 3):
        super().__init__()
        self.stem = nn.Sequential(
            nn.Conv2d(in_channels, width, 3, 1, 1, bias=False), nn.BatchNorm2d(width), nn.ReLU()
        )
        stages, c = [], width
        for i, c_out in enumerate((width, 2 * width, 4 * width)):
            for j in range(blocks):
                stages.append(BasicBlock(c, c_out, stride=2 if (i > 0 and j == 0) else 1))
                c = c_out
        self.stages = nn.Sequential(*stages)
        self.out_dim = c
        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                nn.init.kaiming_normal_(m.weight, mode="fan_out", nonlinearity="relu")

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.stages(self.stem(x)).mean((2, 3))


def resnet20_mlp(
    num_classes: int,
    widths: Sequence[int],
    head_widths: Sequence[int] = (),
    in_channels: int = 3,
    width: int = 16,
    blocks: int = 3,
    activation: str = "relu",
    **kw,
) -> LinearHeadMLP:
    """ResNet20 backbone + ``len(widths)`` nonlinear + ``len(head_widths) + 1`` linear layers."""
    backbone = ResNet20(in_channels, width, blocks)
    return LinearHeadMLP(
        backbone.out_dim,
        num_classes,
        widths,
        head_widths,
        activation=activation,
        backbone=backbone,
        **kw,
    )
