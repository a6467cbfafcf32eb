"""What the reports of ``nclab reproduce`` show of a claim's result, as text: the verdict's kind
and colour, the counts by headline verdict and the sources of each scale (the summary line), a
scale's badge (verdict, seeds passing, why), the headline numbers beside the paper's, the ladder's
provenance and presets, the checks per scale and the values table. ``report.md``
(:mod:`.claims_report`), ``report.html`` (:mod:`.report_html`) and the console (``nclab
reproduce``) render the same texts. Results are read by attribute, their scales as dicts: nothing
here imports :mod:`nclab.reproduce`.

Length: every text the three renderers share, one small function each.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ..tables import fmt

SCALES = ("quick", "medium", "full")
REPRODUCED, PARTIAL, NOT_REPRODUCED, FAILED = "reproduced", "partial", "not reproduced", "failed"
NOT_RUN, NEEDS_GPU = "not run", "not run: needs GPU"
RUNNING = "running"  # a not-run scale whose runs are going: its reason starts "running: "
STATEMENT = "statement"

#: the colour of each kind of verdict (:func:`verdict_class`), in the HTML and on the console
VERDICT_STYLE = {
    "ok": "#1b7f3a",
    "part": "#a86400",
    "no": "#b00020",
    "fail": "#7a0019",
    "gpu": "#3949ab",
    "run": "#00695c",
    "none": "#777777",
}
#: a mark per kind of verdict, for Markdown (which has no colour)
MARK = {"ok": "✅", "part": "🟡", "no": "❌", "fail": "⛔", "gpu": "⚪", "run": "⏳", "none": "⚪"}
#: a check's status at a scale, as a mark and as a colour class
STATUS_MARK = {"holds": "✓", "mixed": "±", "fails": "✗"}
STATUS_CLASS = {"holds": "ok", "mixed": "part", "fails": "no"}
#: the order the summary counts verdicts in
ORDER = (REPRODUCED, PARTIAL, NOT_REPRODUCED, "failed (sanity)", FAILED, NEEDS_GPU)


def fmt_value(v: Any) -> str:
    if v is None:
        return "—"
    if isinstance(v, list):
        return "[" + ", ".join(fmt_value(x) for x in v[:6]) + (", …" if len(v) > 6 else "") + "]"
    return fmt(v)


def fmt_measured(m: Any) -> str:
    """``mean ± std`` of a measured value (``{mean, std}``), or the value alone."""
    if not isinstance(m, Mapping):
        return fmt_value(m)
    mean, std = m.get("mean"), m.get("std")
    if isinstance(mean, int | float) and isinstance(std, int | float) and std > 0:
        return f"{fmt_value(mean)} ± {fmt_value(std)}"
    return fmt_value(mean)


def fmt_secs(s: float) -> str:
    if s < 90:
        return f"{s:.0f} s"
    if s < 5400:
        return f"{s / 60:.0f} min"
    return f"{s / 3600:.1f} h"


def cut(text: str, n: int) -> str:
    return text if len(text) <= n else text[: n - 1].rstrip() + "…"


def instance_label(instance: str) -> str:
    """A claim's instance as the reports name it: ``"smaller: X"`` reads ``"smaller instance: X"``,
    the rest (``"paper setting..."``, ``"our instance: ..."``) as it is.

    >>> instance_label("smaller: model.d 32 (paper: 100)")
    'smaller instance: model.d 32 (paper: 100)'
    """
    if instance.startswith("smaller: "):
        return "smaller instance: " + instance.removeprefix("smaller: ")
    return instance


def verdict_class(verdict: str) -> str:
    """``ok``, ``part``, ``no``, ``fail``, ``gpu``, ``run`` (running) or ``none`` (not run) for a
    verdict text (or a headline's part).

    >>> [verdict_class(v) for v in ("reproduced", "failed (sanity: x)", "not run: needs GPU")]
    ['ok', 'fail', 'gpu']
    >>> verdict_class("running at paper size (1/3 units finished)")
    'run'
    """
    if verdict.startswith(REPRODUCED):
        return "ok"
    if verdict.startswith(PARTIAL):
        return "part"
    if verdict.startswith(NOT_REPRODUCED):
        return "no"
    if verdict.startswith(FAILED):
        return "fail"
    if verdict.startswith(RUNNING):
        return "run"
    return "gpu" if "GPU" in verdict else "none"


def headline_group(verdict: str) -> str:
    """The verdict as the summary counts it: every ``failed (sanity: <names>)`` together."""
    return "failed (sanity)" if verdict.startswith(f"{FAILED} (sanity") else verdict


def summary_counts(results: Sequence[Any]) -> dict[str, int]:
    """The claims counted by their headline verdict, in :data:`ORDER` (then the others).

    ``{"reproduced": 31, "partial": 9, "failed (sanity)": 1, "not run: needs GPU": 4}``
    """
    counts: dict[str, int] = {}
    for r in results:
        g = headline_group(r.verdict)
        counts[g] = counts.get(g, 0) + 1
    rank = {v: i for i, v in enumerate(ORDER)}
    return dict(sorted(counts.items(), key=lambda kv: (rank.get(kv[0], len(ORDER)), kv[0])))


def n_claims(results: Sequence[Any]) -> str:
    """``"48 claims"`` (``"1 claim"``)."""
    return f"{len(results)} claim" + ("" if len(results) == 1 else "s")


def counts_text(counts: Mapping[str, int]) -> str:
    """``"31 reproduced, 9 partial, 1 failed (sanity)"``."""
    return ", ".join(f"{n} {v}" for v, n in counts.items())


def not_run_why(sd: Mapping[str, Any]) -> str:
    """A not-run scale's kind: ``needs GPU``, ``no preset``, ``running`` (its runs are going) or
    ``not run``."""
    why = sd.get("reason", "")
    if why.startswith(f"{RUNNING}: "):
        return RUNNING
    if "GPU" in why:
        return "needs GPU"
    return "no preset" if why.startswith("no ") and why.endswith(" preset") else NOT_RUN


def scale_sources(results: Sequence[Any]) -> dict[str, dict[str, int]]:
    """Per scale, how many claims were judged from ``this run`` and from the ``ledger``, and how
    many were not (``not run``, ``needs GPU``, ``no preset``)."""
    out: dict[str, dict[str, int]] = {}
    for s in SCALES:
        c: dict[str, int] = {}
        for r in results:
            sd = r.scales.get(s)
            if sd is None:
                continue
            if sd["verdict"] == NOT_RUN:
                key = not_run_why(sd)
            else:
                key = sd.get("source") or NOT_RUN
            c[key] = c.get(key, 0) + 1
        order = ("this run", "ledger", RUNNING, NOT_RUN, "needs GPU", "no preset")
        out[s] = {k: c[k] for k in order if k in c}
    return out


def sources_text(sources: Mapping[str, Mapping[str, int]]) -> str:
    """``"quick: 48 from this run; medium: 30 from the ledger, 18 not run, 2 without a preset;
    full: 12 from the ledger, 10 need a GPU, 26 not run"``."""
    words = {
        "this run": "from this run",
        "ledger": "from the ledger",
        "needs GPU": "need a GPU",
        "no preset": "without a preset",
    }
    parts = []
    for s, c in sources.items():
        if c:
            parts.append(f"{s}: " + ", ".join(f"{n} {words.get(k, k)}" for k, n in c.items()))
    return "; ".join(parts)


def summary(results: Sequence[Any]) -> dict[str, Any]:
    """What report.json carries beside the claims: the number of claims, the counts by headline
    verdict and where each scale's verdicts come from."""
    return {
        "claims": len(results),
        "counts": summary_counts(results),
        "scales": scale_sources(results),
    }


def seeds_passing(sd: Mapping[str, Any]) -> tuple[int, int]:
    """(seeds on which every statement check passes, seeds judged one by one) at a scale; (0, 0)
    when no check could be judged per seed (the summary holds the mean only)."""
    stmt = [c for c in sd.get("checks", []) if c.get("kind", STATEMENT) == STATEMENT]
    per = [c.get("per_seed") or [] for c in stmt]
    n = max((len(p) for p in per), default=0)
    if not n or not any(x is not None for p in per for x in p):
        return 0, 0
    ok = sum(all(p[i] is not False for p in per if i < len(p)) for i in range(n))
    return ok, n


def _seeds(n: int) -> str:
    return f"{n} seed" + ("" if n == 1 else "s")


def badge(sd: Mapping[str, Any] | None) -> tuple[str, str, str, str]:
    """(class, verdict word, seeds text, detail) of one scale's badge.

    Judged: the verdict, ``"2/3 seeds"`` (seeds on which every statement check passes) and, where
    the verdict is not "reproduced", why (the failing checks with their seed counts). Not judged:
    ``not run``, ``needs GPU``, ``no preset`` or ``running`` (with how far its runs got), and why.
    """
    if sd is None:
        return "none", "no preset", "", ""
    v = sd["verdict"]
    if v == NOT_RUN:
        why = not_run_why(sd)
        reason = sd.get("reason", "").removeprefix(f"{NOT_RUN}: ")
        if why == RUNNING:  # "running: 1/3 units finished, seed-1 at step 1500 of 10000, as of ..."
            going = reason.removeprefix(f"{RUNNING}: ")
            return "run", why, going.split(", ")[0], going
        return ("gpu" if why == "needs GPU" else "none"), why, "", reason
    cls = verdict_class(v)
    if v.startswith(FAILED):
        word = FAILED if v == FAILED else f"{FAILED} (sanity)"
        return cls, word, _seeds(sd["seeds"]) if sd.get("seeds") else "", sd.get("reason", "")
    ok, n = seeds_passing(sd)
    seeds = f"{ok}/{n} seeds" if n else (f"{_seeds(sd['seeds'])}, mean" if sd.get("seeds") else "")
    return cls, v, seeds, sd.get("reason", "")


def ladder_entries(r: Any) -> list[tuple[str, Mapping[str, Any]]]:
    """The ladder's rows: (scale label, scale result) for each scale of the claim, then each
    scale of each variant (``"medium, with the paper's weight decay 5e-4"``)."""
    rows = [(s, r.scales[s]) for s in SCALES if s in r.scales]
    for label, by_scale in (getattr(r, "variants", None) or {}).items():
        rows += [(f"{s}, with {label}", by_scale[s]) for s in SCALES if s in by_scale]
    return rows


def figure_scale(r: Any) -> str:
    """The largest scale with figures ('' when none has any)."""
    for s in reversed(SCALES):
        if r.scales.get(s, {}).get("figures"):
            return s
    return ""


def headline_parts(text: str) -> list[str]:
    """The headline split at ``"; "`` outside parentheses (a part's reason may hold one).

    >>> headline_parts("partial at medium size (a fails 2/3 seeds; b fails); reproduced at quick size")
    ['partial at medium size (a fails 2/3 seeds; b fails)', 'reproduced at quick size']
    """
    parts, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        depth += {"(": 1, ")": -1}.get(ch, 0)
        if depth == 0 and text.startswith("; ", i):
            parts.append(text[start:i])
            start = i + 2
    return [*parts, text[start:]]


def headline_numbers(r: Any, k: int = 3) -> tuple[list[tuple[str, str, str]], str]:
    """Up to ``k`` measured values of the largest judged scale for the overview, each as (label,
    measured, what to read it against: ``"paper: ..."`` or ``"theory: ..."``, else ''): first those
    the paper gives a value for, then those the theory does, then the others in the claim's
    order (scalars; not a spread, "... (std over seeds)"). Also a paper value none of them stands
    beside ('' when one does)."""
    chosen: list[tuple[str, str, str]] = []
    measured = {
        label: m
        for label, m in (r.measured or {}).items()
        if isinstance(m, Mapping) and _scalar(m.get("mean")) and "(std over" not in label
    }
    paper, theory = r.paper_values or {}, r.theory or {}

    def ref(label: str) -> str:
        if label in paper:
            return f"paper: {fmt_value(paper[label])}"
        if theory.get(label) is not None:
            return f"theory: {fmt_value(theory[label])}"
        return ""

    ranked = (
        [lab for lab in measured if lab in paper]
        + [lab for lab in measured if lab not in paper and theory.get(lab) is not None]
        + [lab for lab in measured if lab not in paper and theory.get(lab) is None]
    )
    for label in ranked[:k]:
        chosen.append((label, fmt_measured(measured[label]), ref(label)))
    left = ""
    if not any(c[2].startswith("paper") for c in chosen) and paper:
        label, value = next(iter(paper.items()))
        left = cut(f"paper: {label}: {fmt_value(value)}", 90)
    return chosen, left


def _scalar(v: Any) -> bool:
    return isinstance(v, bool | int | float) or (isinstance(v, str) and len(v) <= 24)


def provenance_text(sd: Mapping[str, Any]) -> str:
    """``"a1b2c3d, 2025-03-01, 12 min"``: the commits (``+dirty``) and dates of a scale's runs,
    and their wall time in all."""
    provs = [p for p in (sd.get("provenance") or {}).values() if p]
    commits: list[str] = []
    for p in provs:
        c = (p.get("commit") or "unknown")[:7] + ("+dirty" if p.get("dirty") else "")
        if c not in commits:
            commits.append(c)
    dates = sorted({(p.get("started") or "")[:10] for p in provs} - {""})
    secs = [p.get("seconds") for p in provs if isinstance(p.get("seconds"), int | float)]
    parts = [", ".join(commits)] if commits else []
    if dates:
        parts.append(dates[0] if len(dates) == 1 else f"{dates[0]} – {dates[-1]}")
    if secs:
        parts.append(fmt_secs(sum(secs)))
    return ", ".join(parts)


def presets_text(sd: Mapping[str, Any]) -> str:
    """``"demo tiny"``, or ``"main: deep-ln a; const: deep-ln b"`` for a claim of several runs."""
    presets = sd.get("presets") or {}
    if not presets:
        return "—"
    if len(presets) == 1:
        return next(iter(presets.values()))
    return "; ".join(f"{a}: {p}" for a, p in presets.items())


def check_rows(r: Any) -> list[tuple[str, str, str, dict[str, Mapping[str, Any]]]]:
    """(name, kind, description, {scale: outcome}) of every check at any judged scale, the
    statement checks first, each in the claim's order."""
    rows: dict[str, tuple[str, str, dict]] = {}
    for s in SCALES:
        sd = r.scales.get(s)
        if not sd or sd["verdict"] == NOT_RUN:
            continue
        for c in sd.get("checks", []):
            name = c.get("name") or c.get("check", "")
            kind = c.get("kind", STATEMENT)
            desc = c.get("description") or c.get("check", "")
            origin = threshold_origin(c)
            desc += f" ({origin})" if origin else ""
            rows.setdefault(name, (kind, desc, {}))[2][s] = c
    out = [(n, k, d, by) for n, (k, d, by) in rows.items()]
    return sorted(out, key=lambda row: row[1] != STATEMENT)


def threshold_origin(c: Mapping[str, Any]) -> str:
    """Where a check's threshold comes from, as its outcome carries it: ``"threshold ours:
    <reason>"`` for a value we chose, ``"threshold: the paper's (<where>)"``, else ``""``."""
    if c.get("ours"):
        return f"threshold ours: {c['ours']}"
    if c.get("source"):
        return f"threshold: the paper's ({c['source']})"
    return ""


def status_of(c: Mapping[str, Any]) -> str:
    return c.get("status") or ("holds" if c.get("passed") else "fails")


def check_cell(c: Mapping[str, Any]) -> tuple[str, str, str]:
    """(status, seeds text, value vs threshold) of one check at one scale."""
    n, ok = c.get("seeds_judged") or 0, c.get("seeds_passed") or 0
    seeds = f"{ok}/{n} seeds" if n else "mean"
    if c.get("value") is None and c.get("threshold") is None:
        vs = ""
    else:
        ours = ", ours" if c.get("ours") else ""
        vs = f"{fmt_value(c.get('value'))} (threshold {fmt_value(c.get('threshold'))}{ours})"
    return status_of(c), seeds, vs


def value_table(r: Any) -> tuple[list[str], list[list[str]]]:
    """(header, rows) of the values of the largest judged scale beside the paper's and the
    theory's: a row per label the claim gives a value for, ``"—"`` where it gives none; the paper
    and theory columns only where the claim has such values."""
    labels = list(dict.fromkeys([*r.measured, *r.theory, *r.paper_values]))
    at = f" ({r.scale} size)" if r.scale else ""
    cols = [("paper", r.paper_values, fmt_value), ("theory", r.theory, fmt_value)]
    cols = [c for c in cols if c[1]] + [(f"measured{at}", r.measured, fmt_measured)]
    rows = [
        [label] + [show(d[label]) if label in d else "—" for _, d, show in cols] for label in labels
    ]
    return ["quantity"] + [c[0] for c in cols], rows


def title(meta: Mapping[str, Any]) -> str:
    mode = meta.get("mode")
    if not mode or mode == "ledger":
        return "nclab reproduce — judged on the ledger"
    return f"nclab reproduce — {mode} runs, the other scales from the ledger"


def where_of(path: str, out: Path, meta: Mapping[str, Any]) -> str:
    """A run directory relative to the report, a ledger record relative to the ledger's folder."""
    p = Path(path)
    for base in (out, Path(meta["ledger"]).parent if meta.get("ledger") else None):
        if base is not None:
            try:
                return str(Path(os.path.abspath(p)).relative_to(os.path.abspath(base)))
            except ValueError:
                pass
    return os.path.relpath(p, out) if not p.is_absolute() else str(p)


def figures_note(r: Any, fs: str) -> tuple[str, str]:
    """Which scale's figures a section shows, or why it shows none: (text, the command that
    draws them, or '')."""
    top = r.scale
    if fs and fs == top:
        return f"Figures of the {fs} runs (made by this reproduce).", ""
    if fs:
        return (
            f"Figures of the {fs} runs (made by this reproduce); the {top} evidence is ledger "
            "records, which keep no figures.",
            "",
        )
    if not top:
        return "No figures: nothing was judged.", ""
    sd = r.scales[top]
    if sd.get("source") == "ledger":
        return (
            f"No figures: the {top} evidence is ledger records, which keep no figures; "
            "this command runs it again and draws them:",
            sd.get("command", ""),
        )
    return "No figures: these runs draw none.", ""
