"""Training the grammar-matched network (A.5) with Adam in :func:`nclab.train.fit` (step-based,
checkpointed, resumable) and measuring, per level, the collapse of the segment representations by
the latent symbol that generated them, beside the untrained network's."""

from __future__ import annotations

from typing import Any

import torch
import torch.nn.functional as F

from ...collapse.latent import latent_collapse
from ...data.grammar import make_grammar
from ...models.grammarnet import GrammarNet
from ...rng import generator
from ...runs import RunDir
from ...train import TrainState
from ..common.latent import brief, pca_figure
from ..common.steps import EpochBatches, fit_steps, optimizer_step
from .config import GrammarConfig, validate
from .presets import PAPER

LEVEL_NAMES = ("concept", "meta-concept", "meta-meta-concept", "level-4 symbol", "level-5 symbol")
_GRAMMAR, _TRAIN, _TEST, _INIT = 0, 1, 2, 3  # generator streams


class Trainer:
    def __init__(self, cfg: GrammarConfig):
        validate(cfg)
        self.cfg = cfg
        self.grammar = make_grammar(cfg.K, cfg.symbols, cfg.choices, cfg.children, cfg.seed)
        self.x, self.y = _sample_compact(self.grammar, cfg.n_train, generator(cfg.seed, _TRAIN))
        self.xt, self.latents, self.yt = self.grammar.sample(cfg.n_test, generator(cfg.seed, _TEST))
        seed = int(torch.randint(0, 2**31 - 1, (1,), generator=generator(cfg.seed, _INIT)))
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(seed)
            self.net = GrammarNet(
                cfg.symbols[0],
                cfg.K,
                len(cfg.symbols),
                cfg.children,
                cfg.widths,
                cfg.hidden,
                zero_head=cfg.zero_head,
            )
        self.opt = torch.optim.AdamW(
            self.net.parameters(), lr=cfg.lr, weight_decay=cfg.weight_decay
        )
        self.batches = EpochBatches(cfg.n_train, cfg.batch_size, cfg.seed)
        self.steps = cfg.epochs * self.batches.per_epoch
        self.state = TrainState(model=self.net, optimizer=self.opt)

    def train_step(self, step: int) -> dict[str, Any]:
        if self.cfg.warmup_steps:  # linear warm-up: lr * (step + 1) / warmup_steps, then lr
            for g in self.opt.param_groups:
                g["lr"] = self.cfg.lr * min(1.0, (step + 1) / self.cfg.warmup_steps)
        idx = self.batches.indices(step)
        v = optimizer_step(self.opt, F.cross_entropy(self.net(self.x[idx].long()), self.y[idx]))
        return {"train_loss": v, "epoch": self.batches.epoch(step + 1)}

    def evaluate(self, step: int) -> dict[str, Any]:
        m = self.measure(full=False)
        return {k: v for k, v in m.items() if k != "levels"} | {
            f"l{r['level']}_dir_nc1": r["dir_nc1"] for r in m["levels"]
        }

    @torch.no_grad()
    def accuracy(self, x: torch.Tensor, y: torch.Tensor, chunk: int = 100) -> float:
        hits = sum(
            int((self.net(x[i : i + chunk].long()).argmax(1) == y[i : i + chunk]).sum())
            for i in range(0, x.shape[0], chunk)
        )
        return hits / x.shape[0]

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
                torch.cat(h), lab, self.cfg.symbols[j + 1], scatter="none", layer_norm=True
            )
            levels.append({"level": j + 1, "symbol": LEVEL_NAMES[j], **(m if full else brief(m))})
        n = min(1000, self.x.shape[0])
        out = {
            "test_acc": self.accuracy(self.xt, self.yt),
            "train_acc": self.accuracy(self.x[:n], self.y[:n]),
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


def run(cfg: GrammarConfig, run_dir: RunDir) -> dict[str, Any]:
    tr = Trainer(cfg)
    untrained = tr.measure(full=True)  # the same network before training (and before resuming)
    shown = min(200, cfg.n_test)  # sentences in the PCA figures
    before = _level_reps(tr, shown)
    history = fit_steps(tr, cfg, run_dir, f"fc-grammar {cfg.figure}")
    final = tr.measure(full=True)
    summary = summarize(cfg, tr.steps, final, untrained, history)
    after = _level_reps(tr, shown)
    summary["figures"] = [
        pca_figure(
            run_dir.figures / f"pca_{name}.png",
            [
                (f"level {j + 1} ({LEVEL_NAMES[j]})", reps[j], tr.latents[j][:shown].reshape(-1))
                for j in range(len(reps))
            ],
            title=f"{cfg.figure}: {name} network, representations by latent symbol "
            f"(first 3 symbols)",
        )
        for name, reps in (("trained", after), ("untrained", before))
    ]
    return summary


@torch.no_grad()
def _level_reps(tr: Trainer, n: int = 200) -> list[torch.Tensor]:
    """Level representations of the first ``n`` test sentences, (items, width) per level."""
    return [h.reshape(-1, h.shape[-1]).clone() for h in tr.net.levels(tr.xt[:n])]


def summarize(cfg, steps: int, final: dict, untrained: dict, history: list) -> dict[str, Any]:
    """Accuracies; per level the collapse measures, the untrained network's, and their ratio;
    the largest directional NC1 over levels (the claims' number)."""
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
