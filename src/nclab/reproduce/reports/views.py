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

from ...tables import fmt, fmt_secs
from ...verdicts import SCALES, Outcome, Why
from ..instance import label as label_of_instance

RUNNING = Why.RUNNING.value
STATEMENT = "statement"

#: the colour of each kind of badge (:func:`kind_class`), in the HTML and on the console
VERDICT_STYLE = {
    "ok": "#1b7f3a",
    "part": "#a86400",
    "contra": "#b00020",
    "inc": "#5e35b1",
    "gpu": "#3949ab",
    "run": "#00695c",
    "none": "#777777",
}
#: a mark per kind of badge, for Markdown (which has no colour)
MARK = {
    "ok": "✅",
    "part": "🟡",
    "contra": "❌",
    "inc": "❔",
    "gpu": "⚪",
    "run": "⏳",
    "none": "⚪",
}
#: a check's status at a scale, as a mark and as a colour class
STATUS_MARK = {"holds": "✓", "mixed": "±", "fails": "✗", "untestable": "?"}
STATUS_CLASS = {"holds": "ok", "mixed": "part", "fails": "contra", "untestable": "inc"}
#: the order the summary counts outcomes in
ORDER = tuple(o.value for o in Outcome)
#: the badge class of each outcome and of the not-run reasons that have their own
CLASS = {
    Outcome.REPRODUCED: "ok",
    Outcome.PARTIAL: "part",
    Outcome.CONTRADICTED: "contra",
    Outcome.INCONCLUSIVE: "inc",
    Why.RUNNING: "run",
    Why.NEEDS_GPU: "gpu",
}


def fmt_value(v: Any) -> str:
    """A value as the reports show it: booleans as words (``yes`` / ``no``), numbers to four
    significant digits, lists cut after six entries.

    >>> fmt_value(True), fmt_value(False), fmt_value(0.123456), fmt_value(None)
    ('yes', 'no', '0.1235', '—')
    """
    if v is None:
        return "—"
    if isinstance(v, bool):
        return "yes" if v else "no"
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


def cut(text: str, n: int) -> str:
    return text if len(text) <= n else text[: n - 1].rstrip() + "…"


def instance_label(sd: Mapping[str, Any]) -> str:
    """A scale's instance (``instance``, of the kind ``instance_kind``) as the reports name it
    (:func:`nclab.reproduce.instance.label`: a smaller one reads ``"smaller instance: X"``).

    >>> instance_label({"instance": "smaller: model.d 32 (paper: 100)", "instance_kind": "smaller"})
    'smaller instance: model.d 32 (paper: 100)'
    """
    return label_of_instance(sd.get("instance", ""), sd.get("instance_kind", ""))


def kind_class(kind: str) -> str:
    """The badge class (``ok``, ``part``, ``contra``, ``inc``, ``run``, ``gpu``, ``none``) of a
    kind: an :class:`~nclab.verdicts.Outcome` value, or why a scale is not run (a
    :class:`~nclab.verdicts.Why` value).

    >>> [kind_class(k) for k in ("reproduced", "contradicted", "needs a GPU", "not in the ledger")]
    ['ok', 'contra', 'gpu', 'none']
    """
    return CLASS.get(kind, "none")


def scale_kind(sd: Mapping[str, Any]) -> str:
    """A scale's kind: its outcome where judged, else why it is not run."""
    if sd.get("outcome", Outcome.NOT_RUN) != Outcome.NOT_RUN:
        return sd["outcome"]
    return not_run_why(sd)


def summary_counts(results: Sequence[Any]) -> dict[str, int]:
    """The claims counted by their headline outcome, every outcome in :data:`ORDER`.

    ``{"reproduced": 31, "partial": 9, "contradicted": 1, "inconclusive": 5, "not run": 4}``
    """
    counts = dict.fromkeys(ORDER, 0)
    for r in results:
        counts[Outcome(r.outcome).value] += 1
    return counts


def paper_counts(results: Sequence[Any]) -> dict[str, dict[str, int]]:
    """Per paper, the claims counted by their headline outcome (every outcome)."""
    out: dict[str, dict[str, int]] = {}
    for r in results:
        c = out.setdefault(r.paper, dict.fromkeys(ORDER, 0))
        c[Outcome(r.outcome).value] += 1
    return out


def n_claims(results: Sequence[Any]) -> str:
    """``"48 claims"`` (``"1 claim"``)."""
    return f"{len(results)} claim" + ("" if len(results) == 1 else "s")


def counts_text(counts: Mapping[str, int]) -> str:
    """``"31 reproduced, 9 partial, 0 contradicted, 2 inconclusive, 4 not run"``."""
    return ", ".join(f"{n} {v}" for v, n in counts.items())


def not_run_why(sd: Mapping[str, Any]) -> str:
    """Why a scale is not run: its first reason's kind (a :class:`~nclab.verdicts.Why` value:
    ``needs a GPU``, ``no preset``, ``running``, ``same run``, ``not in the ledger``, ...)."""
    reasons = sd.get("reasons") or []
    return reasons[0]["why"] if reasons else Why.NOT_IN_LEDGER.value


def scale_sources(results: Sequence[Any]) -> dict[str, dict[str, int]]:
    """Per scale, how many claims were judged from ``this run`` and from the ``ledger``, and why
    the others were not (a :class:`~nclab.verdicts.Why` value each)."""
    out: dict[str, dict[str, int]] = {}
    for s in SCALES:
        c: dict[str, int] = {}
        for r in results:
            sd = r.scales.get(s)
            if sd is None:
                continue
            judged = sd["outcome"] != Outcome.NOT_RUN
            key = (sd.get("source") or Why.NOT_IN_LEDGER.value) if judged else not_run_why(sd)
            c[key] = c.get(key, 0) + 1
        first = ("this run", "ledger")
        out[s] = {k: c[k] for k in [*first, *sorted(set(c) - set(first))] if k in c}
    return out


#: how the summary line words each source or reason
SOURCE_WORDS = {
    "this run": "from this run",
    "ledger": "from the ledger",
    Why.NEEDS_GPU.value: "need a GPU",
    Why.NO_PRESET.value: "without a preset",
    Why.SAME_RUN.value: "the same run as a larger scale",
    Why.NOT_IN_LEDGER.value: "not in the ledger",
}


def sources_text(sources: Mapping[str, Mapping[str, int]]) -> str:
    """``"quick: 48 from this run; medium: 30 from the ledger, 18 not in the ledger, 2 without a
    preset; full: 12 from the ledger, 10 need a GPU"``."""
    parts = []
    for s, c in sources.items():
        if c:
            parts.append(
                f"{s}: " + ", ".join(f"{n} {SOURCE_WORDS.get(k, k)}" for k, n in c.items())
            )
    return "; ".join(parts)


def summary(results: Sequence[Any]) -> dict[str, Any]:
    """What report.json carries beside the claims: the number of claims, the counts by headline
    outcome (all and per paper) and where each scale's outcomes come from."""
    return {
        "claims": len(results),
        "counts": summary_counts(results),
        "papers": paper_counts(results),
        "scales": scale_sources(results),
    }


def seeds_passing(sd: Mapping[str, Any]) -> tuple[int, int]:
    """(seeds on which every statement check passes, valid seeds judged one by one) at a scale;
    (0, 0) when no check could be judged per seed (the summary holds the mean only). A seed no
    check could judge (an invalid one) is not counted."""
    stmt = [c for c in sd.get("checks", []) if c.get("kind", STATEMENT) == STATEMENT]
    per = [c.get("per_seed") or [] for c in stmt]
    n = max((len(p) for p in per), default=0)
    judged = [i for i in range(n) if any(i < len(p) and p[i] is not None for p in per)]
    ok = sum(all(p[i] is not False for p in per if i < len(p)) for i in judged)
    return ok, len(judged)


def _seeds(n: int) -> str:
    return f"{n} seed" + ("" if n == 1 else "s")


def badge(sd: Mapping[str, Any] | None) -> tuple[str, str, str, str]:
    """(class, word, seeds text, detail) of one scale's badge.

    Judged: the outcome, ``"2/3 seeds"`` (valid seeds on which every statement check passes,
    and how many seeds are invalid) and, where it is not "reproduced", why. Not judged: why
    (``needs a GPU``, ``no preset``, ``running`` with how far its runs got, ``same run as full``).
    """
    if sd is None:
        return "none", Why.NO_PRESET.value, "", ""
    if sd["outcome"] == Outcome.NOT_RUN:
        why = not_run_why(sd)
        detail = (sd.get("reasons") or [{}])[0].get("detail", "")
        if why == RUNNING:  # "1/3 units finished, seed-1 at step 1500 of 10000, as of ..."
            return "run", why, detail.split(", ")[0], detail
        if why == Why.SAME_RUN:
            return "none", f"same run as {sd.get('same_as', '')}", "", detail
        return kind_class(why), why, "", detail
    ok, n = seeds_passing(sd)
    bad = len(sd.get("invalid") or [])
    seeds = f"{ok}/{n} seeds" if n else (f"{_seeds(sd['seeds'])}, mean" if sd.get("seeds") else "")
    seeds += f" ({bad} invalid)" if bad else ""
    return kind_class(sd["outcome"]), sd["outcome"], seeds, sd.get("reason", "")


def diagnosis_text(d: Any) -> str:
    """A diagnosis in one line, ``"<kind>: <text>"`` (a :class:`~nclab.verdicts.Diagnosis`, or
    the mapping report.json and a result's scales carry); '' for none."""
    if not d:
        return ""
    if isinstance(d, Mapping):
        return f"{d['kind']}: {d['text']}"
    return d.line()


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
    if not any(c[0] in paper for c in chosen) and paper:  # none stands beside one
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


#: the order of the checks' roles in a claim's check table
ROLE_ORDER = {"statement": 0, "ours-beyond": 1, "sanity": 2}


def check_rows(r: Any) -> list[tuple[str, str, str, dict[str, Mapping[str, Any]]]]:
    """(name, kind, description, {scale: outcome}) of every check at any judged scale: the
    statement checks first, then ours-beyond, then sanity, each in the claim's order."""
    rows: dict[str, tuple[str, str, dict]] = {}
    for s in SCALES:
        sd = r.scales.get(s)
        if not sd or sd["outcome"] == Outcome.NOT_RUN:
            continue
        for c in sd.get("checks", []):
            name = c["name"]
            kind = c.get("kind", STATEMENT)
            desc = c.get("description", "")
            if c.get("reading"):
                desc = f"reading ({c['reading']}) of {c['statement']}: {desc}"
            origin = threshold_origin(c)
            desc += f" ({origin})" if origin else ""
            rows.setdefault(name, (kind, desc, {}))[2][s] = c
    out = [(n, k, d, by) for n, (k, d, by) in rows.items()]
    return sorted(out, key=lambda row: ROLE_ORDER.get(row[1], 3))


def check_table(r: Any) -> tuple[list[str], list[tuple[str, str, str, list[Any]]]]:
    """A claim's check table: the scales that judged a check, and per check (:func:`check_rows`)
    its name, kind, description and outcome at each of those scales (None where it was not
    judged there)."""
    rows = check_rows(r)
    judged = [s for s in SCALES if any(s in by for *_, by in rows)]
    return judged, [(n, k, d, [by.get(s) for s in judged]) for n, k, d, by in rows]


def threshold_origin(c: Mapping[str, Any]) -> str:
    """Where a check's threshold comes from, as its outcome carries it: ``"threshold ours:
    <reason>"`` for a value we chose, ``"threshold: the paper's (<where>)"``, else ``""``."""
    if c.get("ours"):
        why = f" ({c['principle']})" if c.get("principle") else ""
        return f"threshold ours{why}: {c['ours']}"
    if c.get("source"):
        return f"threshold: the paper's ({c['source']})"
    return ""


def status_of(c: Mapping[str, Any]) -> str:
    """A check's status at a scale (a :class:`~nclab.verdicts.Status` value); a check's raw
    evaluation (no status yet) holds or fails by whether it passed."""
    return c.get("status") or ("holds" if c.get("passed") else "fails")


def check_cell(c: Mapping[str, Any]) -> tuple[str, str, str]:
    """(status, seeds text, value vs threshold, and why it cannot be evidence where it is
    untestable) of one check at one scale."""
    n, ok = c.get("seeds_judged") or 0, c.get("seeds_passed") or 0
    seeds = f"{ok}/{n} seeds" if n else "mean"
    if c.get("value") is None and c.get("threshold") is None:
        vs = ""
    elif isinstance(c.get("threshold"), bool | str) and c.get("op") == "==":
        vs = f"{fmt_value(c.get('value'))} (expected {fmt_value(c.get('threshold'))})"
    else:
        ours = ", ours" if c.get("ours") else ""
        vs = f"{fmt_value(c.get('value'))} (threshold {fmt_value(c.get('threshold'))}{ours})"
    blocked = c.get("blocked")
    if blocked:
        vs += f" [{blocked['why']}: {blocked['detail']}]" if blocked.get("detail") else ""
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
