"""``mode = "monotone"``: the appendix's argument that the optimal objective cannot increase with
depth, tested directly.

A block with zero weights copies its input (:meth:`~nclab.models.lnresnet.LNResNet.embed_into`),
so a depth-L network is also a depth-L' network (L' > L) with the same objective. Per seed, four
units under ``units/`` (:mod:`.units`, trained by :func:`.train.train_role`):

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

from collections.abc import Sequence
from typing import Any

from ..common.seeds import aggregate_summaries
from ..protocol import UnitResult
from .config import DeepLNConfig
from .schema import DeepLnMonotoneSummary, MonotoneSeed


def seed_comparison(by_role: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """What the summary compares for one seed, from its four units' summaries."""
    shallow, cont = by_role["shallow"], by_role["continued"]
    emb, scratch = by_role["embedded"], by_role["scratch"]
    before = emb["objective_shallow_at_embedding"]
    at_embed = emb["objective_embedded_at_embedding"]
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


def summarize(cfg: DeepLNConfig, units: Sequence[UnitResult]) -> DeepLnMonotoneSummary:
    """Every seed's comparison, their mean and std (``std``, as :class:`~.schema.MonotoneSeed`
    declares) and the worst case over seeds."""
    by_seed: dict[int, dict[str, dict[str, Any]]] = {}
    for r in units:
        by_seed.setdefault(r.unit.seed, {})[r.unit["role"]] = r.summary
    per = [seed_comparison(roles) for roles in by_seed.values()]
    mc = cfg.monotone
    out = aggregate_summaries(per, MonotoneSeed) if len(per) > 1 else dict(per[0])
    return DeepLnMonotoneSummary(
        **out,
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
