"""Reports of ``nclab reproduce``: ``report.md``, a self-contained ``report.html`` and ``report.json``.

Each claim shows its verdict (with the instance it was judged on, when it was not the paper's
setting) and a table of its checks: name, value read, threshold applied, passed. Also the claim
table of ``nclab reproduce --list --markdown`` (docs/reproduce.md embeds it), with each mode's
instance. Claims and results are read by attribute only: this module imports nothing from
:mod:`nclab.reproduce`.
"""

from __future__ import annotations

import base64
import html
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ..runs import dumps
from ..tables import fmt

VERDICT_STYLE = {
    "reproduced": "#1b7f3a",
    "partial": "#b07000",
    "not reproduced": "#b00020",
    "failed": "#b00020",
}


def fmt_value(v: Any) -> str:
    if v is None:
        return "—"
    if isinstance(v, list):
        return "[" + ", ".join(fmt_value(x) for x in v[:6]) + (", …" if len(v) > 6 else "") + "]"
    return fmt(v)


def fmt_measured(m: Mapping[str, Any]) -> str:
    mean, std = m.get("mean"), m.get("std")
    if isinstance(mean, int | float) and isinstance(std, int | float) and std > 0:
        return f"{fmt_value(mean)} ± {fmt_value(std)}"
    return fmt_value(mean)


def kv(d: Mapping[str, Any], measured: bool = False) -> str:
    if not d:
        return "—"
    return "; ".join(f"{k}: {fmt_measured(v) if measured else fmt_value(v)}" for k, v in d.items())


def instance_label(instance: str) -> str:
    """A claim's instance as the reports name it: ``"smaller: X"`` reads ``"smaller instance: X"``,
    the rest (``"paper setting..."``, ``"our instance: ..."``) as it is.

    >>> instance_label("smaller: model.d 32 (paper: 100)")
    'smaller instance: model.d 32 (paper: 100)'
    """
    if instance.startswith("smaller: "):
        return "smaller instance: " + instance.removeprefix("smaller: ")
    return instance


def verdict_text(r: Any) -> str:
    """The verdict as the reports show it, e.g. ``reproduced (smaller instance: digits, Adam)``."""
    return getattr(r, "verdict_text", r.verdict)


def check_cells(c: Mapping[str, Any]) -> tuple[str, str, str, str]:
    """(mark, name, value, threshold) of one check outcome."""
    mark = "✅" if c["passed"] else "❌"
    name = c.get("name") or c.get("check", "")
    return mark, name, fmt_value(c.get("value")), fmt_value(c.get("threshold"))


def _md_cell(text: str) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def checks_markdown(checks: Sequence[Mapping[str, Any]]) -> list[str]:
    """A Markdown table of check outcomes (mark, name, value, threshold, detail)."""
    if not checks:
        return []
    lines = ["| | check | value | threshold | detail |", "|---|---|---|---|---|"]
    for c in checks:
        mark, name, value, threshold = check_cells(c)
        lines.append(
            f"| {mark} | `{name}` | {_md_cell(value)} | {_md_cell(threshold)} | "
            f"{_md_cell(c.get('detail', ''))} |"
        )
    return lines


def summary_counts(results: Sequence[Any]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for r in results:
        counts[r.verdict] = counts.get(r.verdict, 0) + 1
    return counts


def render_markdown(out: Path, results: Sequence[Any], meta: Mapping[str, Any]) -> str:
    lines = [f"# nclab reproduce — {meta.get('mode', '')} presets", ""]
    counts = summary_counts(results)
    lines.append(
        ", ".join(f"{n} {v}" for v, n in counts.items())
        + (f" · {meta['seconds']:.0f} s" if meta.get("seconds") else "")
    )
    lines += ["", "| claim | paper | theory | measured | verdict |", "|---|---|---|---|---|"]
    for r in results:
        lines.append(
            f"| `{r.id}` ({r.where}) | {kv(r.paper_values)} | {kv(r.theory)} | "
            f"{kv(r.measured, True)} | **{verdict_text(r)}** |"
        )
    for r in results:
        lines += ["", f"## {r.id}", "", f"*{r.paper}, {r.where}.* {r.claim}", ""]
        lines += [f"Verdict: **{verdict_text(r)}**", ""]
        if r.note:
            lines += [f"Note: {r.note}", ""]
        lines += checks_markdown(r.checks)
        if r.runs:
            lines += [
                "",
                "Runs: " + ", ".join(f"`{os.path.relpath(d, out)}`" for d in r.runs.values()),
            ]
        if r.command:
            lines += ["", f"Command: `{r.command}`"]
        for f in r.figures:
            lines += ["", f"![{Path(f).stem}]({os.path.relpath(f, out)})"]
    return "\n".join(lines) + "\n"


CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,Helvetica,Arial,sans-serif;margin:2em;color:#222}
table{border-collapse:collapse;width:100%;font-size:14px}
th,td{border:1px solid #ccc;padding:6px 8px;vertical-align:top;text-align:left}
th{background:#f3f3f3} code{font-size:13px} .v{font-weight:bold}
img{max-width:100%;border:1px solid #ddd;margin:6px 0} .ok{color:#1b7f3a} .no{color:#b00020}
"""


def _img(path: str) -> str:
    data = base64.b64encode(Path(path).read_bytes()).decode()
    return f'<img alt="{html.escape(Path(path).stem)}" src="data:image/png;base64,{data}">'


def _checks_html(checks: Sequence[Mapping[str, Any]]) -> str:
    e = html.escape
    if not checks:
        return ""
    rows = []
    for c in checks:
        _, name, value, threshold = check_cells(c)
        cls = "ok" if c["passed"] else "no"
        rows.append(
            f"<tr class='{cls}'><td>{'✓' if c['passed'] else '✗'}</td><td><code>{e(name)}</code>"
            f"</td><td>{e(value)}</td><td>{e(threshold)}</td><td>{e(c.get('detail', ''))}</td></tr>"
        )
    head = "<tr><th></th><th>check</th><th>value</th><th>threshold</th><th>detail</th></tr>"
    return f"<table class='checks'>{head}{''.join(rows)}</table>"


def render_html(results: Sequence[Any], meta: Mapping[str, Any]) -> str:
    e = html.escape
    counts = summary_counts(results)
    rows = []
    for r in results:
        color = VERDICT_STYLE.get(r.verdict, "#666")
        rows.append(
            f"<tr><td><a href='#{e(r.id)}'><code>{e(r.id)}</code></a><br>{e(r.where)}</td>"
            f"<td>{e(kv(r.paper_values))}</td><td>{e(kv(r.theory))}</td>"
            f"<td>{e(kv(r.measured, True))}</td>"
            f"<td class='v' style='color:{color}'>{e(verdict_text(r))}</td></tr>"
        )
    sections = []
    for r in results:
        checks = _checks_html(r.checks)
        figs = "".join(_img(f) for f in r.figures if Path(f).is_file())
        note = f"<p>Note: {e(r.note)}</p>" if r.note else ""
        cmd = f"<p>Command: <code>{e(r.command)}</code></p>" if r.command else ""
        sections.append(
            f"<h2 id='{e(r.id)}'>{e(r.id)}</h2><p><i>{e(r.paper)}, {e(r.where)}.</i> "
            f"{e(r.claim)}</p><p>Verdict: <b>{e(verdict_text(r))}</b></p>{note}{checks}{cmd}{figs}"
        )
    head = ", ".join(f"{n} {e(v)}" for v, n in counts.items())
    secs = f" · {meta['seconds']:.0f} s" if meta.get("seconds") else ""
    return (
        f"<!doctype html><html><head><meta charset='utf-8'><title>nclab reproduce</title>"
        f"<style>{CSS}</style></head><body><h1>nclab reproduce — {e(str(meta.get('mode', '')))}"
        f" presets</h1><p>{head}{secs}</p><table><tr><th>claim</th><th>paper</th><th>theory</th>"
        f"<th>measured (mean ± std over seeds)</th><th>verdict</th></tr>{''.join(rows)}</table>"
        f"{''.join(sections)}</body></html>\n"
    )


def write_reports(
    out: str | Path, results: Sequence[Any], meta: Mapping[str, Any]
) -> dict[str, Path]:
    """Write report.md, report.html and report.json into ``out``; returns their paths."""
    out = Path(out)
    paths = {"md": out / "report.md", "html": out / "report.html", "json": out / "report.json"}
    paths["md"].write_text(render_markdown(out, results, meta))
    paths["html"].write_text(render_html(results, meta))
    paths["json"].write_text(
        dumps({"meta": dict(meta), "claims": [r.to_dict() for r in results]}, indent=2) + "\n"
    )
    return paths


def fmt_secs(s: float) -> str:
    if s < 90:
        return f"{s:.0f} s"
    if s < 5400:
        return f"{s / 60:.0f} min"
    return f"{s / 3600:.1f} h"


def claims_markdown(claims: Sequence[Any]) -> str:
    """The claim table as Markdown (docs/reproduce.md embeds it).

    ``quick`` and ``full`` give the runtime, the presets and the instance each runs
    (``c.instance(mode)``: the paper's setting and what the paper leaves open, or what differs).
    """
    lines = ["| id | paper | claim | checks | quick | full |", "|---|---|---|---|---|---|"]
    for c in claims:
        quick = fmt_secs(c.quick_seconds) if c.runnable("quick") else "—"
        if c.runnable("quick"):
            quick += f" ({instance_label(c.instance('quick'))})"
        full = fmt_secs(c.full_seconds) + (" (GPU)" if c.needs_gpu("full") else "")
        full += ": " + "; ".join(f"`{r.experiment} {r.full}`" for r in c.runs.values())
        full += f" ({instance_label(c.instance('full'))})"
        checks = ", ".join(f"`{chk.name}`" for chk in c.checks)
        lines.append(
            f"| `{c.id}` | {c.paper}, {c.where} | {c.claim} | {checks} | {quick} | {full} |"
        )
    return "\n".join(lines) + "\n"
