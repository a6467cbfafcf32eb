"""The ``nclab`` command. Each verb lives in its own module; heavy imports happen inside commands.

Every verb takes ``--json`` (machine-readable output on stdout; progress and messages on stderr).
Bad input raises an :class:`~nclab.errors.NclabError`: the command prints it in one line and exits 2.
"""

from __future__ import annotations

import sys

from ..errors import NclabError

# registering the verbs (each module adds its commands to ``app``)
from . import evidence as _evidence  # noqa: F401
from . import measure as _measure  # noqa: F401
from . import measure_lm as _measure_lm  # noqa: F401
from . import orchestrate as _orchestrate  # noqa: F401
from . import run as _run  # noqa: F401
from . import theory as _theory  # noqa: F401
from ._app import app, suggest


def main(argv: list[str] | None = None) -> None:
    """Entry point of the ``nclab`` console script."""
    try:
        app(args=argv, prog_name="nclab")
    except NclabError as exc:
        msg = suggest(" ".join(str(exc).split()))
        print(f"nclab: error: {msg}", file=sys.stderr)
        sys.exit(2)
    except KeyboardInterrupt:
        print("nclab: interrupted", file=sys.stderr)
        sys.exit(130)


__all__ = ["app", "main"]
