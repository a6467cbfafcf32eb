"""nclab's ResNet18 against torchvision's published architecture (torchvision cannot load here)."""

import pytest
import torch

from nclab.models.resnet18 import resnet18, torchvision_or_own_resnet18

# torchvision.models.resnet18(): 11,689,512 parameters (torchvision's model documentation)
TORCHVISION_RESNET18_PARAMS = 11_689_512


def n_params(m):
    return sum(p.numel() for p in m.parameters())


def test_parameter_count_matches_torchvision():
    assert n_params(resnet18(num_classes=1000)) == TORCHVISION_RESNET18_PARAMS
    # small-image adaptation: 7x7x3x64 stem -> 3x3x3x64, fc 512 -> 10
    small = 11_689_512 - 64 * 3 * (49 - 9) - (512 * 1000 + 1000) + (512 * 10 + 10)
    assert n_params(resnet18(num_classes=10, small_input=True)) == small == 11_173_962


def test_torchvision_parameter_names():
    names = {k for k, _ in resnet18().named_parameters()}
    # the names torchvision's state_dict uses (buffers aside)
    for key in (
        "conv1.weight",
        "bn1.weight",
        "layer1.0.conv1.weight",
        "layer1.1.bn2.bias",
        "layer2.0.downsample.0.weight",
        "layer2.0.downsample.1.weight",
        "layer4.1.conv2.weight",
        "fc.weight",
        "fc.bias",
    ):
        assert key in names
    assert "layer1.0.downsample.0.weight" not in names  # layer1 keeps the shape: no downsample
    assert len(names) == 62


@pytest.mark.parametrize(("small", "size", "spatial"), [(False, 64, 2), (True, 32, 4)])
def test_shapes_and_features(small, size, spatial):
    net = resnet18(num_classes=7, in_channels=1, width=8, small_input=small).eval()
    x = torch.randn(3, 1, size, size)
    acts = {}
    net.layer4.register_forward_hook(lambda m, i, o: acts.setdefault("layer4", o))
    out = net(x)
    assert out.shape == (3, 7)
    assert acts["layer4"].shape == (3, 64, spatial, spatial)
    feats = net.features(x)
    assert feats.shape == (3, 64)
    torch.testing.assert_close(net.fc(feats), out)


def test_bad_arguments():
    with pytest.raises(ValueError, match="width"):
        resnet18(width=0)


def test_fallback_says_which():
    net, source = torchvision_or_own_resnet18(num_classes=10)
    assert source in {"torchvision", "nclab"}
    assert n_params(net) == 11_173_962
    assert net(torch.randn(1, 3, 32, 32)).shape == (1, 10)
