"""``nclab reproduce``: the papers' claims, how they are planned, run, judged and swept.

Modules, one responsibility each (dependencies point one way: cli -> reproduce -> experiments):

* :mod:`~nclab.reproduce.summaries`: paths into run summaries (``lookup``, ``lookup_std``);
* :mod:`~nclab.reproduce.checks`: the structured checks (``Check``, ``Ratio``, ``Equals``);
* :mod:`~nclab.reproduce.registry`: ``Claim``, ``RunSpec``, ``all_claims``, ``select``;
* :mod:`~nclab.reproduce.claims`: one module of claims per paper;
* :mod:`~nclab.reproduce.instance`: a claim's instance text, computed from its presets against
  the paper's setting (``instance_text``, ``paper_preset``);
* :mod:`~nclab.reproduce.plan`: the deduplicated runs a set of claims needs;
* :mod:`~nclab.reproduce.outcomes`: a claim's outcome at one scale (the rules of
  :mod:`nclab.verdicts`);
* :mod:`~nclab.reproduce.judge`: every scale of a claim, ``ClaimResult``, ``judge_dir``;
* :mod:`~nclab.reproduce.runner`: ``reproduce()``, plan + execute + judge + reports;
* :mod:`~nclab.reproduce.backends`: ``Job``, ``execute`` (inline, local process pool, Ray);
* :mod:`~nclab.reproduce.sweep`: ``nclab sweep`` grids.
"""

from .checks import Check, Equals, Ratio
from .judge import judge_dir
from .outcomes import verdict
from .registry import Claim, RunSpec, all_claims, select
from .results import ClaimResult
from .summaries import lookup, lookup_std

__all__ = [
    "Check",
    "Claim",
    "ClaimResult",
    "Equals",
    "Ratio",
    "RunSpec",
    "all_claims",
    "judge_dir",
    "lookup",
    "lookup_std",
    "select",
    "verdict",
]
