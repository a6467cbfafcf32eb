"""ResNet18 (He, Zhang, Ren & Sun 2016) with torchvision's module names, without torchvision.

torchvision's ``resnet18`` is what researchers reach for, but its wheel cannot always be loaded
(a CUDA build of torchvision fails to register its ops on a CPU-only torch). This module builds
the same network with the same parameter names (``conv1``, ``bn1``, ``layer1.0.conv1``,
``layer2.0.downsample.0``, ``avgpool``, ``fc``…), so a torchvision ``state_dict`` loads into it and
probes name the same layers:

- ``small_input=False`` is torchvision's ImageNet network: 7x7 stride-2 stem and a 3x3 max-pool;
  11,689,512 parameters at 1000 classes (torchvision's published count).
- ``small_input=True`` is the usual adaptation to 28x28 / 32x32 images (CIFAR, MNIST): a 3x3
  stride-1 stem and no max-pool (``maxpool`` is an identity); 11,173,962 parameters at 10 classes.
- ``width`` scales the four stages (64, 128, 256, 512 at ``width=64``) for narrow CPU versions;
  ``in_channels=1`` takes MNIST.

>>> net = resnet18(num_classes=10, in_channels=1, width=8, small_input=True)
>>> net(torch.randn(2, 1, 28, 28)).shape
torch.Size([2, 10])
>>> sum(p.numel() for p in resnet18(num_classes=1000).parameters())
11689512
"""

from __future__ import annotations

import torch
from torch import nn

__all__ = ["BasicBlock", "ResNet18", "resnet18", "torchvision_or_own_resnet18"]


class BasicBlock(nn.Module):
    """Two 3x3 convolutions with batch norm and an identity (or 1x1 ``downsample``) shortcut."""

    def __init__(self, c_in: int, c_out: int, stride: int = 1):
        super().__init__()
        self.conv1 = nn.Conv2d(c_in, c_out, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(c_out)
        self.relu = nn.ReLU(inplace=True)
        self.conv2 = nn.Conv2d(c_out, c_out, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(c_out)
        self.downsample: nn.Module | None = None
        if stride != 1 or c_in != c_out:
            self.downsample = nn.Sequential(
                nn.Conv2d(c_in, c_out, 1, stride, bias=False), nn.BatchNorm2d(c_out)
            )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        identity = x if self.downsample is None else self.downsample(x)
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        return self.relu(out + identity)


class ResNet18(nn.Module):
    """Four stages of two basic blocks, global average pooling and a linear classifier ``fc``."""

    def __init__(
        self,
        num_classes: int = 1000,
        in_channels: int = 3,
        width: int = 64,
        small_input: bool = False,
    ):
        super().__init__()
        if num_classes < 1 or in_channels < 1 or width < 1:
            raise ValueError(
                f"num_classes, in_channels and width must be >= 1, got "
                f"{num_classes}, {in_channels}, {width}"
            )
        if small_input:
            self.conv1 = nn.Conv2d(in_channels, width, 3, 1, 1, bias=False)
            self.maxpool: nn.Module = nn.Identity()
        else:
            self.conv1 = nn.Conv2d(in_channels, width, 7, 2, 3, bias=False)
            self.maxpool = nn.MaxPool2d(3, 2, 1)
        self.bn1 = nn.BatchNorm2d(width)
        self.relu = nn.ReLU(inplace=True)
        c = width
        for i, mult in enumerate((1, 2, 4, 8), start=1):
            stride = 1 if i == 1 else 2
            blocks = nn.Sequential(
                BasicBlock(c, width * mult, stride), BasicBlock(width * mult, width * mult)
            )
            setattr(self, f"layer{i}", blocks)
            c = width * mult
        self.avgpool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(c, num_classes)
        self.feature_dim = c
        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                nn.init.kaiming_normal_(m.weight, mode="fan_out", nonlinearity="relu")
            elif isinstance(m, nn.BatchNorm2d):
                nn.init.ones_(m.weight)
                nn.init.zeros_(m.bias)

    def features(self, x: torch.Tensor) -> torch.Tensor:
        """The penultimate features: (N, 8 * width), the input of ``fc``."""
        x = self.maxpool(self.relu(self.bn1(self.conv1(x))))
        x = self.layer4(self.layer3(self.layer2(self.layer1(x))))
        return torch.flatten(self.avgpool(x), 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc(self.features(x))


def resnet18(
    num_classes: int = 1000, in_channels: int = 3, width: int = 64, small_input: bool = False
) -> ResNet18:
    """torchvision's ``resnet18(num_classes=...)`` (``small_input=True``: 3x3 stem, no max-pool)."""
    return ResNet18(num_classes, in_channels, width, small_input)


def torchvision_or_own_resnet18(
    num_classes: int = 10, small_input: bool = True
) -> tuple[nn.Module, str]:
    """torchvision's ResNet18 when torchvision imports, else :func:`resnet18`; says which.

    With ``small_input`` torchvision's network gets the same adaptation as ours (3x3 stride-1 stem,
    no max-pool), so the two have the same parameter names and counts. Returns ``(model, source)``
    with ``source`` ``"torchvision"`` or ``"nclab"``.
    """
    try:
        from torchvision.models import resnet18 as tv_resnet18
    except Exception:  # ImportError, or a torchvision build whose ops fail to register
        return resnet18(num_classes, small_input=small_input), "nclab"
    net = tv_resnet18(num_classes=num_classes)
    if small_input:
        net.conv1 = nn.Conv2d(3, 64, 3, 1, 1, bias=False)
        net.maxpool = nn.Identity()
    return net, "torchvision"
