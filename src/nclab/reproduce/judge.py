"""Judging claims at every scale the evidence covers, per valid seed and on the mean.

A claim is judged at each scale (quick, medium, full: :data:`~.registry.SCALES`) on the runs of
that scale: those a reproduce just made, else the ledger's records (:mod:`nclab.evidence`). At a
scale, :func:`~.outcomes.verdict` gives the outcome (:class:`~nclab.verdicts.Outcome`) with its
typed reasons, from each run's validity per seed and its deviations from the paper's setting
(:class:`~.outcomes.Scene`); a claim that is not reproduced there carries a
:class:`~nclab.verdicts.Diagnosis`: the one the claim declares for that scale, else (for an
inconclusive outcome) the one its reasons give. A scale without evidence is "not run", with why
(:class:`~nclab.verdicts.Why`: no preset, needs a GPU, not in the ledger, running, a record
that predates a check); a smaller rung whose record is a larger rung's is "not run: same run as
<scale>" -- one record is one scale.

The claim's headline is the outcome at the largest scale judged, then any smaller scale's, then
the larger scales not run (with the claim's runtime estimate there; a scale the claim has no
preset for is left out): ``"inconclusive at medium size (no-wd-loss: scale too small: ...);
reproduced at quick size; not run at full size (needs a GPU)"``. The result's top-level fields
(outcome, reasons, diagnosis, checks, measured values, runs, figures, instance) are those of
that largest scale; ``scales`` holds every scale's.

The ledger's evidence at a scale is a record of each run (one that lacks a key a check reads
judges nothing: "the record predates <key>"), else where a run still going stands; a claim's
variants are judged likewise and named after its outcome.

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
from ..runs import RunDir, to_jsonable
from ..tables import fmt_secs
from ..verdicts import SCALES, Outcome, Reason, Why, derived_diagnosis
from . import registry
from .checks import STATEMENT
from .instance import deviations
from .outcomes import Scene, Summaries, verdict
from .registry import Claim, Variant
from .results import NOT_RUN, ClaimResult, ScaleResult, scale_words
from .summaries import lookup, lookup_std

MANIFEST = "reproduce.json"


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


def scene_of(claim: Claim, scale: str, seeds: Mapping[str, int] | None = None) -> Scene:
    """What the judge needs of ``scale`` besides the summaries: each run's deviations from the
    paper's setting and its validity conditions."""
    return Scene(
        scale,
        deviations(claim, scale, seeds),
        {alias: spec.valid_if() for alias, spec in claim.runs.items()},
    )


def judge_scale(
    claim: Claim,
    scale: str,
    summaries: dict[str, dict[str, Any]],
    runs: dict[str, str],
    source: str,
    provenance: dict[str, dict[str, Any]] | None = None,
    seeds: int | None = None,
    described: Claim | None = None,
    missing: list[str] | None = None,
) -> ScaleResult:
    """The claim judged at ``scale`` on these run summaries (see the module docstring); the
    instance text is that of ``described`` (a variant's claim, :func:`as_variant`) when given,
    with the seed counts of the runs judged; ``missing``: the paths its ledger records predate
    (checks reading them are untestable there)."""
    counts = {a: len(s.get("seeds") or [0]) for a, s in summaries.items()}
    shown = described or claim
    scene = replace(scene_of(shown, scale, counts), missing=frozenset(missing or ()))
    v = verdict(claim, summaries, scene)
    ok = all(not s.get("failed") for s in summaries.values())
    res = ScaleResult(
        scale,
        v.outcome,
        list(v.reasons),
        seeds=max(counts.values(), default=0),
        source=source,
        checks=v.checks,
        invalid=v.invalid,
        runs=runs,
        provenance=provenance or {},
        command=command_for(claim, scale, seeds),
        presets=presets_of(claim, scale),
    ).set_instance(shown.instance_of(scale, counts))
    res.diagnosis = diagnosis_of(claim, res)
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


def diagnosis_of(claim: Claim, res: ScaleResult):
    """The diagnosis of a scale that is not reproduced: the claim's own for that scale (its
    ``diagnosis``), else what the reasons of an inconclusive outcome give; None where the
    outcome is reproduced or not run."""
    if res.outcome in (Outcome.REPRODUCED, Outcome.NOT_RUN):
        return None
    declared = claim.diagnosis_at(res.scale, res.outcome)
    if declared is not None:
        return declared
    if res.outcome is Outcome.INCONCLUSIVE:
        return derived_diagnosis(res.reasons)
    return None


def not_run_scale(
    claim: Claim, scale: str, why: Why, seeds: int | None = None, detail: str = ""
) -> ScaleResult:
    """A scale without evidence: ``why`` (no preset, needs a GPU, not in the ledger, ...)."""
    res = ScaleResult(scale, NOT_RUN, [Reason(why, (), detail)])
    res.set_instance(claim.instance_of(scale))
    res.presets = presets_of(claim, scale)
    gpu = " (on a machine with a GPU)" if why is Why.NEEDS_GPU else ""
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
        words.append(progress_words(entry).removeprefix("running: "))
        resume.append(entry["resume"])
    if not words:
        return None
    res = not_run_scale(claim, scale, Why.RUNNING, detail="; ".join(words))
    res.command = " && ".join(resume)
    return res


def _cost(claim: Claim, scale: str) -> str:
    """About how long a claim's runs take at ``scale`` (the claim's own estimate)."""
    if scale == "quick":
        return f"about {fmt_secs(claim.quick_seconds)}"
    where = "on a GPU" if claim.needs_gpu(scale) else "on CPU"
    return f"about {fmt_secs(claim.seconds(scale))} a run {where}"


# --- the claim: every scale and the headline ----------------------------------------------------


def _not_run_words(s: str, r: ScaleResult, claim: Claim | None = None) -> str:
    """``"running at full size (1/3 units finished, ...)"``, ``"not run at full size (needs a
    GPU)"``, ``"quick size: same run as full size"``."""
    detail = r.reasons[0].detail if r.reasons else ""
    if r.why is Why.RUNNING:
        return f"running at {scale_words(s)} ({detail})"
    if r.why is Why.SAME_RUN:
        return f"{scale_words(s)}: same run as {scale_words(r.same_as)}"
    if r.why is Why.PREDATES:
        return f"not run at {scale_words(s)} ({detail})"
    if r.why is Why.NEEDS_GPU or claim is None:
        return f"not run at {scale_words(s)} ({(r.why or Why.NOT_IN_LEDGER).value})"
    return f"not run at {scale_words(s)} ({_cost(claim, s)})"


def _kind(r: ScaleResult) -> str:
    """What a headline part is, for its colour: the outcome, or why the scale is not run."""
    return r.outcome.value if r.judged else (r.why or Why.NOT_IN_LEDGER).value


def headline(
    claim: Claim, scales: Mapping[str, ScaleResult]
) -> tuple[Outcome, str, list[tuple[str, str]]]:
    """(outcome, scale, headline parts) from every scale's result (module docstring): each part
    (kind, text), its kind an outcome or why the scale is not run."""
    order = [s for s in SCALES if s in scales]
    judged = [s for s in order if scales[s].judged]
    if not judged:
        shown = [s for s in order if scales[s].why not in (Why.NO_PRESET, Why.SAME_RUN)]
        going = [s for s in shown if scales[s].why is Why.RUNNING]
        stale = [s for s in shown if scales[s].why is Why.PREDATES]
        pick = going or stale or shown
        parts = [(_kind(scales[s]), _not_run_words(s, scales[s])) for s in pick]
        return NOT_RUN, "", parts or [(Why.NO_PRESET.value, "not run (no preset)")]
    top = judged[-1]
    parts = [(_kind(scales[s]), scales[s].words()) for s in reversed(judged)]
    for s in order[order.index(top) + 1 :]:
        r = scales[s]
        if r.why is Why.NO_PRESET:
            continue  # the claim has no run at this scale: nothing to say
        parts.append((_kind(r), _not_run_words(s, r, claim)))
    return scales[top].outcome, top, parts


def claim_result(claim: Claim, scales: Mapping[str, ScaleResult]) -> ClaimResult:
    """The claim's result: the headline, the largest judged scale's fields at the top level."""
    outcome, top, parts = headline(claim, scales)
    if top:
        r = scales[top]
    else:  # nothing judged: the scale it needs a GPU for, else the first with a preset
        gpu = [x for x in scales.values() if x.why is Why.NEEDS_GPU]
        ran = [x for x in scales.values() if x.why is not Why.NO_PRESET]
        r = (gpu or ran or list(scales.values()) or [None])[0]
    res = ClaimResult(
        claim.id,
        claim.paper,
        claim.where,
        claim.claim,
        outcome,
        paper_values=dict(claim.paper_values),
        note=claim.note,
        headline="; ".join(text for _, text in parts),
        headline_parts=parts,
        scale=top,
        statement=claim.sentence,
        scales={s: to_jsonable(asdict(x)) for s, x in scales.items()},
    )
    if r is not None:
        res.theory, res.measured, res.checks = r.theory, r.measured, r.checks
        res.runs, res.figures, res.command = r.runs, r.figures, r.command
        res.instance, res.instance_kind = r.instance, r.instance_kind
        res.reasons, res.diagnosis = r.reasons, r.diagnosis
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
    readable = [
        c for c in claim.checks if c.kind == STATEMENT and not set(c.paths()) & set(missing)
    ]
    if not readable:  # recorded before the summary had what the statement checks read
        alias = missing[0].split(":")[0] if ":" in missing[0] else next(iter(runs))
        commit = (prov.get(alias, {}).get("commit") or "unknown")[:7]
        why = f"the record ({commit}) predates {missing[0]}: re-run it to judge"
        res = not_run_scale(claim, scale, Why.PREDATES, detail=why)
        res.runs, res.provenance = runs, prov
        return res
    described = as_variant(claim, variant) if variant is not None else None
    return judge_scale(
        claim, scale, summaries, runs, "ledger", prov, described=described, missing=missing
    )


def unread_paths(claim: Claim, summaries: Summaries) -> list[str]:
    """The paths the claim's checks read that ``summaries`` do not hold (a record made before
    its experiment wrote them, or one where it wrote None: a field added later is None in an
    older record read through its schema)."""
    out = []
    for chk in claim.checks:
        for path in chk.paths():
            try:
                if lookup(summaries, path) is None:
                    out.append(path)
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
                    why = Why.NEEDS_GPU if claim.needs_gpu(scale) else Why.NOT_IN_LEDGER
                    r = not_run_scale(claim, scale, why, seeds)
            if r.why is not Why.RUNNING:
                r.command = command_for(claim, scale, seeds) + " --variants"
            if not r.source:  # judged on runs, its instance has the variant's settings already
                r.set_instance(as_variant(claim, v).instance_of(scale))
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
        if r.judged:
            return r.words()
        if r.why is Why.RUNNING:
            return _not_run_words(s, r)
        return f"not run at {scale_words(s)}"

    return f"with {label}: " + "; ".join(words(s, r) for s, r in reversed(list(scales.items())))


def same_runs(scales: dict[str, ScaleResult]) -> None:
    """A smaller rung judged on the very records of a larger one is not evidence of its own:
    it becomes "not run: same run as <larger scale>", keeping its presets and records (one
    record is one scale)."""
    order = [s for s in SCALES if s in scales]
    for i, s in enumerate(order):
        r = scales[s]
        if not r.judged or r.source != "ledger":
            continue
        big = next((t for t in order[i + 1 :] if _same_records(scales[t], r)), None)
        if big is None:
            continue
        why = Reason(Why.SAME_RUN, (), f"{s} re-uses the {big} record")
        scales[s] = ScaleResult(
            s,
            NOT_RUN,
            [why],
            instance=r.instance,
            instance_kind=r.instance_kind,
            runs=r.runs,
            provenance=r.provenance,
            presets=r.presets,
            command=r.command,
            same_as=big,
        )


def _same_records(big: ScaleResult, small: ScaleResult) -> bool:
    return big.judged and big.source == "ledger" and big.runs == small.runs


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
    The variants are reported beside the claim's outcome (the headline names them after it) and
    never change it. ``not_run``: why ``mode`` was not run (a :class:`~nclab.verdicts.Why`
    value)."""
    scales: dict[str, ScaleResult] = {}
    for scale in SCALES:
        if not claim.runnable(scale):
            scales[scale] = not_run_scale(claim, scale, Why.NO_PRESET, seeds)
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
            scales[scale] = not_run_scale(claim, scale, _why_not_run(not_run), seeds)
        else:
            missing = Why.NOT_IN_LEDGER if ledger is not None else Why.NO_LEDGER
            why = Why.NEEDS_GPU if claim.needs_gpu(scale) else missing
            scales[scale] = not_run_scale(claim, scale, why, seeds)
    same_runs(scales)
    res = claim_result(claim, scales)
    variants = judge_variants(claim, ledger, ran_variants, mode, seeds)
    for label, by_scale in variants.items():
        if not by_scale:
            continue  # the claim has no run at the variant's scales
        res.variants[label] = {s: to_jsonable(asdict(r)) for s, r in by_scale.items()}
        words = variant_words(label, by_scale)
        shown = [r for r in reversed(by_scale.values()) if r.judged] or list(by_scale.values())
        res.headline += "; " + words
        res.headline_parts.append((_kind(shown[0]), words))
    return res


def _why_not_run(text: str) -> Why:
    """A manifest's reason for not running a claim (a :class:`~nclab.verdicts.Why` value; older
    manifests wrote ``"not run: needs GPU"`` or ``"not run: no quick preset"``)."""
    try:
        return Why(text)
    except ValueError:
        return Why.NEEDS_GPU if "GPU" in text else Why.NO_PRESET


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
