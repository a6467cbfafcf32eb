"""Typed run summaries: what every ``summary.json`` holds, its schema version, and paths into it.

Each experiment package declares the structure of its summary in ``<package>/schema.py`` as
``SUMMARY``: a :class:`Summary` subclass (nested :class:`Record` models), or a union of them when
the experiment writes differently shaped summaries in different modes. Every key a summary may
hold is declared (``extra="forbid"``): the declaration is the structure, and

* :func:`validate_summary` checks one run's summary (one seed, or a batched run) against it,
  naming the first bad field;
* :func:`read_summary_versioned` reads a summary written by any nclab: without a
  ``schema_version`` it is version 0, accepted when it validates; a version this nclab does not
  read, or an old one that no longer validates, raises :class:`~nclab.errors.RunError` saying
  which version it is and which this nclab reads;
* :func:`check_path` checks a claim's path against the declaration, so that a misspelled or
  removed field fails when the claims are imported, not when they are judged.

Paths are dotted keys; a list entry (or a mapping's value) is selected by the value of one of its
fields, never by position: ``levels[level=1].nc1_trace``, ``by_lr[lr0=12].eos_ratio_late``
(numbers compare as numbers: ``1`` matches ``1.0``, the mean over seeds of a key field). Dict keys
that are numbers written as strings are plain keys: ``by_depth.5.nc2_last``.

Declaring: :class:`Record` for nested records, :func:`keyed` for a mapping whose keys follow a
pattern (layers, depths), :func:`optional` for a record of optional fields of one type,
:func:`prediction_record` for a :mod:`nclab.theory` prediction, :func:`modes` for a summary
written in several modes, ``UNIT`` beside ``SUMMARY`` for the summary of one unit of a grid.

Summaries aggregated over seeds (:func:`~nclab.experiments.common.seeds.aggregate_summaries`)
add a ``std`` tree of the summary's own shape and ``per_seed`` (one summary per seed): a path
``std.<path>`` is checked as ``<path>``, and ``per_seed[seed=1].<path>`` as ``<path>``. How a
field aggregates over seeds is part of its declaration (:class:`Agg`, in ``Annotated``): the
mean with its std (a number's default), the value all seeds share, the list of each seed's
value, or not at all (:data:`BOOKKEEPING`: the run's own seed, seeds, wall time, versions, schema
version, ... which :class:`Summary` and :class:`UnitRecord` declare so); :func:`aggregation`
reads it, :func:`metric_items` gives a summary's values without the bookkeeping (what ``nclab
run`` prints as measurements).

>>> grammar = summary_type("fc-grammar")
>>> check_path(grammar, "levels[level=1].nc1_trace")
>>> check_path(grammar, "std.levels[level=2].nc1_trace")
>>> check_path(grammar, "levels[level=1].nc1_trce")  # doctest: +ELLIPSIS
Traceback (most recent call last):
    ...
nclab.errors.ConfigError: path 'levels[level=1].nc1_trce': at levels[level=1]: no field 'nc1_trce'; valid: items, labels, ...

Length: one contract in one module, the base every experiment's summary derives from, how a
summary is validated and versioned, and the path language claims read summaries with.
"""

from __future__ import annotations

import dataclasses
import enum
import functools
import importlib
import re
import types
import typing
from collections.abc import Callable, Mapping
from typing import Annotated, Any, ClassVar, Literal, NamedTuple, Union

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Discriminator,
    Tag,
    TypeAdapter,
    ValidationError,
    create_model,
)

from ..errors import ConfigError, RunError
from .catalog import modules

#: the schema version this nclab writes (``schema_version`` in summary.json); a summary without
#: one is version 0 (written before summaries were typed)
SCHEMA_VERSION = 1

#: a number as summaries hold it: None where it is undefined or non-finite (``runs.to_jsonable``),
#: ``"inf"`` / ``"-inf"`` where a theory prediction is infinite (``theory.base``)
Num = float | Literal["inf", "-inf"] | None


class Agg(enum.Enum):
    """How a summary field aggregates over seeds, declared in its annotation:
    ``field: Annotated[int, Agg.SAME]``. A field without one aggregates by its value: numbers
    (and lists of numbers) by :attr:`MEAN`, records field by field, anything else by
    :attr:`SAME`."""

    #: the mean over seeds, and the std over seeds in the ``std`` tree
    MEAN = "mean"
    #: the value every seed has; where the seeds differ, the list of each seed's (no std)
    SAME = "same"
    #: the list of each seed's value (no std)
    PER_SEED = "per-seed"
    #: not aggregated: what the runner writes of the run itself, never a measurement
    NONE = "none"


#: the aggregation of bookkeeping fields (seed, seeds, wall time, versions, schema version, ...):
#: never averaged over seeds, never printed as a measurement
BOOKKEEPING = Agg.NONE


class Record(BaseModel):
    """A record nested in a summary: every key it may hold is declared, another one is an error."""

    model_config = ConfigDict(extra="forbid")


class Versions(Record):
    """The software a result was computed with (``runs.versions``)."""

    nclab: str
    torch: str
    numpy: str
    python: str


class UnitRecord(Record):
    """What the runner adds to the summary of one unit of a grid (``units/<key>/summary.json``):
    its schema version, wall time and versions, and ``remeasured`` when
    :func:`~nclab.experiments.runner.remeasure` measured it again. A package's ``UNIT`` type
    derives from it."""

    schema_version: Annotated[int, BOOKKEEPING] = 0
    seconds: Annotated[float | None, BOOKKEEPING] = None
    versions: Annotated[Versions | None, BOOKKEEPING] = None
    remeasured: Annotated[bool | None, BOOKKEEPING] = None


def optional(name: str, tp: Any, fields: str, doc: str) -> type[Record]:
    """A :class:`Record` whose fields (``fields``, space-separated) each hold a ``tp`` or are
    absent: e.g. the bounds a theorem gives where its hypotheses hold."""
    return create_model(
        name, __base__=Record, __doc__=doc, **dict.fromkeys(fields.split(), (tp | None, None))
    )


def modes(select: Callable[[Mapping[str, Any]], str], **models: type[Summary]) -> Any:
    """The type of a summary written in several modes: ``models[select(summary)]`` validates it
    (``select`` reads the keys that tell the modes apart), and a path is checked against all."""

    def tag(data: Any) -> str:
        return select(data if isinstance(data, Mapping) else vars(data))

    members = tuple(Annotated[model, Tag(name)] for name, model in models.items())
    return Annotated[Union[members], Discriminator(tag)]  # noqa: UP007


class Keys:
    """Marks a mapping whose keys are names of one kind (layers, depths, norms): the pattern they
    follow, checked in paths and in summaries (see :func:`keyed`)."""

    def __init__(self, pattern: str, what: str):
        self.pattern = re.compile(pattern)
        self.what = what

    def check(self, data: dict[str, Any]) -> dict[str, Any]:
        bad = [k for k in data if not self.pattern.fullmatch(k)]
        if bad:
            raise ValueError(f"not {self.what}: {', '.join(map(repr, bad))}")
        return data


def keyed(value: Any, pattern: str, what: str) -> Any:
    """The type of a mapping from names matching ``pattern`` (e.g. ``r"L\\d+"``, depths) to
    ``value``: a key another pattern would match is an error, in a summary and in a path."""
    keys = Keys(pattern, what)
    return Annotated[dict[str, value], keys, AfterValidator(keys.check)]


class _SameShape:
    """Marks ``std``: a tree of the summary's own shape (the std over seeds of each number)."""


class _EachSeed:
    """Marks ``per_seed``: one summary of the same type per seed."""


#: the std over seeds of each number of the enclosing record, in its shape (non-numbers left out)
StdTree = Annotated[dict[str, Any] | None, _SameShape()]
#: one record of the enclosing record's type per seed
PerSeed = Annotated[list[dict[str, Any]] | None, _EachSeed()]


class Summary(Record):
    """What every run summary may carry besides its experiment's numbers.

    ``seed`` / ``seeds``: the seed of the run, or the seeds of a run over several; ``seconds``:
    wall time; ``versions``; ``experiment`` / ``preset``: what was run; ``figures``: files written;
    ``std`` / ``per_seed``: the aggregation over seeds (the runner's, or a batched experiment's
    own); ``by_seed``: a grid's summary of each seed's units alone (the runner's, of this same
    structure: claims are judged per seed); ``failed`` / ``error`` / ``run_dir``: a run that raised (never written to summary.json:
    the run directory holds ``error.txt``); ``remeasured``: measured again from the finished
    units by :func:`~nclab.experiments.runner.remeasure`. Subclasses narrow ``per_seed`` / ``std`` where the
    experiment writes its own.
    """

    #: the version of this structure; bump it (and say what changed) when a field is renamed,
    #: removed or changes meaning
    SCHEMA_VERSION: ClassVar[int] = SCHEMA_VERSION

    schema_version: Annotated[int, BOOKKEEPING] = 0
    seed: Annotated[int | None, BOOKKEEPING] = None
    seeds: Annotated[list[int] | None, BOOKKEEPING] = None
    seconds: Annotated[float | None, BOOKKEEPING] = None
    versions: Annotated[Versions | None, BOOKKEEPING] = None
    experiment: Annotated[str | None, BOOKKEEPING] = None
    preset: Annotated[str | None, BOOKKEEPING] = None
    figures: Annotated[list[str], BOOKKEEPING] = []
    std: Annotated[StdTree, BOOKKEEPING] = None
    per_seed: Annotated[PerSeed, BOOKKEEPING] = None
    by_seed: Annotated[PerSeed, BOOKKEEPING] = None
    failed: Annotated[bool | None, BOOKKEEPING] = None
    error: Annotated[str | None, BOOKKEEPING] = None
    run_dir: Annotated[str | None, BOOKKEEPING] = None
    remeasured: Annotated[bool | None, BOOKKEEPING] = None


def prediction_record(cls: type, name: str | None = None) -> type[Record]:
    """A :class:`Record` of the fields of a theory prediction (a :mod:`nclab.theory` dataclass,
    written by its ``to_dict``): its numbers as :data:`Num` (infinite ones are ``"inf"``). A field
    declared ``X | None`` may be absent (a mean over seeds leaves out what is None in every seed).
    """
    hints = typing.get_type_hints(cls)
    fields = {
        f.name: (_json_type(hints[f.name]), None if _optional(hints[f.name]) else ...)
        for f in dataclasses.fields(cls)
    }
    return create_model(name or cls.__name__, __base__=Record, **fields)


def _optional(tp: Any) -> bool:
    return _is_union(tp) and type(None) in typing.get_args(tp)


def _json_type(tp: Any) -> Any:
    """The JSON form of a prediction field's type (floats may be None or ``"inf"``)."""
    if tp is float:
        return Num
    origin = typing.get_origin(tp)
    if origin is list:
        (arg,) = typing.get_args(tp) or (Any,)
        return list[_json_type(arg)]
    if origin is dict:
        return dict[str, Any]
    if origin in (Union, types.UnionType):
        return Union[tuple(_json_type(a) for a in typing.get_args(tp))]  # noqa: UP007
    return tp


# --- the summary type of an experiment ------------------------------------------------------------


@functools.cache
def _schema_module(experiment: str) -> types.ModuleType:
    """``<package>.schema`` of ``experiment`` (else its package, which may declare ``SUMMARY``
    itself), through :func:`~nclab.experiments.catalog.modules` (torch-free)."""
    known = modules()
    if experiment not in known:
        raise ConfigError(f"unknown experiment {experiment!r}; experiments: {', '.join(known)}")
    name = f"{known[experiment]}.schema"
    try:
        module = importlib.import_module(name)
    except ModuleNotFoundError as exc:
        if exc.name != name:
            raise
        module = importlib.import_module(known[experiment])
    if not hasattr(module, "SUMMARY"):
        raise ConfigError(f"experiment {experiment!r} declares no summary type ({name}.SUMMARY)")
    return module


def summary_type(experiment: str) -> Any:
    """The declared type of ``experiment``'s run summary: ``SUMMARY`` of its package's
    ``schema`` module."""
    return _schema_module(experiment).SUMMARY


def unit_type(experiment: str) -> Any:
    """The declared type of the summary of one unit of work of ``experiment`` (``UNIT`` of its
    schema module: one network of deep-ln's or linear-head's grid), else its run summary's."""
    module = _schema_module(experiment)
    return getattr(module, "UNIT", module.SUMMARY)


def models_of(tp: Any) -> list[type[BaseModel]]:
    """The model classes a summary type stands for (the members of a union)."""
    tp = _unwrap(tp)
    if _is_union(tp):
        return [m for a in typing.get_args(tp) for m in models_of(a)]
    return [tp] if isinstance(tp, type) and issubclass(tp, BaseModel) else []


def schema_version(experiment: str) -> int:
    """The schema version this nclab writes for ``experiment`` (the largest of its models')."""
    return max(m.SCHEMA_VERSION for m in models_of(summary_type(experiment)))


def stamp(experiment: str, summary: Mapping[str, Any]) -> dict[str, Any]:
    """``summary`` with the ``schema_version`` this nclab writes (for summary writers)."""
    return {**summary, "schema_version": schema_version(experiment)}


@functools.cache
def _adapter(experiment: str, unit: bool = False) -> TypeAdapter:
    return TypeAdapter(unit_type(experiment) if unit else summary_type(experiment))


def validate_summary(
    experiment: str, data: Mapping[str, Any], unit: bool = False
) -> dict[str, Any]:
    """``data`` as written (a dict, unchanged) if it is the summary of one run of ``experiment``
    (one seed, or a batched run; ``unit``: of one unit of its grid); else
    :class:`~nclab.errors.RunError` naming the bad field.

    A failed run's summary (``{"failed": True, "error": ...}``) is one too."""
    data = dict(data)
    if data.get("failed"):
        return data
    try:
        _adapter(experiment, unit).validate_python(data)
    except ValidationError as exc:
        what = "unit summary" if unit else "summary"
        raise RunError(f"{what} of {experiment!r}: {_first_errors(exc, data)}") from None
    return data


def _first_errors(exc: ValidationError, data: Any, limit: int = 2) -> str:
    """The most telling errors. Where a value matches no member of a union, pydantic reports
    every member's errors: only those of the member with the fewest are shown (the one the data
    was meant for), located by the keys of the data (without the members' names)."""
    groups: dict[tuple, list] = {}
    for e in exc.errors():
        loc, branch = _data_loc(data, e["loc"])
        groups.setdefault(branch, []).append((loc, e))
    fewest = min(len(g) for g in groups.values())
    errs = [x for g in groups.values() if len(g) == fewest for x in g]
    errs.sort(key=lambda x: (-len(x[0]), x[1]["type"] == "missing"))
    shown: dict[tuple, str] = {}
    for loc, e in errs:
        where = ".".join(map(str, loc)) or "the summary"
        value = "" if e["type"] == "missing" else f" (got {e['input']!r:.60})"
        shown.setdefault(loc, f"field {where!r}: {e['msg']}{value}")
    more = f"; and {len(shown) - limit} more" if len(shown) > limit else ""
    return "; ".join(list(shown.values())[:limit]) + more


def _data_loc(data: Any, loc: tuple) -> tuple[tuple, tuple]:
    """(the keys of ``data`` in an error's location, the union members it names): a missing
    field's name counts as a key."""
    keys, branch, node = [], [], data
    for i, part in enumerate(loc):
        if isinstance(node, Mapping) and part in node:
            node = node[part]
        elif isinstance(node, list) and isinstance(part, int) and part < len(node):
            node = node[part]
        elif not (isinstance(node, Mapping) and i == len(loc) - 1):
            branch.append((len(keys), part))
            continue
        keys.append(part)
    return tuple(keys), tuple(branch)


def _is_aggregate(data: Mapping[str, Any]) -> bool:
    return isinstance(data.get("std"), dict) and isinstance(data.get("per_seed"), list)


def validate_aggregate(experiment: str, data: Mapping[str, Any]) -> dict[str, Any]:
    """``data`` (unchanged) if it is a summary aggregated over seeds by the runner: every
    ``per_seed`` entry a valid summary, and no top-level key the type does not declare (the means
    keep the per-seed structure; where seeds disagree on a text, it holds the list of them)."""
    data = dict(data)
    for i, entry in enumerate(data["per_seed"]):
        try:
            validate_summary(experiment, entry)
        except RunError as exc:
            raise RunError(f"per_seed entry {i}: {exc}") from None
    declared = {k for m in models_of(summary_type(experiment)) for k in _keys(m)}
    unknown = sorted(set(data) - declared)
    if unknown:
        raise RunError(f"summary of {experiment!r}: undeclared fields {', '.join(unknown)}")
    return data


def read_summary_versioned(
    experiment: str, data: Mapping[str, Any], source: str = "summary.json"
) -> dict[str, Any]:
    """A summary of ``experiment`` as written by any nclab (``data``, unchanged) if this nclab
    reads it: its ``schema_version`` (0 when absent) is at most the current one, and it validates
    (one run's, or one aggregated over seeds). Otherwise :class:`~nclab.errors.RunError` naming
    the version found, the version this nclab reads, and the field that does not validate."""
    current = schema_version(experiment)
    found = data.get("schema_version", 0)
    if not isinstance(found, int | float) or isinstance(found, bool) or found > current:
        raise RunError(
            f"{source}: a {experiment!r} summary of schema version {found!r}; this nclab reads "
            f"versions 0 to {current} (a newer nclab wrote it?)"
        )
    try:
        if not data.get("failed") and _is_aggregate(data):
            try:
                return validate_summary(experiment, data)
            except RunError:
                return validate_aggregate(experiment, data)
        return validate_summary(experiment, data)
    except RunError as exc:
        if found < current:
            raise RunError(
                f"{source}: a {experiment!r} summary of schema version {found:g}, which this "
                f"nclab (schema version {current}) no longer reads: {exc}"
            ) from None
        raise RunError(f"{source}: {exc}") from None


# --- aggregation over seeds -------------------------------------------------------------------------


def aggregation(tp: Any, key: str) -> Agg | None:
    """How the field ``key`` of the summary type ``tp`` (a model, or a union of them) aggregates
    over seeds, where its annotation declares it (:class:`Agg`); None where it does not, or no
    model of ``tp`` has the field (then its value decides).

    >>> aggregation(Summary, "seconds"), aggregation(Summary, "not-a-field")
    (<Agg.NONE: 'none'>, None)
    """
    for model in models_of(tp):
        name = _keys(model).get(key)
        if name is not None:
            field = model.model_fields[name]
            marks = [*field.metadata, *_markers(field.annotation)]
            return next((m for m in marks if isinstance(m, Agg)), None)
    return None


def field_model(tp: Any, key: str) -> Any:
    """The type of the field ``key`` of ``tp`` where it holds records (a record type, or a list
    or mapping of them: ``list[Level]``, ``dict[str, Row]``), for aggregating inside it; None
    where it holds none."""
    for model in models_of(tp):
        name = _keys(model).get(key)
        if name is None:
            continue
        inner = _unwrap(model.model_fields[name].annotation)
        for m in typing.get_args(inner) if _is_union(inner) else (inner,):
            m = _unwrap(m)
            container = typing.get_origin(m) in (list, dict, Mapping)
            if models_of(_entry_type(m) if container else m):
                return m
        return None
    return None


def entry_model(tp: Any) -> Any:
    """The record type of the entries of a list or mapping type ``tp`` (None otherwise)."""
    if typing.get_origin(tp) in (list, dict, Mapping):
        return _unwrap(_entry_type(tp))
    return None


def metric_items(experiment: str, summary: Mapping[str, Any]) -> dict[str, Any]:
    """``summary``'s top-level fields without the bookkeeping ones (:data:`BOOKKEEPING`): the
    measurements, as ``nclab run`` prints them."""
    tp = summary_type(experiment)
    return {k: v for k, v in summary.items() if aggregation(tp, k) is not BOOKKEEPING}


# --- paths ------------------------------------------------------------------------------------------


class Segment(NamedTuple):
    """One step of a path: a key, then selections ``[field=value]`` among a list's entries (or a
    mapping's values), or ``[*]``: every entry (:data:`EVERY`)."""

    name: str
    select: tuple[tuple[str, str], ...] = ()

    def __str__(self) -> str:
        return self.name + "".join(
            "[*]" if sel == EVERY else f"[{sel[0]}={sel[1]}]" for sel in self.select
        )

    @property
    def every(self) -> bool:
        """Whether the segment selects every entry (``name[*]``)."""
        return self.select == (EVERY,)


#: the selection ``[*]``: every entry of a list (or value of a mapping)
EVERY = ("*", "*")
_SEGMENT = re.compile(r"([^.\[\]]+)((?:\[(?:\*|[^\[\]=]+=[^\[\]]+)\])*)")
_SELECT = re.compile(r"\[(?:\*|([^\[\]=]+)=([^\[\]]+))\]")


@functools.lru_cache(maxsize=4096)
def parse_key(key: str) -> tuple[Segment, ...]:
    """The segments of a dotted key (no run alias).

    >>> parse_key("levels[level=1].nc1")
    (Segment(name='levels', select=(('level', '1'),)), Segment(name='nc1', select=()))
    >>> [str(s) for s in parse_key("by_lr[lr0=1.5].x")]
    ['by_lr[lr0=1.5]', 'x']
    >>> parse_key("sweep[*].train_acc")[0].every
    True
    """
    out, pos = [], 0
    while True:
        m = _SEGMENT.match(key, pos)
        if m is None:
            raise ConfigError(
                f"malformed path {key!r} at {key[pos:]!r}: want name[field=value].name"
            )
        select = tuple((f, v) if f else EVERY for f, v in _SELECT.findall(m.group(2)))
        if EVERY in select and len(select) > 1:
            raise ConfigError(f"malformed path {key!r}: [*] selects every entry, alone")
        out.append(Segment(m.group(1), select))
        pos = m.end()
        if pos == len(key):
            return tuple(out)
        if key[pos] != ".":
            raise ConfigError(
                f"malformed path {key!r} at {key[pos:]!r}: want name[field=value].name"
            )
        pos += 1


def matches(value: Any, text: str) -> bool:
    """Whether a key field's ``value`` is the one a path selects (``text``): numbers compare as
    numbers (``1`` matches ``1.0``), booleans as ``true`` / ``false``, anything else as text."""
    if isinstance(value, bool):
        return text.lower() == str(value).lower()
    if isinstance(value, int | float):
        try:
            return float(text) == float(value)
        except ValueError:
            return False
    return str(value) == text


def check_path(tp: Any, path: str) -> None:
    """Raise :class:`~nclab.errors.ConfigError` unless the dotted ``path`` names a field that the
    summary type ``tp`` declares, naming the path and the valid fields where it goes wrong."""
    segments = parse_key(path)
    err = _check(tp, segments, 0, None)
    if err is not None:
        at, valid = err
        where = ".".join(str(s) for s in segments[:at]) or "the summary"
        seg = segments[at]
        raise ConfigError(f"path {path!r}: at {where}: {valid(seg)}")


def _unwrap(tp: Any) -> Any:
    while typing.get_origin(tp) is Annotated:
        tp = typing.get_args(tp)[0]
    return tp


def _markers(tp: Any) -> tuple[Any, ...]:
    return typing.get_args(tp)[1:] if typing.get_origin(tp) is Annotated else ()


def _is_union(tp: Any) -> bool:
    return typing.get_origin(tp) in (Union, types.UnionType)


def _keys(model: type[BaseModel]) -> dict[str, str]:
    """The keys a model's records hold (a field's alias, or its name) -> its field name."""
    return {f.alias or name: name for name, f in model.model_fields.items()}


def _fields(tp: Any) -> list[str]:
    return [k for m in models_of(tp) for k in _keys(m)]


def _check(tp: Any, segs: tuple[Segment, ...], i: int, parent: Any) -> tuple | None:
    """None if ``segs[i:]`` is a path into ``tp``; else (index of the failing segment, a function
    of that segment giving what is wrong). ``parent``: the innermost model around ``tp`` (what a
    ``std`` tree or ``per_seed`` list repeats)."""
    if i == len(segs):
        return None
    marks = _markers(tp)
    if any(isinstance(m, _SameShape) for m in marks):
        return _check(parent, segs, i, parent)
    if any(isinstance(m, _EachSeed) for m in marks):
        return _check(list[parent], segs, i, parent)
    tp = _unwrap(tp)
    if tp is Any:
        return None
    if _is_union(tp):
        members = [a for a in typing.get_args(tp) if a is not type(None)]
        errors = [_check(a, segs, i, parent) for a in members]
        if any(e is None for e in errors):
            return None
        deepest = max(e[0] for e in errors)
        if deepest > i or len(errors) == 1:  # the member that got furthest says what is wrong
            return next(e for e in errors if e[0] == deepest)
        having = [e for a, e in zip(members, errors, strict=True) if segs[i].name in _fields(a)]
        if having:  # a member that has the field, but not the selection
            return having[0]
        names = sorted({f for a in members for f in _fields(a)})
        others = [e[1] for a, e in zip(members, errors, strict=True) if not models_of(a)]

        def why(s: Segment, names=names, others=others) -> str:
            return "; or ".join([_no_field(s.name, names)] * bool(names) + [o(s) for o in others])

        return (i, why)
    seg = segs[i]
    if isinstance(tp, type) and issubclass(tp, BaseModel):
        name = _keys(tp).get(seg.name)
        if name is None:
            if tp.model_config.get("extra") == "allow":
                return None
            names = list(_keys(tp))
            return (i, lambda s, names=names: _no_field(s.name, names))
        return _select(_field_type(tp, name), seg, segs, i, tp)
    origin = typing.get_origin(tp)
    if origin in (dict, Mapping) or tp is dict:
        key_t, val_t = typing.get_args(tp) or (str, Any)
        if typing.get_origin(key_t) is Literal and seg.name not in typing.get_args(key_t):
            names = list(typing.get_args(key_t))
            return (i, lambda s, names=names: _no_field(s.name, names))
        keys = next((m for m in marks if isinstance(m, Keys)), None)
        if keys is not None and not keys.pattern.fullmatch(seg.name):
            return (i, lambda s, k=keys: f"{s.name!r} is not {k.what} ({k.pattern.pattern})")
        return _select(val_t, seg, segs, i, parent)
    if origin is list or tp is list:
        what = "a list: select an entry by a field, name[field=value]"
        return (i, lambda s, what=what: f"{s.name!r} indexes {what}")
    return (i, lambda s, tp=tp: f"no field {s.name!r}: {getattr(tp, '__name__', tp)} has none")


def _field_type(model: type[BaseModel], name: str) -> Any:
    field = model.model_fields[name]
    tp = field.annotation
    return Annotated[tuple([tp, *field.metadata])] if field.metadata else tp


def _select(tp: Any, seg: Segment, segs: tuple[Segment, ...], i: int, parent: Any) -> tuple | None:
    """Apply ``seg``'s selections (all on the same list: the entry matching every one) to the
    value type ``tp`` of its key, then check the rest."""
    if seg.select:
        if any(isinstance(m, _EachSeed) for m in _markers(tp)):
            tp = list[parent]
        entry = _entry_type(_unwrap(tp))
        if entry is None:
            return (i, lambda s: f"{s.name!r} is not a list or mapping of records to select from")
        names = _fields(entry)
        for field, _ in seg.select:
            if seg.every:
                break
            if field not in names:
                return (i, lambda s, f=field, names=names: _no_key(s, f, names))
        tp = entry
    return _check(tp, segs, i + 1, parent)


def _entry_type(tp: Any) -> Any:
    """The type of the entries of a list, or of the values of a mapping (None otherwise)."""
    if _is_union(tp):
        entries = [e for a in typing.get_args(tp) if (e := _entry_type(_unwrap(a))) is not None]
        return Union[tuple(entries)] if entries else None  # noqa: UP007
    origin = typing.get_origin(tp)
    if origin is list:
        return typing.get_args(tp)[0]
    if origin in (dict, Mapping):
        return typing.get_args(tp)[1]
    return None


def _no_field(name: str, valid: list[str]) -> str:
    return f"no field {name!r}; valid: {', '.join(valid) if valid else '(none)'}"


def _no_key(seg: Segment, field: str, valid: list[str]) -> str:
    return f"{seg.name!r} entries have no field {field!r} to select by; valid: {', '.join(valid)}"


__all__ = [
    "BOOKKEEPING",
    "SCHEMA_VERSION",
    "Agg",
    "Keys",
    "Num",
    "PerSeed",
    "Record",
    "Segment",
    "StdTree",
    "Summary",
    "Versions",
    "aggregation",
    "check_path",
    "entry_model",
    "field_model",
    "keyed",
    "matches",
    "metric_items",
    "models_of",
    "modes",
    "optional",
    "parse_key",
    "prediction_record",
    "read_summary_versioned",
    "schema_version",
    "stamp",
    "summary_type",
    "unit_type",
    "validate_aggregate",
    "validate_summary",
]
