"""The evidence of a claim at a glance: its statement checks at every scale judged, one panel each.

A panel shows, for each scale judged (quick, medium, full), every seed's value of the check (a
dot: green where the seed passes, red where it fails), the value on the mean over seeds (a black
bar: what "on the mean" reads) and the threshold at that scale (dashed; a threshold relative to
another measured value differs between scales); its title gives the comparison that passes. It is drawn from the judged results
alone (the checks' ``seed_values``), so a report judged on the ledger has it too, where the runs'
own figures are not kept. Checks without a numeric value (a collapse type, a yes/no) have no
panel; a claim without any has no figure.

The figure is a small hand-written SVG (:func:`evidence_svg`): report.html inlines it,
report.md links the file. Drawing all 80-odd claims takes milliseconds, where matplotlib took
about a second a claim, so judging the ledger stays a matter of seconds.
"""

from __future__ import annotations

import html
import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ...verdicts import Outcome
from .views import SCALES, STATEMENT

#: the reports' folder of evidence figures
FOLDER = "evidence-figures"
#: at most this many panels (the claim's first statement checks), this many a row
MAX_PANELS, PER_ROW = 8, 4
PASS, FAIL, MEAN, GUIDE = "#2e7d32", "#c62828", "#111111", "#666666"
#: a panel's size and its plot area's margins (pixels)
W, H = 210, 160
LEFT, RIGHT, TOP, BOTTOM = 52, 8, 24, 22
#: how a value passes against its threshold, as panel titles show it
SYMBOL = {"<=": "≤", "<": "<", ">=": "≥", ">": ">"}
CAPTION = (
    "Each statement check at every scale judged: a dot per seed (green passes, red fails), the "
    "black bar the value on the mean over seeds, the dashed line the threshold at that scale; a "
    "panel's title says how a value passes (≤ or ≥ the threshold)."
)


def _num(x: Any) -> float | None:
    if isinstance(x, bool) or not isinstance(x, int | float) or not math.isfinite(x):
        return None
    return float(x)


def panels(r: Any) -> list[tuple[str, dict[str, Mapping[str, Any]]]]:
    """(check name, {scale: outcome}) of the claim's statement checks that have a numeric value
    at some judged scale, in the claim's order, at most :data:`MAX_PANELS`."""
    rows: dict[str, dict[str, Mapping[str, Any]]] = {}
    for s in SCALES:
        sd = r.scales.get(s)
        if not sd or sd.get("outcome", Outcome.NOT_RUN) == Outcome.NOT_RUN:
            continue
        for c in sd.get("checks", []):
            if c.get("kind", STATEMENT) != STATEMENT:
                continue
            numbers = [_num(c.get("value")), *map(_num, c.get("seed_values") or [])]
            if any(v is not None for v in numbers):
                rows.setdefault(c.get("name") or c.get("check", ""), {})[s] = c
    return list(rows.items())[:MAX_PANELS]


def ticks(lo: float, hi: float, log: bool) -> list[float]:
    """A few round tick values within [lo, hi]: powers of ten on a log axis (every k-th where
    there are many), 1/2/5 steps on a linear one.

    >>> ticks(0.0, 1.0, False)
    [0.0, 0.5, 1.0]
    >>> ticks(1e-6, 2.0, True)
    [1e-06, 0.0001, 0.01, 1.0]
    """
    if log:
        a, b = math.ceil(math.log10(lo) - 1e-9), math.floor(math.log10(hi) + 1e-9)
        every = max(1, math.ceil((b - a + 1) / 4))
        return [10.0**e for e in range(a, b + 1, every)] or [lo, hi]
    span = hi - lo
    if span <= 0:
        return [lo]
    raw = span / 3
    base = 10 ** math.floor(math.log10(raw))
    step = next(m * base for m in (1, 2, 5, 10) if m * base >= raw)
    first = math.ceil(lo / step - 1e-9)
    return [round(k * step, 12) for k in range(first, int(math.floor(hi / step + 1e-9)) + 1)]


def _label(v: float) -> str:
    return f"{v:.2g}" if v and (abs(v) < 1e-2 or abs(v) >= 1e4) else f"{v:.3g}"


def _points(scales: Sequence[str], by_scale: Mapping[str, Mapping[str, Any]]) -> tuple:
    """(dots: (x position, value, passed) per seed, means: (scale index, value), limits: (scale
    index, threshold)) of a check over ``scales``; a relative threshold differs by scale."""
    dots: list[tuple[float, float, bool | None]] = []
    means: list[tuple[int, float]] = []
    limits: list[tuple[int, float]] = []
    for i, s in enumerate(scales):
        c = by_scale[s]
        values = c.get("seed_values") or []
        passed = c.get("per_seed") or [None] * len(values)
        n = len(values)
        for j, (v, ok) in enumerate(zip(values, passed, strict=False)):
            v = _num(v)
            if v is not None:
                dots.append((i + (j - (n - 1) / 2) * (0.5 / max(n, 1)), v, ok))
        mean = _num(c.get("value"))
        if mean is not None:
            means.append((i, mean))
        limit = _num(c.get("threshold"))
        if limit is not None and c.get("op") in SYMBOL:
            limits.append((i, limit))
    return dots, means, limits


def _title(name: str, outcomes: Sequence[Mapping[str, Any]]) -> str:
    """The check's name, cut to fit, and how a value passes (``≤``/``≥``) where one way holds."""
    ops = {c.get("op") for c in outcomes} & set(SYMBOL)
    title = name if len(name) <= 28 else name[:27] + "…"
    return title + (f" ({SYMBOL[ops.pop()]})" if len(ops) == 1 else "")


def _panel(name: str, by_scale: Mapping[str, Mapping[str, Any]], x0: float, y0: float) -> str:
    """One panel's SVG elements, its top-left corner at (x0, y0)."""
    scales = [s for s in SCALES if s in by_scale]
    dots, means, limits = _points(scales, by_scale)
    shown = [v for _, v, _ in dots] + [m for _, m in means] + [t for _, t in limits]
    lo, hi = min(shown), max(shown)
    log = lo > 0 and hi / lo > 50
    if log:
        lo, hi = math.log10(lo), math.log10(hi)
    pad = (hi - lo) * 0.08 or (abs(hi) * 0.1 or 1.0)
    lo, hi = lo - pad, hi + pad
    px0, px1 = x0 + LEFT, x0 + W - RIGHT
    py0, py1 = y0 + TOP, y0 + H - BOTTOM
    ncat = max(len(scales), 1)

    def X(pos: float) -> float:
        return px0 + (pos + 0.5) / ncat * (px1 - px0)

    def Y(v: float) -> float:
        t = math.log10(v) if log else v
        return py1 - (t - lo) / (hi - lo) * (py1 - py0)

    title = _title(name, [by_scale[s] for s in scales])
    out = [
        f'<text x="{x0 + W / 2:.1f}" y="{y0 + 14}" text-anchor="middle" font-size="11">'
        f"{html.escape(title)}<title>{html.escape(name)}</title></text>",
        f'<rect x="{px0}" y="{py0}" width="{px1 - px0}" height="{py1 - py0}" fill="none" '
        f'stroke="#bbb"/>',
    ]
    for t in ticks(10**lo if log else lo, 10**hi if log else hi, log):
        y = Y(t)
        out.append(f'<line x1="{px0 - 3}" x2="{px1}" y1="{y:.1f}" y2="{y:.1f}" stroke="#eee"/>')
        out.append(
            f'<text x="{px0 - 5}" y="{y + 3:.1f}" text-anchor="end" font-size="9">{_label(t)}</text>'
        )
    for i, s in enumerate(scales):
        out.append(
            f'<text x="{X(i):.1f}" y="{py1 + 14}" text-anchor="middle" font-size="10">{s}</text>'
        )
    half = 0.32 * (px1 - px0) / ncat
    for i, t in limits:
        y, wide = Y(t), 0.5 * (px1 - px0) / ncat
        out.append(
            f'<line x1="{X(i) - wide:.1f}" x2="{X(i) + wide:.1f}" y1="{y:.1f}" y2="{y:.1f}" '
            f'stroke="{GUIDE}" stroke-dasharray="4 3"><title>threshold {t:.4g}</title></line>'
        )
    for i, m in means:
        y = Y(m)
        out.append(
            f'<line x1="{X(i) - half:.1f}" x2="{X(i) + half:.1f}" y1="{y:.1f}" y2="{y:.1f}" '
            f'stroke="{MEAN}" stroke-width="2"><title>mean {m:.4g}</title></line>'
        )
    for pos, v, ok in dots:
        colour = PASS if ok else FAIL
        out.append(
            f'<circle cx="{X(pos):.1f}" cy="{Y(v):.1f}" r="3.5" fill="{colour}" '
            f'fill-opacity="0.85"><title>{v:.4g}</title></circle>'
        )
    return "".join(out)


def evidence_svg(r: Any) -> str | None:
    """The claim's evidence figure as an SVG document (see the module docstring); None when no
    statement check has a numeric value at a judged scale."""
    rows = panels(r)
    if not rows:
        return None
    cols = min(len(rows), PER_ROW)
    lines = math.ceil(len(rows) / cols)
    width, height = cols * W, lines * H + 20
    body = [
        f'<text x="6" y="14" font-size="12" font-weight="bold">{html.escape(r.id)}</text>',
        *(
            _panel(name, by, (k % cols) * W, 20 + (k // cols) * H)
            for k, (name, by) in enumerate(rows)
        ),
    ]
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" font-family="sans-serif" role="img" '
        f'aria-label="{html.escape(r.id)}: its statement checks at every scale">'
        f'<rect width="100%" height="100%" fill="white"/>{"".join(body)}</svg>'
    )


def draw_all(results: Sequence[Any], folder: str | Path) -> dict[str, Path]:
    """The evidence figures of ``results`` written into ``folder`` (``<claim id, / as __>.svg``),
    by claim id; claims without one are left out."""
    out = {}
    for r in results:
        svg = evidence_svg(r)
        if svg is None:
            continue
        path = Path(folder) / (r.id.replace("/", "__") + ".svg")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(svg + "\n")
        out[r.id] = path
    return out
