"""Training the grammar-matched network (A.5) with AdamW through :func:`nclab.train.fit_trainer`
(step-based, checkpointed, resumable), one unit per seed, and measuring, per level, the collapse
of the segment representations by the latent symbol that generated them, beside the untrained
network's. A unit keeps the level representations of the first test sentences of both networks
in ``figure_data.pt`` (:mod:`.figures` draws them)."""

from __future__ import annotations

from typing import Any

import torch
import torch.nn.functional as F

from ...collapse.latent import latent_collapse
from ...data.grammar import make_grammar
from ...models.grammarnet import GrammarNet
from ...rng import generator
from ...runs import RunDir
from ...train import TrainState, fit_trainer
from ...train.optim import make_optimizer, make_scheduler
from ..common.evaluation import accuracy
from ..common.latent import brief, panel_points
from ..common.steps import EpochBatches, optimizer_step
from ..protocol import Unit
from .config import GrammarConfig
from .presets import PAPER

LEVEL_NAMES = ("concept", "meta-concept", "meta-meta-concept", "level-4 symbol", "level-5 symbol")
_GRAMMAR, _TRAIN, _TEST, _INIT = 0, 1, 2, 3  # generator streams
FIGURE_DATA = "figure_data.pt"  # a unit's level representations, untrained and trained
SHOWN = 200  # test sentences in the PCA figures


class Trainer:
    """Grammar, data, network, AdamW and its schedule (e.g. a linear warm-up, stepped once per
    optimiser step) of seed ``seed``; one optimiser step per ``train_step``."""

    def __init__(self, cfg: GrammarConfig, seed: int | None = None):
        self.log_every, self.checkpoint_every = cfg.log_every, cfg.checkpoint_every
        seed = cfg.seed if seed is None else seed
        d, m, t = cfg.data, cfg.model, cfg.train
        self.cfg = cfg
        self.grammar = make_grammar(d.K, d.symbols, d.choices, d.children, seed)
        self.x, self.y = _sample_compact(self.grammar, d.n_train, generator(seed, _TRAIN))
        self.xt, self.latents, self.yt = self.grammar.sample(d.n_test, generator(seed, _TEST))
        init = int(torch.randint(0, 2**31 - 1, (1,), generator=generator(seed, _INIT)))
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(init)
            self.net = GrammarNet(
                d.symbols[0],
                d.K,
                len(d.symbols),
                d.children,
                m.widths,
                m.hidden,
                zero_head=m.zero_head,
            )
        self.opt = make_optimizer(t, self.net.parameters())
        self.batches = EpochBatches(d.n_train, t.batch_size, seed)
        self.steps = t.epochs * self.batches.per_epoch
        self.sched = make_scheduler(t, self.opt, self.steps)
        self.state = TrainState(model=self.net, optimizer=self.opt, scheduler=self.sched)

    def train_step(self, step: int) -> dict[str, Any]:
        idx = self.batches.indices(step)
        v = optimizer_step(self.opt, F.cross_entropy(self.net(self.x[idx].long()), self.y[idx]))
        if self.sched is not None:
            self.sched.step()
        return {"train_loss": v, "epoch": self.batches.epoch(step + 1)}

    def evaluate(self, step: int) -> dict[str, Any]:
        m = self.measure(full=False)
        return {k: v for k, v in m.items() if k != "levels"} | {
            f"l{r['level']}_dir_nc1": r["dir_nc1"] for r in m["levels"]
        }

    @torch.no_grad()
    def measure(self, full: bool = True) -> dict[str, Any]:
        """Test accuracy (and train accuracy on up to 1000 sentences) and per level the collapse
        of the test sentences' segment representations by their latent symbol."""
        self.net.eval()
        reps = [[] for _ in self.latents]
        for i in range(0, self.xt.shape[0], 100):
            for j, h in enumerate(self.net.levels(self.xt[i : i + 100])):
                reps[j].append(h)
        levels = []
        for j, (h, lab) in enumerate(zip(reps, self.latents, strict=True)):
            m = latent_collapse(
                torch.cat(h), lab, self.cfg.data.symbols[j + 1], scatter="none", layer_norm=True
            )
            levels.append({"level": j + 1, "symbol": LEVEL_NAMES[j], **(m if full else brief(m))})
        n = min(1000, self.x.shape[0])
        out = {
            "test_acc": accuracy(self.net, self.xt.long(), self.yt, 100),
            "train_acc": accuracy(self.net, self.x[:n].long(), self.y[:n], 100),
            "levels": levels,
        }
        self.net.train()
        return out


def _sample_compact(grammar, n: int, gen: torch.Generator, chunk: int = 2000):
    """``n`` sentences sampled ``chunk`` at a time, word ids stored in the smallest integer type
    (uint8 for up to 256 words): 100 000 sentences of 4096 words take 410 MB, not 3.3 GB."""
    words = grammar.symbols[0]
    dtype = torch.uint8 if words <= 256 else torch.int16 if words <= 32768 else torch.int32
    xs, ys = [], []
    for i in range(0, n, chunk):
        x, _, y = grammar.sample(min(chunk, n - i), gen)
        xs.append(x.to(dtype))
        ys.append(y)
    return torch.cat(xs), torch.cat(ys)


def train(cfg: GrammarConfig, unit: Unit, run_dir: RunDir, context: Any) -> dict[str, Any]:
    """Train the network of seed ``unit.seed`` in ``run_dir``; its summary."""
    tr = Trainer(cfg, unit.seed)
    untrained = tr.measure(full=True)  # the same network before training (and before resuming)
    before = _panel_points(tr)
    history = fit_trainer(tr, run_dir, f"fc-grammar {cfg.figure}")
    final = tr.measure(full=True)
    after = _panel_points(tr)
    levels = [
        {"level": j + 1, "symbol": LEVEL_NAMES[j], "labels": y, "untrained": v0, "trained": v1}
        for j, ((v0, y), (v1, _)) in enumerate(zip(before, after, strict=True))
    ]
    torch.save({"levels": levels}, run_dir.path / FIGURE_DATA)
    return unit_summary(cfg, tr.steps, final, untrained, history)


@torch.no_grad()
def _panel_points(tr: Trainer) -> list[tuple[torch.Tensor, torch.Tensor]]:
    """Per level, the (representations, latent symbols) its PCA panel draws
    (:func:`~nclab.experiments.common.latent.panel_points`) of the first ``SHOWN`` test
    sentences' segments."""
    n = min(SHOWN, tr.xt.shape[0])
    reps = tr.net.levels(tr.xt[:n])
    return [
        panel_points(h.reshape(-1, h.shape[-1]), tr.latents[j][:n].reshape(-1))
        for j, h in enumerate(reps)
    ]


def unit_summary(cfg, steps: int, final: dict, untrained: dict, history: list) -> dict[str, Any]:
    """A unit's summary: accuracies; per level the collapse measures, the untrained network's,
    and their ratio; the largest directional NC1 over levels (the claims' number)."""
    levels = []
    for m, m0 in zip(final["levels"], untrained["levels"], strict=True):
        levels.append(
            {
                **m,
                "untrained": brief(m0),
                "nc1_vs_untrained": m["nc1_trace"] / m0["nc1_trace"],
            }
        )
    return {
        "test_acc": final["test_acc"],
        "train_acc": final["train_acc"],
        "untrained_test_acc": untrained["test_acc"],
        "levels": levels,
        "max_level_nc1_trace": max(r["nc1_trace"] for r in levels),
        "max_level_dir_nc1": max(r["dir_nc1"] for r in levels),
        "min_untrained_nc1_trace": min(r["untrained"]["nc1_trace"] for r in levels),
        "max_nc1_vs_untrained": max(r["nc1_vs_untrained"] for r in levels),
        "paper": PAPER.get(cfg.figure, {}),
        "steps": steps,
        "records": len(history),
    }
