"""The exceptions nclab raises on bad input.

Every message says what was wrong and what is accepted; the CLI prints it in one line and exits 2.
"""

from __future__ import annotations


class NclabError(Exception):
    """Base class of every error nclab raises on purpose."""


class ConfigError(NclabError, ValueError):
    """A configuration key, value or override is invalid."""


class DataError(NclabError, ValueError):
    """Input features, labels or files are malformed (shape, dtype, range, non-finite values)."""


class DegenerateError(NclabError, ValueError):
    """A metric is undefined for these statistics (empty class, rank too low, zero norm)."""


class TheoryError(NclabError, ValueError):
    """Parameters fall outside the hypotheses of a theorem."""


class RunError(NclabError, RuntimeError):
    """A run directory is missing, incomplete or inconsistent."""
