"""Deep regularised LayerNorm ResNets (Súkeník, Lampert & Mondelli 2025): collapse grows with depth.

``nclab run deep-ln --preset NAME`` trains L-RN1 / L-RN2 networks (:mod:`nclab.models.lnresnet`) of
every depth L of ``depths`` on real data, minimising exactly

.. math:: \\mathcal{L}_{L}(\\theta) = \\mathrm{loss}(W_LX_L) + \\frac{\\lambda}{2}\\sum_{l=1}^{L}\\|W_l\\|_F^2

(cross-entropy averaged over the N samples, or MSE :math:`\\frac{1}{2N}\\|W_LX_L - Y\\|_F^2`: the
GUFM convention of :mod:`nclab.theory.gufm`), and measures the head's input X_L on the training
set: NC1, NC2 (ETF for CE, orthogonal frame for MSE), NC3, ‖w_k‖, and the objective beside the GUFM
optimum :math:`\\mathcal{L}^*_{\\rm GUFM}(K, d, \\lambda)`.

Since X_L lies on the LayerNorm sphere, :math:`\\mathcal{L}_L(\\theta) \\ge
\\mathcal{L}_{\\rm GUFM}(W_L, X_L) \\ge \\mathcal{L}^*_{\\rm GUFM}` for every network: a hard check.
The paper's main result (proved for L-RN1 in the appendix) says the optimum
:math:`\\mathcal{L}^*_L` decreases to :math:`\\mathcal{L}^*_{\\rm GUFM}` as L grows, so that
near-optimal deep networks are nearly collapsed; trained networks should show the gap and the NC
metrics falling with depth. ``wd_over_depth`` uses λ/L (the paper's setting
for two-layer blocks). One unit per (depth, seed) under ``units/``; finished units are skipped on
``--resume``. See ``docs/deep-ln.md``.
"""

from __future__ import annotations

import math
import os
import time
from pathlib import Path
from typing import Any, Literal

import torch
import torch.nn.functional as F
from pydantic import Field

from ..config import Config
from ..runs import RunDir
from .base import Experiment, aggregate_summaries

DEPTHS = [2, 3, 5, 8, 13, 21, 34]  # the paper's sweep


class DataCfg(Config):
    name: Literal["digits", "mnist1d", "mnist", "fashion-mnist", "cifar10", "sentences"] = "digits"
    data_dir: str | None = None
    samples_per_class: int | None = None
    test_samples_per_class: int | None = None
    standardize: bool = True
    # "sentences": the concept/word model of Feature Collapse (nclab.data.sentences)
    nc: int = 5
    nw: int = 50
    sentence_length: int = 6
    num_classes: int = 10
    nspl: int = 30
    freq: Literal["uniform", "zipf"] = "uniform"


class ModelCfg(Config):
    block: Literal["rn1", "rn2", "t11", "t12"] = "rn1"
    width: int = 64


class TrainCfg(Config):
    loss: Literal["ce", "mse"] = "ce"
    weight_decay: float = 5e-3
    wd_over_depth: bool = False
    optimizer: Literal["adam", "sgd"] = "adam"
    lr: float = 1e-3
    momentum: float = 0.9
    epochs: int = 1000
    batch_size: int | None = None  # None: full batch (one step per epoch)


class DeepLNConfig(Config):
    seed: int = 0
    seeds: int = 1
    data: DataCfg = DataCfg()
    model: ModelCfg = ModelCfg()
    train: TrainCfg = TrainCfg()
    depths: list[int] = Field(default_factory=lambda: list(DEPTHS))
    log_every: int = 100
    checkpoint_every: int = 200
    device: str = "auto"
    threads: int = 0  # 0: leave torch's setting


def _gpu(data: str) -> dict[str, Any]:
    return {
        "data": {"name": data},
        "model": {"width": 64},
        "train": {"epochs": 200, "batch_size": 128, "lr": 1e-3},
        "log_every": 20,
        "checkpoint_every": 20,
    }


PRESETS: dict[str, dict[str, Any]] = {
    # CPU: sklearn's digits, full-batch Adam; the paper's width 64 and weight decay 5e-3
    "rn1-ce": {"train": {"epochs": 2000}, "log_every": 200},
    "rn1-ce-quick": {"depths": [2, 5, 13], "train": {"epochs": 600}},
    "rn2-ce": {"model": {"block": "rn2"}, "train": {"epochs": 2000, "wd_over_depth": True},
               "log_every": 200},
    "rn2-ce-quick": {"model": {"block": "rn2"}, "depths": [2, 5, 13],
                     "train": {"epochs": 600, "wd_over_depth": True}},
    # MSE converges far more slowly towards its GUFM optimum (an orthogonal frame): larger steps
    "rn1-mse": {"train": {"loss": "mse", "epochs": 2000, "lr": 1e-2}, "log_every": 200},
    "rn1-mse-quick": {"depths": [2, 5, 13], "train": {"loss": "mse", "epochs": 600, "lr": 1e-2}},
    "rn1-ce-mnist1d": {"data": {"name": "mnist1d"}, "train": {"epochs": 2000}, "log_every": 200},
    # transformers on sentences of the concept/word model (10 classes, 6 words from 5 concepts)
    "t11-ce-quick": {"data": {"name": "sentences"}, "model": {"block": "t11", "width": 32},
                     "depths": [2, 4, 8], "train": {"epochs": 600}},
    "t11-ce": {"data": {"name": "sentences"}, "model": {"block": "t11"},
               "depths": [2, 3, 5, 8, 13], "train": {"epochs": 1500}, "log_every": 150},
    "t12-ce": {"data": {"name": "sentences"}, "model": {"block": "t12"},
               "depths": [2, 3, 5, 8, 13], "train": {"epochs": 1500, "wd_over_depth": True},
               "log_every": 150},
    # GPU: flattened MNIST / CIFAR-10 from data.data_dir (or $NCLAB_DATA_DIR), mini-batches
    "rn1-ce-mnist-gpu": _gpu("mnist"),
    "rn1-ce-cifar10-gpu": _gpu("cifar10"),
    "rn2-ce-cifar10-gpu": {**_gpu("cifar10"), "model": {"block": "rn2", "width": 64},
                           "train": {**_gpu("cifar10")["train"], "wd_over_depth": True}},
}


# --------------------------------------------------------------------------------------------------
# one network
# --------------------------------------------------------------------------------------------------


def fit_loss(logits: torch.Tensor, y: torch.Tensor, onehot: torch.Tensor, loss: str) -> torch.Tensor:
    """Mean CE, or the GUFM's MSE (1/2N)‖Z - Y‖² (sum over classes, mean over samples)."""
    if loss == "ce":
        return F.cross_entropy(logits, y)
    return ((logits - onehot) ** 2).sum(1).mean() / 2


@torch.no_grad()
def measure(model, x, y, xt, yt, lam: float, loss: str, theory) -> dict[str, Any]:
    """The trained network's objective (float64), collapse of X_L and accuracy."""
    from .. import ClassStats, collapse_metrics

    K = model.head.out_features
    h = model.features(x).double()
    w = model.head.weight.double()
    logits = h @ w.T
    onehot = F.one_hot(y, K).double()
    fit = float(fit_loss(logits, y, onehot, loss))
    reg_head = lam / 2 * float((w * w).sum())
    reg = lam / 2 * sum(float((p.double() ** 2).sum()) for p in model.decayed_parameters())
    stats = ClassStats.from_features(h, y, num_classes=K, weights=w)
    m = collapse_metrics(stats, w)
    d = h.shape[1]
    keys = ("nc1", "nc1_trace", "nc2_etf", "nc2_of", "nc3", "nc3_of", "nc4", "cdnv")
    out: dict[str, Any] = {k: m.get(k) for k in keys}
    out.update(
        nc2=m.get("nc2_etf" if loss == "ce" else "nc2_of"),
        nc3_match=m.get("nc3" if loss == "ce" else "nc3_of"),
        objective=fit + reg,
        gufm_objective=fit + reg_head,  # L_GUFM(W_L, X_L) <= objective
        objective_gap=fit + reg - theory.objective,
        fit=fit,
        w_norm=float(w.norm(dim=1).mean()),
        w_norm_gap=abs(float(w.norm(dim=1).mean()) - theory.w_norm) / theory.w_norm,
        sphere_error=float(
            torch.maximum(h.sum(1).abs().max(), (h.norm(dim=1) - math.sqrt(d)).abs().max())
        ),
        train_acc=float((logits.argmax(1) == y).double().mean()),
        test_acc=float((model(xt).argmax(1) == yt).double().mean()) if len(yt) else None,
    )
    return out


def theory_for(loss: str, K: int, d: int, lam: float):
    """The GUFM optimum the depth-L objective approaches as L grows (the paper's main result)."""
    from ..theory.gufm import gufm_ce, gufm_mse

    return gufm_ce(K, d, lam) if loss == "ce" else gufm_mse(K, d, lam)


def build_model(cfg: DeepLNConfig, depth: int, data, in_dim: int) -> torch.nn.Module:
    from ..models.lnresnet import LNResNet, LNTransformer

    m, K = cfg.model, data.num_classes
    if m.block in ("t11", "t12"):
        vocab, seq_len = data.vocab, data.x_train.shape[1]
        return LNTransformer(vocab, seq_len, m.width, depth, K, m.block)
    return LNResNet(in_dim, m.width, depth, K, m.block)


def train_unit(cfg: DeepLNConfig, depth: int, seed: int, data, unit: RunDir, device) -> dict:
    from ..train import fit

    t = cfg.train
    K = data.num_classes
    lam = t.weight_decay / depth if t.wd_over_depth else t.weight_decay
    theory = theory_for(t.loss, K, cfg.model.width, lam)
    torch.manual_seed(seed)
    x, y = data.x_train.to(device), data.y_train.to(device)
    xt, yt = data.x_test.to(device), data.y_test.to(device)
    x, xt = x.flatten(1), xt.flatten(1)
    model = build_model(cfg, depth, data, x.shape[1]).to(device)
    decayed = model.decayed_parameters()
    params = model.parameters()
    if t.optimizer == "adam":
        opt = torch.optim.Adam(params, lr=t.lr)
    else:
        opt = torch.optim.SGD(params, lr=t.lr, momentum=t.momentum)
    N = len(y)
    B = min(t.batch_size or N, N)
    onehot = F.one_hot(y, K).to(x.dtype)
    g = torch.Generator().manual_seed(seed + 7919)

    def train_epoch(epoch: int) -> dict[str, Any]:
        perm = torch.randperm(N, generator=g).to(device) if B < N else None
        total = 0.0
        for i in range(0, N, B):
            idx = perm[i : i + B] if perm is not None else slice(None)
            loss = fit_loss(model(x[idx]), y[idx], onehot[idx], t.loss)
            loss = loss + lam / 2 * sum((p * p).sum() for p in decayed)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            total += float(loss.detach()) * (len(y[idx]) / N)
        return {"train_objective": total}

    def evaluate(epoch: int) -> dict[str, Any]:
        return measure(model, x, y, xt, yt, lam, t.loss, theory)

    def state() -> dict[str, Any]:
        return {"model": model.state_dict(), "opt": opt.state_dict(), "gen": g.get_state()}

    def load_state(s: dict[str, Any]) -> None:
        model.load_state_dict(s["model"])
        opt.load_state_dict(s["opt"])
        g.set_state(s["gen"])

    history = fit(
        epochs=t.epochs,
        train_epoch=train_epoch,
        evaluate=evaluate,
        log_every=cfg.log_every,
        run=unit,
        state=state,
        load_state=load_state,
        checkpoint_every=cfg.checkpoint_every,
        description=f"deep-ln L={depth} seed={seed}",
    )
    final = {k: v for k, v in history[-1].items() if k not in ("epoch", "train_objective")}
    return {
        "depth": depth,
        "seed": seed,
        "weight_decay": lam,
        "theory": theory.to_dict(),
        **final,
    }


# --------------------------------------------------------------------------------------------------
# the experiment
# --------------------------------------------------------------------------------------------------


def _device(name: str) -> torch.device:
    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    return torch.device(name)


class Sentences:
    """A sentence data set (nclab.data.sentences) with the attributes the experiment reads."""

    def __init__(self, d: DataCfg, seed: int):
        from ..data.sentences import make_dataset, make_task

        task = make_task(d.nc, d.nw, d.sentence_length, d.num_classes, freq=d.freq, seed=seed)
        data = make_dataset(task, d.nspl, seed=seed)
        self.x_train, self.y_train = data.x_train, data.y_train
        self.x_test, self.y_test = data.x_test, data.y_test
        self.num_classes, self.vocab = d.num_classes, d.nw


def load_data(cfg: DeepLNConfig):
    from ..data.real import load
    from ..errors import ConfigError

    d = cfg.data
    sequence_model = cfg.model.block in ("t11", "t12")
    if sequence_model != (d.name == "sentences"):
        raise ConfigError(
            f"model.block={cfg.model.block!r} needs "
            + ("data.name='sentences'" if sequence_model else "vector data (not 'sentences')")
            + f", got data.name={d.name!r}"
        )
    if sequence_model:
        return Sentences(d, cfg.seed)
    return load(
        d.name,
        data_dir=d.data_dir or os.environ.get("NCLAB_DATA_DIR"),
        seed=cfg.seed,
        samples_per_class=d.samples_per_class,
        test_samples_per_class=d.test_samples_per_class,
        standardize=d.standardize,
        flatten=True,
    )


def run(cfg: DeepLNConfig, run_dir: RunDir) -> dict[str, Any]:
    from ..errors import ConfigError
    from .deep_ln_summary import summarize

    if not cfg.depths or min(cfg.depths) < 1:
        raise ConfigError(f"depths must be a non-empty list of integers >= 1, got {cfg.depths}")
    t0 = time.perf_counter()
    device = _device(cfg.device)
    if cfg.threads > 0 and device.type == "cpu":
        torch.set_num_threads(cfg.threads)
    data = load_data(cfg)
    per_depth: dict[int, list[dict[str, Any]]] = {}
    histories: dict[int, list[list[dict[str, Any]]]] = {}
    for depth in sorted(set(cfg.depths)):
        for i in range(max(1, cfg.seeds)):
            seed = cfg.seed + i
            path = Path(run_dir.path) / "units" / f"L{depth}_seed-{seed}"
            unit = RunDir(path)
            if not unit.finished:
                unit.write_config(cfg, depth=depth, unit_seed=seed)
                unit.write_summary(train_unit(cfg, depth, seed, data, unit, device))
                unit.remove_checkpoint()
            per_depth.setdefault(depth, []).append(unit.read_summary())
            histories.setdefault(depth, []).append(unit.read_metrics())
    by_depth = {d: aggregate_summaries(s) if len(s) > 1 else s[0] for d, s in per_depth.items()}
    out = summarize(cfg, by_depth, histories, run_dir)
    out["seconds"] = time.perf_counter() - t0
    return out


def figures(run_dir: RunDir) -> None:
    from .deep_ln_summary import draw_from_dir

    draw_from_dir(run_dir)


EXPERIMENT = Experiment(
    name="deep-ln",
    description="Deep regularised LayerNorm ResNets and transformers (Súkeník et al. 2025): NC and "
    "the gap to the GUFM optimum against depth",
    config_cls=DeepLNConfig,
    run=run,
    presets=PRESETS,
    default_preset="rn1-ce-quick",
    batched_seeds=True,
    figures=figures,
)
