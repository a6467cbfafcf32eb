"""Issue 50's direct tests of the papers' predictions: the summary quantities they read (the App. D
ranges of the linear extended UFM, the GUFM-MSE's optimal features given W, the norms' growth
without weight decay, Lemma C.2 on a linear head) and claims that fail where a prediction would
not hold."""

import math
from types import SimpleNamespace

import pytest
import torch

from nclab.experiments.feature_collapse.summary import norm_growth
from nclab.experiments.linear_head.measure import lemma_c2
from nclab.experiments.ufm.levels import features_given_w, same_range
from nclab.reproduce import select

F64 = torch.float64


def _orth(n: int, gen: torch.Generator) -> torch.Tensor:
    return torch.linalg.qr(torch.randn(n, n, generator=gen, dtype=F64))[0]


def _balanced_extended(K=3, d=6, N=12, lam=0.01, seed=0):
    """A linear extended UFM point meeting App. D's two identities exactly (λ's equal): W2 = A Σ
    R1ᵀ, W1 = R1 Σ R2ᵀ, H1 = R2 Σ Bᵀ with A, B orthonormal (K and N rows), R1, R2 rotations."""
    gen = torch.Generator().manual_seed(seed)
    s = torch.diag(torch.linspace(1.0, 2.0, K, dtype=F64))
    r1, r2 = _orth(d, gen)[:, :K], _orth(d, gen)[:, :K]
    a = _orth(K, gen)
    b = torch.linalg.qr(torch.randn(N, K, generator=gen, dtype=F64))[0]
    return [(r1 @ s @ r2.T)[None], (a @ s @ r1.T)[None], (r2 @ s @ b.T)[None]]


def test_same_range_holds_on_balanced_points_and_the_literal_reading_fails():
    cfg = SimpleNamespace(model=SimpleNamespace(lambda_w=0.01, lambda_w1=None, lambda_h=0.01))
    top, _ = same_range(cfg, _balanced_extended())
    assert top["balance_w2_w1"] < 1e-12 and top["balance_w1_h1"] < 1e-12
    assert top["range_sine_chain"] < 1e-12 and top["rank_tail"] < 1e-12
    assert top["range_sine"] > 0.1  # R1 and R2 are independent: range W1 != range W1ᵀ
    w1, w2, h = _balanced_extended()
    top, _ = same_range(cfg, [w1, 2 * w2, h])  # off the identities
    assert top["balance_w2_w1"] > 0.1


def test_features_given_w_zero_at_the_proofs_optimum_and_not_elsewhere():
    gen = torch.Generator().manual_seed(0)
    K, d, n = 3, 8, 4
    w = 0.2 * torch.randn(K, d, generator=gen, dtype=F64) / math.sqrt(d)
    h = (math.sqrt(d) * w / w.norm(dim=1, keepdim=True)).repeat_interleave(n, dim=0).T
    top, _ = features_given_w([w[None], h[None]], n)
    assert top["features_given_w_gap"] < 1e-12
    assert top["w_norm_sphere_margin"] == pytest.approx(
        1 - math.sqrt(d) * float(w.norm(dim=1).max())
    )
    top, _ = features_given_w([w[None], (h + 0.1)[None]], n)
    assert top["features_given_w_gap"] > 0.01


def test_norm_growth_reads_the_second_half():
    hist = [
        {"epoch": e, "word_norm_mean": 1.0 + e, "u_norm_mean": 2.0 + e, "train_ce": 1.0 / e}
        for e in range(1, 11)
    ]
    out = norm_growth(hist)
    assert out["from_epoch"] == 5 and out["to_epoch"] == 10
    assert out["w_ratio"] == pytest.approx(11 / 6) and out["u_rising"] == 1.0
    assert out["loss_ratio"] == pytest.approx(0.5)
    assert norm_growth(hist[:1]) is None


class _Head:
    """The two attributes lemma_c2 reads of a LinearHeadMLP."""

    def __init__(self, ws, L1=0):
        self._ws, self.L1 = ws, L1

    def weights(self):
        return self._ws


def test_lemma_c2_exact_when_balanced_and_bounded_otherwise():
    gen = torch.Generator().manual_seed(2)
    K, d, L2 = 3, 5, 3
    s = torch.diag(torch.tensor([1.3, 1.1, 0.9, 0.7, 0.5], dtype=F64))
    rots = [_orth(d, gen) for _ in range(L2)]
    # exactly balanced: W_l = R_l S R_(l-1)ᵀ, the last one K rows of it
    ws = [rots[0] @ s] + [rots[i] @ s @ rots[i - 1].T for i in range(1, L2)]
    ws[-1] = ws[-1][:K]
    out = lemma_c2(_Head(ws), K)
    assert out["lhs"] <= out["bound"] + 1e-12
    for seed in range(5):  # any weights: the lemma is a theorem
        g = torch.Generator().manual_seed(seed)
        ws = [torch.randn(d, d, generator=g, dtype=F64) for _ in range(L2 - 1)]
        ws.append(torch.randn(K, d, generator=g, dtype=F64))
        out = lemma_c2(_Head(ws), K)
        assert out["lhs"] <= out["bound"] * (1 + 1e-12)
        assert out["kappa_rel_gap"] <= out["kappa_tolerance"]


def test_the_claims_fail_where_a_prediction_would_not_hold():
    cases = {
        "tirer-bruna/thm4.1-same-range": ("range-identities", {"range_sine_chain": 0.3}),
        "sukenik/mse-optimum-given-w": ("w-norm-margin", {"w_norm_sphere_margin": -1e-3}),
        "jacot/lemma-c2": (
            "lemma-c2",
            {"certificate": {"lemma_c2": {"lhs": 2e-5, "bound": 1e-5}}},
        ),
        "feature-collapse/frequent-larger-thm2": ("ranks-ordered", {"rank_norm_min_step": -0.01}),
    }
    for claim in select(list(cases)):
        name, summary = cases[claim.id]
        chk = next(c for c in claim.checks if c.name == name)
        assert chk.evaluate({"main": summary})["passed"] is False, claim.id
    grow = next(c for c in select(["feature-collapse/no-wd-norms-grow"])[0].checks)
    alias = grow.path.split(":")[0]
    assert grow.evaluate({alias: {"norm_growth": {"u_ratio": 1.0}}})["passed"] is False
