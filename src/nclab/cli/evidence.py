"""``nclab evidence add RUN_DIR...``, ``nclab evidence restore ENTRY``, ``nclab evidence bench
SCRIPT``, ``nclab evidence list``, ``nclab evidence compact`` and ``nclab evidence prune``: the ledger of recorded runs
(:mod:`nclab.evidence`)."""

from __future__ import annotations

from pathlib import Path

import typer

from ._app import JSON_OPT, app, console, emit_json

evidence_app = typer.Typer(
    help="The ledger of recorded runs (evidence/): add finished run directories (or where a "
    "run still going stands), restore a lost run directory from that, record a benchmark, "
    "list, compact, prune.",
    no_args_is_help=True,
)
app.add_typer(evidence_app, name="evidence")

LEDGER_OPT = typer.Option(
    None, "--ledger", help="Ledger folder (default: evidence/ of the source tree, $NCLAB_EVIDENCE)."
)


@evidence_app.command("add")
def add(
    run_dirs: list[Path] = typer.Argument(..., help="Finished run directories to record."),
    allow_dirty: bool = typer.Option(
        False, "--allow-dirty", help="Record runs made from a tree with uncommitted changes."
    ),
    running: bool = typer.Option(
        False,
        "--running",
        help="The runs are still going: write where each stands (units finished, last epoch), "
        "shown by the reports until the finished run is recorded.",
    ),
    ledger: Path = LEDGER_OPT,
    json: bool = JSON_OPT,
) -> None:
    """Record finished runs (summary, config, provenance) into the ledger, or with --running
    where runs still going stand."""
    from ..evidence import Ledger, record_running

    book = Ledger(ledger)
    if running:
        paths = [str(record_running(book, d)) for d in run_dirs]
    else:
        paths = [str(book.add(d, allow_dirty=allow_dirty)) for d in run_dirs]
    if json:
        emit_json({"recorded": paths})
    else:
        for d, p in zip(run_dirs, paths, strict=True):
            console().print(f"{d} -> {p}")


@evidence_app.command("restore")
def restore(
    entry: str = typer.Argument(
        ...,
        help="A running entry: its group under the ledger's running/ (fc-transformer/a4-lm-s3) "
        "or its file.",
    ),
    into: Path = typer.Option(
        None, "--into", help="Where to write the run directory (default: where it was)."
    ),
    ledger: Path = LEDGER_OPT,
    json: bool = JSON_OPT,
) -> None:
    """Write back the run directory of a run still going whose directory was lost (a fresh
    machine): its config, provenance and the units that had finished, kept in the running
    entry; resuming it then trains only the other units."""
    from ..evidence import Ledger, existing_root, restore_running, running_entry

    data = running_entry(Ledger(existing_root(ledger)), entry)
    target = restore_running(data, into)
    done = sorted(data["done"])
    resume = f"nclab run --resume {target} && nclab evidence add {target}"
    if json:
        emit_json({"run_dir": str(target), "finished": done, "resume": resume})
        return
    console().print(
        f"{target}: {len(done)}/{data['units']} units restored ({', '.join(done) or 'none'}); "
        f"the others start again. Resume: {resume}"
    )


@evidence_app.command(
    "bench", context_settings={"allow_extra_args": True, "ignore_unknown_options": True}
)
def bench(
    ctx: typer.Context,
    script: Path = typer.Argument(..., help="A benchmark script (benchmarks/bench_*.py)."),
    label: str = typer.Option(
        ..., "--label", help="What the docs table calls this run (e.g. 'idle, 2 threads')."
    ),
    allow_dirty: bool = typer.Option(
        False, "--allow-dirty", help="Record it although the tree has uncommitted changes."
    ),
    ledger: Path = LEDGER_OPT,
    json: bool = JSON_OPT,
) -> None:
    """Run a benchmark script (arguments after --) and record the JSON object of its last line
    with its provenance and the machine's load into evidence/benchmarks/."""
    from ..evidence.bench import record_benchmark

    path = record_benchmark(
        script, list(ctx.args), label=label, root=ledger, allow_dirty=allow_dirty, echo=not json
    )
    if json:
        emit_json({"recorded": str(path)})
    else:
        console().print(f"{script} -> {path}")


@evidence_app.command("list")
def list_(
    benchmarks: bool = typer.Option(
        False, "--benchmarks", help="List the recorded benchmark runs instead."
    ),
    ledger: Path = LEDGER_OPT,
    json: bool = JSON_OPT,
) -> None:
    """List the recorded runs: experiment, preset, overrides, seeds, commit, device, wall time."""
    from ..evidence import Ledger, existing_root
    from ..tables import metrics_table

    ledger = existing_root(ledger)
    if benchmarks:
        _list_benchmarks(ledger, json)
        return
    rows = [
        {
            "experiment": r.experiment,
            "preset": r.preset,
            "overrides": dict(r.overrides),
            "seeds": len(r.seeds),
            "started": r.started,
            "commit": (r.provenance.get("commit") or "unknown")[:10],
            "dirty": r.provenance.get("dirty"),
            "device": (r.provenance.get("device") or {}).get("cpu"),
            "seconds": r.provenance.get("seconds"),
            "path": str(r.path),
        }
        for r in Ledger(ledger).records()
    ]
    if json:
        emit_json(rows)
    else:
        shown = {
            f"{i + 1}. {r['experiment']} {r['preset']}": {
                "set": " ".join(f"{k}={v}" for k, v in r["overrides"].items()) or "—",
                "seeds": r["seeds"],
                "date": r["started"][:10],
                "commit": r["commit"][:7] + ("+" if r["dirty"] else ""),
                "seconds": r["seconds"],
            }
            for i, r in enumerate(rows)
        }
        title = f"{len(rows)} recorded runs"
        console().print(metrics_table(shown, title=title, row_label="record", transpose=False))


def _list_benchmarks(ledger: Path | None, json: bool) -> None:
    from ..evidence.bench import benchmark_records
    from ..tables import metrics_table

    rows = [
        {
            "benchmark": r.name,
            "label": r.label,
            "command": r.provenance.get("command"),
            "started": r.started,
            "commit": (r.provenance.get("commit") or "unknown")[:10],
            "dirty": r.provenance.get("dirty"),
            "load_before": r.provenance.get("load_before"),
            "seconds": r.provenance.get("seconds"),
            "path": str(r.path),
        }
        for r in benchmark_records(ledger)
    ]
    if json:
        emit_json(rows)
        return
    shown = {
        f"{i + 1}. {r['benchmark']}": {
            "label": r["label"],
            "date": r["started"][:10],
            "commit": r["commit"][:7] + ("+" if r["dirty"] else ""),
            "load": r["load_before"],
            "seconds": r["seconds"],
        }
        for i, r in enumerate(rows)
    }
    title = f"{len(rows)} recorded benchmark runs"
    console().print(metrics_table(shown, title=title, row_label="record", transpose=False))


@evidence_app.command("compact")
def compact_(ledger: Path = LEDGER_OPT, json: bool = JSON_OPT) -> None:
    """Rewrite records made by an older nclab without what the ledger no longer keeps (a seed's
    all-zero spreads), under the names a fresh add would give them; the numbers claims and
    tables read are unchanged."""
    from ..evidence import Ledger, existing_root

    moved = Ledger(existing_root(ledger)).recompact()
    if json:
        emit_json([{"was": str(a), "now": str(b)} for a, b in moved])
    else:
        for a, b in moved:
            console().print(f"{a.name} -> {b.name}")
        console().print(f"{len(moved)} records rewritten")


@evidence_app.command("prune")
def prune(
    dry_run: bool = typer.Option(False, "--dry-run", help="List the stale records only."),
    ledger: Path = LEDGER_OPT,
    json: bool = JSON_OPT,
) -> None:
    """Remove the stale records: runs of a preset that has changed since (they judge nothing;
    a committed ledger keeps them in its git history)."""
    from ..evidence import Ledger, existing_root

    gone = Ledger(existing_root(ledger)).prune(dry_run=dry_run)
    if json:
        emit_json([str(r.path) for r in gone])
        return
    for r in gone:
        console().print(
            f"{r.path}  ({r.experiment} {r.preset}, commit {str(r.provenance.get('commit'))[:7]})"
        )
    verb = "would be removed" if dry_run else "removed"
    console().print(f"{len(gone)} stale records {verb}")
