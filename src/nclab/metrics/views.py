r"""Per-class views behind the scalar metrics, and the metrics built on them: uniform duality
(UNC3), NC5 (OOD orthogonality), :math:`\|W\mu_G + b\|`.

Each per-class view is a (K,) float64 tensor, for plots; the scalars are documented reductions of
it. :func:`~.variability.cdnv_per_class` is the CDNV of one class against all others and
:class:`~.decision_views.DecisionViews` the per-class second-pass views (NCC agreement, NC4 per
class, top-k accuracy).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import torch

from ..errors import DegenerateError
from ..validation import F64, check_matrix
from ._common import GlobalMean, centred_means, global_mean

if TYPE_CHECKING:
    from ..stats import ClassStatsBase


def mean_norms(stats: ClassStatsBase, global_mean: GlobalMean = "class") -> torch.Tensor:
    r"""Per-class norms :math:`\|\mu_c - \mu_G\|` (K,) (their std/mean is ``nc2_equinorm``).

    >>> import torch
    >>> from nclab import ClassStats
    >>> s = ClassStats(2, 1, scatter="none"); s.update(torch.tensor([[1.], [-3.]]), torch.arange(2))
    >>> mean_norms(s).tolist()
    [2.0, 2.0]
    """
    return centred_means(stats, global_mean).norm(dim=1)


def duality_cosines(
    stats: ClassStatsBase, weights: torch.Tensor, global_mean: GlobalMean = "class"
) -> torch.Tensor:
    r"""Per-class cosines :math:`\cos(w_c, \mu_c - \mu_G)` (K,) of the classifier rows and the
    centred class means (1 for every class at self-duality).

    >>> import torch
    >>> from nclab import ClassStats
    >>> k = 3; mu = torch.eye(k) - 1 / k
    >>> s = ClassStats(k, k, scatter="none"); s.update(mu + 2, torch.arange(k))
    >>> [round(c, 12) for c in duality_cosines(s, 5 * mu).tolist()]
    [1.0, 1.0, 1.0]
    """
    m = centred_means(stats, global_mean)
    w = check_matrix(weights, "weights", stats.num_classes, stats.dim).to(m.device)
    nw, nm = w.norm(dim=1), m.norm(dim=1)
    if bool((nw == 0).any()) or bool((nm == 0).any()):
        raise DegenerateError(
            "duality cosines are undefined: a classifier row or a centred class mean is zero"
        )
    return (w * m).sum(1) / (nw * nm)


def unc3(stats: ClassStatsBase, weights: torch.Tensor, global_mean: GlobalMean = "class") -> float:
    r"""Uniform duality (UNC3): the population variance over classes of
    :math:`\cos(w_c, \mu_c - \mu_G)` (:func:`duality_cosines`); 0 when every class is equally
    aligned with its classifier row.

    .. math:: \mathrm{UNC3} = \operatorname{Var}_c \cos(w_c, \mu_c - \mu_G)

    Source: Wu & Papyan (2024), *Linguistic Collapse* (UNC3). ``rhubarbwu/neural-collapse`` reports
    ``similarities(W, M, m_G).var()``, the unbiased variance of the dot products (not cosines).

    >>> import torch
    >>> from nclab import ClassStats
    >>> k = 3; mu = torch.eye(k) - 1 / k
    >>> s = ClassStats(k, k, scatter="none"); s.update(mu, torch.arange(k))
    >>> round(unc3(s, mu * torch.tensor([[1.], [2.], [3.]])), 12)  # norms differ, angles do not
    0.0
    """
    return float(duality_cosines(stats, weights, global_mean).var(correction=0))


def nc5(
    stats: ClassStatsBase,
    ood_mean: torch.Tensor | ClassStatsBase,
    centre: bool = False,
) -> float:
    r"""NC5, ID/OOD orthogonality (Ammar et al. 2024, NECO): the mean over the in-distribution
    classes of :math:`|\cos(\mu_c, \mu_G^{OOD})|`, with :math:`\mu_G^{OOD}` the mean of the
    out-of-distribution features (a (D,) tensor, or the :class:`ClassStats` of the OOD features,
    whose sample mean is taken). 0 when the OOD mean is orthogonal to every class mean.

    .. math:: \mathrm{NC5} = \frac1K \sum_c \frac{|\langle \mu_c, \mu_G^{OOD}\rangle|}
       {\|\mu_c\|\,\|\mu_G^{OOD}\|}

    ``centre=True`` first subtracts the in-distribution global mean (the mean of the class means)
    from both. ``rhubarbwu/neural-collapse``'s ``orthogonality_deviation(M, m_G_ood)`` is
    ``centre=False``.

    >>> import torch
    >>> from nclab import ClassStats
    >>> s = ClassStats(2, 3, scatter="none"); s.update(torch.eye(2, 3), torch.arange(2))
    >>> nc5(s, torch.tensor([0., 0., 4.]))
    0.0
    """
    mu = stats.means
    if not isinstance(ood_mean, torch.Tensor):  # statistics of the OOD features
        if ood_mean.num_samples == 0:
            raise DegenerateError("nc5: the OOD statistics have no samples")
        g = global_mean(ood_mean, "sample")
    else:
        g = check_matrix(torch.as_tensor(ood_mean).reshape(1, -1), "ood_mean", 1, stats.dim)[0]
    g = g.to(device=mu.device, dtype=F64)
    stats.check_nonempty()
    if centre:
        mg = mu.mean(0)
        mu, g = mu - mg, g - mg
    nm, ng = mu.norm(dim=1), g.norm()
    if float(ng) == 0.0 or bool((nm == 0).any()):
        raise DegenerateError("nc5 is undefined: the OOD mean or a class mean is zero")
    return float(((mu @ g).abs() / (nm * ng)).mean())


def classifier_global_mean(
    stats: ClassStatsBase, weights: torch.Tensor, bias: torch.Tensor | None = None
) -> float:
    r""":math:`\|W\mu_G + b\|`, the logits of the global mean (the mean of the class means).

    At collapse with a bias that absorbs the global mean (Papyan et al. 2020) this is 0: the
    classifier is centred on the features' mean.

    >>> import torch
    >>> from nclab import ClassStats
    >>> s = ClassStats(2, 2, scatter="none"); s.update(torch.tensor([[3., 1.], [1., 1.]]), torch.arange(2))
    >>> w = torch.tensor([[1., 0.], [-1., 0.]])
    >>> classifier_global_mean(s, w, torch.tensor([-2., 2.]))  # mu_G = (2, 1)
    0.0
    """
    stats.check_nonempty()
    g = stats.means.mean(0)
    w = check_matrix(weights, "weights", stats.num_classes, stats.dim).to(g.device)
    z = w @ g
    if bias is not None:
        z = z + check_matrix(torch.as_tensor(bias).reshape(1, -1), "bias", 1, stats.num_classes)[
            0
        ].to(g.device)
    return float(z.norm())
