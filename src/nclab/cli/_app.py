"""The typer application object and output helpers shared by the verbs."""

from __future__ import annotations

import sys
from typing import Any

import typer

from ..runs import dumps, versions

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


def console(stderr: bool = False):
    from rich.console import Console

    return Console(stderr=stderr)


@app.command()
def version(json: bool = JSON_OPT) -> None:
    """Print the versions of nclab and of what it runs on."""
    v = versions()
    if json:
        emit_json(v)
    else:
        for k, val in v.items():
            print(f"{k} {val}")
