"""Compare two ``nclab reproduce --json`` outputs: same claims, verdicts, measured and theory values.

    python scripts/compare_reproduce.py before.json after.json [--rtol 1e-9]

Prints how many numbers were compared and the largest relative difference, then one line per
problem (a verdict that changed, a value beyond ``--rtol``, a key present on one side only); exits
1 if there is any. Claims present in only one file are listed and otherwise ignored, so a newer
registry with more claims can be compared with an older run.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any


def load(path: str) -> dict[str, dict[str, Any]]:
    data = json.load(open(path))
    claims = data["claims"] if isinstance(data, dict) and "claims" in data else data
    return {c["id"]: c for c in claims}


def walk(a: Any, b: Any, path: str, out: list) -> None:
    """Append (path, kind, detail) for every difference; kind "num" carries a relative difference."""
    if isinstance(a, dict) and isinstance(b, dict):
        if set(a) != set(b):
            out.append((path, "keys", sorted(set(a) ^ set(b))))
        for k in sorted(set(a) & set(b)):
            walk(a[k], b[k], f"{path}.{k}", out)
    elif isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            out.append((path, "len", (len(a), len(b))))
        for i, (x, y) in enumerate(zip(a, b, strict=False)):
            walk(x, y, f"{path}[{i}]", out)
    elif isinstance(a, int | float) and isinstance(b, int | float) and not isinstance(a, bool):
        out.append((path, "num", abs(a - b) / max(abs(a), abs(b), 1e-300)))
    elif a != b:
        out.append((path, "diff", (a, b)))


def _outcome(claim: dict) -> str:
    """A claim's outcome (``verdict`` in report.json files written before the outcomes were
    typed)."""
    return claim.get("outcome", claim.get("verdict", ""))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("before")
    ap.add_argument("after")
    ap.add_argument("--rtol", type=float, default=1e-9)
    args = ap.parse_args()
    old, new = load(args.before), load(args.after)
    only = sorted(set(old) ^ set(new))
    worst, n, problems = 0.0, 0, []
    for cid in sorted(set(old) & set(new)):
        o, w = old[cid], new[cid]
        ov, wv = _outcome(o), _outcome(w)
        if ov != wv:
            problems.append(f"{cid}: outcome {ov!r} -> {wv!r}")
        diffs: list = []
        walk(o.get("measured", {}), w.get("measured", {}), "measured", diffs)
        walk(o.get("theory", {}), w.get("theory", {}), "theory", diffs)
        for path, kind, detail in diffs:
            if kind == "num":
                n, worst = n + 1, max(worst, detail)
                if detail > args.rtol:
                    problems.append(f"{cid}: {path} differs by {detail:.3g} (relative)")
            else:
                problems.append(f"{cid}: {path} {kind} {detail}")
    print(f"{len(set(old) & set(new))} claims, {n} numbers, max relative difference {worst:.3g}")
    if only:
        print("in one file only: " + ", ".join(only))
    for p in problems:
        print(p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
