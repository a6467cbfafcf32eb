"""The registry of the papers' claims that ``nclab reproduce`` runs and judges.

A :class:`Claim` names one or more runs (an experiment and a preset, quick and full), the quantities
read from their ``summary.json``, what the paper reports, what the theory predicts (a key of the
summary, since every experiment writes the theory's values beside its measurements) and a list of
checks. Each paper's claims live in ``nclab/experiments/claims/<paper>.py`` as a list ``CLAIMS``.

Paths into a summary are dotted keys, optionally prefixed by the run alias: ``"main:metrics.nc1"``,
``"h_star:test_acc"``. A bare path refers to the alias ``"main"``.

Verdicts: every check passes -> ``"reproduced"``; some pass -> ``"partial"``; none ->
``"not reproduced"``; a run raised -> ``"failed"``; the claim needs a GPU for the requested mode ->
``"not run: needs GPU"``.
"""

from __future__ import annotations

import fnmatch
import importlib
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..errors import ConfigError

CLAIM_MODULES = (
    "nclab.experiments.claims.tirer_bruna",
    "nclab.experiments.claims.sukenik",
    "nclab.experiments.claims.feature_collapse",
    "nclab.experiments.claims.jacot",
)

REPRODUCED, PARTIAL, NOT_REPRODUCED, FAILED, NEEDS_GPU = (
    "reproduced",
    "partial",
    "not reproduced",
    "failed",
    "not run: needs GPU",
)


@dataclass(frozen=True)
class RunSpec:
    """One run a claim needs: an experiment with a quick and a full preset.

    ``set`` adds ``--set`` overrides common to both; ``full_needs_gpu`` marks full presets that are
    GPU work (the quick preset always runs on a CPU); ``seeds`` is the default number of seeds.
    """

    experiment: str
    quick: str | None
    full: str
    set: Mapping[str, Any] = field(default_factory=dict)
    full_needs_gpu: bool = False
    seeds: int = 1

    def preset(self, mode: str) -> str | None:
        return self.quick if mode == "quick" else self.full


def lookup(summaries: Mapping[str, Mapping[str, Any]], path: str) -> Any:
    """Value at ``alias:dotted.path`` in the run summaries (``KeyError`` if absent)."""
    alias, _, key = path.rpartition(":")
    node: Any = summaries[alias or "main"]
    for part in key.split("."):
        if isinstance(node, Mapping) and part in node:
            node = node[part]
        elif isinstance(node, list) and part.lstrip("-").isdigit():
            node = node[int(part)]
        else:
            raise KeyError(path)
    return node


def lookup_std(summaries: Mapping[str, Mapping[str, Any]], path: str) -> Any:
    """The std over seeds of ``path`` (from the summary's ``std`` tree), or None."""
    alias, _, key = path.rpartition(":")
    try:
        return lookup(summaries, f"{alias}:std.{key}" if alias else f"std.{key}")
    except KeyError:
        return None


@dataclass(frozen=True)
class Check:
    """A pass/fail test on the summaries.

    Comparisons: ``op`` in ``<=, <, >=, >, ==`` against ``value`` (a number) or ``ref`` (another
    path), with an optional relative tolerance ``rtol`` (|a - b| <= rtol |b|, with op ``"~"``) or an
    offset ``margin`` (a >= b + margin). Or a custom ``predicate(summaries) -> bool``.
    """

    describe: str
    path: str | None = None
    op: str = "<="
    value: float | None = None
    ref: str | None = None
    rtol: float | None = None
    margin: float = 0.0
    predicate: Callable[[Mapping[str, Mapping[str, Any]]], bool] | None = None

    def evaluate(self, summaries: Mapping[str, Mapping[str, Any]]) -> tuple[bool, str]:
        """(passed, detail). A missing key fails the check with the key named."""
        try:
            if self.predicate is not None:
                return bool(self.predicate(summaries)), self.describe
            a = float(lookup(summaries, self.path))
            b = float(lookup(summaries, self.ref)) if self.ref is not None else float(self.value)
        except KeyError as exc:
            return False, f"{self.describe}: missing {exc.args[0]!r} in the summary"
        except (TypeError, ValueError):
            return False, f"{self.describe}: a value is not a number"
        if not (math.isfinite(a) and math.isfinite(b)):
            return False, f"{self.describe}: non-finite value"
        if self.op == "~":
            ok = abs(a - b) <= (self.rtol or 0.0) * abs(b)
        elif self.op == "<=":
            ok = a <= b + self.margin
        elif self.op == "<":
            ok = a < b + self.margin
        elif self.op == ">=":
            ok = a >= b + self.margin
        elif self.op == ">":
            ok = a > b + self.margin
        elif self.op == "==":
            ok = a == b
        else:
            raise ConfigError(f"unknown check operator {self.op!r}")
        return ok, f"{self.describe}: {a:.6g} {self.op} {b:.6g}" + (
            f" (margin {self.margin:g})" if self.margin else ""
        )


@dataclass(frozen=True)
class Claim:
    """One claim of a paper, as ``nclab reproduce`` runs and judges it.

    ``measured`` / ``theory`` map a label to a summary path; ``paper`` maps a label to the paper's
    value (a number or a short text). ``quick_seconds`` / ``full_seconds`` are runtime estimates on
    2 CPU cores (full: on the hardware it needs).
    """

    id: str
    paper: str
    where: str
    claim: str
    runs: Mapping[str, RunSpec]
    measured: Mapping[str, str]
    checks: Sequence[Check]
    paper_values: Mapping[str, Any] = field(default_factory=dict)
    theory: Mapping[str, str] = field(default_factory=dict)
    quick_seconds: float = 60.0
    full_seconds: float = 600.0
    note: str = ""

    def needs_gpu(self, mode: str) -> bool:
        return mode == "full" and any(r.full_needs_gpu for r in self.runs.values())

    def runnable(self, mode: str) -> bool:
        return all(r.preset(mode) is not None for r in self.runs.values())


def verdict(claim: Claim, summaries: Mapping[str, Mapping[str, Any]]) -> tuple[str, list[dict]]:
    """Judge a claim on its run summaries: (verdict, per-check results).

    A summary marked ``{"failed": True}`` makes the verdict ``"failed"``, whatever the checks say.
    """
    for alias in claim.runs:
        s = summaries.get(alias)
        if s is None or s.get("failed"):
            why = (s or {}).get("error", "no summary")
            return FAILED, [{"check": f"run {alias!r} failed", "passed": False, "detail": why}]
    results = []
    for chk in claim.checks:
        ok, detail = chk.evaluate(summaries)
        results.append({"check": chk.describe, "passed": ok, "detail": detail})
    n_ok = sum(r["passed"] for r in results)
    if results and n_ok == len(results):
        return REPRODUCED, results
    if n_ok:
        return PARTIAL, results
    return NOT_REPRODUCED, results


def all_claims() -> list[Claim]:
    """Every registered claim (from the modules of :data:`CLAIM_MODULES` that exist)."""
    claims: list[Claim] = []
    for mod in CLAIM_MODULES:
        try:
            module = importlib.import_module(mod)
        except ModuleNotFoundError as exc:
            if exc.name == mod:
                continue
            raise
        claims.extend(module.CLAIMS)
    ids = [c.id for c in claims]
    dup = {i for i in ids if ids.count(i) > 1}
    if dup:
        raise ConfigError(f"duplicate claim ids: {sorted(dup)}")
    return claims


def select(patterns: Sequence[str], claims: Sequence[Claim] | None = None) -> list[Claim]:
    """Claims whose id matches any of the glob patterns (all claims when none is given)."""
    claims = list(claims if claims is not None else all_claims())
    if not patterns:
        return claims
    out = [c for c in claims if any(fnmatch.fnmatchcase(c.id, p) for p in patterns)]
    if not out:
        raise ConfigError(
            f"no claim matches {', '.join(patterns)}; claims: " + ", ".join(c.id for c in claims)
        )
    return out
