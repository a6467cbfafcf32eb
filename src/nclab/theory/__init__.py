"""Closed-form predictions of the four papers (numpy/scipy only; no torch, no nclab training code).

Each prediction is a function returning a frozen dataclass (a :class:`Prediction`) with named fields
and ``to_dict()``; ``nclab theory NAME --param value`` prints it. :data:`PREDICTIONS` maps the CLI
names to ``module:function``; modules are imported on first use.
"""

from __future__ import annotations

import difflib
import importlib
from collections.abc import Callable

from ..errors import TheoryError
from .base import Prediction

#: CLI name -> "module:function" (module relative to nclab.theory)
PREDICTIONS: dict[str, str] = {
    "ufm-mse": "ufm:ufm_mse",
    "ufm-mse-bias": "ufm:ufm_mse_bias",
    "ufm-ce": "ufm:ufm_ce",
    "ufm-regularized-bias": "ufm_bias:ufm_regularized_bias",
    "ufm-fixed-features": "fixed_features:ufm_fixed_features",
    "extended-ufm": "extended_ufm:extended_ufm",
    "extended-ufm-relu": "extended_ufm:extended_ufm_relu",
    "deep-linear-ufm": "extended_ufm:deep_linear_ufm",
    "gufm-mse": "gufm:gufm_mse",
    "gufm-ce": "gufm:gufm_ce",
    "fc-thm1": "feature_collapse:fc_thm1",
    "fc-thm2": "feature_collapse:fc_thm2",
    "fc-thm3": "feature_collapse:fc_thm3",
    "jacot-bounds": "bounds:jacot_bounds",
    "jacot-conditioning": "jacot_conditioning:jacot_conditioning",
    "jacot-ntk": "jacot_ntk:jacot_ntk",
    "jacot-lr-max": "jacot_ntk:jacot_lr_max",
    "jacot-flow": "jacot_flow:jacot_flow",
}


def get_prediction(name: str) -> Callable[..., Prediction]:
    """The function behind a prediction name (``"ufm-mse"`` -> :func:`nclab.theory.ufm.ufm_mse`)."""
    if name not in PREDICTIONS:
        close = difflib.get_close_matches(name, list(PREDICTIONS), n=3, cutoff=0.6)
        hint = f" (did you mean {' or '.join(map(repr, close))}?)" if close else ""
        raise TheoryError(
            f"unknown prediction {name!r}{hint}; predictions: {', '.join(PREDICTIONS)}"
        )
    mod, _, fn = PREDICTIONS[name].partition(":")
    try:
        module = importlib.import_module(f"{__name__}.{mod}")
        return getattr(module, fn)
    except (ImportError, AttributeError) as exc:
        raise TheoryError(f"prediction {name!r} is not available: {exc}") from None


__all__ = ["PREDICTIONS", "Prediction", "get_prediction"]
