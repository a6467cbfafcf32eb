"""``report.html`` of ``nclab reproduce``: self-contained (figures embedded as base64 PNG, no
external URL, no JavaScript, a small stylesheet); laid out as :mod:`.claims_report` describes."""

from __future__ import annotations

import base64
import html
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ...verdicts import Outcome, Why
from . import views
from .evidence_figure import CAPTION as EVIDENCE_CAPTION

CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,Helvetica,Arial,sans-serif;margin:2em auto;
max-width:1400px;padding:0 1em;color:#222;line-height:1.4}
table{border-collapse:collapse;width:100%;font-size:14px;margin:.6em 0}
th,td{border:1px solid #ddd;padding:5px 7px;vertical-align:top;text-align:left}
th{background:#f4f4f4;position:sticky;top:0} code{font-size:12.5px} small{color:#555}
tr.paper td{background:#fafafa;font-weight:600;color:#444}
.b{display:inline-block;min-width:8.5em;padding:3px 7px;border-radius:5px;border:1px solid;
font-size:13px;line-height:1.25}
.b small{display:block;color:inherit;opacity:.85}
.ok{color:#1b7f3a} .part{color:#8a5200} .contra{color:#b00020} .inc{color:#5e35b1}
.gpu{color:#3949ab} .run{color:#00695c} .none{color:#888}
.b.ok{background:#e7f4ea;border-color:#9bd0a9} .b.part{background:#fff3dc;border-color:#e9c27a}
.b.contra{background:#fde8eb;border-color:#f0a3ae}
.b.inc{background:#efe9f8;border-color:#b39ddb}
.b.gpu{background:#eef0fb;border-color:#c5cae9} .b.run{background:#e0f2f1;border-color:#80cbc4}
.b.none{background:#f5f5f5;border-color:#e0e0e0}
.v{font-weight:700} .sum span{font-weight:700}
.num{font-size:13px} .num b{font-variant-numeric:tabular-nums} .ref{color:#666}
td.st{font-size:13px;white-space:nowrap} tr.sanity td{background:#fbfbfb;color:#555}
.figs img{max-width:48%;border:1px solid #ddd;margin:4px}
section{border-top:2px solid #eee;margin-top:2em}
"""


def _img(path: str) -> str:
    data = base64.b64encode(Path(path).read_bytes()).decode()
    return f'<img alt="{html.escape(Path(path).stem)}" src="data:image/png;base64,{data}">'


def _html_badge(sd: Mapping[str, Any] | None, scale: str) -> str:
    e = html.escape
    cls, word, seeds, why = views.badge(sd)
    tip = f"{scale}: {word}" + (f" — {why}" if why else "")
    if sd and sd.get("source"):
        tip += f" (from {'the ledger' if sd['source'] == 'ledger' else 'this run'})"
    lines = [f"<b>{e(word)}</b>"]
    if seeds:
        lines.append(f"<small>{e(seeds)}</small>")
    if why and cls not in ("ok", "gpu", "run", "none"):
        lines.append(f"<small>{e(views.cut(why, 48))}</small>")
    return f"<span class='b {cls}' title='{e(tip)}'>{''.join(lines)}</span>"


def _html_headline(r: Any) -> str:
    """The headline, each part in the colour of its kind (an outcome, or why a scale is not
    run)."""
    parts = r.headline_parts or [(r.outcome, r.headline or r.outcome)]
    return "; ".join(
        f"<span class='v {views.kind_class(k)}'>{html.escape(t)}</span>" for k, t in parts
    )


def _overview_html(results: Sequence[Any]) -> str:
    e = html.escape
    rows, paper = [], None
    for r in results:
        if r.paper != paper:
            paper = r.paper
            rows.append(f"<tr class='paper'><td colspan='6'>{e(paper)}</td></tr>")
        kind, first = r.headline_parts[0] if r.headline_parts else (r.outcome, r.outcome)
        nums, left = views.headline_numbers(r)
        cell = "".join(
            f"<div>{e(lab)} <b>{e(val)}</b>"
            + (f" <span class='ref'>({e(ref)})</span>" if ref else "")
            + "</div>"
            for lab, val, ref in nums
        )
        if left:
            cell += f"<div class='ref'>{e(left)}</div>"
        badges = "".join(f"<td>{_html_badge(r.scales.get(s), s)}</td>" for s in views.SCALES)
        rows.append(
            f"<tr><td><a href='#{e(r.id)}'><code>{e(r.id)}</code></a><br>"
            f"<small>{e(views.cut(r.where, 70))}</small></td>"
            f"<td title='{e(r.headline)}'><span class='v {views.kind_class(kind)}'>{e(first)}"
            f"</span><br><small>{e(views.cut(r.statement, 200))}</small></td>"
            f"{badges}<td class='num'>{cell or '—'}</td></tr>"
        )
    head = (
        "<thead><tr><th>claim</th><th>headline</th><th>quick</th><th>medium</th><th>full</th>"
        "<th>largest scale judged (mean ± std over seeds) vs the paper</th></tr></thead>"
    )
    return f"<table class='overview'>{head}<tbody>{''.join(rows)}</tbody></table>"


def _ladder_html(r: Any, out: Path, meta: Mapping[str, Any]) -> str:
    e = html.escape
    rows = []
    for s, sd in views.ladder_entries(r):
        source = e(sd.get("source") or "—")
        prov = views.provenance_text(sd)
        if prov:
            source += f"<br><small>{e(prov)}</small>"
        runs = sd.get("runs") or {}
        if runs and sd["outcome"] != Outcome.NOT_RUN:
            where = "<br>".join(
                f"<code>{e(views.where_of(d, out, meta))}</code>" for d in runs.values()
            )
            source += f"<br><small>{where}</small>"
        verdict = _html_badge(sd, s)
        if sd["outcome"] == Outcome.NOT_RUN and views.not_run_why(sd) not in (
            Why.NO_PRESET,
            Why.SAME_RUN,
        ):
            _, word, _, why = views.badge(sd)
            why = f"{why}: " if why and why != word else ""
            verdict += f"<br><small>{e(why)}<code>{e(sd.get('command', ''))}</code></small>"
        rows.append(
            f"<tr><td><b>{s}</b></td><td><code>{e(views.presets_text(sd))}</code></td>"
            f"<td><small>{e(views.instance_label(sd))}</small></td>"
            f"<td>{sd.get('seeds') or '—'}</td><td>{source}</td><td>{verdict}</td></tr>"
        )
    head = (
        "<tr><th>scale</th><th>preset</th><th>instance</th><th>seeds</th><th>source</th>"
        "<th>outcome</th></tr>"
    )
    return f"<table class='ladder'>{head}{''.join(rows)}</table>"


def _checks_html(r: Any) -> str:
    e = html.escape
    judged, rows = views.check_table(r)
    if not rows:
        return ""
    body = [
        f"<tr class='{e(kind)}'><td><code>{e(name)}</code><br><small>{e(desc)}</small></td>"
        f"<td>{e(kind)}</td>{''.join(_check_cell_html(c) for c in outcomes)}</tr>"
        for name, kind, desc, outcomes in rows
    ]
    head = "<tr><th>check</th><th>kind</th>" + "".join(f"<th>{s}</th>" for s in judged) + "</tr>"
    return f"<table class='checks'>{head}{''.join(body)}</table>"


def _check_cell_html(c: Any) -> str:
    e = html.escape
    if c is None:
        return "<td class='st'>—</td>"
    status, seeds, vs = views.check_cell(c)
    return (
        f"<td class='st' title='{e(c.get('detail', ''))}'><span class='b "
        f"{views.STATUS_CLASS[status]}'><b>{views.STATUS_MARK[status]} {status}</b>"
        f"<small>{e(seeds)}</small></span>"
        + (f"<br><small>{e(vs)}</small>" if vs else "")
        + "</td>"
    )


def _values_html(r: Any) -> str:
    e = html.escape
    head, rows = views.value_table(r)
    if not rows:
        return ""
    body = "".join("<tr>" + "".join(f"<td>{e(x)}</td>" for x in row) + "</tr>" for row in rows)
    return (
        "<table class='values'><tr>"
        + "".join(f"<th>{e(h)}</th>" for h in head)
        + f"</tr>{body}</table>"
    )


def _section_html(r: Any, out: Path, meta: Mapping[str, Any], evidence: Path | None = None) -> str:
    e = html.escape
    fs = views.figure_scale(r)
    figs = "".join(_img(f) for f in (r.scales[fs]["figures"] if fs else []) if Path(f).is_file())
    claim_note = f"<p>Note: {e(r.note)}</p>" if r.note else ""
    diag = views.diagnosis_text(r.diagnosis)
    claim_note = (f"<p>Diagnosis: <b>{e(diag)}</b></p>" if diag else "") + claim_note
    cmd = f"<p>Command: <code>{e(r.command)}</code></p>" if r.command else ""
    note, fig_cmd = views.figures_note(r, fs)
    fig_cmd = f" <code>{e(fig_cmd)}</code>" if fig_cmd else ""
    return (
        f"<section id='{e(r.id)}'><h2>{e(r.id)}</h2><p><i>{e(r.paper)}, {e(r.where)}.</i> "
        f"{e(r.claim)}</p><p>Headline: {_html_headline(r)}</p>{claim_note}"
        f"<h3>Ladder</h3>{_ladder_html(r, out, meta)}"
        f"<h3>Checks per scale</h3>{_checks_html(r) or '<p>No check was judged.</p>'}"
        f"{_evidence_html(evidence)}"
        f"<h3>Values</h3>{_values_html(r) or '<p>—</p>'}{cmd}"
        f"<h3>Figures</h3><p>{e(note)}{fig_cmd}</p><div class='figs'>{figs}</div>"
        "</section>"
    )


def _evidence_html(evidence: Path | None) -> str:
    if evidence is None or not Path(evidence).is_file():
        return ""
    # inline (the page stays one file), without the namespace HTML does not need
    svg = Path(evidence).read_text().replace(' xmlns="http://www.w3.org/2000/svg"', "", 1)
    return f"<div class='figs'>{svg}</div><p>{html.escape(EVIDENCE_CAPTION)}</p>"


def render_html(
    results: Sequence[Any],
    meta: Mapping[str, Any],
    out: Path | None = None,
    evidence: Mapping[str, Path] | None = None,
) -> str:
    """report.html; ``evidence``: the claims' evidence figures by id (:mod:`.evidence_figure`)."""
    e = html.escape
    out = Path(out) if out is not None else Path(".")
    counts = views.summary_counts(results)
    head = ", ".join(
        f"<span class='v {views.kind_class(v)}'>{n} {e(v)}</span>" for v, n in counts.items()
    )
    per_paper = "".join(
        f"<li>{e(p)}: {e(', '.join(f'{n} {v}' for v, n in c.items()))}</li>"
        for p, c in views.paper_counts(results).items()
    )
    secs = f" · {views.fmt_secs(meta['seconds'])}" if meta.get("seconds") else ""
    ledger = f" · ledger: <code>{e(str(meta['ledger']))}</code>" if meta.get("ledger") else ""
    sections = "".join(_section_html(r, out, meta, (evidence or {}).get(r.id)) for r in results)
    said = meta.get("statements")
    statements = f"<p>The papers' statements: {e(said)}.</p>" if said else ""
    return (
        f"<!doctype html><html lang='en'><head><meta charset='utf-8'><title>{e(views.title(meta))}"
        f"</title><style>{CSS}</style></head><body><h1>{e(views.title(meta))}</h1>"
        f"<p class='sum'><b>{views.n_claims(results)}:</b> {head}{secs}</p><ul>{per_paper}</ul>"
        f"<p>Scales judged — {e(views.sources_text(views.scale_sources(results)))}{ledger}.</p>{statements}"
        f"{_overview_html(results)}{sections}</body></html>\n"
    )
