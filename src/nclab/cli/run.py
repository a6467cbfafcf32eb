"""``nclab run EXPERIMENT`` and ``nclab demo``."""

from __future__ import annotations

import time
from pathlib import Path

import typer

from ..errors import ConfigError, RunError
from ._app import JSON_OPT, app, console, emit_json


def default_out(experiment: str, preset: str | None) -> Path:
    stamp = time.strftime("%Y%m%d-%H%M%S")
    return Path("runs") / f"{experiment}-{preset or 'default'}-{stamp}"


def announce(out: Path, verb: str) -> None:
    """Say on stderr, before any work, where the run directory goes (and how to choose it)."""
    where = out if out.is_absolute() else f"{out} (in {Path.cwd()})"
    typer.echo(f"nclab {verb}: writing the run directory {where}; --out DIR chooses it", err=True)


def print_summary(summary: dict, out: Path) -> None:
    """The run's measurements as a table (its summary's fields without the bookkeeping its
    summary type declares: seed, seconds, versions, schema version, ...), then one line of that
    bookkeeping and the run directory."""
    from ..experiments.schema import metric_items
    from ..tables import kv_table

    flat = {}
    for k, v in metric_items(summary["experiment"], summary).items():
        if isinstance(v, bool | int | float | str):
            flat[k] = v
        elif isinstance(v, dict) and k in ("metrics", "theory", "paper"):
            for k2, v2 in v.items():
                if isinstance(v2, bool | int | float | str):
                    flat[f"{k}.{k2}"] = v2
    c = console()
    c.print(kv_table(flat, title=f"{summary['experiment']} {summary.get('preset') or ''}"))
    seeds = summary.get("seeds") or [summary.get("seed")]
    what = f"seed {seeds[0]}" if len(seeds) == 1 else f"seeds {', '.join(map(str, seeds))}"
    if summary.get("seconds") is not None:
        what += f", {summary['seconds']:.1f} s"
    c.print(f"{what}; run directory: {out}")


@app.command("run")
def run_cmd(
    experiment: str = typer.Argument(None, help="Experiment name (nclab run --list shows them)."),
    preset: str = typer.Option(None, "--preset", "-p", help="Named preset of the experiment."),
    set_: list[str] = typer.Option(
        [], "--set", "-s", help="Override a config key: --set a.b=value."
    ),
    config: Path = typer.Option(
        None, "--config", help="TOML file with config values (before --set)."
    ),
    seeds: int = typer.Option(
        None, "--seeds", help="Run this many seeds (seed, seed+1, ...; default: the config's)."
    ),
    out: Path = typer.Option(
        None, "--out", "-o", help="Run directory (default runs/<exp>-<preset>-<time>)."
    ),
    resume: Path = typer.Option(
        None, "--resume", help="Continue an interrupted run from its directory."
    ),
    list_: bool = typer.Option(False, "--list", help="List experiments and their presets."),
    show_config: bool = typer.Option(
        False, "--show-config", help="Print the resolved config and exit."
    ),
    json: bool = JSON_OPT,
) -> None:
    """Run an experiment preset into a run directory (config, metrics.jsonl, summary.json, figures)."""
    if list_:  # before importing the runner (and torch)
        _list_experiments(json)
        return
    from ..experiments import get_experiment, resume_run, run_experiment

    if resume is not None:
        if not resume.is_dir():
            raise RunError(
                f"run directory not found: {resume} (a run the ledger shows as running whose "
                "directory was lost: nclab evidence restore <experiment>/<group> writes it back)"
            )
        summary = resume_run(resume)
        out_dir = resume
    else:
        if experiment is None:
            raise ConfigError("name an experiment (nclab run --list shows them)")
        exp = get_experiment(experiment)
        cfg = _resolve_config(exp, preset, config, list(set_))
        if show_config:
            print(cfg.to_toml())
            return
        out_dir = out or default_out(experiment, preset or exp.default_preset)
        announce(Path(out_dir), "run")
        summary = run_experiment(
            exp, cfg, out_dir, seeds=seeds, preset=preset or exp.default_preset
        )
    if json:
        emit_json(summary)
    else:
        print_summary(summary, Path(out_dir))


def _list_experiments(json: bool) -> None:
    from ..experiments import experiment_names, get_experiment

    rows = {}
    for name in experiment_names():
        exp = get_experiment(name)
        rows[name] = {"description": exp.description, "presets": exp.preset_names()}
    if json:
        emit_json(rows)
    else:
        for name, r in rows.items():
            presets = ", ".join(r["presets"]) or "none (nclab run NAME runs its defaults)"
            print(f"{name}: {r['description']}\n  presets: {presets}")


def _resolve_config(exp, preset: str | None, config: Path | None, overrides: list[str]):
    """The preset's config, then the TOML file's values, then the --set overrides."""
    from ..config import apply_overrides, load_toml_overrides

    cfg = exp.config(preset)
    if config is not None:
        cfg = apply_overrides(cfg, load_toml_overrides(config))
    return apply_overrides(cfg, overrides)


@app.command()
def demo(
    out: Path = typer.Option(
        None, "--out", "-o", help="Run directory (default runs/demo-default-<time>, here)."
    ),
    epochs: int = typer.Option(None, help="Training epochs (default from the demo config)."),
    json: bool = JSON_OPT,
) -> None:
    """Train a small MLP on the bundled digits for a few seconds and measure collapse layer by layer
    (into runs/ under the current directory, or --out DIR)."""
    from ..experiments import get_experiment, run_experiment

    exp = get_experiment("demo")
    cfg = exp.config(None, [f"train.epochs={epochs}"] if epochs else [])
    out_dir = out or default_out("demo", None)
    announce(Path(out_dir), "demo")
    summary = run_experiment(exp, cfg, out_dir)
    if json:
        emit_json(summary)
        return
    from ..tables import metrics_table

    c = console()
    c.print(
        metrics_table(summary["layers"], title="collapse metrics by layer (digits, trained MLP)")
    )
    c.print(
        f"train acc {summary['train_acc']:.3f}, test acc {summary['test_acc']:.3f}, "
        f"{summary['seconds']:.1f} s"
    )
    for fig in summary.get("figures", []):
        c.print(f"figure: {fig}")
    c.print(f"run directory: {out_dir}")
