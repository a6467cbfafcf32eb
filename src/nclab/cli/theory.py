"""``nclab theory NAME --param value ...``: closed-form predictions of the papers."""

from __future__ import annotations

import collections.abc
import inspect
import types
import typing
from typing import Any

import typer

from ..errors import TheoryError
from ..runs import non_finite
from ..theory import PREDICTIONS, get_prediction
from ._app import app, console, emit_json
from ._theory_help import help_text, option, plain

SEQUENCES = (list, tuple, collections.abc.Sequence)


def _coerce(name: str, text: str | None, annotation: Any) -> Any:
    ann = annotation
    if isinstance(ann, str):
        ann = {"int": int, "float": float, "bool": bool, "str": str}.get(
            ann.split("|")[0].strip(), str
        )
    origin = typing.get_origin(ann)
    if origin in (typing.Union, types.UnionType):
        args = [a for a in typing.get_args(ann) if a is not type(None)]
        seqs = [a for a in args if typing.get_origin(a) in SEQUENCES]
        scalars = [a for a in args if a not in seqs]
        wants_list = text is not None and ("," in text or "[" in text)
        ann = (seqs or scalars)[0] if (wants_list or not scalars) else scalars[0]
        origin = typing.get_origin(ann)
    try:
        if ann is bool:
            return True if text is None else text.lower() in ("1", "true", "yes", "on")
        if text is None:
            raise TheoryError(f"--{name} needs a value")
        if origin in SEQUENCES or ann in (list, tuple):
            inner = (typing.get_args(ann) or (float,))[0]
            items = [t for t in text.replace("[", "").replace("]", "").split(",") if t.strip()]
            return [inner(t.strip()) if inner in (int, float) else float(t) for t in items]
        if ann is int:
            f = float(text)
            if f != int(f):
                raise ValueError
            return int(f)
        if ann is float:
            return float(text)
        return text
    except ValueError:
        raise TheoryError(
            f"--{name}: cannot read {text!r} as {getattr(ann, '__name__', ann)}"
        ) from None


def summary_line(fn) -> str:
    r"""The first sentence of a docstring's first paragraph, without Sphinx markup or LaTeX.

    >>> def f():
    ...     r'''Bounds on NC1, :math:`\kappa(W_L)` and
    ...     ``NC2`` (Jacot et al., :func:`~nclab.theory.g`) for L_2 \ge 2. More text.'''
    >>> summary_line(f)
    'Bounds on NC1, κ(W_L) and NC2 (Jacot et al., g) for L_2 ≥ 2.'
    """
    import re

    para = (inspect.getdoc(fn) or "").split("\n\n")[0]
    text = " ".join(para.split())
    text = re.sub(r":[a-z]+:`~?(?:[\w.]+\.)?([^`]+)`", r"\1", text)  # :math:`x`, :func:`~a.b`
    text = text.replace("``", "")
    # a full stop ends the sentence, but not in "et al.", "e.g.", "Thm.", "Prop.", "Fig.", "eq."
    end = re.search(r"(?<!\bal)(?<!e\.g)(?<!i\.e)(?<!Thm)(?<!Prop)(?<!Fig)(?<!\beq)\.(\s|$)", text)
    return plain(text[: end.start() + 1] if end else text)


def parse_params(fn, args: list[str]) -> dict[str, Any]:
    """Parse ``--key value`` / ``--flag`` arguments against the function's signature."""
    sig = inspect.signature(fn)
    hints = typing.get_type_hints(fn)
    params = {p: sig.parameters[p] for p in sig.parameters}
    lower = {p.lower().replace("_", "-"): p for p in params}
    out: dict[str, Any] = {}
    i = 0
    while i < len(args):
        tok = args[i]
        if not tok.startswith("--"):
            raise TheoryError(f"unexpected argument {tok!r}; parameters look like --name value")
        key, _, inline = tok[2:].partition("=")
        pname = key.replace("-", "_") if key.replace("-", "_") in params else lower.get(key.lower())
        if pname is None:
            import difflib

            options = [option(p) for p in params]
            close = difflib.get_close_matches("--" + key.replace("_", "-"), options, n=2)
            hint = f" (did you mean {' or '.join(close)}?)" if close else ""
            raise TheoryError(f"unknown parameter --{key}{hint}; parameters: {', '.join(options)}")
        ann = hints.get(pname, str)
        if inline:
            val_text = inline
            i += 1
        elif ann is bool and (i + 1 >= len(args) or args[i + 1].startswith("--")):
            val_text = None
            i += 1
        else:
            if i + 1 >= len(args):
                raise TheoryError(f"--{key} needs a value")
            val_text = args[i + 1]
            i += 2
        out[pname] = _coerce(key, val_text, ann)
    missing = [
        p for p, v in params.items() if v.default is inspect.Parameter.empty and p not in out
    ]
    if missing:
        raise TheoryError("missing parameters: " + ", ".join(option(p) for p in missing))
    return out


def as_options(message: str, params) -> str:
    """A theory function's error in the command line's spelling: its parameter names (``lambda_w``
    anywhere, a one-word name such as ``K`` where it opens the message) as options
    (``--lambda-w``, ``--K``)."""
    import re

    for p in sorted(params, key=len, reverse=True):
        if "_" in p:
            message = re.sub(rf"(?<![\w-]){re.escape(p)}\b", option(p), message)
        elif message.startswith(p + " "):
            message = option(p) + message[len(p) :]
    return message


@app.command(
    add_help_option=False,
    context_settings={"allow_extra_args": True, "ignore_unknown_options": True},
)
def theory(
    ctx: typer.Context,
    name: str = typer.Argument(None, help="Prediction name (nclab theory --list)."),
    list_: bool = typer.Option(False, "--list", help="List the predictions and their parameters."),
    json: bool = typer.Option(False, "--json", help="Print machine-readable JSON on stdout."),
    help_: bool = typer.Option(
        False, "--help", "-h", help="This help; nclab theory NAME --help: NAME's parameters."
    ),
) -> None:
    """Print a closed-form prediction, e.g. nclab theory fc-thm1 --nc 3 --nw 1200 --L 15 --K 1000 --lam 1e-3"""
    if help_ and name is None:
        print(ctx.get_help())
        return
    if list_ or name is None:
        _list(json)
        return
    fn = get_prediction(name)
    if help_:
        print(help_text(name, fn, summary_line(fn)))
        return
    params = parse_params(fn, list(ctx.args))
    try:
        pred = fn(**params)
    except TheoryError as exc:
        raise TheoryError(as_options(str(exc), inspect.signature(fn).parameters)) from None
    out = {"name": name, "params": params, "prediction": pred.to_dict()}
    if json:
        # JSON writes non-finite numbers as null; say which of them are infinite (a bound too
        # large for a float) rather than undefined
        if nonfinite := non_finite(out["prediction"]):
            out["non_finite"] = nonfinite
        emit_json(out)
        return
    from ..tables import kv_table

    flat = {}
    for k, v in out["prediction"].items():
        flat[k] = v if not isinstance(v, list | dict) else str(v)
    title = f"{name} " + " ".join(f"{option(k)} {v}" for k, v in params.items())
    console().print(kv_table(flat, title=title, key="quantity"))


def _list(json: bool) -> None:
    """``nclab theory --list``: every prediction, its first sentence and its options."""
    rows = {}
    for pname in PREDICTIONS:
        try:
            fn = get_prediction(pname)
            names = list(inspect.signature(fn).parameters)
            rows[pname] = {
                "params": names,
                "options": [option(p) for p in names],
                "doc": summary_line(fn),
            }
        except TheoryError as exc:
            rows[pname] = {"params": [], "options": [], "doc": f"(unavailable: {exc})"}
    if json:
        emit_json(rows)
        return
    for pname, r in rows.items():
        print(f"{pname}: {r['doc']}\n  {' '.join(r['options'])}")
    print("\nnclab theory NAME --help: NAME's parameters, with their meaning and defaults.")
