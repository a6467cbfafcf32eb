"""The extended UFM beside the network: W2 σ(W1 H1) (+ b) at the network's K, with its loss and its
bias, trained by plain gradient descent (:class:`nclab.models.ufm.BatchedUFM`, one problem, seeded
with the unit's seed) through :func:`nclab.train.fit` in the sub-directory ``ufm/`` of the unit
(its own ``metrics.jsonl``, checkpoint and, when finished, ``finished.json``: what it trained,
checked against :class:`.schema.UfmRun`, so that an interrupted run resumes the network only). It
is not a run: the unit's ``summary.json``, which the runner writes, holds its results.

Each record: ``{"step", "objective", "first": {...}, "second": {...}}`` (:func:`.measure.ufm_levels`).
"""

from __future__ import annotations

from typing import Any

import torch

from ...models.ufm import BatchedUFM, UFMSpec
from ...runs import RunDir, dumps
from ...train import TrainState, fit
from .config import ResNetUFMConfig
from .measure import ufm_levels
from .schema import UfmRun

#: the file that marks the extended UFM's training finished (in ``ufm/`` of the unit)
FINISHED = "finished.json"


def ufm_setting(cfg: ResNetUFMConfig) -> tuple[str, str]:
    """(loss, bias) of the extended UFM: the network's loss, and a free bias when its last layer
    has one (the UFM's bias is unregularised: Tirer & Bruna's λ_b = 0)."""
    return cfg.train.loss, ("free" if cfg.model.bias else "none")


def describe_ufm(cfg: ResNetUFMConfig, K: int) -> str:
    """e.g. ``"extended UFM, ReLU, MSE, bias-free: K=10, d=32, n=20"``."""
    loss, bias = ufm_setting(cfg)
    u = cfg.ufm
    b = "bias-free" if bias == "none" else "unregularised bias"
    return f"extended UFM, ReLU, {loss.upper()}, {b}: K={K}, d={u.d}, n={u.n}"


def build_ufm(cfg: ResNetUFMConfig, K: int, seed: int) -> BatchedUFM:
    """The one-problem ReLU extended UFM of a unit (depth 2, seeded with ``seed``)."""
    loss, bias = ufm_setting(cfg)
    u = cfg.ufm
    spec = UFMSpec(K=K, n=u.n, d=u.d, depth=2, relu=True, loss=loss, bias=bias)
    return BatchedUFM(
        spec,
        seeds=[seed],
        lambda_w=u.lambda_w,
        lambda_w1=u.lambda_w1,
        lambda_h=u.lambda_h,
        lr=u.lr,
        init={"w": u.init, "w1": u.init, "h": u.init, "b": u.init},
    )


def _record(model: BatchedUFM, K: int) -> dict[str, Any]:
    feats = {k: v[0].detach() for k, v in model.layer_features().items()}
    labels = torch.arange(model.spec.N) // model.spec.n
    obj = float(model.objective()[0])
    return {"objective": obj, **ufm_levels(feats, model.classifier[0].detach(), labels, K)}


def run_ufm(cfg: ResNetUFMConfig, K: int, seed: int, run_dir: RunDir) -> list[dict[str, Any]]:
    """Train the extended UFM of seed ``seed`` in ``run_dir/ufm`` (or read its finished log); its
    records."""
    sub = RunDir(run_dir.path / "ufm")
    if (sub.path / FINISHED).is_file() or sub.finished:  # or the summary.json of older runs
        return sub.read_metrics()
    model = build_ufm(cfg, K, seed)
    history = fit(
        steps=cfg.ufm.steps,
        train_step=lambda t: model.step() or {},
        first_record=lambda: _record(model, K),
        evaluate=lambda t: _record(model, K),
        log_every=cfg.ufm.log_every,
        run=sub,
        state=TrainState(model=model),
        checkpoint_every=cfg.ufm.checkpoint_every,
        description=f"resnet-ufm: {describe_ufm(cfg, K)}",
    )
    done = UfmRun(model=describe_ufm(cfg, K), steps=cfg.ufm.steps)
    (sub.path / FINISHED).write_text(dumps(done.model_dump(), indent=2) + "\n")
    sub.remove_checkpoint()
    return history
