"""Large K in bounded memory: the D x D forms and the tiles against the dense computation."""

from __future__ import annotations

import pytest
import torch

from nclab import ClassStats
from nclab._kernels import best_columns, memory_budget, nearest_centre, set_memory_budget

F64 = torch.float64


@pytest.fixture
def small_budget():
    """A 1 MiB budget: every tiled path runs in many tiles."""
    old = set_memory_budget(1 << 20)
    yield memory_budget()
    set_memory_budget(old)


def test_blocked_decisions_equal_one_block(small_budget):
    g = torch.Generator().manual_seed(0)
    k, d, n = 3000, 40, 400
    mu = torch.randn(k, d, generator=g, dtype=F64)
    y = torch.arange(n) % k
    x = mu[y] + 0.3 * torch.randn(n, d, generator=g, dtype=F64)
    w, b = torch.randn(k, d, generator=g, dtype=F64), torch.randn(k, generator=g, dtype=F64)
    # blocked (1 MiB: 400 x 3000 scores do not fit) against the dense decisions
    sq = (mu * mu).sum(1)
    dense = ((x * x).sum(1)[:, None] + sq[None, :] - 2 * x @ mu.T).argmin(1)
    assert torch.equal(nearest_centre(x, mu, sq), dense)
    counts = torch.bincount(y, minlength=k)
    s = ClassStats(int(counts.gt(0).sum()), d, scatter="none")
    keep = counts > 0
    s.update(x, y)
    s.decision_pass(x, y, w[keep], b[keep])
    pred = (x @ w[keep].T + b[keep]).argmax(1)
    assert s.decision.clf_correct == int((pred == y).sum())


def test_near_ties_are_decided_exactly():
    # two centres far from the origin whose expanded scores tie in float64: the explicit
    # differences decide (the point is 1e-9 closer to centre 1)
    c = torch.tensor([[1e8, 0.0], [1e8, 1.0]], dtype=F64)
    p = torch.tensor([[1e8 + 3.0, 0.5 + 1e-9]], dtype=F64)
    sq = (c * c).sum(1)
    assert best_columns(p, c, sq, -2.0, largest=False)[0].tolist() == [0]  # the expansion errs
    assert nearest_centre(p, c, sq).tolist() == [1]
