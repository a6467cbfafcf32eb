"""Feature-collapse measures on grouped weights (nclab.collapse.embedding)."""

import math

import pytest
import torch

from nclab.collapse.embedding import (
    collapse_verdict,
    feature_collapse_measures,
    group_collapse,
    spearman,
)
from nclab.errors import DataError, DegenerateError
from nclab.report.figures import pca
from nclab.theory.feature_collapse import equiangular_frame

NC, SC, D = 3, 10, 8
CONCEPT = torch.arange(NC * SC) // SC
RANK = torch.arange(NC * SC) % SC
G = torch.Generator().manual_seed(0)
LATENTS = torch.randint(0, NC, (40, 6), generator=G)
F = torch.as_tensor(equiangular_frame(NC, D, seed=0)).T  # nc x d, equiangular rows
F0 = torch.as_tensor(equiangular_frame(NC, D, mean_zero=True, seed=0)).T


def measures(words, u=None, layer_norm=False, freq=None, counts=None):
    u = 0.4 * F[LATENTS] if u is None else u
    return feature_collapse_measures(
        words, CONCEPT, NC, u, LATENTS, word_freq=freq, word_counts=counts, layer_norm=layer_norm
    )


def test_type_one():
    m = measures(1.42 * F[CONCEPT])
    assert m["collapse_type"] == "type-I"
    w = m["words"]
    assert w["nc1_trace"] == pytest.approx(0, abs=1e-12) and w["dir_nc1"] == pytest.approx(
        0, abs=1e-12
    )
    assert w["etf"] == pytest.approx(0, abs=1e-12) and m["alignment"] == pytest.approx(1.0)
    assert w["norm_mean"] == pytest.approx(1.42) and w["norm_std"] == pytest.approx(0, abs=1e-12)


def test_type_three_norms_follow_frequency():
    mu = 1.0 / (RANK + 1.0)
    r = 2.0 * mu.sqrt()
    m = measures(r[:, None] * F[CONCEPT], freq=mu, counts=(1000 * mu).round())
    assert m["collapse_type"] == "type-III"
    assert m["words"]["spearman_norm_freq"] == pytest.approx(1.0, abs=0.01)  # ties up to rounding
    assert m["words"]["dir_nc1"] == pytest.approx(0, abs=1e-12)
    assert m["words"]["nc1_trace"] > 0.01  # the magnitudes do not collapse


def test_type_two_and_none():
    m = measures(math.sqrt(D) * F0[CONCEPT], u=0.3 * F0[LATENTS], layer_norm=True)
    assert m["collapse_type"] == "type-II"
    noisy = torch.randn(NC * SC, D, generator=G, dtype=torch.float64)
    m = measures(noisy)
    assert m["collapse_type"] == "none" and m["verdict_reasons"]
    spread_u = torch.randn(40, 6, D, generator=G, dtype=torch.float64)
    assert measures(1.4 * F[CONCEPT], u=spread_u)["collapse_type"] == "none"


def test_learnable_layernorm_verdict_ignores_the_gauge():
    """A per-coordinate rescaling keeps groups collapsed but breaks equiangularity."""
    scale = torch.linspace(0.2, 3.0, D, dtype=torch.float64)
    words, u = math.sqrt(D) * F0[CONCEPT] * scale, 0.3 * F0[LATENTS] / scale
    m = measures(words, u=u, layer_norm=True)
    assert m["collapse_type"] == "none" and m["words"]["dir_nc1"] < 1e-12
    m = feature_collapse_measures(words, CONCEPT, NC, u, LATENTS, layer_norm=True, geometry=False)
    assert m["collapse_type"] == "type-II"


def test_constant_frequency_is_reported_not_nan():
    m = measures(1.42 * F[CONCEPT], freq=torch.full((NC * SC,), 0.1))
    assert m["words"]["spearman_norm_freq"] is None
    assert "constant" in m["words"]["skipped"]["spearman_norm_freq"]


def test_invariant_to_rotation_and_scale():
    words = 1.3 * F[CONCEPT] + 0.05 * torch.randn(NC * SC, D, generator=G, dtype=torch.float64)
    q, _ = torch.linalg.qr(torch.randn(D, D, generator=G, dtype=torch.float64))
    a, b = group_collapse(words, CONCEPT, NC), group_collapse(3.0 * words @ q, CONCEPT, NC)
    for key in ("nc1_trace", "nc1", "dir_nc1", "etf", "norm_cv"):
        assert a[key] == pytest.approx(b[key], rel=1e-9, abs=1e-12)


def test_verdict_thresholds_are_overridable():
    m = measures(1.4 * F[CONCEPT] + 0.2 * torch.randn(NC * SC, D, generator=G, dtype=torch.float64))
    kind, _ = collapse_verdict(m, layer_norm=False, thresholds={"dir_nc1_max": 1e-9})
    assert kind == "none"


def test_spearman_and_pca():
    assert spearman(torch.tensor([1.0, 2, 2, 3]), torch.tensor([1.0, 5, 5, 9])) == pytest.approx(1)
    assert spearman(torch.tensor([1.0, 2, 3]), torch.tensor([3.0, 2, 1])) == pytest.approx(-1)
    with pytest.raises(DegenerateError):
        spearman(torch.ones(4), torch.arange(4.0))
    coords, s = pca(1.42 * F[CONCEPT], 3)  # a 2D triangle: third singular value ~0
    assert s[2] < 1e-10 and s[0] == pytest.approx(s[1]) and coords.shape == (NC * SC, 3)


def test_bad_inputs():
    with pytest.raises(DegenerateError, match="empty"):
        group_collapse(torch.randn(4, 3), torch.tensor([0, 0, 1, 1]), 3)
    with pytest.raises(DegenerateError, match="zero"):
        group_collapse(torch.zeros(4, 3), torch.tensor([0, 0, 1, 1]), 2)
    with pytest.raises(DataError, match="NaN"):
        group_collapse(torch.full((2, 3), float("nan")), torch.tensor([0, 1]), 2)
    with pytest.raises(DataError, match=r"\(K, L, d\)"):
        feature_collapse_measures(F[CONCEPT], CONCEPT, NC, torch.zeros(3, 4), LATENTS)


def test_verdict_needs_one_u_norm_and_zero_sum_word_directions():
    """Definitions 1-3: every u_{k,l} has the same norm c, and the equiangular f_a sum to zero."""
    base = measures(1.42 * F[CONCEPT])
    assert base["words"]["offset"] == pytest.approx(0, abs=1e-6)  # float32 frame
    assert base["u"]["norm_cv"] == pytest.approx(0, abs=1e-6)
    # u blocks collapsed in direction but with a norm per concept
    scale = torch.tensor([0.2, 0.4, 0.8], dtype=torch.float64)[LATENTS][..., None]
    m = measures(1.42 * F[CONCEPT], u=scale * F[LATENTS])
    assert m["u"]["dir_nc1"] < 1e-12 and m["collapse_type"] == "none"
    assert any("u norms differ" in r for r in m["verdict_reasons"])
    # word directions collapsed, equiangular after centring, but shifted: sum f_a != 0
    shift = torch.zeros(D, dtype=torch.float64)
    shift[-1] = 1.0  # orthogonal to the plane of F (equiangular_frame: a random 2D plane)
    shift = shift - (F.T @ torch.linalg.lstsq(F.T, shift).solution)
    shifted = F + 2.0 * shift / shift.norm()
    m = measures(1.42 * shifted[CONCEPT], u=0.4 * shifted[LATENTS])
    assert m["words"]["etf"] < 1e-9 and m["words"]["offset"] > 0.5
    assert m["collapse_type"] == "none"
    assert any("sum to zero" in r for r in m["verdict_reasons"])
    # h* (type-II): the zero-sum condition is not required of the representations
    assert (
        measures(math.sqrt(D) * F0[CONCEPT], u=0.3 * F0[LATENTS], layer_norm=True)["collapse_type"]
        == "type-II"
    )
