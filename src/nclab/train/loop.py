"""One training loop, readable top to bottom, with explicit hooks (log, evaluate, checkpoint).

The experiment owns the model and the optimiser and gives the loop three functions:

* ``train_epoch(epoch) -> dict``: one epoch of steps; returns numbers to log (e.g. train loss),
* ``evaluate(epoch) -> dict`` (optional): called every ``log_every`` epochs and at the end,
* ``state() -> dict`` / ``load_state(dict)``: everything needed to resume (model, optimiser, RNG).

Every ``log_every`` epochs the loop appends ``{"epoch": e, **train, **eval}`` to ``metrics.jsonl``;
every ``checkpoint_every`` epochs it writes ``checkpoint.pt`` with the state and the number of logged
records, so a resumed run truncates the log to that point and continues to identical numbers.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch

from ..progress import bar
from ..runs import RunDir


def fit(
    *,
    epochs: int,
    train_epoch: Callable[[int], dict[str, Any]],
    evaluate: Callable[[int], dict[str, Any]] | None = None,
    log_every: int = 1,
    run: RunDir | None = None,
    state: Callable[[], dict[str, Any]] | None = None,
    load_state: Callable[[dict[str, Any]], None] | None = None,
    checkpoint_every: int | None = None,
    description: str = "train",
    progress: bool = True,
    stop: Callable[[dict[str, Any]], bool] | None = None,
) -> list[dict[str, Any]]:
    """Train for ``epochs`` epochs (resuming from ``run``'s checkpoint if one exists).

    Returns the logged records (including those from before a resume). ``stop(record)`` may end
    training early after a logged epoch.
    """
    history: list[dict[str, Any]] = []
    start = 0
    if run is not None and load_state is not None:
        ckpt = run.load_checkpoint()
        if ckpt is not None:
            load_state(ckpt["state"])
            torch.set_rng_state(ckpt["torch_rng"])
            start = ckpt["epoch"]
            run.truncate_metrics(ckpt["logged"])
            history = run.read_metrics()
    log_every = max(1, log_every)
    with bar(description, total=epochs, enabled=progress) as pbar:
        pbar.update(start)
        for epoch in range(start, epochs):
            logs = train_epoch(epoch)
            done = epoch + 1
            last = done == epochs
            record = None
            if done % log_every == 0 or last:
                record = {"epoch": done, **logs}
                if evaluate is not None:
                    record.update(evaluate(epoch))
                history.append(record)
                if run is not None:
                    run.log(record)
            if (
                run is not None
                and state is not None
                and checkpoint_every
                and (done % checkpoint_every == 0 and not last)
            ):
                run.save_checkpoint(
                    {
                        "state": state(),
                        "epoch": done,
                        "logged": len(history),
                        "torch_rng": torch.get_rng_state(),
                    }
                )
            info = " ".join(f"{k} {v:.4g}" for k, v in logs.items() if isinstance(v, float))
            pbar.update(1, info=info)
            if record is not None and stop is not None and stop(record):
                break
    return history
