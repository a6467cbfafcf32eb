"""The demo: a small MLP trained on the bundled digits in seconds, measured layer by layer.

``nclab demo`` trains it, logs collapse metrics of every hidden layer and the classifier input every
few epochs with :class:`~nclab.CollapseProbe`, prints the final table and writes a figure.
"""

from __future__ import annotations

from ..protocol import Experiment, Lazy
from .config import DemoConfig

EXPERIMENT = Experiment(
    name="demo",
    description="small MLP on the bundled digits, collapse metrics per layer (seconds on a CPU)",
    config_cls=DemoConfig,
    train=Lazy(f"{__name__}.train:train"),
    figures=Lazy(f"{__name__}.figures:figures"),
)

__all__ = ["EXPERIMENT", "DemoConfig"]
