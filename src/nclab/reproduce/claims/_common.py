"""What the claim modules of several papers share (it declares no claims): the one run of a claim
on a proof's statement, which the paper runs on no network of its own.
"""

from __future__ import annotations

from ...experiments.protocol import Validity
from ..registry import RunSpec


def main_run(
    experiment: str, quick: str, full: str, no_paper: str, *valid: Validity
) -> dict[str, RunSpec]:
    """A claim's one run (alias ``main``): ``experiment`` at its ``quick`` and ``full`` presets,
    neither of them the paper's setting (``no_paper`` says why); ``valid``: what makes one of its
    seeds valid evidence (none given: the experiment's declared validity)."""
    validity = tuple(valid) if valid else None
    return {
        "main": RunSpec(experiment, quick=quick, full=full, no_paper=no_paper, validity=validity)
    }
