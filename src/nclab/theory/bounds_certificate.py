"""Theorem 3.1 of Jacot et al. (ICLR 2025) on a trained network: the bounds of
:func:`nclab.theory.bounds.jacot_bounds` (defined in :mod:`nclab.theory.bounds_theorem`, which this
module imports; nothing imports back) evaluated at the network's measured hypotheses, beside its
measured NC1, kappa(W_L), NC2 and NC3 (``docs/theory-jacot.md``). numpy/scipy only: the torch side
(:func:`nclab.experiments.linear_head.measure.network_quantities`) fills :class:`NetworkQuantities`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

from .base import Prediction
from .bounds_theorem import jacot_bounds

__all__ = ["JacotCertificate", "NetworkQuantities", "jacot_certificate"]

# --------------------------------------------------------------------------------------------------
# the certificate: bounds beside the measured metrics of a trained network
# --------------------------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class NetworkQuantities:
    """What Theorem 3.1 reads off a trained network (measured on its N training samples).

    ``eps1`` = ||Z_L - Y||_F, ``eps2`` = max absolute imbalance of the linear head, ``r`` = max of
    ||Z_{L-2}||_op, ||Z_{L-1}||_op and the head's ||W_l||_op, ``c3`` = kappa(W_{L:L1+1}),
    ``z_op`` = ||Z_{L1}||_op, ``s_k_y`` = sqrt(min class count); ``measured`` holds the metrics of
    layer L-1: ``nc1_trace``, ``nc2_kappa``, ``nc3_cos`` (with W_L) and ``kappa_wl`` = kappa(W_L).
    """

    eps1: float
    eps2: float
    r: float
    K: int
    N: int
    n_penult: int
    s_k_y: float
    L2: int
    c3: float
    z_op: float
    measured: Mapping[str, float]
    parts: Mapping[str, float] = dataclasses.field(default_factory=dict)


@dataclasses.dataclass(frozen=True)
class JacotCertificate(Prediction):
    """Theorem 3.1 evaluated on a trained network, beside what the network measures.

    ``bounds``: the theorem's chain (NC1 from (2); kappa(W_L) from (3) with c3; NC2, NC3 from (4),
    (5) with that bound). ``bounds_given_kappa``: (4) and (5) evaluated at the measured kappa(W_L).
    ``holds`` maps each available bound to whether the measured value respects it.
    """

    applies: bool
    reason: str
    hypotheses: dict[str, float]
    measured: dict[str, float]
    bounds: dict[str, Any]
    bounds_given_kappa: dict[str, Any]
    holds: dict[str, bool]
    skipped: dict[str, str]


def jacot_certificate(q: NetworkQuantities) -> JacotCertificate:
    """Theorem 3.1's bounds for the measured hypotheses of a network, beside its measured metrics.

    >>> q = NetworkQuantities(eps1=0.5, eps2=1e-6, r=3.0, K=2, N=8, n_penult=4, s_k_y=2.0, L2=2,
    ...                       c3=1.5, z_op=3.0, measured={"nc1_trace": 0.001, "kappa_wl": 1.2,
    ...                       "nc2_kappa": 1.3, "nc3_cos": 0.9})
    >>> c = jacot_certificate(q)
    >>> c.applies, round(c.bounds["nc1"], 4), c.holds["nc1"], sorted(c.skipped)
    (True, 9.1083, True, ['nc2', 'nc2_given_kappa'])
    """
    hyp = {
        "eps1": q.eps1,
        "eps2": q.eps2,
        "r": q.r,
        "c3": q.c3,
        "z_op": q.z_op,
        "s_k_y": q.s_k_y,
        "K": q.K,
        "N": q.N,
        "n_penult": q.n_penult,
        "L2": q.L2,
        **dict(q.parts),
    }
    measured = dict(q.measured)
    common = dict(eps1=q.eps1, eps2=q.eps2, r=q.r, K=q.K, N=q.N, n_penult=q.n_penult, s_k_y=q.s_k_y)
    if q.L2 < 2:
        why = (
            f"the linear head has L2 = {q.L2} layer(s); Theorem 3.1 needs at least 2 "
            "(balancedness of W_L with W_(L-1))"
        )
        return JacotCertificate(False, why, hyp, measured, {}, {}, {}, {})
    chain = jacot_bounds(**common, c3=q.c3, L2=q.L2, z_op=q.z_op)
    if not chain.applies:
        return JacotCertificate(False, chain.reason, hyp, measured, {}, {}, {}, {})
    given = (
        jacot_bounds(**common, kappa_wl=measured["kappa_wl"]) if "kappa_wl" in measured else None
    )
    bounds = {
        "nc1": chain.nc1_bound,
        "kappa_wl": chain.kappa_wl_bound,
        "nc2": chain.nc2_bound,
        "nc3": chain.nc3_bound,
        "psi": chain.psi,
        "eps": chain.eps,
    }
    bgk = {"nc2": given.nc2_bound, "nc3": given.nc3_bound} if given is not None else {}
    skipped = {k.removesuffix("_bound"): v for k, v in chain.skipped.items()}
    if given is not None:
        skipped |= {
            k.removesuffix("_bound") + "_given_kappa": v
            for k, v in given.skipped.items()
            if k in ("nc2_bound", "nc3_bound")
        }
    holds = _holds(measured, bounds, bgk)
    return JacotCertificate(True, "", hyp, measured, bounds, bgk, holds, skipped)


def _holds(
    measured: Mapping[str, float], bounds: Mapping[str, Any], bgk: Mapping[str, Any]
) -> dict[str, bool]:
    """For each bound that exists and each metric measured: does the metric respect the bound
    (relative slack 1e-9 for upper bounds, absolute 1e-9 for the NC3 lower bounds)?"""
    holds: dict[str, bool] = {}
    pairs = [
        ("nc1", "nc1_trace", bounds["nc1"], "<="),
        ("kappa_wl", "kappa_wl", bounds["kappa_wl"], "<="),
        ("nc2", "nc2_kappa", bounds["nc2"], "<="),
        ("nc3", "nc3_cos", bounds["nc3"], ">="),
        ("nc2_given_kappa", "nc2_kappa", bgk.get("nc2"), "<="),
        ("nc3_given_kappa", "nc3_cos", bgk.get("nc3"), ">="),
    ]
    for name, key, bound, op in pairs:
        if bound is None or key not in measured:
            continue
        v = measured[key]
        holds[name] = bool(v <= bound * (1 + 1e-9)) if op == "<=" else bool(v >= bound - 1e-9)
    return holds
