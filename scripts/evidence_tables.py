"""Docs tables generated from the ledger: every block ``<!-- evidence: SPEC -->`` ...
``<!-- /evidence -->`` of the given Markdown files is rewritten from the ledger's records.

Usage::

    python scripts/evidence_tables.py [FILE.md ...] [--ledger DIR] [--check]

Files default to ``docs/*.md``, the ledger to the repository's ``evidence/``. ``--check`` writes
nothing and exits 1 when a block is out of date (``tests/test_docs.py`` runs it against the
repository's ledger).

SPEC is one of (words split as by a shell, so quote what holds spaces)::

    claim PATTERN [PATTERN ...] [value=LABEL ...]
    run EXPERIMENT/PRESET ... [value=PATH ...] [each=PATH]   (patterns of one experiment)
    bench NAME [label=GLOB ...] [rows=A,B,...] value=PATH ...
    misses PATTERN [PATTERN ...]

``claim``: for every claim whose id matches a glob PATTERN (sorted by id), its headline and a
table with one row per scale (quick, medium, full): the preset(s), seeds, the claim's measured
values (mean ± std over seeds; ``value=`` globs pick the columns by label, default all), the
verdict at that scale as the judge gives it on the ledger (:func:`nclab.reproduce.judge.judge_claim`),
the date and commit of the record(s) it judged, and the command that produced them (the
record's provenance; the other claims of a batched ``nclab reproduce`` call are left out and
counted). A scale without a record says ``not run`` and why (needs a GPU, not yet in the ledger,
the record is stale).

``run``: the current records of an experiment's presets (PRESET may be a glob), whatever their
overrides, with the summary values at each ``value=`` PATH (a claim path: dotted keys,
``name[field=value]`` selections); with ``each=PATH`` one table per record with a row per entry
of the mapping or list at PATH (``each=by_depth value=nc1``: NC1 per depth), or, when PATH is a
list of numbers, a row per number with the entry of that position of each value's list
(``each=ns value=gap``: the gap at each n). A preset without a record says ``not run``.

``misses``: every claim matching a PATTERN that is not reproduced at some judged scale (partial,
contradicted or inconclusive), a row per such scale, largest first: the outcome, the diagnosis
(its kind and line: the claim's own, or what an inconclusive outcome's reasons give) and the
evidence it names (ledger records and outside sources, each resolved in the ledger:
:meth:`nclab.evidence.Ledger.resolve`); a row per outcome count closes it.

``bench``: the recorded runs of the benchmark script ``benchmarks/NAME.py``
(:mod:`nclab.evidence.bench`, ``nclab evidence bench``), oldest first, those whose label matches a
``label=`` glob if given: a row per record with the values at each ``value=`` PATH of the JSON
object the script printed (dotted keys), the machine's load average before → after, and the
date, commit and command; with ``rows=a,b,c`` a row per record and entry, ``{row}`` in a PATH
standing for the entry (``value={row}_inmem_s``).

Each ``claim`` block ends with the claim's evidence figure (its statement checks per seed at
every scale, :mod:`nclab.reproduce.reports.evidence_figure`), an SVG in ``docs/figures/evidence/`` that the
script writes beside the Markdown; run over all of docs/, it keeps that folder to exactly the
figures the blocks link (``--check`` fails on a missing, changed or left-over one).

Output is deterministic: records sorted, numbers to 4 significant digits (std to 2).
"""

from __future__ import annotations

import argparse
import fnmatch
import json
import re
import shlex
import sys
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
OPEN = re.compile(r"<!-- evidence: (?P<spec>.*?) -->")
CLOSE = "<!-- /evidence -->"
#: the claims' evidence figures (:mod:`nclab.reproduce.reports.evidence_figure`), under docs/
FIGURES = "figures/evidence"
NOT_YET = "not yet in the ledger"
NONE = "—"


class SpecError(ValueError):
    """A block whose spec cannot be read or names nothing."""


# --- the ledger, read once ----------------------------------------------------------------------


def open_ledger(root: str | Path):
    """The ledger at ``root``, its records read once (a docs run asks it many times)."""
    from nclab.evidence import Ledger

    class Cached(Ledger):
        def __init__(self, root):
            super().__init__(root)
            self._records = list(super().records())
            self.by_path = {str(r.path): r for r in self._records}

        def records(self) -> Iterator:
            return iter(self._records)

    return Cached(root)


# --- specs -----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Spec:
    kind: str  # "claim", "run", "bench" or "misses"
    patterns: tuple[str, ...]
    values: tuple[str, ...] = ()
    each: str = ""
    labels: tuple[str, ...] = ()
    rows: tuple[str, ...] = ()


def parse_spec(text: str) -> Spec:
    """``claim PATTERN ... [value=...]``, ``run EXPERIMENT/PRESET ... [value=...] [each=...]`` or
    ``bench NAME [label=...] [rows=...] value=...``."""
    try:
        words = shlex.split(text)
    except ValueError as exc:
        raise SpecError(f"{text!r}: {exc}") from None
    if not words or words[0] not in ("claim", "run", "bench", "misses"):
        raise SpecError(f"{text!r}: a spec starts with 'claim', 'run', 'bench' or 'misses'")
    kind, patterns, values, each, labels, rows = words[0], [], [], "", [], []
    allowed = {
        "claim": ("value",),
        "run": ("value", "each"),
        "bench": ("value", "label", "rows"),
        "misses": (),
    }
    for w in words[1:]:
        key, eq, val = w.partition("=")
        if eq and key in ("value", "each", "label", "rows") and key not in allowed[kind]:
            raise SpecError(f"{text!r}: {key}= is not for {kind!r} blocks")
        if eq and key == "value":
            values.append(val)
        elif eq and key == "each":
            each = val
        elif eq and key == "label":
            labels.append(val)
        elif eq and key == "rows":
            rows += [r for r in val.split(",") if r]
        else:
            patterns.append(w)
    if not patterns:
        raise SpecError(f"{text!r}: name a claim pattern, an experiment/preset or a benchmark")
    if kind == "run" and (
        any("/" not in p for p in patterns) or len({p.partition("/")[0] for p in patterns}) != 1
    ):
        raise SpecError(f"{text!r}: a run block names EXPERIMENT/PRESET patterns of one experiment")
    if kind == "bench" and (len(patterns) != 1 or not values):
        raise SpecError(f"{text!r}: a bench block names one benchmark and its value= paths")
    return Spec(kind, tuple(patterns), tuple(values), each, tuple(labels), tuple(rows))


# --- formatting -----------------------------------------------------------------------------------


def fmt_num(x: Any, digits: int = 4) -> str:
    """A value as a table shows it: numbers to ``digits`` significant digits (``1.5e-14``,
    ``0.1995``, ``1.235e4``), lists joined, booleans yes / no, None as a dash.

    >>> [fmt_num(v) for v in (0.19951, 6.8e-14, 12345.6, 3, 1.0, True, None, [2, 5, 13])]
    ['0.1995', '6.8e-14', '1.235e4', '3', '1', 'yes', '—', '2, 5, 13']
    """
    if x is None:
        return NONE
    if isinstance(x, bool):
        return "yes" if x else "no"
    if isinstance(x, int):
        return str(x)
    if isinstance(x, float):
        if x != x:
            return "nan"
        if x == 0:
            return "0"
        s = f"{x:.{digits}g}"
        return re.sub(r"e([+-])0*(\d+)", lambda m: "e" + ("-" if m[1] == "-" else "") + m[2], s)
    if isinstance(x, (list, tuple)):
        return ", ".join(fmt_num(v, digits) for v in x) if x else NONE
    if isinstance(x, Mapping):
        return NONE
    return str(x)


def fmt_mean_std(mean: Any, std: Any) -> str:
    """``0.1995 ± 0.0029``; the mean alone without a std (one seed) or for non-numbers."""
    text = fmt_num(mean)
    numeric = isinstance(mean, (int, float)) and not isinstance(mean, bool)
    if numeric and isinstance(std, (int, float)) and not isinstance(std, bool):
        return f"{text} ± {fmt_num(float(std), 2)}"
    return text


def cell(text: str) -> str:
    """Text safe inside a Markdown table cell."""
    return text.replace("|", "\\|").replace("\n", " ")


def table(header: Sequence[str], rows: Iterable[Sequence[str]]) -> list[str]:
    out = ["| " + " | ".join(cell(h) for h in header) + " |", "|" + "---|" * len(header)]
    out += ["| " + " | ".join(cell(c) for c in row) + " |" for row in rows]
    return out


def commit_text(prov: Mapping[str, Any]) -> str:
    commit = prov.get("commit")
    text = f"`{commit[:7]}`" if commit else "unknown"
    return text + (" (dirty)" if prov.get("dirty") else "")


def date_text(prov: Mapping[str, Any]) -> str:
    return (prov.get("started") or prov.get("recorded") or "")[:10] or NONE


def command_text(command: str | None, keep: Callable[[str], bool]) -> str:
    """The record's command, in code; of a ``nclab reproduce`` call only the claim patterns
    ``keep`` accepts, the others counted."""
    if not command:
        return "unknown"
    try:
        words = shlex.split(command)
    except ValueError:
        return f"`{command}`"
    if words[:2] != ["nclab", "reproduce"]:
        return f"`{command}`"
    i = 2
    while i < len(words) and not words[i].startswith("-"):
        i += 1
    patterns = words[2:i]
    kept = [p for p in patterns if keep(p)]
    dropped = len(patterns) - len(kept)
    text = f"`{shlex.join(words[:2] + kept + words[i:])}`"
    if dropped:
        text += f" (one call with {dropped} other claim{'s' if dropped > 1 else ''})"
    return text


class Footnotes:
    """Commands numbered in the order they are first cited."""

    def __init__(self) -> None:
        self.items: list[str] = []

    def cite(self, text: str) -> str:
        if text not in self.items:
            self.items.append(text)
        return f"[{self.items.index(text) + 1}]"

    def lines(self) -> list[str]:
        return [f"- [{i}] {t}" for i, t in enumerate(self.items, 1)]


# --- claim blocks ---------------------------------------------------------------------------------


def select_claims(patterns: Sequence[str], claims: Sequence | None = None) -> list:
    from nclab.reproduce.registry import all_claims

    claims = list(claims if claims is not None else all_claims())
    out = []
    for p in patterns:
        hits = [c for c in claims if fnmatch.fnmatchcase(c.id, p)]
        if not hits:
            raise SpecError(f"no claim matches {p!r}")
        out += [c for c in hits if c not in out]
    return sorted(out, key=lambda c: c.id)


def pick_labels(claim, globs: Sequence[str]) -> list[str]:
    labels = list(claim.measured)
    if not globs:
        return labels
    return [x for x in labels if any(fnmatch.fnmatchcase(x, g) for g in globs)]


def not_run_text(claim, scale: str, sr: Mapping[str, Any], ledger) -> str:
    from nclab.verdicts import Why

    why = Why(sr["reasons"][0]["why"]) if sr.get("reasons") else Why.NOT_IN_LEDGER
    reason = sr.get("reason", "")
    if why is Why.NO_PRESET:
        return f"{NONE} (no {scale} preset)"
    if why is Why.NEEDS_GPU:
        return "not run (needs a GPU)"
    if why is Why.SAME_RUN:
        return f"same run as {sr.get('same_as')}"
    stale = any(
        not ledger.find(s.experiment, s.preset(scale), s.set)
        and ledger.find(s.experiment, s.preset(scale), s.set, current=False)
        for s in claim.runs.values()
    )
    if stale:
        return "not run (the ledger's record is stale: its preset changed since)"
    return f"not run ({NOT_YET if why is Why.NOT_IN_LEDGER else reason})"


def scale_row(
    claim, ledger, scale: str, sr: Mapping[str, Any], labels: Sequence[str], notes, variant=""
) -> list[str]:
    """One row of a claim's table: ``scale`` (of the claim, or of its variant labelled
    ``variant``) judged as ``sr`` says: the values, verdict and provenance, or why it is not run
    and the command that runs it."""
    presets = [s.preset(scale) for s in claim.runs.values()]
    preset = " + ".join(f"`{p}`" for p in presets if p) or NONE
    name = f"{scale}, with {variant}" if variant else scale
    if sr["outcome"] == "not run":
        why = not_run_text(claim, scale, sr, ledger)
        todo = NONE
        if claim.runnable(scale):
            gpu = " (on a machine with a GPU)" if claim.needs_gpu(scale) else ""
            extra = " --variants" if variant else ""
            cmd = f"nclab reproduce {shlex.quote(claim.id)} --scale {scale}{extra} --record"
            todo = notes.cite(f"to run: `{cmd}`{gpu}")
        return [name, preset, NONE, *[NONE] * len(labels), why, NONE, NONE, todo]
    recs = [ledger.by_path[p] for p in sr["runs"].values() if p in ledger.by_path]
    measured = sr["measured"]
    values = [
        fmt_mean_std(measured.get(x, {}).get("mean"), measured.get(x, {}).get("std"))
        for x in labels
    ]
    verdict = sr["outcome"] + (f" ({sr['reason']})" if sr["reason"] else "")
    dates = _unique(date_text(r.provenance) for r in recs)
    commits = _unique(commit_text(r.provenance) for r in recs)
    keep = lambda p: fnmatch.fnmatchcase(claim.id, p)  # noqa: E731
    cmds = _unique(notes.cite(command_text(r.provenance.get("command"), keep)) for r in recs)
    return [name, preset, str(sr["seeds"]), *values, verdict, dates, commits, cmds]


def claim_block(
    claim, ledger, globs: Sequence[str], figures: dict[str, str] | None = None
) -> list[str]:
    """A claim's headline, its table (a row per scale, then a row per scale of each variant:
    "medium, with the paper's weight decay 5e-4"), the commands behind the rows and its evidence
    figure."""
    from nclab.reproduce.judge import judge_claim
    from nclab.reproduce.reports.evidence_figure import evidence_svg
    from nclab.verdicts import SCALES

    result = judge_claim(claim, ledger)
    labels = pick_labels(claim, globs)
    notes = Footnotes()
    rows = [scale_row(claim, ledger, s, result.scales[s], labels, notes) for s in SCALES]
    for label, by_scale in result.variants.items():
        rows += [
            scale_row(claim, ledger, s, by_scale[s], labels, notes, variant=label)
            for s in SCALES
            if s in by_scale
        ]
    headline = result.headline if result.scale else "not run yet (no record in the ledger)"
    head = [f"**`{claim.id}`**: {headline}.", ""]
    header = ["scale", "preset", "seeds", *labels, "outcome", "recorded", "commit", "command"]
    out = head + table(header, rows)
    if notes.items:
        out += ["", *notes.lines()]
    svg = evidence_svg(result)
    if svg is not None and figures is not None:
        name = figure_name(claim.id)
        figures[name] = svg + "\n"
        out += [
            "",
            f"![the statement checks of {claim.id} per seed at every scale]({FIGURES}/{name})",
        ]
    return out


def misses_block(claims: Sequence, ledger) -> list[str]:
    """The claims not reproduced at some judged scale, with their diagnoses (module docstring)."""
    from nclab.evidence import Ledger
    from nclab.reproduce.judge import judge_claim
    from nclab.verdicts import SCALES, Outcome

    book = Ledger(ledger.root)
    rows, counts = [], {}
    for claim in claims:
        result = judge_claim(claim, ledger)
        for scale in reversed(SCALES):
            sr = result.scales[scale]
            if sr["outcome"] not in (Outcome.PARTIAL, Outcome.CONTRADICTED, Outcome.INCONCLUSIVE):
                continue
            counts[sr["outcome"]] = counts.get(sr["outcome"], 0) + 1
            d = sr.get("diagnosis") or {}
            refs = d.get("evidence") or ()
            shown = [f"`{r}`" + ("" if book.resolve(r) else " (missing)") for r in refs]
            kind = d.get("kind", "—") + (" (from its reasons)" if d.get("derived") else "")
            rows.append(
                [
                    f"`{claim.id}`",
                    scale,
                    sr["outcome"],
                    kind,
                    d.get("text") or "—",
                    ", ".join(shown) or "the judged records",
                ]
            )
    header = ["claim", "scale", "outcome", "diagnosis", "why", "evidence"]
    total = ", ".join(f"{n} {o}" for o, n in sorted(counts.items()))
    return [*table(header, rows), "", f"{len(rows)} scales not reproduced: {total or 'none'}."]


def figure_name(claim_id: str) -> str:
    """The file of a claim's evidence figure in :data:`FIGURES`."""
    return claim_id.replace("/", "__") + ".svg"


def _unique(items: Iterable[str]) -> str:
    return ", ".join(dict.fromkeys(items)) or NONE


# --- run blocks -----------------------------------------------------------------------------------


def _needs_gpu(experiment: str, preset: str) -> bool:
    from nclab.reproduce.registry import all_claims

    for c in all_claims():
        for s in c.runs.values():
            if s.experiment == experiment and s.full == preset and s.full_needs_gpu:
                return True
    return preset.endswith("-gpu")


def _claims_running(experiment: str, preset: str | None) -> list[str]:
    """The ids of the claims that run ``experiment``'s ``preset`` at some scale."""
    from nclab.reproduce.registry import all_claims
    from nclab.verdicts import SCALES

    return [
        c.id
        for c in all_claims()
        if any(
            s.experiment == experiment and s.preset(x) == preset
            for s in c.runs.values()
            for x in SCALES
        )
    ]


def _value(summary: Mapping[str, Any], path: str) -> str:
    """The value at ``path`` with its std over seeds: from the summary's ``std`` tree, else from
    the nearest enclosing record's own ``std`` (a sweep row's: ``by_depth.3.std.nc2_last``)."""
    from nclab.reproduce.summaries import lookup, lookup_std

    s = {"main": summary}
    try:
        mean = lookup(s, path)
    except KeyError:
        return NONE
    std = lookup_std(s, path)
    segs = re.split(r"\.(?![^\[]*\])", path)  # dots outside [field=value] selections
    for i in range(len(segs) - 1, 0, -1):
        if std is not None:
            break
        try:
            std = lookup(s, ".".join([*segs[:i], "std", *segs[i:]]))
        except (KeyError, IndexError, TypeError):
            pass
    return fmt_mean_std(mean, std)


def _overrides_text(overrides: Mapping[str, Any]) -> str:
    if not overrides:
        return NONE
    return ", ".join(f"`{k}={json.dumps(v)}`" for k, v in sorted(overrides.items()))


def _entries(summary: Mapping[str, Any], path: str) -> list[tuple[str, Callable[[str], str]]]:
    """(label, the path of a value in that entry) of each entry at ``path``: of a mapping or a
    list of records, a value path is within the entry (``by_depth.L2.nc1``); of a list of
    numbers (``ns``: n = 25, 100, ...) the entries label the rows and a value path names a
    list of the same length, indexed by the row (``gap.0``)."""
    from nclab.reproduce.summaries import lookup

    try:
        node = lookup({"main": summary}, path)
    except KeyError:
        return []
    if isinstance(node, Mapping):
        return [(str(k), lambda v, k=k: f"{path}.{k}.{v}") for k in node]
    if isinstance(node, list) and all(isinstance(e, Mapping) for e in node):
        return [(str(i), lambda v, i=i: f"{path}.{i}.{v}") for i in range(len(node))]
    if isinstance(node, list):
        return [(fmt_num(e), lambda v, i=i: f"{v}.{i}") for i, e in enumerate(node)]
    return []


def run_block(spec: Spec, ledger) -> list[str]:
    from nclab.experiments.catalog import get_experiment

    experiment = spec.patterns[0].partition("/")[0]
    exp = get_experiment(experiment)
    found: set[str] = set()
    for pattern in (p.partition("/")[2] for p in spec.patterns):
        hits = {p for p in exp.presets if fnmatch.fnmatchcase(p, pattern)}
        if not hits:
            raise SpecError(f"{experiment} has no preset matching {pattern!r}")
        found |= hits
    presets = sorted(found)
    notes = Footnotes()
    out: list[str] = []
    rows = []
    header = ["preset", "overrides", "seeds", *(f"`{v}`" for v in spec.values)]
    header += ["recorded", "commit", "command"]
    stale = 0
    for preset in presets:
        mine = [r for r in ledger.records() if r.experiment == experiment and r.preset == preset]
        current = [r for r in mine if r.current()]
        stale += len(mine) - len(current)
        current.sort(  # the preset as it is first, then by overrides, seeds, date
            key=lambda r: (
                bool(r.overrides),
                json.dumps(dict(r.overrides), sort_keys=True),
                len(r.seeds),
                r.started,
            )
        )
        ids = _claims_running(experiment, preset)
        keep = lambda p, ids=ids: any(fnmatch.fnmatchcase(i, p) for i in ids)  # noqa: E731
        if not current:
            why = "needs a GPU" if _needs_gpu(experiment, preset) else NOT_YET
            if spec.each:
                out += [f"`{preset}`: not run ({why}).", ""]
            else:
                rows.append(
                    [
                        f"`{preset}`",
                        NONE,
                        NONE,
                        *([NONE] * len(spec.values)),
                        f"not run ({why})",
                        NONE,
                        NONE,
                    ]
                )
            continue
        for r in current:
            prov = r.provenance
            cmd = notes.cite(command_text(prov.get("command"), keep))
            meta = [f"`{preset}`", _overrides_text(r.overrides), str(len(r.seeds))]
            tail = [date_text(prov), commit_text(prov), cmd]
            if not spec.each:
                rows.append(meta + [_value(r.summary, v) for v in spec.values] + tail)
                continue
            out += [
                f"`{preset}`, overrides {meta[1]}, {meta[2]} seed{'' if meta[2] == '1' else 's'}, "
                f"recorded {tail[0]} at "
                f"{tail[1]}, command {cmd}:",
                "",
            ]
            entries = _entries(r.summary, spec.each)
            body = [
                [label] + [_value(r.summary, at(v)) for v in spec.values] for label, at in entries
            ]
            out += [*table([f"`{spec.each}`", *(f"`{v}`" for v in spec.values)], body), ""]
    if not spec.each:
        out = [*table(header, rows), ""]
    if stale:
        out += [f"({stale} stale record{'s' if stale > 1 else ''} of these presets left out.)", ""]
    if notes.items:
        out += [*notes.lines(), ""]
    return out[:-1] if out and out[-1] == "" else out


# --- bench blocks ---------------------------------------------------------------------------------


def _dotted(tree: Any, path: str) -> Any:
    """The value at the dotted ``path`` of a benchmark's JSON object (list entries by index);
    None where there is none."""
    node = tree
    for key in path.split("."):
        if isinstance(node, Mapping) and key in node:
            node = node[key]
        elif isinstance(node, list) and key.isdigit() and int(key) < len(node):
            node = node[int(key)]
        else:
            return None
    return node


def bench_block(spec: Spec, root: Path) -> list[str]:
    from nclab.evidence.bench import benchmark_records

    name = spec.patterns[0]
    recs = [
        r
        for r in benchmark_records(root, name)
        if not spec.labels or any(fnmatch.fnmatchcase(r.label, g) for g in spec.labels)
    ]
    if not recs:
        which = f" (label {', '.join(spec.labels)})" if spec.labels else ""
        return [f"`benchmarks/{name}.py`{which}: not run ({NOT_YET})."]
    notes = Footnotes()
    rows = []
    for r in recs:
        prov = r.provenance
        load = f"{fmt_num(prov.get('load_before'), 2)} → {fmt_num(prov.get('load_after'), 2)}"
        tail = [load, date_text(prov), commit_text(prov), notes.cite(f"`{prov.get('command')}`")]
        for entry in spec.rows or [""]:
            values = [fmt_num(_dotted(r.result, v.replace("{row}", entry))) for v in spec.values]
            rows.append([r.label, *([entry] if spec.rows else []), *values, *tail])
    header = ["run", *(["case"] if spec.rows else []), *(f"`{v}`" for v in spec.values)]
    header += ["load before → after", "recorded", "commit", "command"]
    return [*table(header, rows), "", *notes.lines()]


# --- blocks in a file -----------------------------------------------------------------------------


def render(
    spec: Spec, ledger, claims: Sequence | None = None, figures: dict[str, str] | None = None
) -> str:
    """The block's generated Markdown (without its markers); the claims' evidence figures go
    into ``figures`` (file name -> SVG) when given, and the Markdown links them."""
    if spec.kind == "run":
        return "\n".join(run_block(spec, ledger))
    if spec.kind == "bench":
        return "\n".join(bench_block(spec, ledger.root))
    chosen = select_claims(spec.patterns, claims)
    if spec.kind == "misses":
        return "\n".join(misses_block(chosen, ledger))
    for g in spec.values:
        if not any(pick_labels(c, [g]) for c in chosen):
            raise SpecError(f"value={g!r} matches no measured value of {', '.join(spec.patterns)}")
    parts = [claim_block(c, ledger, spec.values, figures) for c in chosen]
    return "\n\n".join("\n".join(p) for p in parts)


@dataclass
class Block:
    spec: str
    start: int  # where the body starts (after the opening marker's line)
    end: int  # where the closing marker starts
    line: int
    errors: list[str] = field(default_factory=list)


def _unfenced(text: str) -> str:
    """``text`` with the inside of its fenced code blocks blanked (same length): markers shown
    as examples in code are not blocks."""
    out, fence = [], ""
    for line in text.splitlines(keepends=True):
        mark = re.match(r"\s*(`{3,}|~{3,})", line)
        if fence:
            if mark and mark[1][0] == fence[0] and len(mark[1]) >= len(fence):
                fence = ""
            out.append(re.sub(r"[^\n]", " ", line))
        else:
            fence = mark[1] if mark else ""
            out.append(line)
    return "".join(out)


def blocks(text: str, where: str = "") -> list[Block]:
    """The evidence blocks of ``text`` (not those in fenced code); an opening marker without its
    closing one is an error."""
    out = []
    pos = 0
    text = _unfenced(text)
    while (m := OPEN.search(text, pos)) is not None:
        line = text.count("\n", 0, m.start()) + 1
        body = m.end() + 1 if text[m.end() : m.end() + 1] == "\n" else m.end()
        end = text.find(CLOSE, body)
        nxt = OPEN.search(text, body)
        if end < 0 or (nxt is not None and nxt.start() < end):
            raise SpecError(f"{where}:{line}: `<!-- evidence: ... -->` without its `{CLOSE}`")
        out.append(Block(m["spec"], body, end, line))  # positions hold in the original text
        pos = end + len(CLOSE)
    return out


def updated(
    text: str,
    ledger,
    claims: Sequence | None = None,
    where: str = "",
    figures: dict[str, str] | None = None,
) -> str:
    """``text`` with every evidence block regenerated from ``ledger`` (the claims' evidence
    figures into ``figures``, when given)."""
    parts, pos = [], 0
    for b in blocks(text, where):
        try:
            body = render(parse_spec(b.spec), ledger, claims, figures)
        except SpecError as exc:
            raise SpecError(f"{where}:{b.line}: {exc}") from None
        parts += [text[pos : b.start], "\n", body, "\n\n"]
        pos = b.end
    return "".join(parts) + text[pos:]


def sync_figures(folder: Path, figures: Mapping[str, str], check: bool) -> list[Path]:
    """Make ``folder`` hold exactly ``figures`` (name -> SVG text); with ``check`` write nothing
    and return the files that differ (missing, changed or left over)."""
    have = {p.name: p for p in folder.glob("*.svg")} if folder.is_dir() else {}
    stale = [
        folder / n for n, svg in figures.items() if n not in have or have[n].read_text() != svg
    ]
    stale += [p for n, p in have.items() if n not in figures]
    if check or not stale:
        return stale
    folder.mkdir(parents=True, exist_ok=True)
    for path in stale:
        if path.name in figures:
            path.write_text(figures[path.name])
        else:
            path.unlink()
        print(f"updated {path}")
    return []


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("files", nargs="*", type=Path, help="Markdown files (default: docs/*.md)")
    ap.add_argument("--ledger", type=Path, default=ROOT / "evidence", help="default: evidence/")
    ap.add_argument("--check", action="store_true", help="exit 1 when a block is out of date")
    args = ap.parse_args(argv)
    files = args.files or sorted((ROOT / "docs").glob("*.md"))
    ledger = open_ledger(args.ledger)
    stale = []
    figures: dict[str, str] = {}
    for path in files:
        text = path.read_text()
        try:
            new = updated(text, ledger, where=str(path), figures=figures)
        except SpecError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
        if new == text:
            continue
        if args.check:
            stale.append(path)
        else:
            path.write_text(new)
            print(f"updated {path}")
    if not args.files:  # the whole of docs/: its figures folder holds exactly these
        stale += sync_figures(ROOT / "docs" / FIGURES, figures, args.check)
    if stale:
        for path in stale:
            print(f"{path}: evidence tables out of date with {args.ledger}", file=sys.stderr)
        print("run: python scripts/evidence_tables.py", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
