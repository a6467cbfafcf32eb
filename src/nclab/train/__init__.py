"""The training loop shared by every experiment, and optimiser helpers."""

from .loop import fit

__all__ = ["fit"]
