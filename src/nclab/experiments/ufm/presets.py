"""Presets of the UFM laboratory (``nclab run ufm --preset NAME``).

Tirer & Bruna (ICML 2022): Fig. 2 (plain UFM, K=4, d=20, n=50, λ_W=λ_H=0.005, step 0.1,
N(0,1) init), Fig. 5 (extended UFM, λ's 0.005, init ×0.1), appendix Fig. 9 (K=5, d=20, n=100,
λ_W=0.005, λ_H=0.001, λ_W1=0.0025, inits ×0.1 / ×0.2), and a phase diagram across the collapse
threshold K√(nλ_Hλ_W) = 1. The CE UFM (Zhu et al.) and the GUFM (Súkeník et al.) in the same
solver. ``-quick`` variants run the same problem for fewer steps when the full preset takes longer
than ~30 s on two cores. ``docs/ufm.md`` lists what each preset shows and the numbers it measured.
"""

from __future__ import annotations

from typing import Any

from ..protocol import PaperSetting, Smoke

_FIG2 = {
    "model.K": 4,
    "model.d": 20,
    "model.n": 50,
    "model.lambda_w": 0.005,
    "model.lambda_h": 0.005,
    "train.lr": 0.1,
}
_FIG9 = {
    "model.K": 5,
    "model.d": 20,
    "model.n": 100,
    "model.lambda_w": 0.005,
    "model.lambda_h": 0.001,
    "train.lr": 0.1,
}
_SMALL_INIT = {"w": 0.1, "w1": 0.1, "h": 0.1}
_GUFM_MSE = {
    "model.K": 4,
    "model.d": 16,
    "model.n": 10,
    "model.lambda_w": 0.005,
    "model.lambda_h": 0.0,
    "model.layernorm": True,
    "train.lr": 0.1,
    "train.lr_h_scale": 400.0,
}
#: the extended UFM of Fig. 5 (λ's 0.005, init x0.1) and of Fig. 9 (λ_W1 = 0.0025, inits x0.1 /
#: x0.2 for the ReLU one); a plain one without a bias
_FIG5_LINEAR = {**_FIG2, "model.depth": 2, "model.lambda_w1": 0.005, "model.init": _SMALL_INIT}
_FIG5_RELU = {
    **_FIG2,
    "model.depth": 2,
    "model.relu": True,
    "model.lambda_w1": 0.005,
    "model.init": _SMALL_INIT,
}
_FIG9_LINEAR = {**_FIG9, "model.depth": 2, "model.lambda_w1": 0.0025, "model.init": _SMALL_INIT}
_FIG9_RELU = {
    **_FIG9,
    "model.depth": 2,
    "model.relu": True,
    "model.lambda_w1": 0.0025,
    "model.init": {"w": 0.1, "w1": 0.1, "h": 0.2},
}
_FIG2_NOBIAS = {**_FIG2, "model.bias": "none"}
_FIG9_NOBIAS = {**_FIG9, "model.bias": "none"}
_FIG9_BIAS = {**_FIG9, "model.bias": "free"}
_FIG2_REG_BIAS = {**_FIG2, "model.bias": "regularized"}
_FIG2_CE = {**_FIG2, "model.loss": "ce"}
#: the linear extended UFM across its threshold, from init x0.5 (see tb-phase-diagram-linear)
_LINEAR_HALF_INIT = {
    **_FIG2_NOBIAS,
    "model.depth": 2,
    "model.init": {"w": 0.5, "w1": 0.5, "h": 0.5},
}
#: Theorem 5.1's sizes n = 25 .. 409600 (quick: 25 .. 25600) with σ_e = 0.1
_FIXED = {"ns": [25 * 2**k for k in range(15)], "sigma_e": 0.1, "seeds": 10}
_FIXED_QUICK = {"ns": [25 * 4**k for k in range(6)], "sigma_e": 0.1, "seeds": 5}


def _run(setting: dict[str, Any], steps: int, log_every: int = 0, **modes: Any) -> dict[str, Any]:
    """``setting`` run for ``steps`` steps of GD (logged every ``log_every``; 0: the default),
    with the sections of a mode (``phase={...}``, ``fixed_features={...}``): a preset and its
    ``-quick`` variant differ in these alone."""
    out = {**setting, "train.steps": steps}
    if log_every:
        out["log_every"] = log_every
    return out | modes


def _phase_diagram(setting: dict[str, Any], steps: int, points: int, seeds: int) -> dict[str, Any]:
    """``points`` values of λ_W = λ_H (= λ_W1) from 0.2 to 2.5 times the collapse threshold,
    ``seeds`` seeds each, logged every 10k steps."""
    return _run(
        setting, steps, 10_000, phase={"points": points, "lo": 0.2, "hi": 2.5, "seeds": seeds}
    )


def _bias_sweep(steps: int, points: int, seeds: int) -> dict[str, Any]:
    """Fig. 2's setting with a regularised bias, ``points`` values of λ_b from 0.01 (simplex ETF)
    to 16 (near the orthogonal frame; plain GD at step 0.1 needs λ_b < 19), ``seeds`` seeds each,
    one batched solve, logged every 10k steps."""
    sweep = {"points": points, "lo": 0.01, "hi": 16.0, "seeds": seeds}
    return _run(_FIG2_REG_BIAS, steps, 10_000, bias_sweep=sweep)


PRESETS: dict[str, dict[str, Any]] = {
    # Fig. 2: Theorem 3.1 (bias-free -> orthogonal frame) and Theorem 3.2 (free bias -> simplex ETF)
    "tb-fig2-nobias": _run(_FIG2_NOBIAS, 60_000),
    "tb-fig2-bias": _run({**_FIG2, "model.bias": "free"}, 60_000),
    # Fig. 5: extended UFM, Theorem 4.1 (linear) and 4.2 (ReLU); the ReLU one on the paper's
    # metric grid ("computed every 5e3 iterations"): the levels' NC1 rates are fitted on it
    # (tirer-bruna/fig5-two-levels-rate)
    "tb-fig5-linear": _run(_FIG5_LINEAR, 60_000),
    "tb-fig5-relu": _run(_FIG5_RELU, 600_000, 5_000),
    "tb-fig5-relu-quick": _run(_FIG5_RELU, 80_000),
    # appendix G, Fig. 9: K=5, n=100, lambda_H = 0.001 (slower: the within-class modes decay
    # at rate lr * lambda_H per step)
    "tb-fig9-nobias": _run(_FIG9_NOBIAS, 200_000, 10_000),
    "tb-fig9-nobias-quick": _run(_FIG9_NOBIAS, 130_000, 10_000),
    "tb-fig9-bias": _run(_FIG9_BIAS, 200_000, 10_000),
    "tb-fig9-bias-quick": _run(_FIG9_BIAS, 150_000, 10_000),
    "tb-fig9-linear": _run(_FIG9_LINEAR, 200_000, 10_000),
    "tb-fig9-linear-quick": _run(_FIG9_LINEAR, 80_000, 10_000),
    "tb-fig9-relu": _run(_FIG9_RELU, 300_000, 10_000),
    "tb-fig9-relu-quick": _run(_FIG9_RELU, 110_000, 10_000),
    # phase diagram: 20 values of lambda_W = lambda_H across K sqrt(n) lambda = 1, x 5 seeds, one
    # batched solve (Theorem 3.1's threshold)
    "tb-phase-diagram": _phase_diagram(_FIG2_NOBIAS, 100_000, points=20, seeds=5),
    "tb-phase-diagram-quick": _phase_diagram(_FIG2_NOBIAS, 40_000, points=10, seeds=2),
    # the same across Theorem 4.1's threshold K (n λ_H1 λ_W1 λ_W2)^(1/3) = 2^(-4/3) of the linear
    # extended UFM (λ_W2 = λ_W1 = λ_H1 = λ), from init x0.5: the paper's Fig. 5 init x0.1 sits in
    # the zero solution's basin (a local minimum on both sides of the threshold) from 0.46 of it,
    # N(0, 1) makes GD at step 0.1 diverge
    "tb-phase-diagram-linear": _phase_diagram(_LINEAR_HALF_INIT, 100_000, points=20, seeds=5),
    "tb-phase-diagram-linear-quick": _phase_diagram(_LINEAR_HALF_INIT, 60_000, points=10, seeds=3),
    # Theorem 5.1: the exact classifier of fixed noisy features H̄ ⊗ 1ᵀ + E (σ_e = 0.1) at the
    # Fig. 2 setting (λ̃_H = n λ_H = 0.25), for n = 25 .. 409600 (quick: 25 .. 25600); no GD
    "tb-fixed-features": {**_FIG2, "fixed_features": _FIXED},
    "tb-fixed-features-quick": {**_FIG2, "fixed_features": _FIXED_QUICK},
    # §5 / App. F.1: the linear extended UFM (Fig. 5's λ's, init x0.1, step 0.1) with H1 fixed at
    # Theorem 4.1's H̄1 (λ̃_H = n λ_H1 = 0.25) plus N(0, 0.1²) noise; GD over (W2, W1) for every
    # n x seed in one batch (n = 25 .. 409600; quick: 25 .. 25600)
    "tb-fixed-features-extended": _run(_FIG5_LINEAR, 60_000, fixed_features=_FIXED),
    "tb-fixed-features-extended-quick": _run(_FIG5_LINEAR, 60_000, fixed_features=_FIXED_QUICK),
    # a regularised bias: λ_b from 0.01 to 16, one batched solve of every λ_b x seed
    "tb-regularized-bias": _bias_sweep(60_000, points=17, seeds=5),
    "tb-regularized-bias-quick": _bias_sweep(30_000, points=9, seeds=2),
    # §2: the unregularised MSE UFM (λ_W = λ_H = 0), plain GD from N(0,1) at Fig. 2's sizes and
    # step until it interpolates (the loss falls ~20x per 10k steps once H moves; 150k steps take
    # every seed below 1e-15). The paper states no setting: it refers to Mixon et al. 2020
    "tb-unregularized": _run(
        {**_FIG2, "model.lambda_w": 0.0, "model.lambda_h": 0.0, "model.bias": "none"},
        150_000,
        10_000,
    ),
    # §7: the plain UFM with a ReLU on its features, W σ(H), plain GD from Fig. 2's N(0,1) init
    # at Fig. 2's setting (the paper runs no experiment: it says GD "is doomed to fail")
    "tb-relu-plain-ufm": _run({**_FIG2_NOBIAS, "model.relu_features": True}, 60_000),
    # regularised cross-entropy UFM (Zhu et al. 2021): simplex ETF
    "ufm-ce": _run(_FIG2_CE, 100_000, 10_000),
    # its optimal norms against the regularisation λ = λ_W = λ_H (Súkeník et al.'s appendix, proof
    # of Lemma 4.1 (CE)): GD at 5 λ's from 0.1 to 2 times the threshold, the closed form over
    # 1e-6 .. 10 times it (summary ce_norms)
    "ufm-ce-norms": _run(
        _FIG2_CE,
        100_000,
        10_000,
        phase={"points": 5, "lo": 0.1, "hi": 2.0, "seeds": 3},
    ),
    # GUFM (Súkeník et al.): features on the LayerNorm sphere (zero mean, norm sqrt(d)), weight
    # decay on W only. lambda = 0.005: the paper's "0.005" read as nclab's λ in
    # loss + (λ/2)||W||² (one convention for every experiment, docs/theory-ufm.md; the appendix's
    # normalisation is λ_app = λ/d). The features' step is 400 x the weights' (their gradient
    # carries a 1/N factor; projected GD on the sphere is otherwise very slow); MSE at this small
    # λ needs 160k steps to reach the optimum to 1e-11.
    "gufm-mse": _run(_GUFM_MSE, 160_000),
    "gufm-ce": _run({**_GUFM_MSE, "model.loss": "ce"}, 40_000),
    # the ε-sublevel sets of the GUFM-MSE (Lemma 4.1's rates): the gufm-mse instance (K=4, d=16,
    # n=10, λ=0.005: ‖w_k‖ = z* sits 3e-4 below 1/√d, where the proof's quadratic cost turns
    # quartic), ε from 1e-8 to 0.1 times L*, adversarial search + projected GD + random points
    "gufm-mse-rates": {
        **_GUFM_MSE,
        "rates": {"steps_per_decade": 4, "iters": 400, "seeds": 5},
    },
    "gufm-mse-rates-quick": {
        **_GUFM_MSE,
        "rates": {"steps_per_decade": 2, "iters": 200, "seeds": 3, "descent_steps": 10_000},
    },
    # deep linear / ReLU UFM with three weight layers (the extended UFM's generalisation); init
    # x0.2: from x0.1 the tiny product of three layers lets weight decay win (zero and low-rank
    # stationary points are local minima for L >= 2), from x0.5 GD can diverge at step 0.1
    "deep-linear": _run(
        {
            **_FIG2,
            "model.depth": 3,
            "model.lambda_w1": 0.005,
            "model.init": {"w": 0.2, "w1": 0.2, "h": 0.2},
        },
        60_000,
    ),
    "deep-relu": _run(
        {
            **_FIG2,
            "model.depth": 3,
            "model.relu": True,
            "model.lambda_w1": 0.005,
            "model.init": {"w": 0.2, "w1": 0.2, "h": 0.2},
        },
        100_000,
        10_000,
    ),
}

#: the presets of Tirer & Bruna's figures run the paper's settings (§6 and App. G state K, d, n,
#: the λ's, the initialisation and the step); the paper states neither how many steps GD runs
#: (its figures' curves; ours run until the closed form is reached) nor the precision (float64)
_TB_FIGURES = {
    "tb-fig2-nobias": "§6 Fig. 2 (Theorem 3.1)",
    "tb-fig2-bias": "§6 Fig. 2 (Theorem 3.2)",
    "tb-fig5-linear": "§6 Fig. 5 (Theorem 4.1)",
    "tb-fig5-relu": "§6 Fig. 5 (Theorem 4.2)",
    "tb-fig9-nobias": "App. G Fig. 9 (Theorem 3.1)",
    "tb-fig9-bias": "App. G Fig. 9 (Theorem 3.2)",
    "tb-fig9-linear": "App. G Fig. 9 (Theorem 4.1)",
    "tb-fig9-relu": "App. G Fig. 9 (Theorem 4.2)",
}
PAPER_SETTINGS: dict[str, PaperSetting] = {
    name: PaperSetting(where, unstated=("train.steps", "dtype"))
    for name, where in _TB_FIGURES.items()
}


#: the smoke rung (what the tests run): training cut short, the summary's structure kept
SMOKE = Smoke(
    {"train.steps": 400, "log_every": 200, "checkpoint_every": 0},
    presets={
        # the GUFM-MSE sublevel sets: a shorter search (the same samplers and summary)
        "gufm-mse-rates-quick": {
            "rates.steps_per_decade": 1,
            "rates.iters": 40,
            "rates.descent_steps": 100,
        },
        # Theorem 4.1's structure is judged at the points that reached the theorem's objective:
        # a few thousand steps bring the points far below the threshold there (none at 2000)
        "tb-phase-diagram-linear-quick": {
            "train.steps": 5000,
            "log_every": 2500,
            "checkpoint_every": 0,
        },
    },
)
