"""The demo: a small MLP trained on the bundled digits in seconds, measured layer by layer.

``nclab demo`` trains it, logs collapse metrics of every hidden layer and the classifier input every
few epochs with :class:`~nclab.CollapseProbe`, prints the final table and writes a figure.
"""

from __future__ import annotations

import torch
from torch import nn

from ..config import Config
from ..probe import CollapseProbe
from ..runs import RunDir
from ..train import fit
from .base import Experiment


class DemoConfig(Config):
    seed: int = 0
    width: int = 128
    depth: int = 3
    epochs: int = 150
    lr: float = 2e-3
    weight_decay: float = 5e-4
    batch_size: int = 128
    log_every: int = 10
    checkpoint_every: int = 10


def build_model(d_in: int, k: int, width: int, depth: int) -> nn.Sequential:
    layers: list[nn.Module] = []
    d = d_in
    for _ in range(depth):
        layers += [nn.Linear(d, width), nn.ReLU()]
        d = width
    layers.append(nn.Linear(d, k))
    return nn.Sequential(*layers)


def run(cfg: DemoConfig, run_dir: RunDir) -> dict:
    from ..data.real import digits
    from ..report.figures import Panel, curves_from_records, save_panels

    torch.manual_seed(cfg.seed)
    data = digits(seed=cfg.seed)
    model = build_model(data.x_train.shape[1], data.num_classes, cfg.width, cfg.depth)
    opt = torch.optim.AdamW(model.parameters(), lr=cfg.lr, weight_decay=cfg.weight_decay)
    loss_fn = nn.CrossEntropyLoss()
    n = len(data.y_train)
    g = torch.Generator().manual_seed(cfg.seed)
    relus = [str(i) for i, m in enumerate(model) if isinstance(m, nn.ReLU)]
    clf = str(len(model) - 1)
    layers = [*relus[:-1], clf]  # the last ReLU's output is the classifier input
    names = {name: f"relu{i + 1}" for i, name in enumerate(relus)} | {clf: "classifier input"}
    train_loader = [(data.x_train, data.y_train)]

    def train_epoch(epoch: int) -> dict:
        model.train()
        perm = torch.randperm(n, generator=g)
        total = 0.0
        for i in range(0, n, cfg.batch_size):
            idx = perm[i : i + cfg.batch_size]
            loss = loss_fn(model(data.x_train[idx]), data.y_train[idx])
            opt.zero_grad()
            loss.backward()
            opt.step()
            total += loss.item() * len(idx)
        return {"train_loss": total / n}

    def evaluate(epoch: int) -> dict:
        probe = CollapseProbe(model, layers, data.num_classes, classifier=clf)
        res = probe.run(train_loader, progress=False).to_dict()
        with torch.no_grad():
            test_acc = float((model(data.x_test).argmax(1) == data.y_test).float().mean())
        return {"test_acc": test_acc, "layers": {names[k]: v for k, v in res.items()}}

    def state() -> dict:
        return {"model": model.state_dict(), "opt": opt.state_dict(), "gen": g.get_state()}

    def load_state(st: dict) -> None:
        model.load_state_dict(st["model"])
        opt.load_state_dict(st["opt"])
        g.set_state(st["gen"])

    history = fit(
        epochs=cfg.epochs,
        train_epoch=train_epoch,
        evaluate=evaluate,
        log_every=cfg.log_every,
        run=run_dir,
        state=state,
        load_state=load_state,
        checkpoint_every=cfg.checkpoint_every,
        description="demo: training",
    )
    final = history[-1]
    layer_names = list(final["layers"])
    ep = [r["epoch"] for r in history]
    panels = [
        Panel(
            title,
            {ln: curves_from_records(history, "epoch", f"layers.{ln}.{key}") for ln in layer_names},
            xlabel="epoch",
            logy=True,
        )
        for title, key in [
            ("NC1 (tr Σ_W Σ_B⁺ / K)", "nc1"),
            ("NC2 (ETF distance of means)", "nc2_etf"),
            ("CDNV", "cdnv"),
        ]
    ]
    panels.append(
        Panel(
            "classifier: NC3 and NC4",
            {
                "nc3 (self-duality)": curves_from_records(
                    history, "epoch", "layers.classifier input.nc3"
                ),
                "nc4 (NCC mismatch)": curves_from_records(
                    history, "epoch", "layers.classifier input.nc4"
                ),
                "1 - test acc": (ep, [1 - r["test_acc"] for r in history]),
            },
            xlabel="epoch",
            logy=True,
        )
    )
    fig = save_panels(
        run_dir.figures / "collapse.png", panels, suptitle="Collapse of an MLP trained on digits"
    )
    return {
        "train_acc": final["layers"]["classifier input"].get("acc"),
        "test_acc": final["test_acc"],
        "train_loss": final["train_loss"],
        "layers": final["layers"],
        "figures": [str(fig)],
    }


EXPERIMENT = Experiment(
    name="demo",
    description="small MLP on the bundled digits, collapse metrics per layer (seconds on a CPU)",
    config_cls=DemoConfig,
    run=run,
)
