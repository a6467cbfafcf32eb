"""The training loop shared by every experiment and the checkpoint state it saves."""

from .loop import fit
from .state import TrainState

__all__ = ["TrainState", "fit"]
