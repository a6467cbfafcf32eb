"""ResNet18 against the nonlinear extended UFM (Tirer & Bruna, ICML 2022, Fig. 5 right, Fig. 10): NC
metrics of two feature levels over training, side by side.

``nclab run resnet-ufm --preset NAME``: trains a ResNet18 (torchvision's names, 3x3 stem, no
max-pool; :func:`nclab.models.resnet18.resnet18`) with SGD, measures the NC metrics of its last two
feature levels with :class:`~nclab.CollapseProbe` over training (``levels.first``, default
``layer4.0``, as the extended UFM's H1; the classifier's input ``fc:input`` as σ(W1 H1)), runs the
ReLU extended UFM W2 σ(W1 H1) at the same K with the same loss and bias beside it, and draws both
side by side. The summary says which frame each ends closer to (NC2^OF vs NC2^ETF of W) and
whether the second level collapses more than the first. Documentation: ``docs/ufm.md`` ("Real
networks").

One unit per seed (the run directory itself for one seed, ``units/seed-<s>/`` for several; the
summary of several is the mean over seeds), each with its extended UFM in ``ufm/``.

Modules: :mod:`.config` (settings and their check), :mod:`.presets`, :mod:`.data` (images),
:mod:`.train` (one unit: the extended UFM, then the network), :mod:`.ufm` (the extended UFM beside
it), :mod:`.measure` (the two levels' metrics), :mod:`.summary` (a unit's), :mod:`.figures`.
"""

from __future__ import annotations

from ..protocol import Experiment, fits
from .config import ResNetUFMConfig, check
from .presets import PAPER_SETTINGS, PRESETS, SMOKE

EXPERIMENT = Experiment(
    "resnet-ufm",
    __doc__,
    ResNetUFMConfig,
    PRESETS,
    "tb-resnet18-digits-mse-quick",
    check,
    paper=PAPER_SETTINGS,
    # the ResNet18 comparison is about a network trained to fit MNIST (the paper: well-trained)
    validity=(fits("net.train_acc"),),
    bookkeeping=("measure_every", "ufm.log_every", "ufm.checkpoint_every"),
    smoke=SMOKE,
    docs="docs/ufm.md",
)

__all__ = ["EXPERIMENT", "PRESETS", "ResNetUFMConfig"]
