"""Reports of ``nclab reproduce``: ``report.md``, a self-contained ``report.html`` and ``report.json``.

A claim is judged at every scale (quick, medium, full) the evidence covers
(:mod:`nclab.reproduce.judge`); the reports are laid out for a reader who scans first and reads
one claim after:

* a **summary line**: the claims counted by their headline verdict
  (:func:`~.views.summary_counts`), and per scale where its verdicts come from: this run, the
  ledger, or not run (:func:`~.views.scale_sources`);
* an **overview**, one row per claim: its headline verdict (coloured), a badge per scale (the
  verdict there and the seeds passing, "3/3 seeds", with the failing checks' seed counts; "not
  run", "needs GPU" and "no preset" greyed: :func:`~.views.badge`) and two or three measured values
  of the largest judged scale beside the paper's (:func:`~.views.headline_numbers`);
* a **section** per claim: the claim, the paper and where, the headline, the ladder (scale,
  presets, instance, seeds, source with its provenance, verdict), the checks per scale (holds,
  mixed or fails with the seeds passing; statement checks apart from sanity checks), the measured
  and theory values of the largest judged scale beside the paper's, and the figures of the largest
  scale that has figures (runs made by this reproduce: ledger records carry none).

``report.md`` (here) holds the same as Markdown, ``report.html`` (:mod:`.report_html`) embeds its
figures (base64 PNG), loads nothing and needs no JavaScript; ``report.json`` holds the results
(``to_dict``) and the summary (:func:`~.views.summary`). Also the claim table of ``nclab reproduce
--list --markdown`` (docs/reproduce.md embeds it). Claims and results are read by attribute
(results' scales as dicts): the report package imports nothing from :mod:`nclab.reproduce`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ...runs import dumps
from ...verdicts import Outcome, Why
from .evidence_figure import CAPTION as EVIDENCE_CAPTION
from .evidence_figure import FOLDER as EVIDENCE_FOLDER
from .evidence_figure import draw_all
from .report_html import render_html
from .views import (
    MARK,
    SCALES,
    STATUS_MARK,
    badge,
    check_cell,
    check_table,
    counts_text,
    cut,
    diagnosis_text,
    figure_scale,
    figures_note,
    fmt_secs,
    headline_numbers,
    instance_label,
    kind_class,
    ladder_entries,
    n_claims,
    not_run_why,
    paper_counts,
    presets_text,
    provenance_text,
    scale_sources,
    sources_text,
    summary,
    summary_counts,
    title,
    value_table,
    where_of,
)

__all__ = ["claims_markdown", "fmt_secs", "instance_label", "render_markdown", "write_reports"]


def _md(text: Any) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def _md_badge(sd: Mapping[str, Any] | None) -> str:
    cls, word, seeds, why = badge(sd)
    if cls in ("gpu", "none"):
        return f"{MARK[cls]} {word}"
    text = f"{MARK[cls]} {word}" + (f" · {seeds}" if seeds else "")
    return text + (f" ({cut(why, 60)})" if why and cls != "run" else "")


def render_markdown(
    out: Path,
    results: Sequence[Any],
    meta: Mapping[str, Any],
    evidence: Mapping[str, Path] | None = None,
) -> str:
    """report.md; ``evidence``: the claims' evidence figures by id (:mod:`.evidence_figure`)."""
    counts = summary_counts(results)
    secs = f" · {fmt_secs(meta['seconds'])}" if meta.get("seconds") else ""
    lines = [f"# {title(meta)}", ""]
    lines += [f"**{n_claims(results)}: {counts_text(counts)}**{secs}", ""]
    for paper, c in paper_counts(results).items():
        lines += [f"- {paper}: {counts_text(c)}"]
    lines += [""]
    lines += [f"Scales judged — {sources_text(scale_sources(results))}.", ""]
    if meta.get("statements"):
        lines += [f"The papers' statements: {meta['statements']}.", ""]
    lines += [
        "| claim | headline | quick | medium | full | largest scale judged vs the paper |",
        "|---|---|---|---|---|---|",
    ]
    for r in results:
        kind, first = r.headline_parts[0] if r.headline_parts else (r.outcome, r.outcome)
        head = f"{MARK[kind_class(kind)]} **{_md(first)}**"
        if r.statement:
            head += f"<br>{_md(cut(r.statement, 160))}"
        nums, left = headline_numbers(r)
        cell = "; ".join(
            f"{lab} **{val}**" + (f" ({ref})" if ref else "") for lab, val, ref in nums
        )
        cell = "; ".join(x for x in (cell, left) if x) or "—"
        badges = " | ".join(_md(_md_badge(r.scales.get(s))) for s in SCALES)
        lines.append(f"| [`{r.id}`](#{_anchor(r.id)}) | {head} | {badges} | {_md(cell)} |")
    for r in results:
        lines += _md_section(out, r, meta, (evidence or {}).get(r.id))
    return "\n".join(lines) + "\n"


def _anchor(cid: str) -> str:
    """The anchor GitHub gives the ``## <id>`` heading."""
    return "".join(ch for ch in cid.lower() if ch.isalnum() or ch in "-_ ").replace(" ", "-")


def _md_section(
    out: Path, r: Any, meta: Mapping[str, Any], evidence: Path | None = None
) -> list[str]:
    lines = ["", f"## {r.id}", "", f"*{r.paper}, {r.where}.* {r.claim}", ""]
    lines += [f"Headline: **{r.headline or r.outcome}**", ""]
    if r.diagnosis:
        lines += [f"Diagnosis: {diagnosis_text(r.diagnosis)}", ""]
    if r.note:
        lines += [f"Note: {r.note}", ""]
    lines += [
        "| scale | preset | instance | seeds | source | outcome |",
        "|---|---|---|---|---|---|",
    ]
    for s, sd in ladder_entries(r):
        source = sd.get("source") or "—"
        prov = provenance_text(sd)
        if prov:
            source += f" ({prov})"
        cls, word, _, why = badge(sd)
        v = _md_badge(sd)
        if (
            sd["outcome"] == Outcome.NOT_RUN
            and sd.get("command")
            and not_run_why(sd)
            not in (
                Why.NO_PRESET,
                Why.SAME_RUN,
            )
        ):
            v = f"{MARK[cls]} {word}" + (f" ({why})" if why else "") + f": `{sd['command']}`"
        lines.append(
            f"| {s} | {_md(presets_text(sd))} | {_md(instance_label(sd))} | "
            f"{sd.get('seeds') or '—'} | {_md(source)} | {_md(v)} |"
        )
    lines += _md_checks(r)
    if evidence is not None:
        lines += ["", f"![evidence]({where_of(str(evidence), out, meta)})", "", EVIDENCE_CAPTION]
    head, rows = value_table(r)
    if rows:
        lines += ["", "| " + " | ".join(head) + " |", "|---" * len(head) + "|"]
        lines += ["| " + " | ".join(_md(x) for x in row) + " |" for row in rows]
    for s in SCALES:
        sd = r.scales.get(s) or {}
        if sd.get("outcome", Outcome.NOT_RUN) != Outcome.NOT_RUN and sd.get("runs"):
            where = ", ".join(f"`{where_of(d, out, meta)}`" for d in sd["runs"].values())
            lines += ["", f"Runs at {s} size: {where}"]
    if r.command:
        lines += ["", f"Command: `{r.command}`"]
    fs = figure_scale(r)
    note, cmd = figures_note(r, fs)
    lines += ["", note + (f" `{cmd}`" if cmd else "")]
    for f in r.scales[fs]["figures"] if fs else []:
        lines += ["", f"![{Path(f).stem}]({where_of(f, out, meta)})"]
    return lines


def _md_checks(r: Any) -> list[str]:
    """The checks per scale: status, seeds, value against threshold, and why an untestable one
    cannot be evidence."""
    lines: list[str] = []
    judged, rows = check_table(r)
    if rows:
        lines += ["", "| check | kind | " + " | ".join(judged) + " |"]
        lines.append("|---|---|" + "---|" * len(judged))
        for name, kind, desc, outcomes in rows:
            cells = [_md_cell(c) for c in outcomes]
            lines.append(
                f"| `{name}` — {_md(desc)} | {kind} | " + " | ".join(_md(x) for x in cells) + " |"
            )
    return lines


def _md_cell(c: Any) -> str:
    if c is None:
        return "—"
    status, seeds, vs = check_cell(c)
    return f"{STATUS_MARK[status]} {status} {seeds}" + (f": {vs}" if vs else "")


def write_reports(
    out: str | Path, results: Sequence[Any], meta: Mapping[str, Any]
) -> dict[str, Path]:
    """Write report.md, report.html and report.json into ``out``; returns their paths."""
    out = Path(out)
    paths = {"md": out / "report.md", "html": out / "report.html", "json": out / "report.json"}
    evidence = draw_all(results, out / EVIDENCE_FOLDER)
    paths["md"].write_text(render_markdown(out, results, meta, evidence))
    paths["html"].write_text(render_html(results, meta, out, evidence))
    data = {
        "meta": dict(meta),
        "summary": summary(results),
        "claims": [r.to_dict() for r in results],
    }
    paths["json"].write_text(dumps(data, indent=2) + "\n")
    return paths


def claims_markdown(claims: Sequence[Any]) -> str:
    """The claim table as Markdown (docs/reproduce.md embeds it).

    ``quick`` and ``full`` give the runtime, the presets and the instance each runs
    (``c.instance(mode)``: the paper's setting and what the paper leaves open, or what differs);
    a check whose threshold we chose is marked "(threshold ours)".
    """
    lines = ["| id | paper | claim | checks | quick | full |", "|---|---|---|---|---|---|"]
    for c in claims:
        quick = fmt_secs(c.quick_seconds) if c.runnable("quick") else "—"
        if c.runnable("quick"):
            quick += f" ({c.instance_of('quick').label})"
        full = fmt_secs(c.full_seconds) + (" (GPU)" if c.needs_gpu("full") else "")
        full += ": " + "; ".join(f"`{r.experiment} {r.full}`" for r in c.runs.values())
        full += f" ({c.instance_of('full').label})"
        checks = ", ".join(
            f"`{chk.name}`" + (" (threshold ours)" if getattr(chk, "ours", "") else "")
            for chk in c.checks
        )
        lines.append(
            f"| `{c.id}` | {c.paper}, {c.where} | {c.claim} | {checks} | {quick} | {full} |"
        )
    return "\n".join(lines) + "\n"
