"""Training the demo MLP with :func:`nclab.train.fit` and measuring it with the probe."""

from __future__ import annotations

import torch
from torch import nn

from ...probe import CollapseProbe
from ...runs import RunDir
from ...train import TrainState, fit
from .config import DemoConfig


def build_model(d_in: int, k: int, width: int, depth: int) -> nn.Sequential:
    layers: list[nn.Module] = []
    d = d_in
    for _ in range(depth):
        layers += [nn.Linear(d, width), nn.ReLU()]
        d = width
    layers.append(nn.Linear(d, k))
    return nn.Sequential(*layers)


def probe_layers(model: nn.Sequential) -> tuple[list[str], str, dict[str, str]]:
    """(layers to probe, the classifier, layer -> display name): every ReLU's output but the
    last, and the classifier's input (the last ReLU's output)."""
    relus = [str(i) for i, m in enumerate(model) if isinstance(m, nn.ReLU)]
    clf = str(len(model) - 1)
    clf_input = f"{clf}:input"
    names = {name: f"relu{i + 1}" for i, name in enumerate(relus)} | {clf_input: "classifier input"}
    return [*relus[:-1], clf_input], clf, names


def run(cfg: DemoConfig, run_dir: RunDir) -> dict:
    from ...data.real import digits
    from .figures import collapse_figure

    torch.manual_seed(cfg.seed)
    data = digits(seed=cfg.seed)
    model = build_model(data.x_train.shape[1], data.num_classes, cfg.width, cfg.depth)
    opt = torch.optim.AdamW(model.parameters(), lr=cfg.lr, weight_decay=cfg.weight_decay)
    loss_fn = nn.CrossEntropyLoss()
    n = len(data.y_train)
    g = torch.Generator().manual_seed(cfg.seed)
    layers, clf, names = probe_layers(model)
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

    history = fit(
        epochs=cfg.epochs,
        train_epoch=train_epoch,
        evaluate=evaluate,
        log_every=cfg.log_every,
        run=run_dir,
        state=TrainState(model=model, optimizer=opt, generators=g),
        checkpoint_every=cfg.checkpoint_every,
        description="demo: training",
    )
    final = history[-1]
    fig = collapse_figure(run_dir.figures / "collapse.png", history)
    return {
        "train_acc": final["layers"]["classifier input"].get("acc"),
        "test_acc": final["test_acc"],
        "train_loss": final["train_loss"],
        "layers": final["layers"],
        "figures": [str(fig)],
    }
