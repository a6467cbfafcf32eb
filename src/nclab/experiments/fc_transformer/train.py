"""Training the GPT-2 classifier (A.3) or language model (A.4) with AdamW in
:func:`nclab.train.fit` (step-based: a checkpoint every ``checkpoint_every`` steps, ``nclab run
--resume DIR`` continues to the same numbers), measuring the untrained network of the same shape
first (the baseline the claims compare with)."""

from __future__ import annotations

from typing import Any

import torch

from ...data.sentences import make_dataset, make_task
from ...models.gpt2 import GPT2Classifier, gpt2_language_model, word_embeddings
from ...rng import generator
from ...runs import RunDir
from ...train import TrainState
from ..common.latent import pca_figure
from ..common.steps import EpochBatches, fit_steps, optimizer_step
from .config import TransformerConfig, validate
from .measure import loss, measure
from .presets import PAPER

_INIT = 3  # generator stream of the initialisation


class Trainer:
    """Data, network, AdamW, and the step :func:`fit` calls."""

    def __init__(self, cfg: TransformerConfig):
        validate(cfg)
        self.cfg = cfg
        self.task = make_task(cfg.nc, cfg.nw, cfg.L, cfg.K, cfg.freq, cfg.zipf_s, seed=cfg.seed)
        self.data = make_dataset(self.task, cfg.nspl, cfg.n_test, cfg.seed)
        seed = int(torch.randint(0, 2**31 - 1, (1,), generator=generator(cfg.seed, _INIT)))
        sizes = dict(n_positions=cfg.L + 1, d=cfg.d, n_layer=cfg.n_layer, n_head=cfg.n_head)
        if cfg.task == "classify":  # words + the class token
            self.net = GPT2Classifier(
                cfg.nw + 1, num_classes=cfg.K, dropout=cfg.dropout, seed=seed, **sizes
            )
        else:  # words + the begin-of-sentence token
            self.net = gpt2_language_model(cfg.nw + 1, dropout=cfg.dropout, seed=seed, **sizes)
        self.opt = torch.optim.AdamW(
            self.net.parameters(),
            lr=cfg.lr,
            weight_decay=cfg.weight_decay,
            betas=(cfg.beta1, cfg.beta2),
        )
        self.batches = EpochBatches(self.data.x_train.shape[0], cfg.batch_size, cfg.seed)
        self.steps = cfg.epochs * self.batches.per_epoch
        self.state = TrainState(model=self.net, optimizer=self.opt)

    def train_step(self, step: int) -> dict[str, Any]:
        cfg = self.cfg
        idx = self.batches.indices(step)
        v = optimizer_step(
            self.opt,
            loss(self.net, self.data.x_train[idx], self.data.y_train[idx], cfg.nw, cfg.task),
        )
        return {"train_loss": v, "epoch": self.batches.epoch(step + 1)}

    def evaluate(self, step: int) -> dict[str, Any]:
        return measure(self.net, self.task, self.data, self.cfg, full=False)


def run(cfg: TransformerConfig, run_dir: RunDir) -> dict[str, Any]:
    tr = Trainer(cfg)
    untrained = measure(tr.net, tr.task, tr.data, cfg, full=True)  # before any checkpoint loads
    with torch.no_grad():
        w0 = word_embeddings(tr.net, cfg.nw).detach().clone()
    history = fit_steps(tr, cfg, run_dir, f"fc-transformer {cfg.figure or cfg.task}")
    final = measure(tr.net, tr.task, tr.data, cfg, full=True)
    summary = summarize(cfg, tr.steps, final, untrained, history)
    with torch.no_grad():
        w = word_embeddings(tr.net, cfg.nw).detach()
    concept = tr.task.word_concept
    summary["figures"] = [
        pca_figure(
            run_dir.figures / "pca.png",
            [("untrained word embeddings", w0, concept), ("trained word embeddings", w, concept)],
            title=f"{cfg.figure or cfg.task}: word embeddings (before positions) by concept, "
            f"{summary['collapse_type']}",
        )
    ]
    return summary


def summarize(cfg, steps: int, final: dict, untrained: dict, history: list) -> dict[str, Any]:
    """The run's summary: final scores, embedding collapse beside the untrained network's, the
    per-layer collapse, the paper's setting."""
    emb, emb0 = final["embedding_metrics"], untrained["embedding_metrics"]
    out = {k: v for k, v in final.items() if k not in ("embedding_metrics",)}
    out.update(
        collapse_type=emb["collapse_type"],
        embedding_metrics=emb,
        untrained={
            "emb_nc1_trace": emb0["nc1_trace"],
            "emb_dir_nc1": emb0["dir_nc1"],
            "emb_etf": emb0["etf"],
            "collapse_type": emb0["collapse_type"],
            "layers": untrained["layers"],
            **{k: untrained[k] for k in ("test_acc", "test_loss") if k in untrained},
        },
        nc1_vs_untrained=emb["nc1_trace"] / emb0["nc1_trace"],
        paper=PAPER.get(cfg.figure, {}),
        task=cfg.task,
        steps=steps,
        epochs=cfg.epochs,
        records=len(history),
    )
    return out
