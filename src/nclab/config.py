"""Typed configurations: pydantic models loaded from TOML and overridden by ``--set a.b=value``.

Every experiment describes its settings as a :class:`Config` subclass (``extra="forbid"``), so an
unknown key or a value of the wrong type is an error that names the valid keys.

>>> class Model(Config):
...     width: int = 10
>>> class Exp(Config):
...     lr: float = 0.1
...     model: Model = Model()
>>> cfg = apply_overrides(Exp(), ["model.width=32", "lr=1e-3"])
>>> cfg.model.width, cfg.lr
(32, 0.001)
>>> apply_overrides(Exp(), ["model.depth=3"])
Traceback (most recent call last):
...
nclab.errors.ConfigError: unknown key 'model.depth'; valid keys under 'model': width
"""

from __future__ import annotations

import copy
import json
import tomllib
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, TypeVar

import pydantic

from .errors import ConfigError
from .runs import drop_none

C = TypeVar("C", bound="Config")


class Config(pydantic.BaseModel):
    """Base class of every nclab configuration: strict about unknown keys, immutable."""

    model_config = pydantic.ConfigDict(extra="forbid", frozen=True, validate_default=True)

    def to_dict(self) -> dict[str, Any]:
        return self.model_dump(mode="json")

    def to_toml(self) -> str:
        import tomli_w

        return tomli_w.dumps(drop_none(self.to_dict()))

    @classmethod
    def from_dict(cls: type[C], data: Mapping[str, Any]) -> C:
        return validate(cls, data)

    @classmethod
    def from_toml(cls: type[C], path: str | Path) -> C:
        return validate(cls, read_toml(path))

    def replace(self: C, **changes: Any) -> C:
        data = self.to_dict()
        data.update(changes)
        return validate(type(self), data)


def valid_keys(cls: type[pydantic.BaseModel], prefix: str = "") -> list[str]:
    """All dotted keys of a config class, nested models expanded."""
    keys = []
    for name, field in cls.model_fields.items():
        ann = field.annotation
        if isinstance(ann, type) and issubclass(ann, pydantic.BaseModel):
            keys.extend(valid_keys(ann, prefix + name + "."))
        else:
            keys.append(prefix + name)
    return keys


def _check_keys(cls: type[pydantic.BaseModel], data: Mapping[str, Any], prefix: str = "") -> None:
    for key, value in data.items():
        field = cls.model_fields.get(key)
        if field is None:
            where = f" under '{prefix[:-1]}'" if prefix else ""
            names = ", ".join(cls.model_fields) or "(none)"
            raise ConfigError(f"unknown key '{prefix}{key}'; valid keys{where}: {names}")
        ann = field.annotation
        if (
            isinstance(ann, type)
            and issubclass(ann, pydantic.BaseModel)
            and isinstance(value, Mapping)
        ):
            _check_keys(ann, value, prefix + key + ".")


def validate(cls: type[C], data: Mapping[str, Any]) -> C:
    """Build ``cls`` from a nested mapping; errors name the key, the value and what is accepted."""
    _check_keys(cls, data)
    try:
        return cls.model_validate(dict(data))
    except pydantic.ValidationError as exc:
        err = exc.errors()[0]
        loc = ".".join(str(p) for p in err["loc"])
        got = err.get("input")
        raise ConfigError(f"invalid value for '{loc}': {err['msg']} (got {got!r})") from None


def flatten(data: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    """Nested mapping -> dotted keys (``{"a": {"b": 1}}`` -> ``{"a.b": 1}``)."""
    out: dict[str, Any] = {}
    for k, v in data.items():
        if isinstance(v, Mapping) and v:
            out.update(flatten(v, prefix + k + "."))
        else:
            out[prefix + k] = v
    return out


def read_toml(path: str | Path, what: str = "config file") -> dict[str, Any]:
    """A TOML file as a dict; a missing file or bad TOML is a :class:`ConfigError`."""
    path = Path(path)
    if not path.is_file():
        raise ConfigError(f"{what} not found: {path}")
    try:
        return tomllib.loads(path.read_text())
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path} is not valid TOML: {exc}") from None


def load_toml_overrides(path: str | Path) -> dict[str, Any]:
    """Dotted-key overrides from a TOML file (its ``[nclab]`` metadata table is ignored)."""
    data = read_toml(path)
    data.pop("nclab", None)
    return flatten(data)


def parse_value(text: str) -> Any:
    """Parse the right-hand side of ``--set key=value``: TOML/JSON literal if possible, else string."""
    text = text.strip()
    try:
        return tomllib.loads(f"v = {text}")["v"]
    except tomllib.TOMLDecodeError:
        pass
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return text


def set_dotted(data: dict[str, Any], key: str, value: Any) -> None:
    parts = key.split(".")
    node = data
    for part in parts[:-1]:
        child = node.get(part)
        if not isinstance(child, dict):
            child = {}
            node[part] = child
        node = child
    node[parts[-1]] = value


def with_dotted(base: Mapping[str, Any], changes: Mapping[str, Any]) -> dict[str, Any]:
    """A deep copy of a nested mapping (a preset) with dotted-key changes set in it.

    >>> base = {"train": {"epochs": 300, "lr": 0.001}, "measure_every": 20}
    >>> with_dotted(base, {"train.epochs": 40, "data.name": "digits"})
    {'train': {'epochs': 40, 'lr': 0.001}, 'measure_every': 20, 'data': {'name': 'digits'}}
    >>> base["train"]["epochs"]
    300
    """
    out = copy.deepcopy(dict(base))
    for key, value in changes.items():
        set_dotted(out, key, value)
    return out


def apply_overrides(cfg: C, overrides: Iterable[str] | Mapping[str, Any]) -> C:
    """Return a copy of ``cfg`` with ``key=value`` overrides (dotted keys) applied and validated."""
    if isinstance(overrides, Mapping):
        pairs = list(overrides.items())
    else:
        pairs = []
        for item in overrides:
            if "=" not in item:
                raise ConfigError(
                    f"override {item!r} must look like key=value (e.g. model.lr=0.01)"
                )
            key, _, value = item.partition("=")
            pairs.append((key.strip(), parse_value(value)))
    data = cfg.to_dict()
    cls = type(cfg)
    all_keys = valid_keys(cls)
    for key, value in pairs:
        if key not in all_keys and not any(k.startswith(key + ".") for k in all_keys):
            parent, _, _ = key.rpartition(".")
            sub = [k for k in all_keys if parent and k.startswith(parent + ".")]
            if sub:
                names = ", ".join(k[len(parent) + 1 :] for k in sub)
                raise ConfigError(f"unknown key '{key}'; valid keys under '{parent}': {names}")
            raise ConfigError(f"unknown key '{key}'; valid keys: {', '.join(all_keys)}")
        set_dotted(data, key, value)
    return validate(cls, data)
