r"""§6 on Fig. 1 (Jacot et al., ICLR 2025): the balancedness of the linear layers "exponentially
decreases until it plateaus at a rather small value (due to the large learning rate) and then again
it exponentially decreases at a smaller rate after reducing the learning rate".

:func:`plateau_derived` measures that shape on a run's records, from the balancedness the run logs
every ``measure_every`` epochs. The series is the mean over the linear pairs
(:math:`\ell = L_1+1, \dots, L-1`, both weights linear) of :math:`\log` balancedness; its log-rate
over a window is the least-squares slope per epoch. The windows come from the learning-rate
schedule as the run logged it (each record's ``lr`` is the rate of the epochs after it): the drop
is at the epoch :math:`E_d` of the first record whose ``lr`` is below the first record's (the
epochs up to :math:`E_d` trained at the large rate; the paper's schedule drops ten-fold at 80 % of
the epochs). With :math:`E_0` the first record's epoch:

* ``balancedness_rate_before``: the first half of the large-rate phase, :math:`[E_0, E_0 +
  (E_d - E_0)/2]` (the exponential fall);
* ``balancedness_rate_plateau``: its last quarter, :math:`[E_d - (E_d - E_0)/4, E_d]` (where the
  plateau is, if the fall has stopped before the drop);
* ``balancedness_rate_after``: after the drop, :math:`[E_d, \text{end}]`;
* ``balancedness_plateau_over_before``: :math:`|\text{plateau rate}| / |\text{rate before}|`
  (0: flat);
* ``balancedness_after_over_before``: rate after / rate before (in (0, 1) when both fall and the
  second more slowly).

All None without a drop, without linear pairs, or with fewer than two records in a window.
"""

from __future__ import annotations

import math
from typing import Any

KEYS = (
    "balancedness_rate_before",
    "balancedness_rate_plateau",
    "balancedness_rate_after",
    "balancedness_plateau_over_before",
    "balancedness_after_over_before",
)


def _slope(xs: list[float], ys: list[float]) -> float | None:
    if len(xs) < 2:
        return None
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    sxx = sum((x - mx) ** 2 for x in xs)
    if sxx == 0.0:
        return None
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True)) / sxx


def log_series(history: list[dict[str, Any]], L1: int, L2: int) -> list[tuple[int, float, float]]:
    """(epoch, lr, mean over the linear pairs of log balancedness) of each record that has all of
    them; empty without linear pairs (L2 < 2)."""
    L = L1 + L2
    names = [f"Z{ell}" for ell in range(L1 + 1, L)]
    out = []
    for rec in history:
        layers, lr = rec.get("layers") or {}, rec.get("lr")
        vals = [(layers.get(n) or {}).get("balancedness") for n in names]
        if not names or lr is None or any(v is None or not v > 0 for v in vals):
            continue
        out.append((rec["epoch"], float(lr), sum(math.log(v) for v in vals) / len(vals)))
    return out


def window_rates(series: list[tuple[int, float, float]]) -> dict[str, float | None]:
    """The three windows' log-rates and their ratios (the module docstring) from
    :func:`log_series`'s output.

    >>> s = [(e, 1.0 if e < 80 else 0.1, -0.05 * min(e, 60) - 0.01 * max(e - 80, 0))
    ...      for e in range(0, 101, 5)]
    >>> r = window_rates(s)
    >>> round(r["balancedness_rate_before"], 4), round(r["balancedness_plateau_over_before"], 4)
    (-0.05, 0.0)
    >>> round(r["balancedness_rate_after"], 4), round(r["balancedness_after_over_before"], 4)
    (-0.01, 0.2)
    """
    out: dict[str, float | None] = dict.fromkeys(KEYS)
    if len(series) < 2:
        return out
    e0, lr0 = series[0][0], series[0][1]
    drop = next((e for e, lr, _ in series if lr < lr0), None)
    if drop is None or drop <= e0:
        return out
    span = drop - e0

    def rate(lo: float, hi: float) -> float | None:
        pts = [(e, y) for e, _, y in series if lo <= e <= hi]
        return _slope([p[0] for p in pts], [p[1] for p in pts])

    before = rate(e0, e0 + span / 2)
    plateau = rate(drop - span / 4, drop)
    after = rate(drop, series[-1][0])
    out["balancedness_rate_before"] = before
    out["balancedness_rate_plateau"] = plateau
    out["balancedness_rate_after"] = after
    if before is not None and before != 0.0:
        if plateau is not None:
            out["balancedness_plateau_over_before"] = abs(plateau) / abs(before)
        if after is not None:
            out["balancedness_after_over_before"] = after / before
    return out


def plateau_derived(summary: dict[str, Any], history: list[dict[str, Any]]) -> dict[str, Any]:
    """The scalars above for one network (its summary's ``L1``, ``L2``, its logged records)."""
    return window_rates(log_series(history, summary["L1"], summary["L2"]))
