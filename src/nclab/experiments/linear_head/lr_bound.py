r"""Proposition 5.3's cap on the learning rate (Jacot et al., ICLR 2025, §5.2) on a step-size sweep.

§5.2: "for any parameters that :math:`\epsilon_1`-interpolate and have :math:`r`-bounded weights,
the NTK satisfies the lower bound in (20), which implies that the learning rate must be smaller
than :math:`\frac{2r^2K^2}{L_2(s_K(Y)-\epsilon_1)^2}`" (GD is stable only while the top Hessian
eigenvalue, :math:`\|\Theta\|_{op}` at interpolation by (19), stays below :math:`2/\eta`).

Conventions. nclab trains the mean of the square loss over the :math:`NK` entries, so the step
it can take is :math:`NK/2` times the paper's (:func:`nclab.theory.jacot_ntk.lr_max`, whose module
docstring derives it; ``nclab theory jacot-lr-max``):

.. math:: \eta_{\max} = \frac{NK^3r^2}{L_2(s_K(Y)-\epsilon_1)^2}

(:math:`r`, :math:`\epsilon_1 = \|Z_L - Y\|_F` and :math:`s_K(Y) = \sqrt{\min_c n_c}` do not
depend on the scaling; ``tests/test_lr_bound.py`` checks the factor on the Hessians). :math:`r` is
what Proposition 5.3's proof bounds: the largest :math:`\|W_\ell\|_{op}` of the linear layers
(``conditioning.measured.r_head``, :mod:`.minimiser`).

:func:`unit_record` gives one network's ``lr_bound`` record (with ``lr_bound = true``); a network
*ends stably* :math:`\epsilon_1`*-interpolating* when its training did not diverge
(:class:`.train.Diverged`) and :math:`\epsilon_1 < s_K(Y)` at the end (the proposition's
hypothesis: the bound exists). :func:`sweep_record` gives the sweep's ``lr_bound``, over the
networks it is given (one seed's, or every seed's):

* ``n_networks``, ``n_diverged``, ``n_stable_interpolating``, ``n_stable_not_interpolating``;
* ``lr_over_bound_max``: the largest :math:`\eta/\eta_{\max}` over the stable interpolating
  networks (Proposition 5.3: below 1), ``n_stable_interpolating_above_bound``;
* ``largest_stable_lr`` (the largest step of a stable interpolating network),
  ``bound_at_largest_stable`` (its :math:`\eta_{\max}`) and ``slack`` = their ratio, ``log10_slack``;
* ``smallest_failing_lr``: the smallest step above ``largest_stable_lr`` whose network diverged or
  did not interpolate, and ``failing_over_bound`` = it over ``bound_at_largest_stable``;
* ``bound_max``: the largest :math:`\eta_{\max}` of a stable interpolating network, and of the
  networks whose step is above it: ``n_above_bound``, ``n_above_bound_diverged``,
  ``n_above_bound_not_interpolating`` (a network above every bound that ends stably
  interpolating would contradict the proposition: ``n_above_bound_stable_interpolating``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from ...theory.jacot_ntk import lr_max

#: the keys of a sweep's ``lr_bound`` record (None where no network gives them)
SWEEP_KEYS = (
    "n_networks",
    "n_diverged",
    "n_stable_interpolating",
    "n_stable_not_interpolating",
    "lr_over_bound_max",
    "n_stable_interpolating_above_bound",
    "largest_stable_lr",
    "bound_at_largest_stable",
    "slack",
    "log10_slack",
    "smallest_failing_lr",
    "failing_over_bound",
    "bound_max",
    "n_above_bound",
    "n_above_bound_diverged",
    "n_above_bound_not_interpolating",
    "n_above_bound_stable_interpolating",
)


def unit_record(summary: Mapping[str, Any], N: int, K: int) -> dict[str, Any]:
    """One network's ``lr_bound`` record from its summary (``conditioning.measured``): its step,
    eps1, s_K(Y), r, whether it ends stably eps1-interpolating and, if so, the bounds."""
    m = (summary.get("conditioning") or {}).get("measured") or {}
    out: dict[str, Any] = {"lr": summary["lr"], "N": N, "K": K, "L2": summary["L2"]}
    out |= {"eps1": m.get("eps1"), "s_k_y": m.get("s_k_y"), "r": m.get("r_head")}
    ok = None not in (out["eps1"], out["s_k_y"], out["r"])
    out["interpolates"] = bool(ok and out["eps1"] < out["s_k_y"])
    out["lr_max_paper"] = out["lr_max"] = out["lr_over_bound"] = None
    if out["interpolates"]:
        paper, ours = lr_max(N, K, summary["L2"], out["r"], out["eps1"], out["s_k_y"])
        out |= {"lr_max_paper": paper, "lr_max": ours, "lr_over_bound": summary["lr"] / ours}
    return out


def _outcome(s: Mapping[str, Any]) -> str:
    """``diverged``, ``interpolates`` (stably, with a bound) or ``not interpolating``."""
    if s.get("diverged"):
        return "diverged"
    rec = s.get("lr_bound") or {}
    return "interpolates" if rec.get("interpolates") else "not interpolating"


def sweep_record(summaries: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """The sweep's ``lr_bound`` record (module docstring) over the networks' summaries."""
    out: dict[str, Any] = dict.fromkeys(SWEEP_KEYS)
    kinds = [(_outcome(s), s) for s in summaries]
    good = [s for k, s in kinds if k == "interpolates"]
    out |= {
        "n_networks": len(kinds),
        "n_diverged": sum(k == "diverged" for k, _ in kinds),
        "n_stable_interpolating": len(good),
        "n_stable_not_interpolating": sum(k == "not interpolating" for k, _ in kinds),
    }
    if not good:
        return out
    ratios = [s["lr_bound"]["lr_over_bound"] for s in good]
    out["lr_over_bound_max"] = max(ratios)
    out["n_stable_interpolating_above_bound"] = sum(r > 1.0 for r in ratios)
    top = max(good, key=lambda s: (s["lr"], -s["lr_bound"]["lr_max"]))
    bound = top["lr_bound"]["lr_max"]
    out |= {
        "largest_stable_lr": top["lr"],
        "bound_at_largest_stable": bound,
        "slack": bound / top["lr"],
        "log10_slack": math.log10(bound / top["lr"]),
    }
    failing = [s["lr"] for k, s in kinds if k != "interpolates" and s["lr"] > top["lr"]]
    if failing:
        out["smallest_failing_lr"] = min(failing)
        out["failing_over_bound"] = min(failing) / bound
    bmax = max(s["lr_bound"]["lr_max"] for s in good)
    above = [(k, s) for k, s in kinds if s["lr"] > bmax]
    out |= {
        "bound_max": bmax,
        "n_above_bound": len(above),
        "n_above_bound_diverged": sum(k == "diverged" for k, _ in above),
        "n_above_bound_not_interpolating": sum(k == "not interpolating" for k, _ in above),
        "n_above_bound_stable_interpolating": sum(k == "interpolates" for k, _ in above),
    }
    return out
