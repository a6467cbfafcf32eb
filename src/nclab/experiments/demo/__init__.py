"""The demo: a small MLP on the bundled digits, collapse metrics per layer, in seconds on a CPU.

``nclab demo`` trains it, logs collapse metrics of every hidden layer and the classifier input every
few epochs with :class:`~nclab.CollapseProbe`, prints the final table and writes a figure.
"""

from __future__ import annotations

from ..protocol import Experiment
from .config import DemoConfig, check

EXPERIMENT = Experiment("demo", __doc__, DemoConfig, check=check, docs="README.md")

__all__ = ["EXPERIMENT", "DemoConfig"]
