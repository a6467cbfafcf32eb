"""The concept/word sentence model (nclab.data.sentences)."""

import pytest
import torch

from nclab.data.sentences import (
    all_latents,
    enumerate_sentences,
    frequencies,
    make_dataset,
    make_task,
)
from nclab.errors import ConfigError


def test_frequencies():
    assert torch.allclose(frequencies(4), torch.full((4,), 0.25, dtype=torch.float64))
    z = frequencies(400, "zipf")
    inv = 1 / torch.arange(1, 401.0, dtype=torch.float64)
    assert torch.allclose(z, inv / inv.sum())
    assert float(frequencies(3, [0.5, 0.3, 0.2]).sum()) == pytest.approx(1.0)


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"nc": 3, "nw": 10, "L": 4, "K": 5}, "multiple of nc"),
        ({"nc": 3, "nw": 9, "L": 4, "K": 5, "freq": [0.5, 0.3, 0.1]}, "sum to 1"),
        ({"nc": 3, "nw": 9, "L": 4, "K": 5, "freq": [0.5, 0.6, -0.1]}, "> 0"),
        ({"nc": 3, "nw": 9, "L": 4, "K": 5, "freq": [0.5, 0.5]}, "sc = nw/nc = 3"),
        ({"nc": 3, "nw": 9, "L": 4, "K": 5, "freq": "pareto"}, "uniform"),
        ({"nc": 1, "nw": 9, "L": 4, "K": 5}, "nc must be"),
        ({"nc": 2, "nw": 4, "L": 2, "K": 5, "distinct": True}, "do not exist"),
    ],
)
def test_bad_configs(kwargs, match):
    with pytest.raises(ConfigError, match=match):
        make_task(**kwargs)


def test_nspl_zero_is_an_error():
    task = make_task(3, 9, 4, 5)
    with pytest.raises(ConfigError, match="nspl"):
        make_dataset(task, nspl=0)


def test_concept_membership_and_labels():
    task = make_task(3, 30, 6, 20, freq="zipf", seed=3)
    data = make_dataset(task, nspl=7, seed=3)
    assert data.x_train.shape == (140, 6) and data.x_test.shape == (100, 6)
    for x, y in ((data.x_train, data.y_train), (data.x_test, data.y_test)):
        assert torch.equal(task.word_concept[x], task.latents[y])
        assert torch.equal(torch.bincount(y), torch.full((20,), x.shape[0] // 20))
    assert int(data.x_train.min()) >= 0 and int(data.x_train.max()) < 30


def test_word_statistics_match_mu():
    task = make_task(2, 20, 10, 50, freq="zipf", seed=0)
    data = make_dataset(task, nspl=400, seed=0)
    counts = torch.bincount(task.word_rank[data.x_train].flatten(), minlength=10).double()
    emp = counts / counts.sum()
    assert float((emp - task.mu).abs().max()) < 0.005  # 200k draws: std ~ 1e-3
    latents = torch.randint(0, 3, (2000, 8), generator=torch.Generator().manual_seed(0))
    assert abs(float((latents == 0).double().mean()) - 1 / 3) < 0.01
    lat = make_task(3, 9, 8, 3000, seed=1).latents
    assert abs(float((lat == 2).double().mean()) - 1 / 3) < 0.01  # concepts drawn uniformly


def test_determinism_and_streams():
    a = make_dataset(make_task(3, 12, 5, 10, seed=4), nspl=3, seed=4)
    b = make_dataset(make_task(3, 12, 5, 10, seed=4), nspl=3, seed=4)
    c = make_dataset(make_task(3, 12, 5, 10, seed=5), nspl=3, seed=5)
    assert torch.equal(a.x_train, b.x_train) and torch.equal(a.x_test, b.x_test)
    assert not torch.equal(a.x_train, c.x_train)
    # more training sentences leave the latents and the test set unchanged
    d = make_dataset(make_task(3, 12, 5, 10, seed=4), nspl=9, seed=4)
    assert torch.equal(a.task.latents, d.task.latents) and torch.equal(a.x_test, d.x_test)


def test_distinct_latents():
    for L, K in ((3, 27), (4, 60), (20, 500)):
        task = make_task(3, 9, L, K, distinct=True, seed=0)
        assert task.distinct
    assert all_latents(3, 2).tolist() == [[a, b] for a in range(3) for b in range(3)]


def test_enumerate_sentences():
    task = make_task(3, 6, 3, 27, freq=[0.7, 0.3], latents=all_latents(3, 3))
    x, y, p = enumerate_sentences(task)
    assert x.shape == (27 * 8, 3)
    for k in (0, 13, 26):
        assert float(p[y == k].sum()) == pytest.approx(1.0)
    assert torch.equal(task.word_concept[x], task.latents[y])
    assert float(p.max()) == pytest.approx(0.7**3)


def test_large_generation_is_vectorised():
    task = make_task(3, 1200, 15, 1000, freq="zipf", seed=0)
    data = make_dataset(task, nspl=100, n_test=1, seed=0)  # 100k sentences
    assert data.x_train.shape == (100_000, 15)
    assert data.word_counts().sum() == 1_500_000
