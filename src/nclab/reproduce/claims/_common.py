"""What the claim modules of several papers share (it declares no claims): the one run of a claim
on a proof's statement, which the paper runs on no network of its own, and the constructor of a
paper's claims.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ...experiments.protocol import Validity
from ..registry import Claim, RunSpec


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


def claims_of(paper: str, prefix: str) -> Callable[..., Claim]:
    """The constructor of one paper's claims: ``make(id, where, claim, **fields)`` is
    ``Claim(id=f"{prefix}/{id}", paper=paper, where=where, claim=claim, **fields)``.

    >>> from nclab.reproduce.checks import at_most
    >>> make = claims_of("A paper", "paper")
    >>> c = make("gap", "§1", "It closes.", runs={}, measured={}, checks=[at_most("gap", 0.1)],
    ...          check_paths=False)
    >>> c.id, c.paper
    ('paper/gap', 'A paper')
    """

    def make(id: str, where: str, claim: str, **fields: Any) -> Claim:
        return Claim(id=f"{prefix}/{id}", paper=paper, where=where, claim=claim, **fields)

    return make
