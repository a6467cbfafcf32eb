r"""Feature-collapse measures on the weights of the word networks (Laurent, von Brecht & Bresson,
*Feature Collapse*, ICLR 2024, Definitions 1–3).

Two weight sets, each grouped by concept:

* the word vectors — embeddings :math:`w_{(\alpha,\beta)}` for h, LayerNorm representations
  :math:`\varphi(w_{(\alpha,\beta)})` for h* — grouped by their concept α;
* the blocks :math:`u_{k,\ell}` of U grouped by the concept :math:`z_{k,\ell}` they read.

Per set (:func:`group_collapse`): within-group NC1 (trace ratio :math:`\mathrm{tr}\Sigma_W/
\mathrm{tr}\Sigma_B` and the pseudo-inverse form :math:`\mathrm{tr}(\Sigma_W\Sigma_B^\dagger)/n_c`),
directional NC1 (trace ratio of the unit vectors), norms (mean, std, coefficient of variation,
per group), the ETF distance of the :math:`n_c` group means of the unit vectors, centred by their
average (Definitions 1–3 have equiangular :math:`f_\alpha` summing to 0, so centring changes nothing
at collapse; it removes the bias of a learnable LayerNorm), and for words the Spearman correlation
of norm with frequency μ_β and with the training-set count. Across sets: ``alignment`` = mean over
α of cos(mean u-group α, mean word-group α), group means centred the same way.

Verdict (:func:`collapse_verdict`, thresholds :data:`THRESHOLDS`): directional collapse of both
sets (directional NC1 ≤ 0.05, ETF distance of the word-group directions ≤ 0.1, alignment ≥ 0.95),
one norm for every u block (CV ≤ 0.2, Definitions 1–3's c) and, for h, word-group directions
summing to zero (offset ≤ 0.1: the equiangular f_α of Definitions 1 and 3 have Σ_α f_α = 0);
then ``"type-II"`` for h* (representations), otherwise ``"type-I"`` if the word norms are equal
(CV ≤ 0.2) and ``"type-III"`` if not; ``"none"`` without directional collapse. With a learnable
LayerNorm only the within-group criteria apply (``geometry=False``, see :func:`collapse_verdict`).

torch only (no scipy/matplotlib). Everything is computed in float64.

>>> import torch
>>> F = torch.tensor([[1.0, 0.0], [-0.5, 0.75 ** 0.5], [-0.5, -0.75 ** 0.5]])  # equiangular
>>> concept = torch.arange(12) // 4
>>> words = 1.4 * F[concept]
>>> latents = torch.tensor([[0, 1, 2], [2, 2, 0]])
>>> u = 0.4 * F[latents]
>>> m = feature_collapse_measures(words, concept, 3, u, latents)
>>> m["collapse_type"], round(m["words"]["norm_mean"], 6), round(m["alignment"], 6)
('type-I', 1.4, 1.0)
"""

from __future__ import annotations

from typing import Any

import torch

from ..errors import DegenerateError
from ..validation import F64, check_blocks, check_grouped, check_paired
from ._class_stats import ClassStats
from .latent import LatentCollapse

#: verdict thresholds (documented in docs/feature-collapse.md)
THRESHOLDS: dict[str, float] = {
    "dir_nc1_max": 0.05,  # directional NC1 of words and of u blocks
    "etf_max": 0.1,  # ETF distance of the word-group mean directions
    "align_min": 0.95,  # cosine between matching u-group and word-group means
    "norm_cv_max": 0.2,  # word norms std/mean: type-I below, type-III above
    # u norms std/mean: Definitions 1-3 give every u_{k,l} one norm c; the same tolerance as
    # "equal word norms" (finite K and nspl spread both alike: fig3 word-norm CV 0.09)
    "u_norm_cv_max": 0.2,
    "offset_max": 0.1,  # |sum of word-group mean directions| / their norms (h: sum f_a = 0)
}

__all__ = [
    "THRESHOLDS",
    "alignment",
    "collapse_verdict",
    "feature_collapse_measures",
    "group_collapse",
    "spearman",
]


def _ranks(x: torch.Tensor) -> torch.Tensor:
    """Ranks 1..n with ties averaged."""
    _, inv, counts = torch.unique(x, return_inverse=True, return_counts=True)
    ends = torch.cumsum(counts, 0).to(F64)
    avg = ends - (counts.to(F64) - 1) / 2
    return avg[inv]


def spearman(a: torch.Tensor, b: torch.Tensor) -> float:
    """Spearman rank correlation (Pearson correlation of tie-averaged ranks).

    >>> import torch
    >>> spearman(torch.tensor([1., 2., 3., 4.]), torch.tensor([10., 20., 25., 100.]))
    1.0
    """
    a, b = a.detach().to(F64).flatten(), b.detach().to(F64).flatten()
    check_paired(a, b, "spearman")
    ra, rb = _ranks(a), _ranks(b)
    ra, rb = ra - ra.mean(), rb - rb.mean()
    den = float(ra.norm() * rb.norm())
    if den == 0.0:
        raise DegenerateError("spearman is undefined: one of the vectors is constant")
    return float((ra * rb).sum()) / den


def group_collapse(
    vectors: torch.Tensor, groups: torch.Tensor, num_groups: int, name: str = "vectors"
) -> dict[str, Any]:
    """NC1 (trace and pinv), directional NC1, norms, ETF distance and offset (|Σ of group-mean
    directions| / Σ of their norms) of one grouped weight set, through
    :class:`~nclab.collapse.latent.LatentCollapse`."""
    v = check_grouped(vectors, groups, num_groups, name)
    norms = v.norm(dim=1)
    if float(norms.min()) == 0.0:
        raise DegenerateError(f"{name}: a vector is exactly zero; its direction is undefined")
    m = LatentCollapse(num_groups, v.shape[1]).update(v, groups).compute()
    keys = ("nc1_trace", "nc1", "dir_nc1", "etf", "offset", "equinorm", "equiangle")
    out: dict[str, Any] = {k: m[k] for k in keys}
    skipped = {k: r for k, r in m.get("skipped", {}).items() if k in keys}
    if skipped:
        out["skipped"] = skipped
    out.update({k: m[k] for k in ("norm_mean", "norm_std", "norm_cv")})
    out.update(
        norm_min=float(norms.min()),
        norm_max=float(norms.max()),
        group_norm_mean=m["group_norm_mean"],
        group_norm_std=m["group_norm_std"],
    )
    return out


def alignment(
    u: torch.Tensor,
    u_groups: torch.Tensor,
    w: torch.Tensor,
    w_groups: torch.Tensor,
    num_groups: int,
) -> float:
    """Mean over groups of cos(mean of u-group α, mean of word-group α), both sets of group means
    centred by their average (which removes a learnable LayerNorm's bias)."""
    mu = ClassStats.from_features(u.detach().to(F64), u_groups, num_groups).means
    mw = ClassStats.from_features(w.detach().to(F64), w_groups, num_groups).means
    mu, mw = mu - mu.mean(0), mw - mw.mean(0)
    nu, nw = mu.norm(dim=1), mw.norm(dim=1)
    if float(nu.min()) == 0.0 or float(nw.min()) == 0.0:
        raise DegenerateError("alignment is undefined: a group mean is zero")
    return float(((mu * mw).sum(1) / (nu * nw)).mean())


def collapse_verdict(
    m: dict[str, Any],
    layer_norm: bool,
    thresholds: dict[str, float] | None = None,
    geometry: bool = True,
) -> tuple[str, list[str]]:
    """("type-I" | "type-II" | "type-III" | "none", reasons) from :func:`feature_collapse_measures`.

    ``geometry=False`` drops the ETF, alignment, equal-u-norm and zero-sum requirements, for networks with a symmetry that
    rescales coordinates (a learnable LayerNorm: (γ_i, u_i) → (sγ_i, u_i/s) leaves the function
    unchanged, keeps within-group collapse but not equiangularity); they are still reported.
    """
    t = {**THRESHOLDS, **(thresholds or {})}
    words, u = m["words"], m["u"]
    fails = []

    def need(ok: bool | None, text: str) -> None:
        if not ok:
            fails.append(text)

    need(
        words.get("dir_nc1") is not None and words["dir_nc1"] <= t["dir_nc1_max"],
        f"word directional NC1 {words.get('dir_nc1')} > {t['dir_nc1_max']}",
    )
    need(
        u.get("dir_nc1") is not None and u["dir_nc1"] <= t["dir_nc1_max"],
        f"u directional NC1 {u.get('dir_nc1')} > {t['dir_nc1_max']}",
    )
    if geometry:
        need(
            u.get("norm_cv") is not None and u["norm_cv"] <= t["u_norm_cv_max"],
            f"u norms differ: CV {u.get('norm_cv')} > {t['u_norm_cv_max']} "
            "(Definitions 1-3: one c)",
        )
        need(
            words.get("etf") is not None and words["etf"] <= t["etf_max"],
            f"word-group ETF distance {words.get('etf')} > {t['etf_max']}",
        )
        if not layer_norm:
            need(
                words.get("offset") is not None and words["offset"] <= t["offset_max"],
                f"word-group directions do not sum to zero: offset {words.get('offset')} > "
                f"{t['offset_max']} (Definitions 1, 3: equiangular f, sum f_a = 0)",
            )
        need(
            m.get("alignment") is not None and m["alignment"] >= t["align_min"],
            f"u/word alignment {m.get('alignment')} < {t['align_min']}",
        )
    if fails:
        return "none", fails
    if layer_norm:
        return "type-II", ["directions collapse (LayerNorm representations)"]
    if words["norm_cv"] <= t["norm_cv_max"]:
        return "type-I", [
            f"directions collapse, word norm CV {words['norm_cv']:.3g} <= {t['norm_cv_max']}"
        ]
    return "type-III", [
        f"directions collapse, word norm CV {words['norm_cv']:.3g} > {t['norm_cv_max']}"
    ]


def feature_collapse_measures(
    words: torch.Tensor,
    word_concept: torch.Tensor,
    nc: int,
    u_blocks: torch.Tensor,
    latents: torch.Tensor,
    word_freq: torch.Tensor | None = None,
    word_counts: torch.Tensor | None = None,
    layer_norm: bool = False,
    thresholds: dict[str, float] | None = None,
    geometry: bool = True,
) -> dict[str, Any]:
    """Every measure of this module and the verdict.

    Args:
        words: (nw, d) word embeddings (h) or LayerNorm representations (h*).
        word_concept: (nw,) concept of each word.
        u_blocks: (K, L, d) blocks u_{k,ℓ}; latents: (K, L) concepts z_{k,ℓ}.
        word_freq / word_counts: optional (nw,) frequencies μ and training counts, for the
            Spearman correlations (left out, with the reason, when constant).
    """
    check_blocks(u_blocks, latents)
    u = u_blocks.reshape(-1, u_blocks.shape[-1])
    ug = latents.reshape(-1)
    out: dict[str, Any] = {
        "words": group_collapse(words, word_concept, nc, "word vectors"),
        "u": group_collapse(u, ug, nc, "u blocks"),
    }
    w = out["words"]
    norms = words.detach().to(F64).norm(dim=1)
    for key, ref in (("spearman_norm_freq", word_freq), ("spearman_norm_count", word_counts)):
        if ref is None:
            continue
        try:
            w[key] = spearman(norms, ref)
        except DegenerateError as exc:
            w[key] = None
            w.setdefault("skipped", {})[key] = str(exc)
    wn = words.detach().to(F64)
    un = u.detach().to(F64)
    try:
        out["alignment"] = alignment(
            un / un.norm(dim=1, keepdim=True),
            ug,
            wn / wn.norm(dim=1, keepdim=True),
            word_concept,
            nc,
        )
    except DegenerateError as exc:
        out["alignment"] = None
        out["skipped"] = {"alignment": str(exc)}
    out["collapse_type"], out["verdict_reasons"] = collapse_verdict(
        out, layer_norm, thresholds, geometry
    )
    out["thresholds"] = {**THRESHOLDS, **(thresholds or {})}
    return out
