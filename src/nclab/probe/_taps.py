"""Taps: what a layer spec measures, and how a value that is not a tensor is read.

A spec is ``"module"`` (its output), ``"module:input"`` (its input) or ``"module:output"``, followed
by an optional selector ``[key]`` or ``[index]``: ``"encoder[last_hidden_state]"``,
``"lstm[0]"``, ``"block:input[hidden_states]"``. :class:`Tap` says the same as an object and also
takes a callable selector and a per-tap ``reduce``.

Without a selector an output is read as: a tensor as is; a tuple or list by its first tensor; a
dict-like (a Hugging Face ``ModelOutput`` included) or an object by its ``last_hidden_state``. An
input is the first tensor among the positional arguments, else among the keyword arguments.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Literal

import torch
from torch import nn

from ..errors import DataError

Selector = int | str | Callable[..., Any] | None
_SPEC = re.compile(r"^(?P<module>[^:\[\]]*)(?::(?P<side>[^:\[\]]*))?(?:\[(?P<select>[^\[\]]+)\])?$")


@dataclass(frozen=True)
class Tap:
    """One measured tensor of a model.

    Args:
        module: a module name of ``model.named_modules()`` or the module itself.
        side: ``"output"`` (default) or ``"input"``.
        select: how to read a value that is not a tensor: a key (dicts, ``ModelOutput``, keyword
            arguments of an input, attributes), an index (tuples, positional arguments) or a
            callable (of the output; of ``(args, kwargs)`` for an input).
        reduce: this tap's pooling, overriding the probe's ``reduce``.
        name: the key of this tap in the results (default: the spec string).
    """

    module: str | nn.Module
    side: Literal["output", "input"] = "output"
    select: Selector = None
    reduce: Any = None
    name: str | None = None

    @classmethod
    def parse(cls, spec: str) -> Tap:
        """The tap a string spec describes (``"fc:input"``, ``"encoder[0]"``)."""
        m = _SPEC.match(spec)
        if m is None:
            raise DataError(
                f"layer {spec!r} is not a layer spec: write 'module', 'module:input' or "
                "'module:output', optionally followed by [key] or [index]"
            )
        side = m["side"] if m["side"] is not None else "output"
        if side not in ("input", "output"):
            raise DataError(f"layer {spec!r}: the suffix must be ':input' or ':output'")
        sel: Selector = m["select"]
        if sel is not None and re.fullmatch(r"-?\d+", sel):
            sel = int(sel)
        return cls(m["module"], side, sel, name=spec)


@dataclass
class BoundTap:
    """A tap resolved against one model, with what it gathers."""

    name: str
    module_name: str
    module: nn.Module
    side: str
    select: Selector
    reduce: Any
    is_classifier: bool = False
    stats: Any = None
    value: torch.Tensor | None = field(default=None, repr=False)
    clf_sums: torch.Tensor | None = field(default=None, repr=False)

    @property
    def use_input(self) -> bool:
        return self.side == "input"

    def hook(self, module: nn.Module, args: tuple, kwargs: dict, output: Any) -> None:
        where = f"the {self.side} of layer {self.name!r}"
        if self.use_input:
            t = _read_input(args, kwargs, self.select, where, self)
        else:
            t = read_value(output, self.select, where, self)
        self.value = t.detach()


#: what ``layers=`` takes: one spec, a list of specs, or ``{name: spec}``
Layers = str | Tap | Iterable[str | Tap] | Mapping[str, str | Tap]


def named_specs(layers: Mapping) -> list[Tap]:
    """``{name: spec}`` (torchvision's ``return_nodes`` style) as Taps named by their keys.

    >>> [(t.name, t.module, t.side) for t in named_specs({"penultimate": "fc:input"})]
    [('penultimate', 'fc', 'input')]
    """
    out = []
    for name, spec in layers.items():
        if not isinstance(name, str) or not name:
            raise DataError(f"layers={{name: spec}} needs non-empty string names, got {name!r}")
        if isinstance(spec, str):
            spec = Tap.parse(spec)
        elif not isinstance(spec, Tap):
            raise DataError(
                f"layers[{name!r}] must be a layer spec or a Tap, got {type(spec).__name__}"
            )
        out.append(replace(spec, name=name))
    return out


def bind(model: nn.Module, spec: str | Tap, modules: dict[str, nn.Module]) -> BoundTap:
    """Resolve ``spec`` against ``model`` (did-you-mean on unknown names)."""
    if isinstance(spec, str):
        tap = Tap.parse(spec)
    elif isinstance(spec, Tap):
        tap = spec
    else:
        raise DataError(f"layers must be module names or Tap objects, got {type(spec).__name__}")
    if tap.side not in ("input", "output"):
        raise DataError(f"Tap side must be 'input' or 'output', got {tap.side!r}")
    mod_name, module = find_module(tap.module, modules)
    name = tap.name or _default_name(mod_name, tap)
    return BoundTap(name, mod_name, module, tap.side, tap.select, tap.reduce)


def _default_name(mod_name: str, tap: Tap) -> str:
    name = mod_name + (":input" if tap.side == "input" else "")
    if isinstance(tap.select, int | str):
        name += f"[{tap.select}]"
    elif tap.select is not None:
        name += f"[{getattr(tap.select, '__name__', 'select')}]"
    return name


def find_module(ref: str | nn.Module, modules: dict[str, nn.Module]) -> tuple[str, nn.Module]:
    """(name, module) of a module given by name or by itself."""
    if isinstance(ref, nn.Module):
        for name, mod in modules.items():
            if mod is ref:
                return name, mod
        raise DataError(f"the module given ({type(ref).__name__}) is not part of the model")
    if ref in modules:
        return ref, modules[ref]
    raise DataError(unknown_module_message(ref, list(modules)))


def unknown_module_message(name: str, names: list[str]) -> str:
    """'no module named ...; did you mean ...' with close matches first, then names ending alike."""
    names = [n for n in names if n]
    close = difflib.get_close_matches(name, names, n=5, cutoff=0.6)
    tail = name.rsplit(".", 1)[-1]
    close += [n for n in names if n.rsplit(".", 1)[-1] == tail and n not in close][:5]
    msg = f"no module named {name!r} in the model ({len(names)} modules)"
    if close:
        return msg + "; did you mean " + " or ".join(repr(n) for n in close[:5]) + "?"
    top = [n for n in names if "." not in n]
    shown = ", ".join(repr(n) for n in top[:20]) + (", ..." if len(top) > 20 else "")
    return (
        f"{msg}; its top-level modules are {shown} "
        "(all names: [n for n, _ in model.named_modules()])"
    )


# --- reading values ----------------------------------------------------------------------------------
def read_value(
    value: Any, select: Selector, where: str, tap: BoundTap | None = None
) -> torch.Tensor:
    """The tensor ``select`` picks out of ``value`` (the default reading when it is None)."""
    if select is not None:
        value = select(value) if callable(select) else _pick(value, select, where)
        where = f"{where} (selected by {select!r})" if not callable(select) else where
    return _default(value, where, tap)


def _pick(value: Any, key: int | str, where: str) -> Any:
    try:
        if isinstance(key, int) or (isinstance(value, Mapping) and key in value):
            return value[key]
        if isinstance(key, str) and hasattr(value, key):
            return getattr(value, key)
    except (IndexError, KeyError, TypeError) as exc:
        raise DataError(f"{where}: cannot select [{key!r}] from a {_describe(value)}") from exc
    raise DataError(f"{where}: cannot select [{key!r}] from a {_describe(value)}")


def _default(value: Any, where: str, tap: BoundTap | None) -> torch.Tensor:
    if isinstance(value, torch.Tensor):
        return value
    if isinstance(value, Mapping):
        if isinstance(value.get("last_hidden_state"), torch.Tensor):
            return value["last_hidden_state"]
    elif isinstance(value, tuple | list):
        for item in value:
            if isinstance(item, torch.Tensor):
                return item
    elif isinstance(getattr(value, "last_hidden_state", None), torch.Tensor):
        return value.last_hidden_state
    raise DataError(f"{where} is a {_describe(value)}: {_how_to_select(value, tap)}")


def _describe(value: Any) -> str:
    if isinstance(value, Mapping):
        keys = ", ".join(repr(k) for k in list(value)[:10])
        return f"{type(value).__name__} with keys {keys}"
    if isinstance(value, tuple | list):
        return f"{type(value).__name__} of {len(value)} items, none a tensor"
    return type(value).__name__


def _how_to_select(value: Any, tap: BoundTap | None) -> str:
    mod = tap.module_name if tap is not None else "module"
    side = ":input" if tap is not None and tap.use_input else ""
    if isinstance(value, Mapping) and value:
        example = f"'{mod}{side}[{next(iter(value))}]'"
    elif isinstance(value, tuple | list) and value:
        example = f"'{mod}{side}[0]'"
    else:
        example = f"'{mod}{side}[attribute]'"
    return (
        "the probe reads a tensor, the first tensor of a tuple or a 'last_hidden_state'; "
        f"select one with a layer spec such as {example}, or Tap({mod!r}, select=callable)"
    )


def _read_input(args: tuple, kwargs: dict, select: Selector, where: str, tap) -> torch.Tensor:
    if callable(select):
        return _default(select(args, kwargs), where, tap)
    if isinstance(select, int):
        if not -len(args) <= select < len(args):
            raise DataError(f"{where}: the module got {len(args)} positional arguments")
        return _default(args[select], where, tap)
    if isinstance(select, str):
        if select not in kwargs:
            raise DataError(f"{where}: no keyword argument {select!r} (got {sorted(kwargs)})")
        return _default(kwargs[select], where, tap)
    for v in (*args, *kwargs.values()):
        if isinstance(v, torch.Tensor):
            return v
    raise DataError(f"{where}: the module was called without a tensor argument")
