"""Paths into run summaries, as claims and checks name them.

A path is a dotted key, optionally prefixed by the run alias: ``"main:metrics.nc1"``,
``"h_star:test_acc"``; a bare path refers to the alias ``"main"``. A list entry is selected by the
value of one of its fields, ``name[field=value]`` (:func:`nclab.experiments.schema.parse_key`):
``"levels[level=1].nc1_trace"``, ``"by_lr[lr0=12].eos_ratio_late"`` (a mapping's values are
selected the same way); numbers compare as numbers, so ``level=1`` matches the mean ``1.0`` of a
summary over seeds; several selections, ``sweep[L2=5][weight_decay=0.001]``, select the entry
matching all. Exactly one entry must match. ``name[*]`` selects every entry:
``"sweep[*].train_acc"`` reads the list of every network's train accuracy (a
:class:`~nclab.reproduce.checks.Check` judges its worst value). Lists can still be indexed by position
(``"a.b.1"``) here, but the claims never do: :func:`~nclab.experiments.schema.check_path` refuses
it when the registry is built.

The std over seeds of a value is at the same place in the summary's ``std`` tree; a keyed entry is
found there at the position its key has in the summary (the ``std`` tree holds the key's std, 0).

>>> s = {"main": {"a": {"b": [1, 2, 3]}, "std": {"a": {"b": 0.5}}}, "x": {"v": 5}}
>>> lookup(s, "a.b.1"), lookup(s, "x:v"), lookup_std(s, "a.b"), lookup_std(s, "x:v")
(2, 5, 0.5, None)
>>> s = {"main": {"levels": [{"level": 1.0, "nc1": 0.2}, {"level": 2.0, "nc1": 0.1}],
...               "std": {"levels": [{"level": 0.0, "nc1": 0.02}, {"level": 0.0, "nc1": 0.01}]}}}
>>> lookup(s, "levels[level=2].nc1"), lookup_std(s, "levels[level=2].nc1")
(0.1, 0.01)
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..experiments.schema import matches, parse_key

Summaries = Mapping[str, Mapping[str, Any]]


def split(path: str) -> tuple[str, str]:
    """(alias, dotted key) of a path; the alias defaults to ``"main"``."""
    alias, _, key = path.rpartition(":")
    return alias or "main", key


def resolve(summaries: Summaries, path: str) -> tuple[str, list[str | int]]:
    """(alias, the concrete keys and list positions) that ``path`` leads to in its summary
    (``KeyError`` if it leads nowhere, or a selection matches no entry or several; a path that
    selects every entry, ``[*]``, leads to several places: :func:`resolve_every`)."""
    alias, places = resolve_every(summaries, path)
    if len(places) != 1 or every(path):
        raise KeyError(path)
    return alias, places[0]


def resolve_every(summaries: Summaries, path: str) -> tuple[str, list[list[str | int]]]:
    """(alias, the keys of every place ``path`` leads to): one place, or one per entry a
    ``name[*]`` segment selects, in order (``KeyError`` if it leads nowhere, an entry lacks the
    rest of the path, or a ``[field=value]`` selection matches no entry or several).

    >>> s = {"main": {"sweep": [{"L2": 1, "acc": 0.9}, {"L2": 3, "acc": 1.0}]}}
    >>> resolve_every(s, "sweep[*].acc")
    ('main', [['sweep', 0, 'acc'], ['sweep', 1, 'acc']])
    """
    alias, key = split(path)
    places: list[tuple[Any, list[str | int]]] = [(summaries[alias], [])]
    for seg in parse_key(key):
        step = []
        for node, keys in places:
            if isinstance(node, Mapping) and seg.name in node:
                k: str | int = seg.name
            elif isinstance(node, list) and seg.name.lstrip("-").isdigit():
                k = int(seg.name)
                if not -len(node) <= k < len(node):
                    raise KeyError(path)
            else:
                raise KeyError(path)
            node = node[k]
            if not seg.select:
                step.append((node, [*keys, k]))
                continue
            items = list(node.items() if isinstance(node, Mapping) else enumerate(node))
            if seg.every:
                hits = items
            else:
                hits = [(i, e) for i, e in items if _selected(e, seg.select)]
            if not hits or (len(hits) > 1 and not seg.every):
                raise KeyError(path)
            step += [(e, [*keys, k, i]) for i, e in hits]
        places = step
    return alias, [keys for _, keys in places]


def _selected(entry: Any, select: tuple[tuple[str, str], ...]) -> bool:
    """Whether a list entry matches every ``[field=value]`` of a segment."""
    return isinstance(entry, Mapping) and all(matches(entry.get(f), v) for f, v in select)


def _walk(node: Any, keys: list[str | int]) -> Any:
    for k in keys:
        node = node[k]
    return node


def lookup(summaries: Summaries, path: str) -> Any:
    """Value at ``alias:dotted.path`` in the run summaries (``KeyError`` if absent); for a path
    that selects every entry (``sweep[*].train_acc``), the list of the values, one per entry.

    >>> lookup({"main": {"sweep": [{"acc": 0.9}, {"acc": 1.0}]}}, "sweep[*].acc")
    [0.9, 1.0]
    """
    alias, places = resolve_every(summaries, path)
    if every(path):
        return [_walk(summaries[alias], keys) for keys in places]
    if len(places) != 1:
        raise KeyError(path)
    return _walk(summaries[alias], places[0])


def every(path: str) -> bool:
    """Whether ``path`` selects every entry of a list somewhere (``name[*]``)."""
    return any(seg.every for seg in parse_key(split(path)[1]))


def lookup_std(summaries: Summaries, path: str) -> Any:
    """The std over seeds of ``path`` (from the summary's ``std`` tree, at the place ``path``
    resolves to in the summary), or None."""
    try:
        alias, keys = resolve(summaries, path)
        return _walk(summaries[alias]["std"], keys)
    except (KeyError, IndexError, TypeError):
        return None


def diverged_note(summaries: Summaries, path: str) -> str | None:
    """Why ``path`` holds no number when training diverged on the way to it: the innermost record
    along the path that says so (``diverged: true`` of one network, ``n_diverged`` of a group), as
    ``"the network diverged (epoch 3: ...)"`` or ``"2 of 3 networks diverged"``; else None.

    >>> s = {"main": {"by_lr": {"0": {"lr0": 12, "n": 3, "n_diverged": 3, "nc2_last": None}}}}
    >>> diverged_note(s, "by_lr[lr0=12].nc2_last")
    'every network (3 of 3) diverged'
    >>> lb = {"n_networks": 27, "n_diverged": 6, "largest_stable_lr": None}
    >>> diverged_note({"main": {"lr_bound": lb}}, "lr_bound.largest_stable_lr")
    '6 of 27 networks diverged'
    """
    try:
        alias, keys = resolve(summaries, path)
    except KeyError:
        return None
    node: Any = summaries[alias]
    note = None
    for k in [None, *keys]:
        if k is not None:
            try:
                node = node[k]
            except (KeyError, IndexError, TypeError):
                break
        if not isinstance(node, Mapping):
            continue
        if node.get("diverged") is True:
            where = node.get("diverged_epoch")
            why = node.get("diverged_reason")
            note = "the network diverged" + (f" (epoch {where}: {why})" if where else "")
        elif isinstance(node.get("n_diverged"), int) and node["n_diverged"] > 0:
            n, d = node.get("n", node.get("n_networks")), node["n_diverged"]
            if n is None:
                note = f"{d} networks diverged"
            else:
                note = (
                    f"every network ({d} of {n}) diverged"
                    if d == n
                    else f"{d} of {n} networks diverged"
                )
    return note
