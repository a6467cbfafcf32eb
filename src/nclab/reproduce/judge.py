"""Judging claims at every scale the evidence covers, per seed and on the mean.

A claim is judged at each scale (quick, medium, full: :data:`~.registry.SCALES`) on the runs of
that scale: those a reproduce just made, else the ledger's records (:mod:`nclab.evidence`). At a
scale, each check is evaluated on the summary (the mean over seeds) and on each seed's summary
(``per_seed`` of a run over seeds, ``by_seed`` of a grid); it *holds* when it passes on the mean
and on every seed, *fails* when it fails on the mean and on every seed, and is *mixed* otherwise.

Verdict at a scale: a run that raised -> ``"failed"``; a sanity check (on our code) that does not
hold -> ``"failed (sanity: <name>)"``, a bug to fix; else, on the paper's statement checks, every
one holds -> ``"reproduced"``, every one fails -> ``"not reproduced"``, otherwise ``"partial"``
(with the reason: ``"embedding-nc1 fails 2/3 seeds"``). A scale without evidence is ``"not run"``.

The claim's headline is the verdict at the largest scale judged, then any smaller scale's
verdict, then the larger scales not run (with the claim's runtime estimate there; a scale the claim
has no preset for is left out): ``"partial at medium size (embedding-nc1 fails 2/3
seeds); reproduced at quick size; not run at paper size (about 2 h a run on CPU)"``. The
result's top-level fields (verdict, checks, measured values, runs, figures, instance) are those of
that largest scale; ``scales`` holds every scale's.

The ledger's evidence at a scale is a record of each run (one that lacks a key a check reads
judges nothing: "the record predates <key>"), else where a run still going stands ("running at
paper size (...)"); a claim's variants are judged likewise and named after its verdict.

Length: the scales, the headline across them and the ledger's three kinds of evidence (records,
runs still going, variants) are one decision, read in one place.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import asdict, replace
from pathlib import Path
from typing import Any

from ..errors import RunError
from ..evidence import Ledger, progress_words, running
from ..experiments.protocol import UNITS
from ..experiments.schema import read_summary_versioned
from ..provenance import PROVENANCE
from ..report.claims_report import fmt_secs
from ..runs import RunDir, to_jsonable
from . import registry
from .outcomes import Summaries, reason, verdict
from .registry import (
    NEEDS_GPU,
    SCALES,
    Claim,
    Variant,
)
from .results import NOT_RUN, ClaimResult, ScaleResult, scale_words
from .summaries import lookup, lookup_std

MANIFEST = "reproduce.json"
RUNNING_WORD = "running: "  # the reason of a scale whose runs are still going
PREDATES = "predates"  # a record made before its summary held what a check reads


# --- one scale --------------------------------------------------------------------------------


def command_for(claim: Claim, mode: str, seeds: int | None = None) -> str:
    """The command that reruns ``claim`` as it was run (``--seeds`` when it was given)."""
    flag = f"--scale {mode}" if mode == "medium" else f"--{mode}"
    return f"nclab reproduce '{claim.id}' {flag}" + (f" --seeds {seeds}" if seeds else "")


def _figures(run_dir: str) -> list[str]:
    figs = sorted((Path(run_dir) / "figures").glob("*.png"))
    if not figs:  # figures drawn per unit: show the first unit's
        units = sorted(Path(run_dir).glob(f"{UNITS}/*/figures"))
        figs = sorted(units[0].glob("*.png"))[:4] if units else []
    return [str(f) for f in figs]


def presets_of(claim: Claim, scale: str) -> dict[str, str]:
    """Each run's ``"experiment preset"`` at ``scale`` (those that have one)."""
    return {
        alias: f"{spec.experiment} {spec.preset(scale)}"
        for alias, spec in claim.runs.items()
        if spec.preset(scale) is not None
    }


def run_provenance(run_dir: str) -> dict[str, Any]:
    """A run directory's provenance as the ledger's records give it (commit, dirty, started,
    device, seconds); empty where the run wrote none."""
    run = Path(run_dir)
    try:
        prov = json.loads((run / PROVENANCE).read_text())
    except (OSError, ValueError):
        return {}
    try:
        seconds = json.loads((run / "summary.json").read_text()).get("seconds")
    except (OSError, ValueError):
        seconds = None
    return {k: prov.get(k) for k in ("commit", "dirty", "started", "device")} | {"seconds": seconds}


def _read(summaries: Summaries, path: str, std: bool = False) -> Any:
    try:
        return lookup_std(summaries, path) if std else lookup(summaries, path)
    except KeyError:
        return None


def judge_scale(
    claim: Claim,
    scale: str,
    summaries: dict[str, dict[str, Any]],
    runs: dict[str, str],
    source: str,
    provenance: dict[str, dict[str, Any]] | None = None,
    seeds: int | None = None,
    described: Claim | None = None,
) -> ScaleResult:
    """The claim judged at ``scale`` on these run summaries (see the module docstring); the
    instance text is that of ``described`` (a variant's claim, :func:`as_variant`) when given,
    with the seed counts of the runs judged."""
    v, checks = verdict(claim, summaries)
    ok = all(not s.get("failed") for s in summaries.values())
    counts = {a: len(s.get("seeds") or [0]) for a, s in summaries.items()}
    n = max(counts.values(), default=0)
    res = ScaleResult(
        scale,
        v,
        reason(v, checks),
        seeds=n,
        instance=(described or claim).instance(scale, counts),
        source=source,
        checks=checks,
        runs=runs,
        provenance=provenance or {},
        command=command_for(claim, scale, seeds),
        presets=presets_of(claim, scale),
    )
    if ok:
        res.theory = {label: _read(summaries, p) for label, p in claim.theory.items()}
        res.measured = {
            label: {"mean": _read(summaries, p), "std": _read(summaries, p, std=True)}
            for label, p in claim.measured.items()
        }
    if source == "this run":
        for d in runs.values():
            res.figures.extend(_figures(d))
    return res


def not_run_scale(claim: Claim, scale: str, why: str, seeds: int | None = None) -> ScaleResult:
    """A scale without evidence: ``why`` (no preset, needs a GPU, not in the ledger)."""
    res = ScaleResult(scale, NOT_RUN, why, instance=claim.instance(scale))
    res.presets = presets_of(claim, scale)
    gpu = " (on a machine with a GPU)" if why == NEEDS_GPU else ""
    res.command = command_for(claim, scale, seeds) + gpu
    return res


def running_scale(
    claim: Claim, scale: str, ledger: Ledger, variant: Variant | None = None
) -> ScaleResult | None:
    """The scale as "running" when the ledger has no record of some of its runs but says where
    each of those stands (:func:`~nclab.evidence.record_running`), else None."""
    words, resume = [], []
    for alias, spec in claim.runs.items():
        over = variant.overrides(alias, spec) if variant else dict(spec.set)
        if ledger.find(spec.experiment, spec.preset(scale), over):
            continue
        entry = running(ledger, spec.experiment, spec.preset(scale), over)
        if entry is None:
            return None
        words.append(progress_words(entry).removeprefix(RUNNING_WORD))
        resume.append(entry["resume"])
    if not words:
        return None
    res = not_run_scale(claim, scale, RUNNING_WORD + "; ".join(words))
    res.command = " && ".join(resume)
    return res


def _cost(claim: Claim, scale: str) -> str:
    """About how long a claim's runs take at ``scale`` (the claim's own estimate)."""
    if scale == "quick":
        return f"about {fmt_secs(claim.quick_seconds)}"
    where = "on a GPU" if claim.needs_gpu(scale) else "on CPU"
    return f"about {fmt_secs(claim.seconds(scale))} a run {where}"


# --- the claim: every scale and the headline ----------------------------------------------------


def headline(claim: Claim, scales: Mapping[str, ScaleResult]) -> tuple[str, str, str]:
    """(verdict, scale, headline text) from every scale's result (module docstring)."""
    order = [s for s in SCALES if s in scales]
    judged = [s for s in order if scales[s].verdict != NOT_RUN]
    if not judged:
        going = [
            f"running at {scale_words(s, scales[s].instance)} "
            f"({scales[s].reason[len(RUNNING_WORD) :]})"
            for s in order
            if scales[s].reason.startswith(RUNNING_WORD)
        ]
        if going:
            return f"{NOT_RUN}: running", "", "; ".join(going)
        why = [scales[s].reason for s in order]
        stale = [w for w in why if PREDATES in w]
        if stale:  # say what to re-run rather than "needs GPU" for a larger scale
            v = f"{NOT_RUN}: {stale[0]}"
            gpu = "; needs a GPU at paper size" if NEEDS_GPU in why else ""
            return v, "", v + gpu
        reason = NEEDS_GPU if NEEDS_GPU in why else next((w for w in why if w), "no run")
        v = reason if reason == NEEDS_GPU else f"{NOT_RUN}: {reason}"
        return v, "", v
    top = judged[-1]
    parts = [scales[top].words()]
    parts += [scales[s].words() for s in reversed(judged[:-1])]
    for s in order[order.index(top) + 1 :]:
        r = scales[s]
        if r.reason == f"no {s} preset":
            continue  # the claim has no run at this scale: nothing to say
        if r.reason.startswith(RUNNING_WORD):
            parts.append(
                f"running at {scale_words(s, r.instance)} ({r.reason[len(RUNNING_WORD) :]})"
            )
            continue
        cost = _cost(claim, s) if r.reason != NEEDS_GPU else "needs a GPU"
        parts.append(f"{NOT_RUN} at {scale_words(s, r.instance)} ({cost})")
    return scales[top].verdict, top, "; ".join(parts)


def claim_result(claim: Claim, scales: Mapping[str, ScaleResult]) -> ClaimResult:
    """The claim's result: the headline, the largest judged scale's fields at the top level."""
    v, top, text = headline(claim, scales)
    if top:
        r = scales[top]
    else:  # nothing judged: the scale it needs a GPU for, else the first with a preset
        gpu = [x for x in scales.values() if x.reason == NEEDS_GPU]
        ran = [x for x in scales.values() if not x.reason.startswith("no ")]
        r = (gpu or ran or list(scales.values()) or [None])[0]
    res = ClaimResult(
        claim.id,
        claim.paper,
        claim.where,
        claim.claim,
        v,
        paper_values=dict(claim.paper_values),
        note=claim.note,
        headline=text,
        scale=top,
        scales={s: to_jsonable(asdict(x)) for s, x in scales.items()},
    )
    if r is not None:
        res.theory, res.measured, res.checks = r.theory, r.measured, r.checks
        res.runs, res.figures, res.command, res.instance = r.runs, r.figures, r.command, r.instance
    return res


def read_summaries(jobs: Mapping[str, Mapping[str, Any]]) -> tuple[dict, dict[str, str]]:
    """Each alias's summary (``{"failed": True, ...}`` for a run that raised or did not finish,
    or whose summary this nclab does not read: another schema version, or a structure its
    experiment does not declare, :func:`~nclab.experiments.schema.read_summary_versioned`)."""

    summaries, runs = {}, {}
    for alias, job in jobs.items():
        run = RunDir(job["run_dir"])
        runs[alias] = job["run_dir"]
        if run.finished:
            where = str(run.path / "summary.json")
            try:
                summaries[alias] = read_summary_versioned(
                    job["experiment"], run.read_summary(), where
                )
            except RunError as exc:
                summaries[alias] = {"failed": True, "error": str(exc)}
        elif (run.path / "error.txt").is_file():
            err = (run.path / "error.txt").read_text().strip().splitlines()
            summaries[alias] = {"failed": True, "error": err[-1] if err else "error"}
        else:
            summaries[alias] = {"failed": True, "error": "the run did not finish"}
    return summaries, runs


def from_ledger(
    claim: Claim, scale: str, ledger: Ledger, variant: Variant | None = None
) -> ScaleResult | None:
    """The claim (or its ``variant``) judged at ``scale`` on the ledger's records (for each run
    the record with the most seeds, then the newest), or None when a run has none."""
    summaries, runs, prov = {}, {}, {}
    for alias, spec in claim.runs.items():
        overrides = variant.overrides(alias, spec) if variant is not None else spec.set
        found = ledger.find(spec.experiment, spec.preset(scale), overrides)
        if not found:
            return None
        rec = found[0]
        summaries[alias], runs[alias] = {"seeds": list(rec.seeds), **rec.summary}, str(rec.path)
        prov[alias] = {
            k: rec.provenance.get(k) for k in ("commit", "dirty", "started", "device", "seconds")
        }
    missing = unread_paths(claim, summaries)
    if missing:  # recorded before the summary had what a check reads: it judges nothing
        alias = missing[0].split(":")[0] if ":" in missing[0] else next(iter(runs))
        commit = (prov.get(alias, {}).get("commit") or "unknown")[:7]
        why = f"the record ({commit}) {PREDATES} {missing[0]}: re-run it to judge"
        res = not_run_scale(claim, scale, why)
        res.runs, res.provenance = runs, prov
        return res
    described = as_variant(claim, variant) if variant is not None else None
    return judge_scale(claim, scale, summaries, runs, "ledger", prov, described=described)


def unread_paths(claim: Claim, summaries: Summaries) -> list[str]:
    """The paths the claim's checks read that ``summaries`` do not hold (a record made before
    its experiment wrote them)."""
    out = []
    for chk in claim.checks:
        for path in chk.paths():
            try:
                lookup(summaries, path)
            except KeyError:
                out.append(path)
    return out


def judge_variants(
    claim: Claim,
    ledger: Ledger | None,
    ran: Mapping[str, Mapping[str, Mapping[str, Any]]] | None = None,
    mode: str | None = None,
    seeds: int | None = None,
) -> dict[str, dict[str, ScaleResult]]:
    """Each variant of the claim at each of its scales: ``mode`` from the runs just made
    (``ran``: label -> alias -> job), the others from the ledger."""
    out: dict[str, dict[str, ScaleResult]] = {}
    for v in claim.variants:
        res: dict[str, ScaleResult] = {}
        for scale in (s for s in SCALES if s in v.scales and claim.runnable(s)):
            jobs = (ran or {}).get(v.label) if scale == mode else None
            if jobs:
                summaries, runs = read_summaries(jobs)
                prov = {a: run_provenance(d) for a, d in runs.items()}
                r = judge_scale(
                    claim, scale, summaries, runs, "this run", prov, seeds, as_variant(claim, v)
                )
            else:
                r = from_ledger(claim, scale, ledger, v) if ledger is not None else None
                if r is None and ledger is not None:
                    r = running_scale(claim, scale, ledger, v)
                if r is None:
                    why = NEEDS_GPU if claim.needs_gpu(scale) else "not in the ledger"
                    r = not_run_scale(claim, scale, why, seeds)
            if not r.reason.startswith(RUNNING_WORD):
                r.command = command_for(claim, scale, seeds) + " --variants"
            if not r.source:  # judged on runs, its instance has the variant's settings already
                r.instance = as_variant(claim, v).instance(scale)
            res[scale] = r
        out[v.label] = res
    return out


def as_variant(claim: Claim, v: Variant) -> Claim:
    """The claim with its runs' overrides those of the variant ``v`` (its instance texts say
    what the variant runs)."""
    runs = {a: replace(spec, set=v.overrides(a, spec)) for a, spec in claim.runs.items()}
    return replace(claim, runs=runs, variants=(), check_paths=False)


def variant_words(label: str, scales: Mapping[str, ScaleResult]) -> str:
    """``"with the paper's weight decay 5e-4: partial at medium size (same-frame fails 2/3
    seeds)"``; the scales without evidence as ``"not run at medium size"``, or ``"running at
    medium size (...)"`` where the ledger says how far its runs are."""

    def words(s: str, r: ScaleResult) -> str:
        if r.verdict != NOT_RUN:
            return r.words()
        if r.reason.startswith(RUNNING_WORD):
            return f"running at {scale_words(s, r.instance)} ({r.reason[len(RUNNING_WORD) :]})"
        return f"{NOT_RUN} at {scale_words(s, r.instance)}"

    return f"with {label}: " + "; ".join(words(s, r) for s, r in reversed(list(scales.items())))


def judge_claim(
    claim: Claim,
    ledger: Ledger | None,
    ran: Mapping[str, Mapping[str, Any]] | None = None,
    mode: str | None = None,
    seeds: int | None = None,
    not_run: str | None = None,
    ran_variants: Mapping[str, Mapping[str, Mapping[str, Any]]] | None = None,
) -> ClaimResult:
    """The claim at every scale: ``mode`` from the runs just made (``ran``: alias -> job), the
    others from the ledger; its variants likewise (``ran_variants``: label -> alias -> job).
    The variants are reported beside the claim's verdict (the headline names them after it) and
    never change it."""
    scales: dict[str, ScaleResult] = {}
    for scale in SCALES:
        if not claim.runnable(scale):
            scales[scale] = not_run_scale(claim, scale, f"no {scale} preset", seeds)
            continue
        if scale == mode and ran:
            summaries, runs = read_summaries(ran)
            prov = {a: run_provenance(d) for a, d in runs.items()}
            scales[scale] = judge_scale(claim, scale, summaries, runs, "this run", prov, seeds)
            continue
        found = from_ledger(claim, scale, ledger) if ledger is not None else None
        if found is None and ledger is not None and scale != mode:
            found = running_scale(claim, scale, ledger)
        if found is not None:
            scales[scale] = found
        elif scale == mode and not_run:
            scales[scale] = not_run_scale(claim, scale, not_run, seeds)
        else:
            missing = "not in the ledger" if ledger is not None else "no ledger judged"
            why = NEEDS_GPU if claim.needs_gpu(scale) else missing
            scales[scale] = not_run_scale(claim, scale, why, seeds)
    res = claim_result(claim, scales)
    variants = judge_variants(claim, ledger, ran_variants, mode, seeds)
    for label, by_scale in variants.items():
        if not by_scale:
            continue  # the claim has no run at the variant's scales
        res.variants[label] = {s: to_jsonable(asdict(r)) for s, r in by_scale.items()}
        res.headline += "; " + variant_words(label, by_scale)
    return res


def judge_dir(out: str | Path, manifest: Mapping[str, Any] | None = None) -> list[ClaimResult]:
    """Every claim's result, rebuilt from ``reproduce.json``, the run summaries in ``out`` and
    the ledger it names. ``manifest``: what a reproduce call asked, instead of the file (which
    another call sharing ``out`` may have rewritten since)."""
    out = Path(out)
    path = out / MANIFEST
    if manifest is None:
        if not path.is_file():
            raise RunError(f"{out} has no {MANIFEST}: not a reproduce directory")
        manifest = json.loads(path.read_text())
    mode = manifest.get("mode")
    seeds = manifest.get("seeds")
    ledger = Ledger(manifest["ledger"]) if manifest.get("ledger") else None
    known = {c.id: c for c in registry.all_claims()}
    results = []
    for cid in manifest["claims"]:
        claim = known.get(cid)
        if claim is None:
            continue  # a claim that was removed from the registry since
        jobs = manifest.get("jobs", {}).get(cid)
        why = manifest.get("not_run", {}).get(cid)
        variants = manifest.get("variant_jobs", {}).get(cid)
        results.append(judge_claim(claim, ledger, jobs, mode, seeds, why, variants))
    return results
