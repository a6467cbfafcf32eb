"""The base of every prediction: a frozen dataclass with ``to_dict()`` and an ``applies`` flag."""

from __future__ import annotations

import dataclasses
from typing import Any


def _plain(v: Any) -> Any:
    """Python containers for arrays and tuples; numbers as they are, a float ``inf`` included (JSON
    is written by one function, :func:`nclab.runs.to_jsonable`: non-finite numbers as null)."""
    if isinstance(v, dict):
        return {str(k): _plain(x) for k, x in v.items()}
    if isinstance(v, list | tuple):
        return [_plain(x) for x in v]
    if hasattr(v, "tolist"):
        return _plain(v.tolist())
    return v


@dataclasses.dataclass(frozen=True)
class Prediction:
    """Base class. Subclasses add named fields (frozen dataclasses with defaults after these two).

    ``applies`` is False (with ``reason``) when the parameters fall outside the theorem's
    hypotheses but a partial answer is still meaningful; otherwise out-of-hypothesis parameters
    raise :class:`~nclab.errors.TheoryError`.
    """

    def to_dict(self) -> dict[str, Any]:
        """The fields as plain Python values (arrays as lists; ``inf`` stays ``inf``)."""
        return {f.name: _plain(getattr(self, f.name)) for f in dataclasses.fields(self)}
