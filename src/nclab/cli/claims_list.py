"""``nclab reproduce --list``: the claims one line each, in full (``--verbose``), as a Markdown
table (``--markdown``) or as data (``--json``), and the papers' statement inventory
(``--statements``)."""

from __future__ import annotations

from ._app import emit_json


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
                "statement": c.sentence,
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
    """``nclab reproduce --list``: one line per claim with its sentence; JSON, a Markdown table
    or (``--verbose``) a block of plain lines per claim with everything; with ``--statements``,
    the statement inventory instead (:func:`_list_statements`)."""
    from ..reproduce.reports.claims_report import claims_markdown
    from ..tables import fmt_secs

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
        print(compact_claims(claims, fmt_secs, _width()))
        return
    print(verbose_claims(claims, fmt_secs))


def _width() -> int | None:
    """The terminal's width where stdout is one, else None: a file or a pipe gets whole lines."""
    import shutil
    import sys

    if not sys.stdout.isatty():
        return None
    return shutil.get_terminal_size((100, 24)).columns


def verbose_claims(claims, fmt_secs) -> str:
    """``--list --verbose``: a block of plain lines per claim, each field on its own line and
    never cut (the terminal wraps a long one; a file keeps it whole): the id, the paper and
    where, the claim in full, each scale's runtime, presets and instance, the checks."""
    out = []
    for c in claims:
        out.append(f"{c.id} — {c.paper}, {' '.join(c.where.split())}")
        out.append(f"    claim: {' '.join(c.claim.split())}")
        for mode in ("quick", "medium", "full"):
            if not c.runnable(mode):
                continue
            secs = c.seconds(mode)
            gpu = " on a GPU" if c.needs_gpu(mode) else ""
            presets = ", ".join(f"{s.experiment} {s.preset(mode)}" for s in c.runs.values())
            what = c.instance_of(mode).label
            out.append(f"    {mode}: {fmt_secs(secs)}{gpu}: {presets} ({what})")
        names = [
            k.name
            + {"sanity": " (sanity)", "ours-beyond": " (ours-beyond)"}.get(k.kind, "")
            + (" (threshold ours)" if k.ours else "")
            for k in c.checks
        ]
        out.append(f"    checks: {', '.join(names)}")
    return "\n".join(out)


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
                "outside": inventory.outside_claims(),
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
    return not claim.runnable(mode) or claim.instance_of(mode).is_paper


def compact_claims(claims, fmt_secs, width: int | None = 80) -> str:
    """One line per claim: id, quick and full run times (``*`` not the paper's setting: a
    smaller instance or our own, ``GPU``), where in the paper; then the claim's first sentence,
    indented. ``width``: where a terminal is that wide, the "where" column is cut to fit; None
    (output to a file or a pipe) cuts nothing."""
    cells = []
    for c in claims:
        quick = fmt_secs(c.quick_seconds) if c.runnable("quick") else "—"
        full = ("GPU " if c.needs_gpu("full") else "") + fmt_secs(c.full_seconds)
        star = {m: " " if _paper_setting(c, m) else "*" for m in ("quick", "full")}
        cells.append(
            (c.id, quick + star["quick"], full + star["full"], " ".join(c.where.split()), c)
        )
    head = ("claim", "quick ", "full ", "in the paper", None)
    w = [max(len(r[i]) for r in [head, *cells]) for i in range(3)]
    lines = []
    for cid, quick, full, where, claim in [head, *cells]:
        line = f"{cid:<{w[0]}}  {quick:>{w[1]}}  {full:>{w[2]}}  "
        room = None if width is None else width - len(line)
        if room is not None and len(where) > room:
            where = where[: max(room - 1, 0)] + "…"
        lines.append(line + where)
        if claim is not None:
            lines.append(f"    {claim.sentence}")
    lines.append(
        "* not the paper's setting: a smaller instance, or our own\n"
        "nclab reproduce ID: run one claim (--full: the paper's presets)\n"
        "nclab reproduce --list --verbose: papers, claims, instances in full; --json: all"
    )
    return "\n".join(lines)
