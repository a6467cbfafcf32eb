"""Evaluating a classifier network, shared by the experiments that train one."""

from __future__ import annotations

import torch


@torch.no_grad()
def accuracy(model: torch.nn.Module, x: torch.Tensor, y: torch.Tensor, batch: int) -> float:
    """The fraction of samples whose argmax logit is the label, in eval mode, ``batch`` samples
    at a time (0.0 for no samples).

    >>> m = torch.nn.Linear(2, 2)
    >>> _ = m.weight.data.copy_(torch.eye(2)); _ = m.bias.data.zero_()
    >>> accuracy(m, torch.tensor([[1.0, 0.0], [0.0, 1.0], [2.0, 1.0]]), torch.tensor([0, 1, 1]), 2)
    0.6666666666666666
    """
    model.eval()
    correct = sum(
        int((model(x[i : i + batch]).argmax(1) == y[i : i + batch]).sum())
        for i in range(0, len(y), batch)
    )
    return correct / max(1, len(y))
