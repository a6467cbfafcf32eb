"""Metrics that need a second pass over the features: ``nc3_cos``, ``nc4``, ``ncc_acc``.

They depend on each sample and on the *final* class means, so they cannot be accumulated in the same
pass as the means. Call :meth:`nclab.ClassStats.decision_pass` with the features (and the classifier)
after the statistics are complete, then read them here. :class:`nclab.CollapseProbe` runs the second
pass for you.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..errors import DegenerateError

if TYPE_CHECKING:
    from ..stats import ClassStatsBase


def _decision(stats: ClassStatsBase, key: str, needs_classifier: bool) -> float:
    dec = stats.decision
    if dec.n == 0:
        raise DegenerateError(
            f"{key} needs a second pass over the features: call "
            "stats.decision_pass(features, labels, weights, bias) after the last update"
        )
    if needs_classifier and not dec.has_classifier:
        raise DegenerateError(f"{key} needs the classifier: pass weights to decision_pass")
    if key == "nc3_cos" and dec.zero_features:
        raise DegenerateError(
            f"nc3_cos is undefined: {dec.zero_features} of {dec.n} features are exactly zero "
            "(their cosine with a classifier row has no value)"
        )
    return dec.metrics()[key]


def nc3_cos(stats: ClassStatsBase) -> float:
    r"""Mean cosine between each feature and its class's classifier row (Jacot et al., NC3).

    .. math:: \mathrm{NC3}_{\cos} = \frac1N \sum_i \cos(h_i, w_{y_i})

    >>> import torch
    >>> from nclab import ClassStats
    >>> x = torch.tensor([[1., 0.], [2., 0.], [0., 3.]]); y = torch.tensor([0, 0, 1])
    >>> s = ClassStats(2, 2); s.update(x, y); s.decision_pass(x, y, torch.eye(2))
    >>> nc3_cos(s)
    1.0
    """
    return _decision(stats, "nc3_cos", True)


def nc4(stats: ClassStatsBase) -> float:
    r"""Fraction of samples where the classifier and the nearest class centre disagree (Papyan NC4).

    .. math:: \mathrm{NC4} = \frac1N \#\{i: \arg\max_c (Wh_i+b)_c \ne \arg\min_c \|h_i-\mu_c\|\}

    >>> import torch
    >>> from nclab import ClassStats
    >>> x = torch.tensor([[1., 0.], [2., 0.], [0., 3.]]); y = torch.tensor([0, 0, 1])
    >>> s = ClassStats(2, 2); s.update(x, y); s.decision_pass(x, y, torch.eye(2))
    >>> nc4(s)
    0.0
    """
    return _decision(stats, "nc4", True)


def ncc_acc(stats: ClassStatsBase) -> float:
    """Accuracy of the nearest-class-centre rule argmin_c ||h - mu_c|| (needs no classifier).

    >>> import torch
    >>> from nclab import ClassStats
    >>> x = torch.tensor([[1., 0.], [2., 0.], [0., 3.]]); y = torch.tensor([0, 0, 1])
    >>> s = ClassStats(2, 2); s.update(x, y); s.decision_pass(x, y)
    >>> ncc_acc(s)
    1.0
    """
    return _decision(stats, "ncc_acc", False)


def accuracy(stats: ClassStatsBase) -> float:
    """Accuracy of the classifier argmax_c (W h + b)_c over the second pass.

    >>> import torch
    >>> from nclab import ClassStats
    >>> x = torch.tensor([[1., 0.], [2., 0.], [0., 3.]]); y = torch.tensor([0, 0, 1])
    >>> s = ClassStats(2, 2); s.update(x, y); s.decision_pass(x, y, torch.tensor([[0., 1.], [1., 0.]]))
    >>> accuracy(s)  # the swapped classifier gets every sample wrong
    0.0
    """
    return _decision(stats, "acc", True)
