"""ResNet18 against the nonlinear extended UFM (Tirer & Bruna, ICML 2022, §6 Fig. 5 right panels;
App. G Fig. 10).

``nclab run resnet-ufm --preset NAME``: trains a ResNet18 (torchvision's names, 3x3 stem, no
max-pool; :func:`nclab.models.resnet18.resnet18`) with SGD, measures the NC metrics of its last two
feature levels with :class:`~nclab.CollapseProbe` over training (``levels.first``, default
``layer4.0``, as the extended UFM's H1; the classifier's input ``fc:input`` as σ(W1 H1)), runs the
ReLU extended UFM W2 σ(W1 H1) at the same K with the same loss and bias beside it, and draws both
side by side. The summary says which frame each ends closer to (NC2^OF vs NC2^ETF of W) and
whether the second level collapses more than the first. Documentation: ``docs/ufm.md`` ("Real
networks").

Modules: :mod:`.config` (settings), :mod:`.presets`, :mod:`.data` (images), :mod:`.train` (the
network and the run), :mod:`.ufm` (the extended UFM beside it), :mod:`.measure` (the two levels'
metrics), :mod:`.summary`, :mod:`.figures`.
"""

from __future__ import annotations

from ..protocol import Experiment, Lazy, lazy_exports
from .config import ResNetUFMConfig
from .presets import PRESETS

EXPERIMENT = Experiment(
    name="resnet-ufm",
    description="ResNet18 vs the nonlinear extended UFM (Tirer & Bruna Fig. 5 right, Fig. 10): "
    "NC metrics of two feature levels over training, side by side",
    config_cls=ResNetUFMConfig,
    run=Lazy(f"{__name__}.train:run"),
    presets=PRESETS,
    default_preset="tb-resnet18-digits-mse-quick",
    figures=Lazy(f"{__name__}.figures:rerender"),
)
__getattr__ = lazy_exports(
    __name__, {"run": ".train", "rerender": ".figures"}
)  # torch on first use

__all__ = ["EXPERIMENT", "PRESETS", "ResNetUFMConfig", "run"]
