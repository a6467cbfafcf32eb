"""Training one network of the linear-head experiment (one depth, weight decay, learning rate, seed).

The loss follows ``torch.nn.MSELoss``: :math:`\\frac{1}{BK}\\sum_i \\|f(x_i) - y_i\\|^2` over a batch of
B samples with one-hot :math:`y_i` (``loss = "ce"``: mean cross-entropy); weight decay is the
optimiser's (coupled L2 for SGD and Adam, decoupled for AdamW); the learning rate drops by
``lr_drop_factor`` after ``lr_drop_at`` of the epochs (the paper: x0.1 at 80 %).

Under torch.distributed each rank computes its shard ``batch[rank::world]`` of every batch and scales
its loss so that DDP's gradient average equals the full batch's gradient.
"""

from __future__ import annotations

from typing import Any

import torch
import torch.nn.functional as F

from ..models.mlp import LinearHeadMLP
from ..runs import RunDir
from ..train import fit
from .linear_head_measure import layer_label, measure_layers, network_quantities


def build_model(cfg, job: dict[str, Any], input_shape: tuple[int, ...], K: int) -> LinearHeadMLP:
    m = cfg.model
    L1, L2 = job["L1"], job["L2"]
    if L1 < 0 or L2 < 1:
        from ..errors import ConfigError

        raise ConfigError(f"need L1 >= 0 nonlinear and L2 >= 1 linear layers, got {L1}, {L2}")
    widths = [m.width] * L1
    if L1 and m.first_width:
        widths[0] = m.first_width
    head = [m.head_width or m.width] * (L2 - 1)
    kw = dict(
        activation=m.activation,
        bias=m.bias,
        head_bias=m.head_bias,
        init=m.init,
        init_scale=m.init_scale,
    )
    if m.backbone == "resnet20":
        from ..models.resnet import resnet20_mlp

        return resnet20_mlp(K, widths, head, in_channels=input_shape[0], width=m.resnet_width, **kw)
    in_dim = 1
    for s in input_shape:
        in_dim *= s
    return LinearHeadMLP(in_dim, K, widths, head, **kw)


def make_optimizer(cfg, params, lr: float, wd: float) -> torch.optim.Optimizer:
    t = cfg.train
    if t.optimizer == "sgd":
        return torch.optim.SGD(params, lr=lr, momentum=t.momentum, weight_decay=wd)
    if t.optimizer == "adam":
        return torch.optim.Adam(params, lr=lr, weight_decay=wd)
    return torch.optim.AdamW(params, lr=lr, weight_decay=wd)


def _all_reduce(t: torch.Tensor, world: int) -> torch.Tensor:
    if world > 1:
        import torch.distributed as dist

        dist.all_reduce(t)
    return t


def train_mse_from_stats(stats, K: int) -> float:
    """Mean over N*K entries of (Z_L - Y)^2, exactly, from the class statistics of Z_L:
    sum_c [within-class sum of squares + n_c ||mu_c - e_c||^2] / (N K)."""
    eye = torch.eye(K, dtype=stats.means.dtype, device=stats.means.device)
    n = stats.counts.to(stats.means.dtype)
    total = stats.class_ss.sum() + (n * ((stats.means - eye) ** 2).sum(1)).sum()
    return float(total / (n.sum() * K))


def train_unit(
    cfg, job: dict[str, Any], data, unit_dir: RunDir, rank: int, world: int, device: torch.device
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """Train one network and measure it; returns (summary, logged records)."""
    K = data.num_classes
    torch.manual_seed(job["seed"])
    model = build_model(cfg, job, data.input_shape, K).to(device)
    net: torch.nn.Module = model
    if world > 1:
        from torch.nn.parallel import DistributedDataParallel as DDP

        if device.type == "cuda":
            model = torch.nn.SyncBatchNorm.convert_sync_batchnorm(model)
        net = DDP(model, device_ids=[device.index] if device.type == "cuda" else None)
    t = cfg.train
    opt = make_optimizer(cfg, model.parameters(), job["lr"], job["weight_decay"])
    drop = [max(1, round(t.lr_drop_at * t.epochs))] if t.lr_drop_at < 1.0 else []
    sched = torch.optim.lr_scheduler.MultiStepLR(opt, drop, gamma=t.lr_drop_factor)
    x, y = data.x_train.to(device), data.y_train.to(device)
    xt, yt = data.x_test.to(device), data.y_test.to(device)
    N = len(y)
    onehot = F.one_hot(y, K).to(x.dtype)
    B = min(t.batch_size or N, N)
    g = torch.Generator().manual_seed(job["seed"] + 7919)
    shard = torch.arange(rank, N, world, device=device)
    mb = cfg.measure_batch
    probe_loader = [(x[shard[i : i + mb]], y[shard[i : i + mb]]) for i in range(0, len(shard), mb)]
    last: dict[str, Any] = {}

    def train_epoch(epoch: int) -> dict[str, Any]:
        net.train()
        perm = (
            torch.randperm(N, generator=g).to(device) if B < N else torch.arange(N, device=device)
        )
        total = torch.zeros((), dtype=torch.float64, device=device)
        for i in range(0, N, B):
            idx = perm[i : i + B]
            mine = idx[rank::world]
            out = net(x[mine])
            if t.loss == "mse":
                loss_sum = ((out - onehot[mine]) ** 2).sum() / K
            else:
                loss_sum = F.cross_entropy(out, y[mine], reduction="sum")
            loss = loss_sum * (world / len(idx))
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            total += loss_sum.detach().to(torch.float64)
        sched.step()
        return {"train_loss": float(_all_reduce(total, world)) / N, "lr": opt.param_groups[0]["lr"]}

    @torch.no_grad()
    def test_acc() -> float:
        model.eval()
        correct = sum(
            int((model(xt[i : i + mb]).argmax(1) == yt[i : i + mb]).sum())
            for i in range(0, len(yt), mb)
        )
        return correct / max(1, len(yt))

    def evaluate(epoch: int) -> dict[str, Any]:
        final = epoch + 1 == t.epochs
        res = measure_layers(model, probe_loader, K, first=cfg.measure_from, grams=final)
        rec = {
            "train_mse": train_mse_from_stats(res["stats"][layer_label(model.L)], K),
            "train_acc": res["train_acc"],
            "test_acc": test_acc(),
            "layers": res["layers"],
        }
        if final:
            last.update(res)
        return rec

    def state() -> dict[str, Any]:
        return {
            "model": model.state_dict(),
            "opt": opt.state_dict(),
            "sched": sched.state_dict(),
            "gen": g.get_state(),
        }

    def load_state(s: dict[str, Any]) -> None:
        model.load_state_dict(s["model"])
        opt.load_state_dict(s["opt"])
        sched.load_state_dict(s["sched"])
        g.set_state(s["gen"])

    history = fit(
        epochs=t.epochs,
        train_epoch=train_epoch,
        evaluate=evaluate,
        log_every=cfg.measure_every,
        run=unit_dir,
        state=state,
        load_state=load_state,
        checkpoint_every=cfg.checkpoint_every,
        progress=rank == 0,
        description=f"linear-head {job['label']}",
    )
    if not last:  # resumed after the final evaluation was logged: measure again
        last.update(measure_layers(model, probe_loader, K, first=cfg.measure_from, grams=True))
    final_rec = history[-1]
    layers = [{"name": name, **rec} for name, rec in final_rec["layers"].items()]
    cert = certificate(cfg, model, x[shard], y[shard], K, final_rec["layers"])
    summary = {k: job[k] for k in ("L1", "L2", "weight_decay", "lr", "seed")}
    summary.update(
        layers=layers,
        train_mse=final_rec["train_mse"],
        train_acc=final_rec["train_acc"],
        test_acc=final_rec["test_acc"],
        certificate=cert,
        grams=last.get("grams", {}),
        epochs=t.epochs,
    )
    return summary, history


def certificate(cfg, model: LinearHeadMLP, x, y, K: int, layers: dict[str, Any]) -> dict[str, Any]:
    """Theorem 3.1's bounds for the trained network beside its measured NC1/kappa(W_L)/NC2/NC3."""
    from ..errors import TheoryError
    from ..theory.bounds import jacot_certificate

    pen = layers.get(layer_label(model.L - 1), {})
    measured = {k: pen[k] for k in ("nc1_trace", "nc2_kappa", "nc3_cos") if pen.get(k) is not None}
    q = network_quantities(model, x, y, K, measured)
    if cfg.model.head_bias:
        return {
            "applies": False,
            "reason": "the linear head has biases; Theorem 3.1 assumes Z_l = W_l Z_(l-1)",
            "measured": q.measured,
        }
    try:
        return jacot_certificate(q).to_dict()
    except TheoryError as exc:
        return {
            "applies": False,
            "reason": str(exc),
            "measured": q.measured,
            "hypotheses": {"eps1": q.eps1, "eps2": q.eps2, "r": q.r, "c3": q.c3},
        }
