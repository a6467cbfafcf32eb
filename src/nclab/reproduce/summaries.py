"""Paths into run summaries, as claims and checks name them.

A path is a dotted key, optionally prefixed by the run alias: ``"main:metrics.nc1"``,
``"h_star:test_acc"``; a bare path refers to the alias ``"main"``. List items are indexed by number
(``"a.b.1"``).

>>> s = {"main": {"a": {"b": [1, 2, 3]}, "std": {"a": {"b": 0.5}}}, "x": {"v": 5}}
>>> lookup(s, "a.b.1"), lookup(s, "x:v"), lookup_std(s, "a.b"), lookup_std(s, "x:v")
(2, 5, 0.5, None)
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def split(path: str) -> tuple[str, str]:
    """(alias, dotted key) of a path; the alias defaults to ``"main"``."""
    alias, _, key = path.rpartition(":")
    return alias or "main", key


def lookup(summaries: Mapping[str, Mapping[str, Any]], path: str) -> Any:
    """Value at ``alias:dotted.path`` in the run summaries (``KeyError`` if absent)."""
    alias, key = split(path)
    node: Any = summaries[alias]
    for part in key.split("."):
        if isinstance(node, Mapping) and part in node:
            node = node[part]
        elif isinstance(node, list) and part.lstrip("-").isdigit():
            node = node[int(part)]
        else:
            raise KeyError(path)
    return node


def lookup_std(summaries: Mapping[str, Mapping[str, Any]], path: str) -> Any:
    """The std over seeds of ``path`` (from the summary's ``std`` tree), or None."""
    alias, key = split(path)
    try:
        return lookup(summaries, f"{alias}:std.{key}")
    except KeyError:
        return None
