"""The training loop shared by every experiment, the trainer shape it runs, the checkpoint state it
saves, and optimisers from a training section (:mod:`.optim`)."""

from .loop import Trainer, fit, fit_trainer
from .state import TrainState

__all__ = ["TrainState", "Trainer", "fit", "fit_trainer"]
