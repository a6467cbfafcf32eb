"""Aggregation over seeds: the mean of every numeric leaf of the per-seed summaries and its std, as
the summary type declares each field to aggregate (:class:`~nclab.experiments.schema.Agg`), and
the reductions over seeds experiments use (:func:`mean`, :func:`std`, :func:`worst`, :func:`rms`)."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ...runs import to_jsonable
from ..schema import Agg, aggregation, entry_model, field_model


def _is_num(v: Any) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool) and v is not None


def aggregate_summaries(
    summaries: Sequence[Mapping[str, Any]], model: Any = None
) -> dict[str, Any]:
    """Mean over seeds of every numeric leaf (same structure), ``std`` of each, and ``per_seed``.

    Non-numeric leaves keep the first seed's value when all seeds agree; otherwise a list.
    Lists of records (dicts) of the same length combine entry by entry. ``model``: the summary
    type (a model or union of models), whose fields declare how they aggregate
    (:class:`~nclab.experiments.schema.Agg`): the bookkeeping ones (seed, seconds, versions,
    schema version, ...) are left out, a field of :attr:`~Agg.SAME` or :attr:`~Agg.PER_SEED`
    gets no std; a field without a declaration aggregates by its value, as without ``model``.

    >>> agg = aggregate_summaries([{"acc": 1.0, "m": {"nc1": 0.1}}, {"acc": 0.5, "m": {"nc1": 0.3}}])
    >>> agg["acc"], agg["std"]["acc"], round(agg["m"]["nc1"], 6)
    (0.75, 0.25, 0.2)
    >>> agg = aggregate_summaries([{"levels": [{"nc1": 1.0}, {"nc1": 2.0}]},
    ...                            {"levels": [{"nc1": 3.0}, {"nc1": 4.0}]}])
    >>> agg["levels"], agg["std"]["levels"]
    ([{'nc1': 2.0}, {'nc1': 3.0}], [{'nc1': 1.0}, {'nc1': 1.0}])
    """
    summaries = [to_jsonable(s) for s in summaries]
    means = _combine([s for s in summaries], mean, model)
    out = dict(means) if isinstance(means, dict) else {"value": means}
    out["std"] = _combine([s for s in summaries], std, model)
    out["per_seed"] = summaries
    return out


def mean(values: Sequence[float | None]) -> float | None:
    """The mean of the values that are not None (None when there are none).

    >>> mean([1.0, None, 2.0]), mean([None])
    (1.5, None)
    """
    vals = [v for v in values if v is not None]
    return sum(vals) / len(vals) if vals else None


def std(values: Sequence[float]) -> float:
    """The population standard deviation (over seeds: not the sample's n - 1)."""
    m = sum(values) / len(values)
    return math.sqrt(sum((v - m) ** 2 for v in values) / len(values))


def worst(values: Sequence[float | None]) -> float | None:
    """The largest of the values that are not None (the worst seed of an error measure)."""
    vals = [v for v in values if v is not None]
    return max(vals) if vals else None


def rms(values: Sequence[float]) -> float:
    """The root mean square."""
    return math.sqrt(sum(v * v for v in values) / len(values))


def _combine(items: list[Any], fn: Callable[[list[float]], float], model: Any = None) -> Any:
    first = items[0]
    if all(isinstance(i, dict) for i in items):
        keys = [k for k in first if all(k in i for i in items)]
        values = entry_model(model)  # a mapping of records (by layer, by depth): each value's
        out = {}
        for k in keys:
            column = [i[k] for i in items]
            v = _combine(column, fn, values) if values else _field(column, fn, model, k)
            if v is not None:
                out[k] = v
        return out
    if all(_is_num(i) for i in items):
        return fn([float(i) for i in items])
    same_lists = (
        all(isinstance(i, list) for i in items) and len({len(i) for i in items}) == 1 and first
    )
    if same_lists and all(all(_is_num(x) for x in i) for i in items):
        return [fn([float(i[j]) for i in items]) for j in range(len(first))]
    if same_lists and all(all(isinstance(x, dict) for x in i) for i in items):
        # records of the same shape (one per level, layer, ...): combined entry by entry, so
        # "levels.0.nc1" is level 0's mean over seeds, not seed 0's list of levels
        return [_combine([i[j] for i in items], fn, entry_model(model)) for j in range(len(first))]
    if fn is mean:
        return first if all(i == first for i in items) else items
    return None


def _field(values: list[Any], fn: Callable[[list[float]], float], model: Any, key: str) -> Any:
    """The field ``key`` of the seeds' records (``values``) aggregated as ``model`` declares it
    (None: left out of this tree)."""
    how = aggregation(model, key) if model is not None else None
    if how is Agg.NONE:
        return None
    if how is Agg.PER_SEED:
        return list(values) if fn is mean else None
    if how is Agg.SAME:
        if fn is not mean:
            return None
        return values[0] if all(v == values[0] for v in values) else list(values)
    inner = field_model(model, key) if model is not None else None
    return _combine(values, fn, inner)
