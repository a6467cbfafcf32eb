"""Training the GPT-2 classifier (A.3) or language model (A.4) with AdamW through
:func:`nclab.train.fit_trainer` (step-based: a checkpoint every ``checkpoint_every`` steps,
``nclab run --resume DIR`` continues to the same numbers), one unit per seed, measuring the
untrained network of the same shape first (the baseline the claims compare with). A unit keeps the
word embeddings of both networks in ``figure_data.pt`` (:mod:`.figures` draws them). The network
trains on ``device``; the data stay on the CPU, a batch at a time copied to it."""

from __future__ import annotations

from typing import Any

import torch

from ...data.sentences import make_dataset, make_task
from ...models.gpt2 import GPT2Classifier, gpt2_language_model, word_embeddings
from ...rng import generator
from ...runs import RunDir
from ...train import TrainState, fit_trainer
from ...train.optim import make_optimizer, make_scheduler
from ..common.devices import resolve_device
from ..common.steps import EpochBatches, optimizer_step
from ..protocol import Unit
from .config import TransformerConfig
from .measure import lm_entropies, loss, measure
from .presets import PAPER

_INIT = 3  # generator stream of the initialisation
FIGURE_DATA = "figure_data.pt"  # a unit's word embeddings, untrained and trained


class Trainer:
    """Data, network, AdamW (and its schedule, if any) of seed ``seed``; one optimiser step per
    ``train_step``, on ``device`` (default: the config's)."""

    def __init__(self, cfg: TransformerConfig, seed: int | None = None, device: str | None = None):
        self.log_every, self.checkpoint_every = cfg.log_every, cfg.checkpoint_every
        seed = cfg.seed if seed is None else seed
        d, m, t = cfg.data, cfg.model, cfg.train
        self.cfg = cfg
        self.task = make_task(d.nc, d.nw, d.L, d.K, d.freq, d.zipf_s, seed=seed)
        self.data = make_dataset(self.task, d.nspl, d.n_test, seed)
        init = int(torch.randint(0, 2**31 - 1, (1,), generator=generator(seed, _INIT)))
        sizes = dict(n_positions=d.L + 1, d=m.d, n_layer=m.n_layer, n_head=m.n_head)
        if cfg.task == "classify":  # words + the class token
            self.net = GPT2Classifier(
                d.nw + 1, num_classes=d.K, dropout=m.dropout, seed=init, **sizes
            )
        else:  # words + the begin-of-sentence token
            self.net = gpt2_language_model(d.nw + 1, dropout=m.dropout, seed=init, **sizes)
        self.device = resolve_device(cfg.device if device is None else device)
        self.net.to(self.device)  # initialised on the CPU: the same numbers on any device
        self.opt = make_optimizer(t, self.net.parameters())
        self.batches = EpochBatches(self.data.x_train.shape[0], t.batch_size, seed)
        self.steps = t.epochs * self.batches.per_epoch
        self.sched = make_scheduler(t, self.opt, self.steps)
        self.state = TrainState(model=self.net, optimizer=self.opt, scheduler=self.sched)

    def train_step(self, step: int) -> dict[str, Any]:
        cfg = self.cfg
        idx = self.batches.indices(step)
        x, y = self.data.x_train[idx].to(self.device), self.data.y_train[idx].to(self.device)
        v = optimizer_step(self.opt, loss(self.net, x, y, cfg.data.nw, cfg.task))
        if self.sched is not None:
            self.sched.step()
        return {"train_loss": v, "epoch": self.batches.epoch(step + 1)}

    def evaluate(self, step: int) -> dict[str, Any]:
        return measure(self.net, self.task, self.data, self.cfg, full=False)

    @torch.no_grad()
    def word_embeddings(self) -> torch.Tensor:
        """The word rows of the embedding table now (before positional embeddings), a CPU copy."""
        return word_embeddings(self.net, self.cfg.data.nw).detach().cpu().clone()


def train(cfg: TransformerConfig, unit: Unit, run_dir: RunDir, context: Any) -> dict[str, Any]:
    """Train the network of seed ``unit.seed`` in ``run_dir``; its summary."""
    tr = Trainer(cfg, unit.seed)
    untrained = measure(tr.net, tr.task, tr.data, cfg, full=True)  # before any checkpoint loads
    w0 = tr.word_embeddings()
    history = fit_trainer(tr, run_dir, f"fc-transformer {cfg.figure or cfg.task}")
    final = measure(tr.net, tr.task, tr.data, cfg, full=True)
    figure_data = {
        "untrained": w0,
        "trained": tr.word_embeddings(),
        "concept": tr.task.word_concept,
    }
    torch.save(figure_data, run_dir.path / FIGURE_DATA)
    out = unit_summary(cfg, tr.steps, final, untrained, history)
    if cfg.task == "lm":
        out |= lm_baselines(tr.task, out.get("test_loss"))
    return out


def lm_baselines(task_model: Any, test_loss: float | None) -> dict[str, Any]:
    """The data's next-word baselines (:func:`.measure.lm_entropies`) and the fraction of the
    way from the unigram entropy to the entropy rate that the test loss covers
    (``lm_learned_fraction``: 0 for a frequency-only model, 1 for the Bayes predictor)."""
    ent = lm_entropies(task_model)
    gap = ent["unigram"] - ent["floor"]
    frac = None if test_loss is None or gap <= 0 else (ent["unigram"] - test_loss) / gap
    return {"data_entropy": ent, "lm_learned_fraction": frac}


def unit_summary(cfg, steps: int, final: dict, untrained: dict, history: list) -> dict[str, Any]:
    """A unit's summary: final scores, embedding collapse beside the untrained network's, the
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
            "embedding_pca2": untrained["embedding_pca2"],
            "collapse_type": emb0["collapse_type"],
            "layers": untrained["layers"],
            **{k: untrained[k] for k in ("test_acc", "test_loss") if k in untrained},
        },
        nc1_vs_untrained=emb["nc1_trace"] / emb0["nc1_trace"],
        paper=PAPER.get(cfg.figure, {}),
        task=cfg.task,
        steps=steps,
        epochs=cfg.train.epochs,
        records=len(history),
    )
    return out
