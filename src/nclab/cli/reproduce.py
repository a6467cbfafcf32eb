"""``nclab reproduce``, ``nclab sweep`` and ``nclab report``."""

from __future__ import annotations

from pathlib import Path

import typer

from ._app import JSON_OPT, app, console, emit_json

BACKEND_OPT = typer.Option("local", "--backend", help="local (process pool) or ray.")
WORKERS_OPT = typer.Option(None, "--workers", "-w", help="Parallel runs (default: the CPU cores).")
ADDRESS_OPT = typer.Option(None, "--address", help="Ray cluster address (default: a local Ray).")


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
                },
                "full": {
                    "presets": full_preset,
                    "seconds": c.full_seconds,
                    "needs_gpu": c.needs_gpu("full"),
                },
            }
        )
    return rows


def _fmt_secs(s: float) -> str:
    if s < 90:
        return f"{s:.0f} s"
    if s < 5400:
        return f"{s / 60:.0f} min"
    return f"{s / 3600:.1f} h"


def claims_markdown(claims) -> str:
    """The claim table as Markdown (docs/reproduce.md embeds it)."""
    lines = ["| id | paper | claim | quick | full |", "|---|---|---|---|---|"]
    for c in claims:
        quick = _fmt_secs(c.quick_seconds) if c.runnable("quick") else "—"
        full = _fmt_secs(c.full_seconds) + (" (GPU)" if c.needs_gpu("full") else "")
        presets = "; ".join(f"`{r.experiment} {r.full}`" for r in c.runs.values())
        lines.append(f"| `{c.id}` | {c.paper}, {c.where} | {c.claim} | {quick} | {full}: {presets} |")
    return "\n".join(lines) + "\n"


def print_results(results, out: Path) -> None:
    """Per claim: verdict, then what the paper reports, the theory predicts and we measured."""
    from rich.markup import escape

    from ..report.reproduce import VERDICT_STYLE, kv, summary_counts

    c = console()
    for r in results:
        color = VERDICT_STYLE.get(r.verdict, "grey50")
        passed = sum(ch["passed"] for ch in r.checks)
        checks = f" ({passed}/{len(r.checks)} checks)" if r.checks else ""
        c.print(f"[bold]{escape(r.id)}[/] [dim]{escape(r.where)}[/] — "
                f"[bold {color}]{escape(r.verdict)}[/]{checks}")
        for label, values, measured in (("paper", r.paper_values, False),
                                        ("theory", r.theory, False),
                                        ("measured", r.measured, True)):
            if values:
                c.print(f"    [dim]{label:>8}[/]  {escape(kv(values, measured))}")
        for ch in r.checks:
            if not ch["passed"]:
                c.print(f"    [red]✗[/] {escape(ch['detail'])}")
        if r.verdict.startswith("not run") and r.command:
            c.print(f"    [dim]run it with:[/] {escape(r.command)}")
    c.print(", ".join(f"{n} {v}" for v, n in summary_counts(results).items())
            + f" — reports: {out / 'report.md'}, {out / 'report.html'}")


@app.command()
def reproduce(
    ids: list[str] = typer.Argument(None, help="Claim ids or globs (default: every claim)."),
    quick: bool = typer.Option(True, "--quick/--full", help="Quick (CPU) or full (paper) presets."),
    seeds: int = typer.Option(None, "--seeds", help="Seeds per run (default: each claim's own)."),
    out: Path = typer.Option(
        None, "--out", "-o", help="Output directory (default runs/reproduce-<mode>)."
    ),
    backend: str = BACKEND_OPT,
    workers: int = WORKERS_OPT,
    address: str = ADDRESS_OPT,
    list_: bool = typer.Option(False, "--list", help="List the claims and exit."),
    markdown: bool = typer.Option(False, "--markdown", help="With --list: a Markdown table."),
    json: bool = JSON_OPT,
) -> None:
    """Run the papers' claims and report paper vs theory vs measured, with a verdict for each."""
    from ..experiments.registry import select

    claims = select(ids or [])
    if list_:
        rows = _claims_table(claims)
        if json:
            emit_json(rows)
            return
        if markdown:
            print(claims_markdown(claims), end="")
            return
        from rich.table import Table

        t = Table(title="claims (nclab reproduce ID to run one)")
        for col in ("id", "paper", "claim", "quick", "full"):
            t.add_column(col, overflow="fold")
        for r, c in zip(rows, claims, strict=True):
            full = _fmt_secs(c.full_seconds) + (" (GPU)" if c.needs_gpu("full") else "")
            quick_s = _fmt_secs(c.quick_seconds) if c.runnable("quick") else "—"
            t.add_row(r["id"], f"{c.paper}, {c.where}", c.claim, quick_s, full)
        console().print(t)
        return
    from ..experiments.reproduce import reproduce as run_reproduce

    mode = "quick" if quick else "full"
    out = out or Path("runs") / f"reproduce-{mode}"
    results = run_reproduce(
        ids or [],
        mode=mode,
        out=out,
        seeds=seeds,
        backend=backend,
        workers=workers,
        address=address,
    )
    if json:
        emit_json(
            [
                {
                    "id": r.id,
                    "verdict": r.verdict,
                    "paper": r.paper_values,
                    "theory": r.theory,
                    "measured": r.measured,
                    "checks": r.checks,
                    "runs": r.runs,
                }
                for r in results
            ]
        )
    else:
        print_results(results, out)


@app.command()
def sweep(
    grid: Path = typer.Argument(..., help="Grid TOML: experiment, preset, [set], [axes]."),
    out: Path = typer.Option(
        None, "--out", "-o", help="Output directory (default runs/sweep-<grid>)."
    ),
    backend: str = BACKEND_OPT,
    workers: int = WORKERS_OPT,
    address: str = ADDRESS_OPT,
    json: bool = JSON_OPT,
) -> None:
    """Run the product of a grid's axes (one run directory each) and aggregate into sweep.csv."""
    from ..experiments.sweep import load_grid, run_sweep

    g = load_grid(grid)
    out = out or Path("runs") / f"sweep-{grid.stem}"
    rows = run_sweep(g, out, backend=backend, workers=workers, address=address)
    if json:
        emit_json(
            {
                "out": str(out),
                "points": len(rows),
                "failed": sum(r["failed"] for r in rows),
                "rows": rows,
            }
        )
        return
    failed = sum(r["failed"] for r in rows)
    console().print(
        f"{len(rows)} runs ({failed} failed): {out / 'sweep.csv'}, figures in {out / 'figures'}"
    )


@app.command()
def report(
    directory: Path = typer.Argument(..., help="A reproduce or sweep output directory."),
    json: bool = JSON_OPT,
) -> None:
    """Re-render the report of a finished reproduce (report.md/html) or sweep (sweep.csv, figures)."""
    from ..errors import RunError
    from ..experiments import reproduce as rep
    from ..experiments import sweep as sw

    if (directory / rep.MANIFEST).is_file():
        from ..report.reproduce import write_reports

        results = rep.judge_dir(directory)
        import json as _json

        mode = _json.loads((directory / rep.MANIFEST).read_text())["mode"]
        write_reports(directory, results, {"mode": mode})
        if json:
            emit_json([r.to_dict() for r in results])
        else:
            print_results(results, directory)
    elif (directory / sw.MANIFEST).is_file():
        rows = sw.aggregate(directory)
        if json:
            emit_json({"rows": rows})
        else:
            console().print(f"{len(rows)} runs: {directory / 'sweep.csv'}")
    else:
        raise RunError(
            f"{directory} is neither a reproduce directory ({rep.MANIFEST}) nor a sweep "
            f"directory ({sw.MANIFEST})"
        )
