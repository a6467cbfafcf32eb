"""The demo: a small MLP trained on the bundled digits in seconds, measured layer by layer.

``nclab demo`` trains it, logs collapse metrics of every hidden layer and the classifier input every
few epochs with :class:`~nclab.CollapseProbe`, prints the final table and writes a figure.
"""

from __future__ import annotations

from ..protocol import Experiment, Lazy, lazy_exports
from .config import DemoConfig

EXPERIMENT = Experiment(
    name="demo",
    description="small MLP on the bundled digits, collapse metrics per layer (seconds on a CPU)",
    config_cls=DemoConfig,
    run=Lazy(f"{__name__}.train:run"),
)
__getattr__ = lazy_exports(__name__, {"run": ".train"})  # torch on first use

__all__ = ["EXPERIMENT", "DemoConfig", "run"]
