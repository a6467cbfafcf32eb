"""Fill the evidence ledger: run every claim's runs at the given scales and record them.

    python scripts/fill_ledger.py quick medium full [--claims 'feature-collapse/*'] \
        [--out DIR] [--ledger DIR] [--workers 2] [--max-hours H] [--variants] [--dry-run]

For each scale, the claims that have a preset there, do not need a GPU for it (on this machine)
and have no current record in the ledger yet, cheapest first (the claims' own estimates), through
``nclab reproduce ... --scale SCALE --record`` into ``OUT/<scale>``: at quick scale all in one
call (the pool runs them side by side), at larger scales one claim a call, so that each claim's
runs are recorded as soon as they finish. Runs shared between claims are run once; an interrupted
run resumes from its checkpoint when the script runs again.
Run it from a clean checkout of a commit: the ledger refuses runs of a dirty tree. Claims whose
runs take more than ``--max-hours`` (estimate) are listed and left out.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

from nclab.evidence import Ledger, default_root
from nclab.reproduce.registry import SCALES, all_claims, select


def pending(claims, scale: str, ledger: Ledger, gpu: bool, variants: bool = False) -> list:
    """The claims of ``scale`` still without a current record (of their own runs, and with
    ``variants`` of their variants' runs at ``scale``), cheapest first."""
    out = []
    for c in claims:
        if not c.runnable(scale) or (c.needs_gpu(scale) and not gpu):
            continue
        sets = [{a: s.set for a, s in c.runs.items()}]
        if variants:
            sets += [
                {a: v.overrides(a, s) for a, s in c.runs.items()}
                for v in c.variants
                if scale in v.scales
            ]
        recorded = all(
            ledger.find(s.experiment, s.preset(scale), over[a])
            for over in sets
            for a, s in c.runs.items()
        )
        if not recorded:
            out.append(c)
    return sorted(out, key=lambda c: cost(c, scale))


def cost(claim, scale: str) -> float:
    """The claim's estimated seconds at ``scale`` (its runs, one core)."""
    return claim.seconds(scale)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("scales", nargs="+", choices=SCALES)
    ap.add_argument("--claims", nargs="*", default=[])
    ap.add_argument("--out", default="/work/bg/ledger-runs")
    ap.add_argument("--ledger", default=str(default_root()))
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--max-hours", type=float, default=6.0)
    ap.add_argument("--dry-run", action="store_true")
    ap.add_argument("--variants", action="store_true", help="also the claims' variants")
    args = ap.parse_args()
    ledger = Ledger(args.ledger)
    claims = select(args.claims) if args.claims else all_claims()
    import torch

    gpu = torch.cuda.is_available()
    for scale in args.scales:
        todo = []
        for c in pending(claims, scale, ledger, gpu, args.variants):
            hours = cost(c, scale) / 3600
            if hours > args.max_hours:
                print(f"skip {c.id} at {scale}: about {hours:.1f} h", flush=True)
            else:
                todo.append(c)
        batches = [todo] if scale == "quick" and todo else [[c] for c in todo]
        for batch in batches:
            cmd = [
                sys.executable, "-m", "nclab", "reproduce", *(c.id for c in batch),
                "--scale", scale, "--record", "--ledger", args.ledger,
                "--out", str(Path(args.out) / scale), "--workers", str(args.workers),
            ] + (["--variants"] if args.variants else [])  # fmt: skip
            hours = sum(cost(c, scale) for c in batch) / 3600
            print(f"{scale}: {len(batch)} claims, about {hours:.2f} h on one core", flush=True)
            print("  " + " ".join(cmd), flush=True)
            if not args.dry_run:
                subprocess.run(cmd, check=False)
    return 0


if __name__ == "__main__":
    sys.exit(main())
