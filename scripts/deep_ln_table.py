"""Markdown tables of a deep-ln run, finished or not: per depth the mean ± std over seeds of NC1, NC2
of W_L, NC3 (1 - mean cosine), NC2 of the class means and the gap to the GUFM optimum, then the
log-log slopes fitted per seed (over the depths every seed has finished) and each seed's gap
ratio, deepest / shallowest.

Usage: ``python scripts/deep_ln_table.py RUN_DIR [RUN_DIR ...]`` (reads ``units/*/summary.json``,
so it also reports an interrupted run's finished units; the run's own ``summary.json`` is not
needed).
"""

from __future__ import annotations

import json
import math
import re
import sys
from pathlib import Path

from nclab.experiments.deep_ln.summary import slopes, trend

KEYS = ("nc1", "nc2_w", "nc3_cos_dist", "nc2", "objective_gap", "train_acc", "test_acc")
HEAD = (
    "NC1",
    "NC2 of W_L",
    "NC3 (1 − cos)",
    "NC2 (means)",
    "objective − L*",
    "train acc",
    "test acc",
)


def _units(run: Path) -> dict[int, dict[int, dict]]:
    out: dict[int, dict[int, dict]] = {}
    for f in sorted((run / "units").glob("L*_seed-*/summary.json")):
        m = re.fullmatch(r"L(\d+)_seed-(\d+)", f.parent.name)
        if m:
            out.setdefault(int(m[1]), {})[int(m[2])] = json.loads(f.read_text())
    return out


def _fmt(vals: list[float]) -> str:
    vals = [v for v in vals if v is not None]
    if not vals:
        return "—"
    m = sum(vals) / len(vals)
    s = math.sqrt(sum((v - m) ** 2 for v in vals) / len(vals))
    return f"{m:.3g} ± {s:.2g}" if len(vals) > 1 else f"{m:.3g}"


def table(run: Path) -> str:
    units = _units(run)
    if not units:
        return f"{run}: no finished unit\n"
    seeds = sorted({s for per in units.values() for s in per})
    lines = [f"`{run}`: seeds {seeds}", ""]
    lines += ["| L | seeds | " + " | ".join(HEAD) + " |", "|---" * (len(HEAD) + 2) + "|"]
    for d in sorted(units):
        cells = [_fmt([u.get(k) for u in units[d].values()]) for k in KEYS]
        lines.append(f"| {d} | {len(units[d])} | " + " | ".join(cells) + " |")
    full = [d for d in sorted(units) if set(units[d]) == set(seeds)]
    if len(full) >= 2:
        by_depth = {d: {"per_seed": [units[d][s] for s in seeds]} for d in full}
        sl = slopes(by_depth)
        lines += ["", f"log–log slopes over L = {full} (mean ± std over {len(seeds)} seeds):", ""]
        lines += [
            ", ".join(
                f"{k} {sl[k]['mean']:.3f} ± {sl[k]['std']:.3f}"
                for k in ("nc1", "nc2_w", "nc3_cos_dist", "nc2", "objective_gap")
                if sl[k]["mean"] is not None
            )
        ]
        t = trend(by_depth)
        per = ", ".join(f"{r:.3g}" for r in t["objective_gap_ratio_per_seed"])
        lines += [
            "",
            f"objective − L*, L = {full[-1]} / L = {full[0]} per seed: {per} (median "
            f"{t['objective_gap_ratio_median']:.3g})",
        ]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    for arg in sys.argv[1:]:
        print(table(Path(arg)))
