"""Claims of Súkeník, Lampert & Mondelli, *Neural Collapse is Globally Optimal in Deep Regularized
ResNets and Transformers* (appendix: the generalised UFM), for ``nclab reproduce``.

The GUFM's features are LayerNorm outputs (zero mean, norm √d) and only W has weight decay; the
appendix proves that its MSE optimum is an orthogonal frame with ‖w_k‖ = 1/(√d(1+λK)) (their
normalisation; ours is λ_ours = d·λ, docs/theory-ufm.md) and reduces the CE case to the regularised
UFM-CE of Zhu et al. (its Theorem 3.1), whose optimum is a simplex ETF. Projected gradient descent
(``ufm`` experiment) is compared with these closed forms.
"""

from __future__ import annotations

from ..registry import Check, Claim, RunSpec

PAPER = "Súkeník, Lampert & Mondelli, Neural Collapse is Globally Optimal in Deep Regularized " \
        "ResNets and Transformers (appendix)"
EXP = "ufm"


def _le(path: str, value: float) -> Check:
    return Check(f"{path} <= {value:g}", path=path, op="<=", value=value)


CLAIMS: list[Claim] = [
    Claim(
        id="sukenik/gufm-mse",
        paper=PAPER, where="Appendix, proof of Lemma 4.1 (MSE)",
        claim="The GUFM with MSE loss is minimised by collapsed features forming an orthogonal "
              "frame on the LayerNorm sphere, with ‖w_k‖ = 1/(√d(1+λK)) (appendix normalisation); "
              "needs d >= K+1.",
        runs={"main": RunSpec(EXP, quick="gufm-mse", full="gufm-mse", seeds=3)},
        measured={"objective": "objective", "||w_k||": "measured_norms.w_norm",
                  **{k: f"metrics.{k}" for k in ("nc1", "nc2_of", "nc2_w_of", "nc3_of")}},
        theory={"objective": "theory_objective", "||w_k||": "theory_norms.w_norm",
                "||w_k|| (appendix formula, λ_app = λ/d)": "theory.w_norm_appendix_formula"},
        paper_values={"||w_k||": "1/(√d(1+λK)) = 0.245098 for d=16, K=4, λ=0.005"},
        checks=[_le("objective_gap", 1e-6), _le("norm_gaps.w_norm", 1e-6),
                Check("||w_k|| equals the appendix formula", path="measured_norms.w_norm",
                      op="~", ref="theory.w_norm_appendix_formula", rtol=1e-6),
                *[_le(f"metrics.{k}", 1e-6) for k in ("nc1", "nc2_of", "nc2_w_of", "nc3_of")]],
        quick_seconds=10, full_seconds=10,
    ),
    Claim(
        id="sukenik/gufm-ce",
        paper=PAPER, where="Appendix, proof of Lemma 4.1 (CE, via Zhu et al. Thm 3.1)",
        claim="The GUFM with cross-entropy loss is minimised by collapsed features forming a "
              "simplex ETF on the LayerNorm sphere, with W aligned to it.",
        runs={"main": RunSpec(EXP, quick="gufm-ce", full="gufm-ce", seeds=3)},
        measured={"objective": "objective", "||w_k||": "measured_norms.w_norm",
                  **{k: f"metrics.{k}" for k in ("nc1", "nc2_etf", "nc2_w_etf", "nc3")}},
        theory={"objective": "theory_objective", "||w_k||": "theory_norms.w_norm"},
        paper_values={"structure": "simplex ETF (NC1-NC3)"},
        checks=[_le("objective_gap", 1e-6), _le("norm_gaps.w_norm", 1e-6),
                *[_le(f"metrics.{k}", 1e-6) for k in ("nc1", "nc2_etf", "nc2_w_etf", "nc3")]],
        quick_seconds=10, full_seconds=10,
    ),
    Claim(
        id="sukenik/ufm-ce",
        paper=PAPER, where="Appendix (the regularised UFM-CE it reduces the GUFM-CE to)",
        claim="The regularised cross-entropy UFM (Zhu et al. 2021, Thm 3.1) is minimised by a "
              "simplex ETF with W = √(nλ_H/λ_W) H̄ᵀ, norms from its scalar equation.",
        runs={"main": RunSpec(EXP, quick="ufm-ce", full="ufm-ce")},
        measured={"objective": "objective", "||w_k||": "measured_norms.w_norm",
                  "||h̄_k||": "measured_norms.h_norm",
                  **{k: f"metrics.{k}" for k in ("nc1", "nc2_etf", "nc2_w_etf", "nc3")}},
        theory={"objective": "theory_objective", "||w_k||": "theory_norms.w_norm",
                "||h̄_k||": "theory_norms.h_norm"},
        paper_values={"structure": "simplex ETF (NC1-NC3)"},
        checks=[_le("objective_gap", 1e-6), _le("norm_gaps.w_norm", 1e-6),
                _le("norm_gaps.h_norm", 1e-6),
                *[_le(f"metrics.{k}", 1e-6) for k in ("nc1", "nc2_etf", "nc2_w_etf", "nc3")]],
        quick_seconds=10, full_seconds=10,
    ),
]
