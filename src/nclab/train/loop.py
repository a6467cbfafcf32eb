"""One training loop, readable top to bottom, with explicit hooks (log, evaluate, checkpoint).

The experiment owns the model and the optimiser and gives the loop its pieces:

* the work of one unit, either ``train_epoch(epoch) -> dict`` (``epochs=``) or
  ``train_step(step) -> dict`` (``steps=``, e.g. the batched UFM solvers); it returns numbers to
  log (e.g. the train loss),
* ``evaluate(i) -> dict`` (optional): called every ``log_every`` units and at the end,
* ``state``: a :class:`~nclab.train.state.TrainState` (or anything with ``state_dict()`` /
  ``load_state_dict()``) holding everything needed to resume: model, optimiser, scheduler, RNGs,
* ``first_record() -> dict`` (optional): logged as unit 0 before training starts (not on resume).

Every ``log_every`` units the loop appends ``{"epoch" | "step": i, **train, **eval}`` to
``metrics.jsonl``; every ``checkpoint_every`` units it writes ``checkpoint.pt`` with the state, the
torch RNG and the number of logged records, so a resumed run truncates the log to that point and
continues to identical numbers.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

import torch

from ..errors import ConfigError
from ..progress import bar
from ..runs import RunDir

#: progress-bar refreshes per run: step-based loops run tens of thousands of cheap units
_BAR_UPDATES = 200


class Stateful(Protocol):
    def state_dict(self) -> dict[str, Any]: ...

    def load_state_dict(self, state: dict[str, Any]) -> None: ...


class Trainer(Protocol):
    """The one shape of an experiment's training: a class named ``Trainer`` in its ``train.py``
    with the length (``epochs`` or ``steps``), how often to log and checkpoint (``log_every``,
    ``checkpoint_every``), the work of one unit (``train_epoch(epoch)`` or ``train_step(step)``),
    ``evaluate(i) -> dict`` (the logged measurement) and ``state``, an attribute: the
    :class:`~nclab.train.state.TrainState` a checkpoint saves."""

    state: Stateful
    log_every: int
    checkpoint_every: int | None

    def evaluate(self, i: int) -> dict[str, Any]: ...


def fit_trainer(
    trainer: Any, run: RunDir | None, description: str, **kwargs: Any
) -> list[dict[str, Any]]:
    """:func:`fit` of a :class:`Trainer`: epochs when it has ``train_epoch`` (``trainer.epochs``),
    steps when it has ``train_step`` (``trainer.steps``), logging and checkpointing as often as
    it says; ``kwargs`` go to :func:`fit` (``first_record``, ``stop``, ``progress``)."""
    if hasattr(trainer, "train_step"):
        unit = {"steps": trainer.steps, "train_step": trainer.train_step}
    else:
        unit = {"epochs": trainer.epochs, "train_epoch": trainer.train_epoch}
    return fit(
        **unit,
        evaluate=trainer.evaluate,
        log_every=trainer.log_every,
        run=run,
        state=trainer.state,
        checkpoint_every=trainer.checkpoint_every,
        description=description,
        **kwargs,
    )


def fit(
    *,
    epochs: int | None = None,
    train_epoch: Callable[[int], dict[str, Any]] | None = None,
    steps: int | None = None,
    train_step: Callable[[int], dict[str, Any]] | None = None,
    evaluate: Callable[[int], dict[str, Any]] | None = None,
    first_record: Callable[[], dict[str, Any]] | None = None,
    log_every: int = 1,
    run: RunDir | None = None,
    state: Stateful | None = None,
    checkpoint_every: int | None = None,
    description: str = "train",
    progress: bool = True,
    stop: Callable[[dict[str, Any]], bool] | None = None,
) -> list[dict[str, Any]]:
    """Train for ``epochs`` epochs or ``steps`` steps, resuming from ``run``'s checkpoint if any.

    Returns the logged records (including those from before a resume). ``stop(record)`` may end
    training early after a logged unit.
    """
    unit, total, advance = _unit(epochs, train_epoch, steps, train_step)
    history, start = _resume(run, state)
    if start == 0 and not history and first_record is not None:
        history.append({unit: 0, **first_record()})
        if run is not None:
            run.log(history[-1])
    log_every = max(1, log_every)
    chunk = max(1, total // _BAR_UPDATES)
    with bar(description, total=total, enabled=progress) as pbar:
        pbar.update(start)
        pending = 0
        for i in range(start, total):
            logs = advance(i)
            done = i + 1
            last = done == total
            record = None
            if done % log_every == 0 or last:
                record = {unit: done, **logs, **(evaluate(i) if evaluate is not None else {})}
                history.append(record)
                if run is not None:
                    run.log(record)
            if run is not None and state is not None and checkpoint_every:
                if done % checkpoint_every == 0 and not last:
                    _checkpoint(run, state, done, len(history))
            pending += 1
            if pending == chunk or last:
                info = " ".join(f"{k} {v:.4g}" for k, v in logs.items() if isinstance(v, float))
                pbar.update(pending, info=info)
                pending = 0
            if record is not None and stop is not None and stop(record):
                break
    return history


def _unit(epochs, train_epoch, steps, train_step) -> tuple[str, int, Callable]:
    """("epoch" | "step", the number of units, the function of one unit)."""
    if (epochs is None) == (steps is None):
        raise ConfigError("fit() takes either epochs= with train_epoch= or steps= with train_step=")
    if epochs is not None:
        if train_epoch is None:
            raise ConfigError("fit(epochs=...) needs train_epoch=")
        return "epoch", int(epochs), train_epoch
    if train_step is None:
        raise ConfigError("fit(steps=...) needs train_step=")
    return "step", int(steps), train_step


def _resume(run: RunDir | None, state: Stateful | None) -> tuple[list[dict[str, Any]], int]:
    """(the records logged before the checkpoint, the unit to start at); ([], 0) when fresh."""
    if run is None or state is None:
        return [], 0
    ckpt = run.load_checkpoint()
    if ckpt is None:
        return [], 0
    state.load_state_dict(ckpt["state"])
    torch.set_rng_state(ckpt["torch_rng"])
    run.truncate_metrics(ckpt["logged"])
    return run.read_metrics(), int(ckpt["done"])


def _checkpoint(run: RunDir, state: Stateful, done: int, logged: int) -> None:
    run.save_checkpoint(
        {
            "state": state.state_dict(),
            "done": done,
            "logged": logged,
            "torch_rng": torch.get_rng_state(),
        }
    )
