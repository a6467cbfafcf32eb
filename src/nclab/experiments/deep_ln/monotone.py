"""``mode = "monotone"``: the appendix's argument that the optimal objective cannot increase with
depth, tested directly.

A block with zero weights copies its input (:meth:`~nclab.models.lnresnet.LNResNet.embed_into`),
so a depth-L network is also a depth-L' network (L' > L) with the same objective. Per seed, four
units under ``units/``:

* ``shallow_seed-<s>``: depth L trained for ``train.epochs``;
* ``embedded_seed-<s>``: that network embedded into depth L' (its objective at the embedding is
  measured beside the shallow one's, in float64), then trained on for ``monotone.epochs_after``;
* ``continued_seed-<s>``: the depth-L network trained on for the same ``epochs_after`` (the fair
  comparison: the same number of further steps, a fresh optimiser for both);
* ``scratch_seed-<s>``: depth L' from scratch for ``train.epochs + epochs_after``.

The summary holds, per seed and averaged, the relative difference of the objectives at the
embedding (``start_rel_diff``, float precision), and the final objectives of the three.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import torch

from ...runs import RunDir
from .config import DeepLNConfig


def _unit(run_dir: RunDir, name: str, seed: int) -> RunDir:
    return RunDir(Path(run_dir.path) / "units" / f"{name}_seed-{seed}")


def _train(cfg, depth, seed, data, unit, device, model=None, epochs=None) -> dict[str, Any]:
    from .train import train_unit

    if not unit.finished:
        unit.write_config(cfg, depth=depth, unit_seed=seed)
        unit.write_summary(train_unit(cfg, depth, seed, data, unit, device, model, epochs))
        unit.remove_checkpoint()
    return unit.read_summary()


def _shallow_model(cfg, seed, data, unit: RunDir, device) -> torch.nn.Module:
    """The trained depth-L network of ``unit`` (its weights from ``model.pt``)."""
    from .train import DepthTraining

    u = DepthTraining(cfg, cfg.monotone.shallow, seed, data, device)
    u.model.load_state_dict(torch.load(unit.path / "model.pt", map_location=device))
    return u.model


@torch.no_grad()
def _objective64(cfg: DeepLNConfig, data, model: torch.nn.Module) -> float:
    """The objective loss + (λ/2) Σ‖W_l‖² of ``model`` on the training set, in float64."""
    import copy

    import torch.nn.functional as F

    from .measure import fit_loss

    m = copy.deepcopy(model).cpu().double()
    x, y = data.x_train.flatten(1).double(), data.y_train
    onehot = F.one_hot(y, data.num_classes).double()
    fit = float(fit_loss(m(x), y, onehot, cfg.train.loss))
    lam = cfg.train.weight_decay
    return fit + lam / 2 * sum(float((p * p).sum()) for p in m.decayed_parameters())


def run_seed(cfg: DeepLNConfig, seed: int, data, run_dir: RunDir, device) -> dict[str, Any]:
    """The four units of one seed (module docstring) and what the summary compares."""
    mc, e = cfg.monotone, cfg.train.epochs
    shallow = _train(cfg, mc.shallow, seed, data, _unit(run_dir, "shallow", seed), device)
    model = _shallow_model(cfg, seed, data, _unit(run_dir, "shallow", seed), device)
    deep = model.embed_into(mc.deep, bias=mc.bias)
    before, at_embed = _objective64(cfg, data, model), _objective64(cfg, data, deep)
    after = mc.epochs_after
    cont = _train(
        cfg, mc.shallow, seed, data, _unit(run_dir, "continued", seed), device, model, after
    )
    emb = _train(cfg, mc.deep, seed, data, _unit(run_dir, "embedded", seed), device, deep, after)
    scratch_unit = _unit(run_dir, "scratch", seed)
    scratch = _train(cfg, mc.deep, seed, data, scratch_unit, device, epochs=e + after)
    return {
        "objective_shallow_at_embedding": before,
        "objective_embedded_at_embedding": at_embed,
        "start_rel_diff": abs(at_embed - before) / abs(before),
        "objective_shallow_trained": shallow["objective"],
        "objective_embedded_end": emb["objective"],
        "objective_continued_end": cont["objective"],
        "objective_scratch_end": scratch["objective"],
        "embedded_minus_continued": emb["objective"] - cont["objective"],
        "embedded_minus_at_embedding": emb["objective"] - at_embed,
        "scratch_minus_embedded": scratch["objective"] - emb["objective"],
        "nc1_embedded_end": emb["nc1"],
        "nc1_continued_end": cont["nc1"],
        "nc1_scratch_end": scratch["nc1"],
    }


def run(cfg: DeepLNConfig, run_dir: RunDir, data, device) -> dict[str, Any]:
    """Every seed's comparison, their mean and std (``std``) and the worst case over seeds."""
    from ...errors import ConfigError
    from ..common.seeds import aggregate_summaries

    mc = cfg.monotone
    if not 1 <= mc.shallow < mc.deep:
        raise ConfigError(f"monotone needs 1 <= shallow < deep, got {mc.shallow}, {mc.deep}")
    if cfg.train.wd_over_depth or cfg.model.block not in ("rn1", "rn2"):
        raise ConfigError(
            "monotone compares objectives across depths: it needs one λ for every depth "
            "(train.wd_over_depth = false) and a ResNet block (rn1, rn2)"
        )
    per = [run_seed(cfg, cfg.seed + i, data, run_dir, device) for i in range(max(1, cfg.seeds))]
    out = aggregate_summaries(per) if len(per) > 1 else dict(per[0])
    out.update(
        mode="monotone",
        block=cfg.model.block,
        loss=cfg.train.loss,
        data=cfg.data.name,
        shallow=mc.shallow,
        deep=mc.deep,
        weight_decay=cfg.train.weight_decay,
        start_rel_diff_max=max(p["start_rel_diff"] for p in per),
        embedded_minus_continued_max=max(p["embedded_minus_continued"] for p in per),
        embedded_minus_at_embedding_max=max(p["embedded_minus_at_embedding"] for p in per),
    )
    return out
