"""``nclab reproduce --list``: the claims one line each, in full (``--verbose``), as a Markdown
table (``--markdown``) or as data (``--json``), and the papers' statement inventory
(``--statements``)."""

from __future__ import annotations

from ._app import console, emit_json


def _claims_table(claims) -> list[dict]:
    rows = []
    for c in claims:
        quick_preset = {a: r.quick for a, r in c.runs.items()}
        full_preset = {a: r.full for a, r in c.runs.items()}
        rows.append(
            {
                "id": c.id,
                "paper": c.paper,
                "where": c.where,
                "claim": c.claim,
                "quick": {
                    "presets": quick_preset,
                    "seconds": c.quick_seconds,
                    "runnable": c.runnable("quick"),
                    "instance": c.instance("quick"),
                },
                "full": {
                    "presets": full_preset,
                    "seconds": c.full_seconds,
                    "needs_gpu": c.needs_gpu("full"),
                    "instance": c.instance("full"),
                },
                "checks": [{"name": k.name, "description": k.describe} for k in c.checks],
            }
        )
    return rows


def list_claims(
    claims, json: bool, markdown: bool, verbose: bool = False, statements: bool = False
) -> None:
    """``nclab reproduce --list``: one line per claim; JSON, a Markdown table or (``--verbose``) a
    rich table of everything; with ``--statements``, the statement inventory instead
    (:func:`_list_statements`)."""
    from ..report.claims_report import claims_markdown, fmt_secs, instance_label

    if statements:
        _list_statements(claims, json, markdown)
        return
    rows = _claims_table(claims)
    if json:
        emit_json(rows)
        return
    if markdown:
        print(claims_markdown(claims), end="")
        return
    if not verbose:
        print(compact_claims(claims, fmt_secs))
        return
    from rich.table import Table

    t = Table(title="claims (nclab reproduce ID to run one)")
    for col in ("id", "paper", "claim", "quick", "full"):
        t.add_column(col, overflow="fold")
    for r, c in zip(rows, claims, strict=True):
        full = fmt_secs(c.full_seconds) + (" (GPU)" if c.needs_gpu("full") else "")
        quick_s = fmt_secs(c.quick_seconds) if c.runnable("quick") else "—"
        if c.runnable("quick"):
            quick_s += f" ({instance_label(r['quick']['instance'])})"
        full += f" ({instance_label(r['full']['instance'])})"
        t.add_row(r["id"], f"{c.paper}, {c.where}", c.claim, quick_s, full)
    console().print(t)


def _list_statements(claims, json: bool, markdown: bool) -> None:
    """``nclab reproduce --list --statements``: per paper, each statement's id, location, short
    quote and the claims that test it or ``not covered: <reason>``; with claim ids or globs, the
    statements those claims test. ``--json``: the inventory as data; ``--markdown``:
    docs/statements.md."""
    from ..reproduce import statements as inventory
    from ..reproduce.registry import all_claims

    chosen = {c.id for c in claims}
    every = len(chosen) == len(all_claims())
    picked = [s for s in inventory.STATEMENTS if every or chosen & set(s.claims)]
    if json:
        emit_json(
            {
                "statements": inventory.rows(picked),
                "counts": inventory.coverage_counts(picked),
                "outside": inventory.OUTSIDE,
            }
        )
        return
    if markdown:
        print(inventory.markdown(picked), end="")
        return
    lines = []
    counts = inventory.coverage_counts(picked)
    for paper, group in inventory.by_paper(picked).items():
        if not group:
            continue
        lines.append(f"{inventory.PAPERS[paper]}: {inventory.counts_line(counts[paper])}")
        for s in group:
            lines.append(f"  {s.id}  [{s.where}]")
            lines.append(f"      {inventory.short(s.quote)}")
            lines.append(f"      -> {inventory.short(inventory.tested_by(s), 200)}")
    lines.append(f"all: {inventory.counts_line(counts['all'])}")
    lines.append(
        "nclab reproduce --list --statements --json: the inventory as data; docs/statements.md"
    )
    print("\n".join(lines))


def _paper_setting(claim, mode: str) -> bool:
    """Whether ``mode`` runs the paper's setting (a mode without a preset runs nothing)."""
    return not claim.runnable(mode) or claim.instance(mode).startswith("paper setting")


def compact_claims(claims, fmt_secs, width: int = 80) -> str:
    """One line per claim, at most ``width`` columns: id, quick and full run times (``*`` not the
    paper's setting: a smaller instance or our own, ``GPU``), where in the paper, cut to what is
    left."""
    cells = []
    for c in claims:
        quick = fmt_secs(c.quick_seconds) if c.runnable("quick") else "—"
        full = ("GPU " if c.needs_gpu("full") else "") + fmt_secs(c.full_seconds)
        star = {m: " " if _paper_setting(c, m) else "*" for m in ("quick", "full")}
        cells.append((c.id, quick + star["quick"], full + star["full"], " ".join(c.where.split())))
    head = ("claim", "quick ", "full ", "in the paper")
    w = [max(len(r[i]) for r in [head, *cells]) for i in range(3)]
    lines = []
    for cid, quick, full, where in [head, *cells]:
        line = f"{cid:<{w[0]}}  {quick:>{w[1]}}  {full:>{w[2]}}  "
        room = width - len(line)
        lines.append(line + (where if len(where) <= room else where[: max(room - 1, 0)] + "…"))
    lines.append(
        "* not the paper's setting: a smaller instance, or our own\n"
        "nclab reproduce ID: run one claim (--full: the paper's presets)\n"
        "nclab reproduce --list --verbose: papers, claims, instances in full; --json: all"
    )
    return "\n".join(lines)
