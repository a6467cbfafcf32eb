"""The summary of a resnet-ufm unit (one seed; over several seeds the runner's mean,
:func:`nclab.experiments.protocol.seed_summary`): the two levels' metrics at the start and the end of training,
for the network (``net``) and the extended UFM (``ufm``), and the comparisons the claims read
(``derived``).

``derived`` (None where a metric is undefined):

* ``<who>_of_minus_etf``: NC2^OF(W) - NC2^ETF(W) at the end: negative when the classifier (and,
  through NC3, the class means it aligns with) is closer to an orthogonal frame than to a simplex
  ETF, positive the other way round;
* ``<who>_frame``: ``"orthogonal frame"`` or ``"simplex ETF"`` (the sign of the above);
* ``same_frame``: 1.0 when the network and the UFM end closer to the same frame, else 0.0 (its
  mean over seeds is the fraction of seeds that agree);
* ``<who>_nc1_level_ratio``: NC1 of the second level / NC1 of the first (< 1: the second level
  collapses more), and ``<who>_nc2_of_level_ratio`` the same for NC2^OF of the features.
"""

from __future__ import annotations

from typing import Any

from .config import ResNetUFMConfig, describe
from .measure import LEVELS
from .ufm import describe_ufm


def _levels(rec: dict[str, Any]) -> dict[str, Any]:
    return {level: rec[level] for level in LEVELS}


def _diff(a: float | None, b: float | None) -> float | None:
    return None if a is None or b is None else a - b


def _ratio(a: float | None, b: float | None) -> float | None:
    return None if a is None or b is None or b == 0 else a / b


def _frame(of_minus_etf: float | None) -> str | None:
    if of_minus_etf is None:
        return None
    return "orthogonal frame" if of_minus_etf < 0 else "simplex ETF"


def _compare(end: dict[str, Any], who: str) -> dict[str, Any]:
    first, second = end["first"], end["second"]
    gap = _diff(second.get("nc2_w_of"), second.get("nc2_w_etf"))
    return {
        f"{who}_of_minus_etf": gap,
        f"{who}_frame": _frame(gap),
        f"{who}_nc1_level_ratio": _ratio(second["nc1"], first["nc1"]),
        f"{who}_nc2_of_level_ratio": _ratio(second["nc2_of"], first["nc2_of"]),
    }


def unit_summary(
    cfg: ResNetUFMConfig, K: int, history: list[dict], ufm_history: list[dict]
) -> dict[str, Any]:
    """A unit's summary from the network's log and the extended UFM's (empty: no UFM run)."""
    start, end = history[0], history[-1]
    net = {
        "model": describe(cfg),
        "levels": {"first": cfg.levels.first, "second": cfg.levels.second},
        "start": _levels(start),
        "end": _levels(end),
        "train_acc": end["second"].get("acc"),
        "test_acc": end["test_acc"],
        "train_loss": end.get("train_loss"),
        "epochs": cfg.train.epochs,
    }
    derived = _compare(net["end"], "net")
    out: dict[str, Any] = {"model": describe(cfg), "K": K, "net": net, "derived": derived}
    if ufm_history:
        u_start, u_end = ufm_history[0], ufm_history[-1]
        out["ufm"] = {
            "model": describe_ufm(cfg, K),
            "start": _levels(u_start),
            "end": _levels(u_end),
            "objective": u_end["objective"],
            "steps": cfg.ufm.steps,
        }
        derived.update(_compare(out["ufm"]["end"], "ufm"))
        a, b = derived["net_of_minus_etf"], derived["ufm_of_minus_etf"]
        derived["same_frame"] = None if a is None or b is None else float((a < 0) == (b < 0))
    return out
