"""The parameter checks every theory prediction uses, in one place.

Each checker raises :class:`~nclab.errors.TheoryError` with a one-line message that names the
parameter, shows what came and says what is accepted (``K must be an integer >= 2, got 1``), and
returns the value (numbers as ``float``) so a call site can validate and read in one line.
Integers are Python or numpy integers, numbers are any real scalar (numpy included); ``bool`` and
strings are neither. A theorem's own hypotheses ("needs d >= K-1") stay in its module, written with
:func:`require`.

>>> check_int("K", 3, 2), check_number("lam", 1, lo=0.0, lo_open=True)
(3, 1.0)
>>> check_number("r", 0.0, lo=0.0, lo_open=True)
Traceback (most recent call last):
...
nclab.errors.TheoryError: r must be a finite number > 0, got 0.0
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

from ..errors import TheoryError

__all__ = [
    "check_choice",
    "check_int",
    "check_multiple",
    "check_number",
    "check_number_list",
    "check_positive",
    "check_probabilities",
    "check_sizes",
    "is_int",
    "is_number",
    "require",
]


def require(cond: bool, msg: str) -> None:
    """Raise ``TheoryError(msg)`` unless ``cond``: for a theorem's own hypotheses.

    >>> require(True, "never raised")
    """
    if not cond:
        raise TheoryError(msg)


def is_int(value: Any) -> bool:
    """A Python or numpy integer (not a bool)."""
    return isinstance(value, int | np.integer) and not isinstance(value, bool)


def is_number(value: Any) -> bool:
    """A real scalar: int, float, numpy scalar, Fraction (not a bool, not a string)."""
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


def _suffix(why: str | None) -> str:
    return f": {why}" if why else ""


def check_int(
    name: str, value: Any, minimum: int, *, min_label: str | None = None, why: str | None = None
) -> Any:
    """``value`` if it is an integer >= ``minimum`` (returned unchanged).

    ``min_label`` shows the minimum in the message (``"K = 4"`` for ``N >= K``), ``why`` ends it.

    >>> check_int("N", 3, 4, min_label="K = 4")
    Traceback (most recent call last):
    ...
    nclab.errors.TheoryError: N must be an integer >= K = 4, got 3
    """
    if not is_int(value) or value < minimum:
        shown = min_label if min_label is not None else str(minimum)
        raise TheoryError(f"{name} must be an integer >= {shown}, got {value!r}{_suffix(why)}")
    return value


def _accepted(lo: float | None, hi: float | None, lo_open: bool, hi_open: bool) -> str:
    parts = []
    if lo is not None:
        parts.append(f"{'>' if lo_open else '>='} {lo:g}")
    if hi is not None:
        parts.append(f"{'<' if hi_open else '<='} {hi:g}")
    return " and ".join(parts)


def check_number(
    name: str,
    value: Any,
    *,
    lo: float | None = None,
    hi: float | None = None,
    lo_open: bool = False,
    hi_open: bool = False,
    allow_none: bool = False,
    why: str | None = None,
) -> float | None:
    """``float(value)`` if it is a finite real number within the bounds (``None`` passes through
    when ``allow_none``); ``lo_open``/``hi_open`` make a bound strict.

    >>> check_number("eps1", -1.0, lo=0.0)
    Traceback (most recent call last):
    ...
    nclab.errors.TheoryError: eps1 must be a finite number >= 0, got -1.0
    >>> check_number("c3", None, lo=1.0, allow_none=True) is None
    True
    """
    if value is None and allow_none:
        return None
    ok = is_number(value) and math.isfinite(value)
    if ok:
        v = float(value)
        ok = (lo is None or (v > lo if lo_open else v >= lo)) and (
            hi is None or (v < hi if hi_open else v <= hi)
        )
    if not ok:
        accepted = _accepted(lo, hi, lo_open, hi_open)
        what = "a finite number" + (f" {accepted}" if accepted else "")
        raise TheoryError(f"{name} must be {what}, got {value!r}{_suffix(why)}")
    return v


def check_positive(name: str, value: Any, allow_zero: bool = False) -> float:
    """``float(value)`` if it is a finite number > 0 (>= 0 with ``allow_zero``).

    >>> check_positive("lambda_b", 0, allow_zero=True)
    0.0
    """
    return check_number(name, value, lo=0.0, lo_open=not allow_zero)


def check_number_list(
    name: str,
    value: Any,
    count: Any = None,
    *,
    count_name: str = "L",
    what: str = "value",
    lo: float | None = 0.0,
    lo_open: bool = True,
) -> list[float]:
    """One number per item: a sequence of numbers, or one number repeated ``count`` times (then
    ``count`` is required, an integer >= 1). Each number is checked as ``name[i]`` by
    :func:`check_number` (default: > 0); a given ``count`` must match the sequence's length.

    >>> check_number_list("lambda_w", 0.5, 2), check_number_list("lambda_w", [1, 2])
    ([0.5, 0.5], [1.0, 2.0])
    >>> check_number_list("lambda_w", [1.0], 3)
    Traceback (most recent call last):
    ...
    nclab.errors.TheoryError: L = 3 but 1 lambda_w values were given
    """
    if is_number(value):
        require(
            count is not None, f"give {count_name} (the number of {what}s) with a single {name}"
        )
        value = [value] * check_int(count_name, count, 1)
    elif isinstance(value, str | bytes) or not isinstance(value, Iterable):
        raise TheoryError(f"{name} must be a number or a list of numbers, got {value!r}")
    values = [check_number(f"{name}[{i}]", v, lo=lo, lo_open=lo_open) for i, v in enumerate(value)]
    require(bool(values), f"{name} must name at least one {what}, got an empty list")
    require(
        count is None or count == len(values),
        f"{count_name} = {count} but {len(values)} {name} values were given",
    )
    return values


def check_choice(name: str, value: Any, choices: Sequence[Any]) -> Any:
    """``value`` if it is one of ``choices``.

    >>> check_choice("bias", "some", ("none", "free"))
    Traceback (most recent call last):
    ...
    nclab.errors.TheoryError: bias must be one of 'none', 'free', got 'some'
    """
    if value not in choices:
        listed = ", ".join(repr(c) for c in choices)
        raise TheoryError(f"{name} must be one of {listed}, got {value!r}")
    return value


def check_multiple(name: str, value: Any, of: int, *, of_label: str, why: str | None = None) -> Any:
    """``value`` if it is a positive integer multiple of ``of`` (``of_label`` names it).

    >>> check_multiple("nw", 10, 3, of_label="nc = 3")
    Traceback (most recent call last):
    ...
    nclab.errors.TheoryError: nw must be a positive multiple of nc = 3, got 10
    """
    if not (is_int(value) and value >= of and value % of == 0):
        raise TheoryError(
            f"{name} must be a positive multiple of {of_label}, got {value!r}{_suffix(why)}"
        )
    return value


def check_probabilities(
    name: str, values: Any, size: int, *, size_label: str | None = None, why: str | None = None
) -> np.ndarray:
    """``values`` as a float64 vector of ``size`` finite, positive entries summing to 1 (within
    1e-9); ``size_label`` shows the size in the message, ``why`` justifies positivity.

    >>> check_probabilities("mu", [0.5, 0.25], 2)
    Traceback (most recent call last):
    ...
    nclab.errors.TheoryError: mu must sum to 1 (a probability vector), got 0.75
    """
    m = np.asarray(values, dtype=np.float64)
    shown = size_label if size_label is not None else str(size)
    require(
        m.ndim == 1 and m.size == size,
        f"{name} must list {shown} values, got {m.size} (shape {m.shape})",
    )
    require(
        bool(np.all(np.isfinite(m)) and np.all(m > 0)),
        f"every entry of {name} must be finite and > 0, got {m.tolist()}{_suffix(why)}",
    )
    total = m.sum()
    require(
        abs(total - 1.0) <= 1e-9, f"{name} must sum to 1 (a probability vector), got {total:.12g}"
    )
    return m


def check_sizes(K: Any, n: Any, d: Any) -> None:
    """The sizes of the unconstrained-features models: K >= 2 classes, n >= 1 samples per class
    (``None``: no n, as in the GUFM), d >= 1 feature dimensions."""
    check_int("K", K, 2)
    if n is not None:
        check_int("n", n, 1)
    check_int("d", d, 1)
