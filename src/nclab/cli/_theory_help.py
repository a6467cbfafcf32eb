"""``nclab theory NAME --help``: a prediction's parameters as the command line takes them.

One convention everywhere in ``nclab theory`` (the list, this help and the errors): a parameter is
written as the option it is on the command line, ``--lambda-w`` for the Python ``lambda_w``
(``--lambda_w`` is accepted too). Descriptions come from the function's ``Args:`` section where it
has one, else from :data:`PARAM_HELP`.
"""

from __future__ import annotations

import inspect
import re
import textwrap
import typing
from typing import Any

#: what the parameters shared by several predictions mean (a function's own ``Args:`` wins)
PARAM_HELP = {
    "K": "number of classes",
    "n": "training samples per class",
    "d": "feature dimension",
    "lambda_w": "weight decay on the classifier W",
    "lambda_h": "weight decay on the features H",
    "lambda_b": "weight decay on the bias b (0: a free bias)",
    "bias": "the bias: 'none', 'free' or 'regularized' (with --lambda-b)",
    "sigma_e": "standard deviation of the noise on the fixed features (sigma_e)",
    "lambda_w2": "weight decay on W_2, the classifier",
    "lambda_w1": "weight decay on W_1, the first layer",
    "lambda_h1": "weight decay on the features H_1",
    "lam": "weight decay λ",
    "nc": "number of concepts",
    "nw": "number of words (nw / nc per concept)",
    "L": "words per sentence (latent length)",
    "mu": "word frequencies, one per word of a concept (nw / nc values)",
    "zipf": "Zipf frequencies μ_β ∝ β^-s",
    "s": "exponent of the Zipf frequencies",
}
#: a prediction's own meaning of a shared name, where it differs
OVERRIDES = {
    "deep-linear-ufm": {
        "L": "number of layers (needed when --lambda-w is one value)",
        "lambda_w": "weight decay per layer, W_1 first and the classifier last, or one for all",
    },
    "fc-thm3": {"d": "embedding dimension (d >= nc)", "lam": "weight decay λ on U"},
    "fc-thm1": {"d": "embedding dimension (optional; d >= nc - 1)"},
}


def option(param: str) -> str:
    """The command-line spelling of a parameter: ``lambda_w`` -> ``--lambda-w``."""
    return "--" + param.replace("_", "-")


#: LaTeX in the docstrings, as plain text
LATEX = {
    r"\le": "≤",
    r"\ge": "≥",
    r"\leq": "≤",
    r"\geq": "≥",
    r"\to": "→",
    r"\infty": "∞",
    r"\cdot": "·",
    r"\times": "×",
    r"\approx": "≈",
    r"\alpha": "α",
    r"\beta": "β",
    r"\gamma": "γ",
    r"\delta": "δ",
    r"\lambda": "λ",
    r"\mu": "μ",
    r"\rho": "ρ",
    r"\tau": "τ",
    r"\theta": "θ",
    r"\kappa": "κ",
    r"\epsilon": "ε",
    r"\varepsilon": "ε",
    r"\sigma": "σ",
    r"\Sigma": "Σ",
    r"\Theta": "Θ",
    r"\Lambda": "Λ",
    r"\ell": "ℓ",
}


def plain(text: str) -> str:
    r"""Docstring text without Sphinx roles, literals and LaTeX commands, on one line.

    >>> plain(r"the norm :math:`\|X\|_{op}`, ``eps1`` :math:`\le \sqrt{N/K}`")
    'the norm ‖X‖_op, eps1 ≤ √(N/K)'
    >>> plain(r"\|\Theta\|_{op} and \kappa(W_{L:\ell})")
    '‖Θ‖_op and κ(W_L:ℓ)'
    """
    text = " ".join(text.split())
    text = re.sub(r":[a-z]+:`~?(?:[\w.]+\.)?([^`]+)`", r"\1", text)
    text = text.replace("\\|", "‖")
    text = re.sub(r"\\sqrt\{([^{}]*)\}", r"√(\1)", text)
    for tex, uni in LATEX.items():
        text = re.sub(re.escape(tex) + r"(?![a-zA-Z])", uni, text)
    text = re.sub(r"\{([^{}]*)\}", r"\1", text)  # {op} -> op (one level)
    return text.replace("``", "").replace("\\", "").replace("  ", " ")


def args_section(fn) -> dict[str, str]:
    """``{param: description}`` from a Google-style ``Args:`` section (``"A, B: ..."`` and
    ``"A or B: ..."`` give both names the description; several entries may share a line)."""
    doc = inspect.getdoc(fn) or ""
    m = re.search(r"^Args:\n((?:[ ]{4}.*\n?|\n)+)", doc, re.M)
    if not m:
        return {}
    entries, current = [], None
    for line in m.group(1).splitlines():
        if re.match(r"^    \S", line):
            current = [line.strip()]
            entries.append(current)
        elif current is not None and line.strip():
            current.append(line.strip())
    names = r"\w+(?:(?:, | or )\w+)*"
    out: dict[str, str] = {}
    for entry in entries:
        text = " ".join(entry)
        # "K: classes. L1, L2: layers." -> two entries
        for part in re.split(rf"(?<=\.)\s+(?={names}: )", text):
            head, sep, desc = part.partition(": ")
            if sep and re.fullmatch(names, head):
                for name in re.split(r", | or ", head):
                    out[name] = plain(desc)
    return out


def _type_name(ann: Any) -> str:
    if isinstance(ann, str):
        return ann.replace("Sequence[float]", "list").replace(" | None", "")
    if typing.get_origin(ann) is not None or isinstance(ann, type | None):
        text = getattr(ann, "__name__", None) or str(ann).replace("typing.", "")
        return text.replace("collections.abc.", "").replace(" | None", "")
    return str(ann)


def parameter_rows(name: str, fn) -> list[tuple[str, str, str, str]]:
    """(option, type, default or "required", description) for every parameter of ``fn``."""
    own = args_section(fn)
    special = OVERRIDES.get(name, {})
    rows = []
    for p, par in inspect.signature(fn).parameters.items():
        default = "required" if par.default is inspect.Parameter.empty else f"{par.default!r}"
        desc = own.get(p) or special.get(p) or PARAM_HELP.get(p, "")
        rows.append((option(p), _type_name(par.annotation).upper(), default, desc))
    return rows


def help_text(name: str, fn, summary: str) -> str:
    """The text of ``nclab theory NAME --help``."""
    rows = parameter_rows(name, fn)
    required = " ".join(f"{o} {t}" for o, t, d, _ in rows if d == "required")
    width = max(len(f"{o} {t}") for o, t, _, _ in rows) if rows else 0
    lines = [
        f"Usage: nclab theory {name} {required} [OPTIONS] [--json]",
        "",
        *textwrap.wrap(plain(summary), 80),
        "",
        "Parameters (--name value; --name=value and --name_with_underscores work too):",
    ]
    for o, t, default, desc in rows:
        where = "required" if default == "required" else f"default {default}"
        text = f"  {f'{o} {t}':<{width}}  {desc + ' ' if desc else ''}[{where}]"
        lines += textwrap.wrap(text, 80, subsequent_indent=" " * (width + 4))
    lines += ["", "  --json  print the prediction as JSON on stdout"]
    return "\n".join(lines)
