"""Collapse by a latent symbol (nclab.collapse.latent): exact constructions, streaming, errors."""

import math

import pytest
import torch

from nclab.collapse.latent import LatentCollapse, latent_collapse, latent_verdict
from nclab.errors import DataError, DegenerateError
from nclab.theory.feature_collapse import equiangular_frame

G = torch.Generator().manual_seed(0)
N_LAB, D = 5, 12
F = torch.as_tensor(equiangular_frame(N_LAB, D, seed=0)).T.double()  # 5 x 12 simplex ETF rows


def tokens(n_seq=40, length=64):
    """Labels of (n_seq, length) tokens, every label present."""
    return torch.randint(0, N_LAB, (n_seq, length), generator=G)


def test_exactly_collapsed_tokens_are_type_one_and_etf():
    y = tokens()
    m = latent_collapse(3.0 * F[y], y, N_LAB, chunk=500)
    assert m["collapse_type"] == "type-I", m["verdict_reasons"]
    for key in ("nc1_trace", "dir_nc1", "nc1", "equinorm", "equiangle", "etf", "nc2_etf", "offset"):
        assert m[key] == pytest.approx(0, abs=1e-6), key
    assert m["norm_mean"] == pytest.approx(3.0) and m["items"] == y.numel()


def test_frequency_dependent_norms_are_type_three_and_layernorm_type_two():
    y = tokens()
    r = 1.0 + torch.rand(y.shape, generator=G, dtype=torch.float64) * 3  # norms 1..4
    m = latent_collapse(r[..., None] * F[y], y, N_LAB)
    assert m["collapse_type"] == "type-III" and m["dir_nc1"] < 1e-12 and m["nc1_trace"] > 0.01
    assert latent_collapse(r[..., None] * F[y], y, N_LAB, layer_norm=True)["collapse_type"] == (
        "type-II"
    )


def test_random_representations_are_not_collapsed():
    y = tokens()
    x = torch.randn(*y.shape, D, generator=G, dtype=torch.float64)
    m = latent_collapse(x, y, N_LAB)
    assert m["collapse_type"] == "none"
    # random vectors: tr Sigma_B ~ D/n_per_label, tr Sigma_W ~ D, so the ratio is ~ items/labels
    assert m["nc1_trace"] > 50 and m["dir_nc1"] > 50


def test_noise_level_is_measured():
    """Collapsed means plus isotropic noise of variance s^2 per coordinate: tr Sigma_W = D s^2,
    tr Sigma_B = |F|^2 (K-1)/K * scale^2 (rows of the ETF have unit norm)."""
    y = tokens(200, 64)
    s = 0.05
    x = F[y] + s * torch.randn(*y.shape, D, generator=G, dtype=torch.float64)
    m = latent_collapse(x, y, N_LAB)
    assert m["nc1_trace"] == pytest.approx(D * s**2, rel=0.1)  # tr Sigma_B = 1 for a unit ETF
    assert m["collapse_type"] == "type-I"


def test_streamed_equals_one_shot_and_merge():
    y = tokens(30, 100)
    x = F[y] + 0.3 * torch.randn(*y.shape, D, generator=G, dtype=torch.float64)
    whole = latent_collapse(x, y, N_LAB, chunk=10**9)
    batches = ((x[i : i + 7], y[i : i + 7]) for i in range(0, 30, 7))
    streamed = latent_collapse(batches, num_labels=N_LAB)
    a = LatentCollapse(N_LAB, D).update(x[:11], y[:11])
    b = LatentCollapse(N_LAB, D).update(x[11:], y[11:])
    merged = a.merge(b).compute()
    for key in ("nc1_trace", "dir_nc1", "nc1", "equinorm", "equiangle", "etf", "offset", "norm_cv"):
        assert streamed[key] == pytest.approx(whole[key], rel=1e-10), key
        assert merged[key] == pytest.approx(whole[key], rel=1e-10), key


def test_long_sentences_in_float32_and_an_embedding_table():
    """A (sentences x 4096 tokens) batch through chunks, and an embedding table in one call."""
    y = torch.randint(0, N_LAB, (16, 4096), generator=G)
    x = (2.0 * F[y] + 1e-3 * torch.randn(*y.shape, D, generator=G, dtype=torch.float64)).float()
    m = latent_collapse(x, y, N_LAB, chunk=8192, scatter="none")
    assert m["items"] == 16 * 4096 and m["nc1"] is None and "nc1" in m["skipped"]
    assert m["nc1_trace"] < 1e-5 and m["collapse_type"] == "type-I"
    table = torch.nn.Embedding(300, D).weight  # requires grad: detached inside
    concept = torch.arange(300) // 60
    assert latent_collapse(table, concept, N_LAB)["collapse_type"] == "none"


def test_missing_labels_are_dropped_and_listed():
    y = torch.tensor([0, 0, 2, 2, 4, 4])
    x = 2.0 * F[y]
    m = latent_collapse(x, y, N_LAB)
    assert m["labels_dropped"] == [1, 3] and m["labels_present"] == 3
    assert m["dir_nc1"] == pytest.approx(0, abs=1e-12)


def test_zero_sum_is_tested_when_asked():
    shifted = F + 0.8 * torch.linalg.svd(F, full_matrices=True).Vh[-1]  # off the ETF's span
    y = tokens()
    m = latent_collapse(shifted[y], y, N_LAB)
    assert m["offset"] > 0.3 and m["etf"] < 1e-9 and m["collapse_type"] == "type-I"
    m = latent_collapse(shifted[y], y, N_LAB, zero_sum=True)
    assert m["collapse_type"] == "none"
    assert latent_verdict(m, zero_sum=False)[0] == "type-I"


def test_one_label_reports_undefined_geometry_not_nan():
    y = torch.zeros(10, dtype=torch.long)
    m = latent_collapse(torch.randn(10, D, generator=G), y, 1)
    assert m["etf"] is None and "etf" in m["skipped"] and m["collapse_type"] == "none"
    assert all(v is None or not (isinstance(v, float) and math.isnan(v)) for v in m.values())


def test_bad_inputs():
    with pytest.raises(DataError, match="leading shape"):
        LatentCollapse(3, 4).update(torch.randn(5, 4), torch.zeros(4, dtype=torch.long))
    with pytest.raises(DataError):
        LatentCollapse(3, 4).update(torch.randn(2, 4), torch.tensor([0, 3]))
    with pytest.raises(DataError, match="NaN"):
        LatentCollapse(3, 4).update(torch.full((2, 4), float("nan")), torch.tensor([0, 1]))
    with pytest.raises(DegenerateError, match="zero"):
        LatentCollapse(3, 4).update(torch.zeros(2, 4), torch.tensor([0, 1]))
    with pytest.raises(DegenerateError, match="no items"):
        LatentCollapse(3, 4).compute()
    with pytest.raises(DataError, match="scatter"):
        LatentCollapse(3, 4, scatter="diag")
