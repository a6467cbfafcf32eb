"""The typer application object and output helpers shared by the verbs."""

from __future__ import annotations

import difflib
import os
import platform
import re
import sys
from typing import Any

import typer

from .._version import __version__
from ..runs import dumps

app = typer.Typer(
    name="nclab",
    help="Neural collapse lab: measure collapse, compute the theory's predictions, reproduce the papers.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)

JSON_OPT = typer.Option(False, "--json", help="Print machine-readable JSON on stdout.")


def emit_json(obj: Any) -> None:
    """Print one JSON document on stdout."""
    sys.stdout.write(dumps(obj, indent=2) + "\n")
    sys.stdout.flush()


#: "unknown <what> 'name' ...; <names>: a, b, c" — the form every "unknown name" error takes
_UNKNOWN = re.compile(r"unknown [\w -]+? '(?P<name>[^']+)'(?P<mid>[^;]*); [^:]+?: (?P<names>.+)$")


def suggest(message: str) -> str:
    """An "unknown name" error with the close matches among the names it lists (presets,
    experiments, keys, data sets, ...), as ``nclab theory`` does for parameters.

    >>> suggest("unknown preset 'tb-fig2-bia' for experiment 'ufm'; presets: tb-fig2-bias, ufm-ce")
    "unknown preset 'tb-fig2-bia' for experiment 'ufm' (did you mean 'tb-fig2-bias'?); presets: tb-fig2-bias, ufm-ce"
    """
    m = _UNKNOWN.search(message)
    if m is None or "did you mean" in message:
        return message
    names = [n.strip() for n in m["names"].rstrip(".").split(",")]
    name = m["name"]
    close = difflib.get_close_matches(name, names, n=3, cutoff=0.6)
    if not close and "." in name:  # "train.lrr" among the keys under 'train'
        close = difflib.get_close_matches(name.rsplit(".", 1)[1], names, n=3, cutoff=0.6)
    if not close:
        return message
    at = m.end("mid")
    return f"{message[:at]} (did you mean {' or '.join(map(repr, close))}?){message[at:]}"


def console(stderr: bool = False):
    """A rich console; where the output is not a terminal (a file, a pipe) lines are never
    wrapped nor cut (``soft_wrap``), so a reader can grep them."""
    from rich.console import Console

    stream = sys.stderr if stderr else sys.stdout
    if stream.isatty():
        return Console(stderr=stderr)
    return Console(stderr=stderr, soft_wrap=True, width=max(200, _columns()))


def _columns() -> int:
    """``COLUMNS`` where it is a number, else 0."""
    try:
        return int(os.environ.get("COLUMNS", "0"))
    except ValueError:
        return 0


def installed_versions() -> dict[str, str]:
    """The versions ``runs.versions()`` records (nclab, torch, numpy, python), read from the
    installed packages' metadata: no torch import, so ``nclab --version`` is quick."""
    from importlib import metadata

    out = {"nclab": __version__}
    for name in ("torch", "numpy"):
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = "not installed"
    out["python"] = platform.python_version()
    return out


@app.command()
def version(json: bool = JSON_OPT) -> None:
    """Print the versions of nclab and of what it runs on."""
    v = installed_versions()
    if json:
        emit_json(v)
    else:
        for k, val in v.items():
            print(f"{k} {val}")


def _version_option(value: bool) -> None:
    if value:
        version(json=False)
        raise typer.Exit()


@app.callback()
def _main(
    show_version: bool = typer.Option(
        False,
        "--version",
        callback=_version_option,
        is_eager=True,
        help="Print the versions of nclab and of what it runs on, and exit (= nclab version).",
    ),
) -> None:
    """Neural collapse lab: measure collapse, compute the theory's predictions, reproduce the
    papers."""
