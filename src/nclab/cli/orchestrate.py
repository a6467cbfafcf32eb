"""``nclab reproduce``, ``nclab sweep`` and ``nclab report`` (the work of :mod:`nclab.reproduce`)."""

from __future__ import annotations

from pathlib import Path

import typer

from ..errors import RunError
from ._app import JSON_OPT, app, console, emit_json
from .claims_list import list_claims

BACKEND_OPT = typer.Option("local", "--backend", help="local (process pool) or ray.")
WORKERS_OPT = typer.Option(None, "--workers", "-w", help="Parallel runs (default: the CPU cores).")
ADDRESS_OPT = typer.Option(None, "--address", help="Ray cluster address (default: a local Ray).")


def _failing_check(scale: str, ch: dict) -> str:
    """A check that does not hold at ``scale``, for the console: ``"✗ medium embedding-nc1:
    fails 2/3 seeds, and on the mean · mean 0.124 (threshold 0.1)"``; an untestable one says
    why (``"? medium no-wd-loss: untestable (scale too small: ...)"``) (rich markup)."""
    from rich.markup import escape

    from ..reproduce.reports.views import STATUS_MARK, check_cell

    status, _, vs = check_cell(ch)
    n, ok = ch.get("seeds_judged") or 0, ch.get("seeds_passed") or 0
    if n > 1 and ok == n:
        what = f"fails on the mean (passes {n}/{n} seeds)"
    elif n > 1:
        what = f"fails {n - ok}/{n} seeds" + ("" if ch.get("passed") else ", and on the mean")
    else:
        what = "fails"
    if status == "untestable":
        what = f"untestable here ({ch['blocked']['why']})" if ch.get("blocked") else status
        vs = vs.split(" [", 1)[0]
    if ch.get("value") is None and ch.get("detail"):
        vs = ch["detail"]  # no value read: say why
    elif vs and n > 1:
        vs = f"mean {vs}"
    color = {"fails": "red", "mixed": "yellow", "untestable": "magenta"}.get(status, "white")
    mark = f"[{color}]{STATUS_MARK.get(status, '?')}[/]"
    kind = {"sanity": " (sanity)", "ours-beyond": " (ours-beyond)"}.get(ch.get("kind"), "")
    line = f"    {mark} [dim]{scale:>6}[/] {escape(ch['name'])}{kind}: {escape(what)}"
    line += f" [dim]· {escape(vs)}[/]" if vs else ""
    if status == "untestable" and ch.get("blocked", {}).get("detail"):
        line += f"\n             [dim]{escape(ch['blocked']['detail'])}[/]"
    return line


def print_results(results, out: Path) -> None:
    """Per claim: its id and headline (coloured by the headline outcome), the sentence it
    states, its diagnosis where it is not reproduced; then, at each judged scale (largest first),
    the checks that do not hold, with the seeds they fail on, their value and threshold. At the
    end the claims counted by outcome (all, then per paper), where each scale's outcomes come
    from, and where the reports are. Lines are never wrapped when the output is not a terminal
    (a reader can grep them)."""
    from rich.markup import escape

    from ..reproduce.reports.views import (
        SCALES,
        VERDICT_STYLE,
        counts_text,
        diagnosis_text,
        kind_class,
        n_claims,
        paper_counts,
        scale_sources,
        sources_text,
        status_of,
        summary_counts,
    )
    from ..verdicts import Outcome

    c = console()
    for r in results:
        color = VERDICT_STYLE[kind_class(r.outcome)]
        c.print(f"[bold]{escape(r.id)}[/] — [{color}]{escape(r.headline or r.outcome)}[/]")
        if r.statement:
            c.print(f"    [dim]states:[/] {escape(r.statement)}")
        if r.diagnosis:
            c.print(f"    [dim]diagnosis:[/] {escape(diagnosis_text(r.diagnosis))}")
        for s in reversed(SCALES):
            sd = r.scales.get(s) or {}
            if sd.get("outcome", Outcome.NOT_RUN) != Outcome.NOT_RUN:
                for ch in sd.get("checks", []):
                    if status_of(ch) != "holds":
                        c.print(_failing_check(s, ch))
        if r.outcome == Outcome.NOT_RUN and r.command:
            c.print(f"    [dim]run it with:[/] {escape(r.command)}")
    from ..reproduce.runner import statements_line

    per_paper = "".join(
        f"\n  {paper}: {counts_text(n)}" for paper, n in paper_counts(results).items()
    )
    c.print(
        f"{n_claims(results)}: {counts_text(summary_counts(results))}{per_paper}\n"
        f"scales judged — {sources_text(scale_sources(results))}\n"
        f"the papers' statements: {statements_line(results)}\n"
        f"reports: {out / 'report.md'}, {out / 'report.html'}, {out / 'report.json'}",
        highlight=False,
    )


# the options of ``nclab reproduce``, one a constant, so that the verb reads in one screen
IDS_ARG = typer.Argument(None, help="Claim ids or globs (default: every claim).")
QUICK_OPT = typer.Option(True, "--quick/--full", help="Quick (CPU) or full (paper) presets.")
SCALE_OPT = typer.Option(
    None, "--scale", help="quick, medium or full (the paper's setting): overrides --quick/--full."
)
SEEDS_OPT = typer.Option(None, "--seeds", help="Seeds per run (default: each claim's own).")
OUT_OPT = typer.Option(
    None, "--out", "-o", help="Output directory (default runs/reproduce-<scale>)."
)
THREADS_OPT = typer.Option(
    1,
    "--threads",
    help="Torch threads of each run (default 1: runs side by side on the cores; 0: torch's "
    "default). One long run alone on the machine: --workers 1 --threads <cores>.",
)
RECORD_OPT = typer.Option(
    False, "--record", help="Record the finished runs into the ledger (evidence/)."
)
DIRTY_OPT = typer.Option(
    False, "--allow-dirty", help="With --record: record runs of a tree with uncommitted changes."
)
VARIANTS_OPT = typer.Option(
    False,
    "--variants",
    help="Also run the claims' variants at this scale (e.g. the paper's weight decay).",
)
LEDGER_OPT = typer.Option(
    None, "--ledger", help="The ledger judged against (default: evidence/ of the source tree)."
)
NO_LEDGER_OPT = typer.Option(
    False, "--no-ledger", help="Judge only the runs made now, not the ledger's records."
)
FROM_LEDGER_OPT = typer.Option(
    False, "--from-ledger", help="Run nothing: judge every scale on the ledger's records."
)
LIST_OPT = typer.Option(False, "--list", help="List the claims (one line each) and exit.")
VERBOSE_OPT = typer.Option(
    False, "--verbose", "-v", help="With --list: papers, claims and instances in full."
)
MARKDOWN_OPT = typer.Option(False, "--markdown", help="With --list: a Markdown table.")
STATEMENTS_OPT = typer.Option(
    False,
    "--statements",
    help="With --list: the papers' statements and the claims that test each (or why none).",
)


@app.command(
    help="Run the papers' claims and judge each at every scale the evidence covers (quick, "
    "medium, full): paper vs theory vs measured, per seed and on the mean; each claim's "
    "outcome (reproduced, partial, contradicted, inconclusive, not run) with its reason and "
    "diagnosis."
)
def reproduce(
    ids: list[str] = IDS_ARG,
    quick: bool = QUICK_OPT,
    scale: str = SCALE_OPT,
    seeds: int = SEEDS_OPT,
    out: Path = OUT_OPT,
    backend: str = BACKEND_OPT,
    workers: int = WORKERS_OPT,
    threads: int = THREADS_OPT,
    address: str = ADDRESS_OPT,
    record: bool = RECORD_OPT,
    allow_dirty: bool = DIRTY_OPT,
    variants: bool = VARIANTS_OPT,
    ledger: Path = LEDGER_OPT,
    no_ledger: bool = NO_LEDGER_OPT,
    from_ledger: bool = FROM_LEDGER_OPT,
    list_: bool = LIST_OPT,
    verbose: bool = VERBOSE_OPT,
    markdown: bool = MARKDOWN_OPT,
    statements: bool = STATEMENTS_OPT,
    json: bool = JSON_OPT,
) -> None:
    """``nclab reproduce`` (the help text is the decorator's): list the claims, or run and judge
    them at a scale, or judge them on the ledger alone; then print the results."""
    from ..reproduce.registry import select

    claims = select(ids or [])
    if list_:  # before importing the runner (and torch)
        list_claims(claims, json, markdown, verbose, statements)
        return
    from ..reproduce import runner

    mode = _mode(scale, quick)
    book = _ledger_root(ledger, no_ledger, from_ledger, record)
    if from_ledger:
        out = out or Path("runs") / "reproduce-ledger"
        results = runner.from_ledger(ids or [], out=out, ledger=book)
    else:
        out = out or Path("runs") / f"reproduce-{mode}"
        run = dict(seeds=seeds, backend=backend, workers=workers, threads=threads)
        run |= dict(address=address, record=record, allow_dirty=allow_dirty, variants=variants)
        results = runner.reproduce(ids or [], mode=mode, out=out, ledger=book, **run)
    if json:
        emit_json([_result_row(r) for r in results])
    else:
        print_results(results, out)


def _mode(scale: str | None, quick: bool) -> str:
    """The scale asked: ``--scale``, else ``--quick`` / ``--full``."""
    from ..errors import ConfigError
    from ..reproduce.registry import SCALES

    mode = scale or ("quick" if quick else "full")
    if mode not in SCALES:
        raise ConfigError(f"--scale must be one of {', '.join(SCALES)}, got {mode!r}")
    return mode


def _ledger_root(ledger: Path | None, no_ledger: bool, from_ledger: bool, record: bool):
    """The ledger judged against (None: ``--no-ledger``): ``--ledger`` or the source tree's
    ``evidence/``; one that is read, not written, must exist."""
    from ..errors import ConfigError
    from ..evidence import default_root, existing_root

    if from_ledger and no_ledger:
        raise ConfigError(
            "--from-ledger judges the ledger's records: it cannot go with --no-ledger"
        )
    book = None if no_ledger else (ledger or default_root())
    if from_ledger or (ledger is not None and not record):  # read, not written: it must exist
        book = existing_root(book)
    return book


#: the fields of a result that ``nclab reproduce --json`` prints for each claim
JSON_FIELDS = (
    "id",
    "statement",
    "outcome",
    "reasons",
    "diagnosis",
    "headline",
    "scale",
    "instance",
    "paper_values",
    "theory",
    "measured",
    "checks",
    "runs",
    "scales",
    "variants",
)


def _result_row(r) -> dict:
    """One claim of ``nclab reproduce --json``: the outcome with its typed reasons and diagnosis
    (of the largest scale judged), ``checks`` (name, role, status, value, threshold, seeds, ...)
    and every scale's (``scales``: each with its outcome, reasons and diagnosis); ``paper`` is
    the paper's values, ``paper_name`` the paper."""
    d = r.to_dict()
    row = {k: d[k] for k in JSON_FIELDS}
    row["paper"] = row.pop("paper_values")
    row["paper_name"] = d["paper"]
    return row


@app.command()
def sweep(
    # "\\[": rich markup would take [set] and [axes] for style tags and print nothing
    grid: Path = typer.Argument(
        ..., help="Grid TOML: experiment, preset, \\[set] and \\[axes] tables."
    ),
    out: Path = typer.Option(
        None, "--out", "-o", help="Output directory (default runs/sweep-<grid>)."
    ),
    backend: str = BACKEND_OPT,
    workers: int = WORKERS_OPT,
    address: str = ADDRESS_OPT,
    json: bool = JSON_OPT,
) -> None:
    """Run the product of a grid's axes (one run directory each) and aggregate into sweep.csv."""
    from ..reproduce.sweep import load_grid, run_sweep

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
    directory: Path = typer.Argument(..., help="A run, reproduce or sweep directory."),
    json: bool = JSON_OPT,
) -> None:
    """Re-render the report of a finished run (its figures), reproduce (report.md/html) or sweep
    (sweep.csv, figures)."""
    from ..reproduce import judge as rep
    from ..reproduce import runner
    from ..reproduce import sweep as sw

    if (directory / rep.MANIFEST).is_file():
        results = runner.report_dir(directory)
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
    elif (directory / "config.toml").is_file():
        from ..experiments.runner import redraw

        figures = redraw(directory)
        if json:
            emit_json({"run_dir": str(directory), "figures": figures})
        else:
            for fig in figures:
                console().print(f"figure: {fig}")
            console().print(f"run directory: {directory}")
    else:
        raise RunError(
            f"{directory} is neither a run directory (config.toml), a reproduce directory "
            f"({rep.MANIFEST}) nor a sweep directory ({sw.MANIFEST})"
        )
