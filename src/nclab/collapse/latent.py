r"""Collapse of representations by a latent symbol, streamed (Laurent, von Brecht & Bresson,
*Feature Collapse*, ICLR 2024, Definitions 1–3 and appendix A).

Given representations :math:`x_i\in\mathbb R^D` of items (tokens, segments, rows of an embedding
table) and a latent label :math:`a_i\in[n]` per item (the concept, meta-concept, category that
generated it), :class:`LatentCollapse` accumulates, batch by batch in float64 through
:class:`~nclab.ClassStats`, what is needed to say how collapsed the representations are by
that label:

* within-label variability: ``nc1_trace`` :math:`=\mathrm{tr}\Sigma_W/\mathrm{tr}\Sigma_B`,
  ``dir_nc1`` (the same on the unit vectors :math:`x_i/\|x_i\|`), and ``nc1``
  :math:`=\mathrm{tr}(\Sigma_W\Sigma_B^\dagger)/n` when the D×D scatter is kept (``scatter="full"``);
* geometry of the label means: ``equinorm`` (CV of :math:`\|\mu_a-\mu_G\|`), ``equiangle`` (std of
  the pairwise cosines), ``nc2_etf`` (ETF distance of the centred means), ``etf`` (ETF distance of
  the centred means of the unit vectors, the verdict's), ``offset``
  :math:`=\|\sum_a \hat m_a\|/\sum_a\|\hat m_a\|` with :math:`\hat m_a` the (uncentred) mean unit
  vector of label a — 0 when the label directions sum to zero, as the equiangular
  :math:`f_1..f_{n_c}` of Definitions 1–3 do (:math:`\langle f_\alpha,f_{\alpha'}\rangle=-1/(n_c-1)`);
* norms: mean, std and CV of :math:`\|x_i\|` over all items, mean and std per label.

:func:`latent_verdict` turns them into Definitions 1–3's vocabulary for one set of vectors:
``"type-II"`` (LayerNorm representations), ``"type-I"`` (equal norms) or ``"type-III"`` (norms
vary) when the directions collapse (``dir_nc1`` ≤ 0.05, ``etf`` ≤ 0.1, and ``offset`` ≤ 0.1 when
``zero_sum``), ``"none"`` otherwise. Labels with no items are dropped (and listed).

Memory: O(n·D) per accumulator (plus D×D with ``scatter="full"``), whatever the number of items:
a 1000 × 4096-token batch is fed in chunks, an embedding table in one call.

>>> import torch
>>> F = torch.tensor([[1.0, 0.0], [-0.5, 0.75 ** 0.5], [-0.5, -0.75 ** 0.5]])  # simplex ETF
>>> labels = torch.arange(30) % 3
>>> m = latent_collapse(2.0 * F[labels], labels, 3)
>>> m["collapse_type"], m["nc1_trace"], round(m["etf"], 12), round(m["offset"], 12)
('type-I', 0.0, 0.0, 0.0)
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Literal

import torch

from ..errors import DataError, DegenerateError
from ..metrics.geometry import etf_distance, nc2_equiangle, nc2_equinorm, nc2_etf
from ..metrics.variability import nc1, nc1_trace
from ..validation import F64
from ._class_stats import ClassStats

__all__ = ["LATENT_THRESHOLDS", "LatentCollapse", "latent_collapse", "latent_verdict"]

#: verdict thresholds (the same as :data:`nclab.collapse.embedding.THRESHOLDS` where they overlap)
LATENT_THRESHOLDS: dict[str, float] = {
    "dir_nc1_max": 0.05,  # directional NC1 (trace ratio of the unit vectors)
    "etf_max": 0.1,  # ETF distance of the centred label-mean directions
    "offset_max": 0.1,  # |sum of label-mean directions| / sum of their norms (zero_sum only)
    "norm_cv_max": 0.2,  # norm std/mean: type-I below, type-III above
}


class LatentCollapse:
    """Streaming accumulator of the collapse of D-dimensional representations by a latent label.

    Args:
        num_labels: n, labels lie in [0, n).
        dim: D.
        scatter: ``"full"`` keeps the D×D within-label scatter (adds ``nc1``), ``"none"`` does not;
            ``"auto"`` = full for D ≤ 1024.
        device: where the statistics live (``None``: the first batch's device).
    """

    def __init__(
        self,
        num_labels: int,
        dim: int,
        scatter: Literal["auto", "full", "none"] = "auto",
        device: torch.device | str | None = None,
    ):
        if scatter not in ("auto", "full", "none"):
            raise DataError(f"scatter must be 'auto', 'full' or 'none', got {scatter!r}")
        mode = ("full" if dim <= 1024 else "none") if scatter == "auto" else scatter
        self.raw = ClassStats(num_labels, dim, device=device, scatter=mode)
        self.unit = ClassStats(num_labels, dim, device=device, scatter="none")
        self.num_labels, self.dim = num_labels, dim
        self.norm_sum = torch.zeros(num_labels, dtype=F64)
        self.norm_sq = torch.zeros(num_labels, dtype=F64)

    def update(self, features: torch.Tensor, labels: torch.Tensor) -> LatentCollapse:
        """Add items: ``features`` (..., D) with ``labels`` (...) (any leading shape, e.g.
        (sentences, positions, D)); returns self. A zero vector is a
        :class:`~nclab.errors.DegenerateError` (its direction is undefined)."""
        if not isinstance(features, torch.Tensor) or features.ndim < 1:
            raise DataError(f"features must be a tensor (..., D), got {type(features).__name__}")
        if features.shape[-1] != self.dim or tuple(labels.shape) != tuple(features.shape[:-1]):
            raise DataError(
                f"features (..., {self.dim}) and labels (...) must share their leading shape, "
                f"got {tuple(features.shape)} and {tuple(labels.shape)}"
            )
        x = features.detach().reshape(-1, self.dim)
        y = labels.reshape(-1)
        self.raw.update(x, y)  # validates labels and finiteness
        x = x.to(F64)
        norms = x.norm(dim=1)
        if x.shape[0] and float(norms.min()) == 0.0:
            raise DegenerateError("a representation is exactly zero: its direction is undefined")
        self.unit.update(x / norms[:, None], y)
        yc = y.to(self.norm_sum.device)
        norms = norms.to(self.norm_sum.device)
        self.norm_sum.index_add_(0, yc, norms)
        self.norm_sq.index_add_(0, yc, norms * norms)
        return self

    def merge(self, other: LatentCollapse) -> LatentCollapse:
        """Add another accumulator's items (same n, D); returns self."""
        self.raw.merge(other.raw)
        self.unit.merge(other.unit)
        self.norm_sum += other.norm_sum
        self.norm_sq += other.norm_sq
        return self

    def compute(
        self,
        layer_norm: bool = False,
        zero_sum: bool = False,
        thresholds: dict[str, float] | None = None,
    ) -> dict[str, Any]:
        """Every measure of the module docstring and the verdict (:func:`latent_verdict`).

        Metrics that are undefined (one label only, coinciding means) are ``None`` with the
        reason under ``skipped``; ``labels_dropped`` lists labels without items.
        """
        if self.raw.num_samples == 0:
            raise DegenerateError("no items were added")
        raw, dropped = self.raw.drop_empty()
        unit, _ = self.unit.drop_empty()
        keep = self.raw.nonempty().cpu()
        counts = self.raw.counts.cpu()[keep].to(F64)
        gmean = self.norm_sum[keep] / counts
        gvar = (self.norm_sq[keep] / counts - gmean**2).clamp_min(0)
        n = counts.sum()
        mean = float(self.norm_sum.sum() / n)
        var = max(float(self.norm_sq.sum() / n) - mean**2, 0.0)
        out: dict[str, Any] = {
            "items": int(n),
            "labels": self.num_labels,
            "labels_present": int(keep.sum()),
            "labels_dropped": dropped,
        }
        umeans = unit.means
        for key, fn in (
            ("nc1_trace", lambda: nc1_trace(raw)),
            ("dir_nc1", lambda: nc1_trace(unit)),
            ("nc1", lambda: nc1(raw) if raw.scatter_mode == "full" else None),
            ("equinorm", lambda: nc2_equinorm(raw)),
            ("equiangle", lambda: nc2_equiangle(raw)),
            ("nc2_etf", lambda: nc2_etf(raw)),
            ("etf", lambda: etf_distance(umeans - umeans.mean(0))),
            ("offset", lambda: _offset(umeans)),
        ):
            try:
                out[key] = fn()
            except DegenerateError as exc:
                out[key] = None
                out.setdefault("skipped", {})[key] = str(exc)
        if out["nc1"] is None and "nc1" not in out.get("skipped", {}):
            out.setdefault("skipped", {})["nc1"] = "scatter='none' keeps no D x D scatter"
        out.update(
            norm_mean=mean,
            norm_std=var**0.5,
            norm_cv=var**0.5 / mean,
            group_norm_mean=gmean.tolist(),
            group_norm_std=gvar.sqrt().tolist(),
        )
        out["collapse_type"], out["verdict_reasons"] = latent_verdict(
            out, layer_norm, zero_sum, thresholds
        )
        return out


def _offset(umeans: torch.Tensor) -> float:
    total = float(umeans.norm(dim=1).sum())
    if total == 0.0:
        raise DegenerateError("offset is undefined: every label-mean direction is zero")
    return float(umeans.sum(0).norm()) / total


def latent_verdict(
    m: dict[str, Any],
    layer_norm: bool = False,
    zero_sum: bool = False,
    thresholds: dict[str, float] | None = None,
    geometry: bool = True,
) -> tuple[str, list[str]]:
    """("type-I" | "type-II" | "type-III" | "none", reasons) for one set of vectors.

    Directions collapse when ``dir_nc1`` ≤ ``dir_nc1_max`` and (``geometry``) the label-mean
    directions form a simplex ETF (``etf`` ≤ ``etf_max``) that (``zero_sum``) sums to zero
    (``offset`` ≤ ``offset_max``). Then ``"type-II"`` for LayerNorm representations, ``"type-I"``
    if ``norm_cv`` ≤ ``norm_cv_max``, ``"type-III"`` otherwise.

    >>> latent_verdict({"dir_nc1": 0.01, "etf": 0.02, "offset": 0.5, "norm_cv": 0.1}, zero_sum=True)
    ('none', ['label-mean directions do not sum to zero: offset 0.5 > 0.1'])
    """
    t = {**LATENT_THRESHOLDS, **(thresholds or {})}
    fails = []
    d = m.get("dir_nc1")
    if d is None or d > t["dir_nc1_max"]:
        fails.append(f"directional NC1 {d} > {t['dir_nc1_max']}")
    if geometry:
        e = m.get("etf")
        if e is None or e > t["etf_max"]:
            fails.append(f"ETF distance of the label-mean directions {e} > {t['etf_max']}")
        o = m.get("offset")
        if zero_sum and (o is None or o > t["offset_max"]):
            fails.append(
                f"label-mean directions do not sum to zero: offset {o} > {t['offset_max']}"
            )
    if fails:
        return "none", fails
    if layer_norm:
        return "type-II", ["directions collapse (LayerNorm representations)"]
    cv = m["norm_cv"]
    if cv <= t["norm_cv_max"]:
        return "type-I", [f"directions collapse, norm CV {cv:.3g} <= {t['norm_cv_max']}"]
    return "type-III", [f"directions collapse, norm CV {cv:.3g} > {t['norm_cv_max']}"]


def latent_collapse(
    features: torch.Tensor | Iterable[tuple[torch.Tensor, torch.Tensor]],
    labels: torch.Tensor | None = None,
    num_labels: int | None = None,
    chunk: int = 65536,
    scatter: Literal["auto", "full", "none"] = "auto",
    layer_norm: bool = False,
    zero_sum: bool = False,
    thresholds: dict[str, float] | None = None,
) -> dict[str, Any]:
    """:meth:`LatentCollapse.compute` of ``features`` (..., D) labelled by ``labels`` (...), fed in
    chunks of ``chunk`` items, or of an iterable of ``(features, labels)`` batches (then
    ``labels`` is None and ``num_labels`` is required).

    >>> import torch
    >>> g = torch.Generator().manual_seed(0)
    >>> x = torch.randn(600, 8, generator=g); y = torch.arange(600) % 3
    >>> m = latent_collapse(x, y, 3)  # random vectors: no collapse
    >>> m["collapse_type"], m["nc1_trace"] > 10
    ('none', True)
    """
    if isinstance(features, torch.Tensor):
        if labels is None:
            raise DataError("labels are required with a features tensor")
        if num_labels is None:
            num_labels = int(labels.max()) + 1 if labels.numel() else 0
        x, y = features.reshape(-1, features.shape[-1]), labels.reshape(-1)
        batches: Iterable = ((x[i : i + chunk], y[i : i + chunk]) for i in range(0, len(y), chunk))
    else:
        if num_labels is None or labels is not None:
            raise DataError("with an iterable of batches give num_labels and no labels")
        batches = features
    acc = None
    for xb, yb in batches:
        if acc is None:
            acc = LatentCollapse(num_labels, int(xb.shape[-1]), scatter, device=xb.device)
        acc.update(xb, yb)
    if acc is None:
        raise DegenerateError("no items were given")
    return acc.compute(layer_norm, zero_sum, thresholds)


def pca_plane_collapse(
    vectors: torch.Tensor, labels: torch.Tensor, num_labels: int, k: int = 2
) -> dict[str, float]:
    """The collapse a PCA figure shows: the vectors (N, D), centred on their mean, projected onto
    their top ``k`` principal directions (as ``sklearn.decomposition.PCA(k)`` does), and the
    trace ratio tr Σ_W / tr Σ_B of the projections grouped by ``labels``; ``variance_kept``: the
    fraction of the total variance the ``k`` directions hold. A paper that reads collapse off a
    2-D PCA scatter (Feature Collapse, Figs. 3, 4 and 8) reads this number; the trace ratio in
    all D dimensions (:func:`latent_collapse`) can be far larger when the within-group spread is
    spread over the directions the plot leaves out.

    >>> g = torch.Generator().manual_seed(0)
    >>> y = torch.arange(300) % 3
    >>> centres = torch.tensor([[5.0, 0.0], [-2.5, 4.3], [-2.5, -4.3]])
    >>> x = torch.cat([centres[y], torch.zeros(300, 98)], 1) + 0.3 * torch.randn(300, 100, generator=g)
    >>> m = pca_plane_collapse(x, y, 3)
    >>> m["nc1_trace"] < 0.01, latent_collapse(x, y, 3)["nc1_trace"] > 0.3
    (True, True)
    """
    x = vectors.detach().to(torch.float64).reshape(-1, vectors.shape[-1])
    if x.shape[0] <= k or x.shape[1] < k:
        raise DegenerateError(f"a {k}-D PCA needs more than {k} vectors of dimension >= {k}")
    x = x - x.mean(0)
    _, s, vh = torch.linalg.svd(x, full_matrices=False)
    total = float((s**2).sum())
    if total == 0.0:
        raise DegenerateError("every vector is the same: no principal direction")
    proj = x @ vh[:k].T
    m = latent_collapse(proj, labels.reshape(-1), num_labels, scatter="none")
    return {"nc1_trace": float(m["nc1_trace"]), "variance_kept": float((s[:k] ** 2).sum()) / total}
