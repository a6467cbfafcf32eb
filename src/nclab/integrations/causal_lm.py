"""Linguistic collapse at vocabulary size, in one forward pass over the corpus.

A causal language model measured as Wu & Papyan's *Linguistic Collapse* (2024) measures it: every
token a sample, the next token its class, K = the rows of the LM head (the tokenizer's vocabulary:
50,257 for GPT-2's), the features what the head reads. :func:`measure_lm` reports the study's metric
set — ``cdnv`` (NC1 of Galanti et al.), ``nc2_equinorm`` and ``nc2_equiangle`` (NC2: equal norms,
the spread of the interference cosines), ``gnc2`` (GNC2, hyperspherical uniformity), ``unc3``
(UNC3, uniform duality) and ``nc4`` (agreement of the classifier with the nearest class centre) —
with NC1 = tr(Sigma_W Sigma_B^+)/K from the within-class scatter itself (the study keeps only each
class's variance) and every other canonical key, exact in float64.

**One pass.** The model runs once per batch. The statistics (counts, means, sums of squares) are
streamed; what needs the final class means a second time (``nc1``, ``nc3_cos``, ``nc4``,
``ncc_acc``) reads the token features kept from that one pass: in memory within ``cache_budget``,
beyond it from a temporary spill file (``spill``), never by running the model again
(:meth:`nclab.CollapseProbe.run` with ``second_pass="cache"``). ``LMResult.forward_passes`` counts
the model's calls.

**Bounded memory.** Nothing of size N x K or K x K is allocated: the LM head's own logits are not
computed during the measurement (``logits=False``: its forward returns an empty tensor while its
input is recorded), the classifier's argmax and the nearest-centre search run in column blocks
with a running best (float32 GEMMs whose near ties are decided again in float64), the pairwise
metrics in tiles of the memory budget (:func:`nclab._kernels.set_memory_budget`). Each measured
layer keeps K x D float64 means; the vocabulary's tokens that never occur as a next token are left
out after the first pass (``result.classes`` lists the token ids kept).

**Corpora** are :class:`~nclab.data.corpus.TokenCorpus` objects (:mod:`nclab.data.corpus`,
re-exported here): :func:`load_corpus` reads the user's token files (``.npy``, ``.pt``, raw ``.bin``
streams such as nanoGPT's uint16 files) or text files with a local tokenizer;
:func:`synthetic_corpus` generates one (Zipfian tokens with a fixed successor rule).

>>> import os; os.environ["HF_HUB_OFFLINE"] = "1"
>>> import torch
>>> from transformers import GPT2Config, GPT2LMHeadModel
>>> _ = torch.manual_seed(0)
>>> gpt2 = GPT2LMHeadModel(GPT2Config(vocab_size=300, n_embd=16, n_layer=1, n_head=2,
...                                   bos_token_id=0, eos_token_id=0))
>>> lm = measure_lm(gpt2, synthetic_corpus(300, 2000, seq_len=50), progress=False)
>>> lm.forward_passes == lm.batches, lm.samples, len(lm.result.classes) <= 300
(True, 1960, True)
>>> "rank(Sigma_B)" in lm.result.notes["lm_head:input"]["nc1"]  # K classes in D = 16 dimensions
True
"""

from __future__ import annotations

import os
import time
from collections.abc import Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import torch
from torch import nn

from ..data.corpus import TokenCorpus, load_corpus, synthetic_corpus
from ..errors import DataError, DegenerateError
from ..metrics import Metrics
from ..metrics.uniformity import gnc2
from ..metrics.views import unc3
from ..probe import CollapseProbe, ProbeResult
from ..probe._cache import CACHE_BUDGET
from ..probe._taps import find_module

__all__ = [
    "STUDY_KEYS",
    "LMResult",
    "TokenCorpus",
    "load_corpus",
    "measure_lm",
    "synthetic_corpus",
]

#: the metrics of Wu & Papyan's study, in the order the CLI prints them first
STUDY_KEYS = ("cdnv", "nc2_equinorm", "nc2_equiangle", "gnc2", "unc3", "nc4")


# --- the measurement -----------------------------------------------------------------------------
@dataclass
class LMResult:
    """A language model measured over a corpus: the probe's result (``result``: metrics per
    layer, ``notes``, ``skipped``, ``classes``, ``stats``) and what the measurement did
    (``forward_passes`` of the model for its ``batches``; ``cache``: the bytes of token features
    kept in memory and spilled to disk for the second pass)."""

    result: ProbeResult
    vocab_size: int
    samples: int
    batches: int
    forward_passes: int
    seconds: float
    cache: dict[str, int] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: metrics, skipped and notes per layer, and the sizes."""
        r = self.result
        return {
            "metrics": r.to_dict(),
            "skipped": r.skipped,
            "notes": r.notes,
            "vocab_size": self.vocab_size,
            "classes": len(r.classes),
            "samples": self.samples,
            "batches": self.batches,
            "forward_passes": self.forward_passes,
            "seconds": self.seconds,
            "cache": dict(self.cache),
        }


def measure_lm(
    model: nn.Module,
    corpus: TokenCorpus,
    *,
    batch_size: int = 8,
    layers: Sequence[str] | None = None,
    classifier: str | None = None,
    cache_budget: int | str = CACHE_BUDGET,
    spill: bool | str | os.PathLike = True,
    device: torch.device | str | None = None,
    progress: bool = True,
    logits: bool = False,
    global_mean: str = "class",
) -> LMResult:
    """Collapse of a causal LM over ``corpus``, every token a sample and the next token its class,
    in one forward pass per batch (see the module docstring).

    Args:
        model: a causal LM (``model(input_ids=, attention_mask=)``) whose output embedding
            (``get_output_embeddings()``, else ``classifier=``) is the classifier.
        corpus: a :class:`TokenCorpus` (ids below the head's K rows).
        layers: the layers to measure (default: the head's input, ``"lm_head:input"``); others,
            e.g. ``"transformer.h.5"``, are measured against the same next-token classes.
        classifier: the name of the LM head (default: found by ``get_output_embeddings()``).
        cache_budget, spill: memory for the token features kept for the second pass, and where
            the rest goes (``True``: the system's temporary folder; ``False``: refused beyond it).
        logits: also compute the head's logits in the forward (default: not, an N x K product
            that the measurement does not use).
    """
    probe = lm_probe(model, corpus, layers, classifier, global_mean)
    head = probe.classifier
    batches = corpus.batches(batch_size)
    calls = [0]
    counter = model.register_forward_pre_hook(lambda *_: calls.__setitem__(0, calls[0] + 1))
    t0 = time.perf_counter()
    try:
        with _head_output(dict(model.named_modules())[head], logits):
            result = probe.run(
                batches,
                device=device if device is not None else _device(model),
                second_pass="cache",
                cache_budget=cache_budget,
                spill=spill,
                progress=progress,
            )
    finally:
        counter.remove()
    for tap in probe.taps:
        _study_metrics(result.metrics[tap.name], tap.stats, tap.is_classifier, global_mean)
    seconds = time.perf_counter() - t0
    samples = result.stats[probe.taps[0].name].num_samples
    cache = dict(getattr(probe, "cached", {}))  # the features' bytes in memory and spilled
    return LMResult(result, probe.num_classes, samples, len(batches), calls[0], seconds, cache)


def lm_probe(
    model: nn.Module,
    corpus: TokenCorpus,
    layers: Sequence[str] | None = None,
    classifier: str | None = None,
    global_mean: str = "class",
) -> CollapseProbe:
    """The probe :func:`measure_lm` runs: token mode, next-token ``labels``, K = the head's rows,
    the vocabulary's tokens that never occur dropped; the corpus checked against K."""
    if not isinstance(corpus, TokenCorpus):
        raise DataError(
            f"corpus must be a TokenCorpus (load_corpus, synthetic_corpus), got "
            f"{type(corpus).__name__}"
        )
    head_name, head = find_module(_head_name(model, classifier), dict(model.named_modules()))
    weight = getattr(head, "weight", None)
    if not isinstance(weight, torch.Tensor) or weight.ndim != 2:
        raise DataError(
            f"the LM head {head_name!r} has no (K, D) weight: name the head with classifier="
        )
    vocab = int(weight.shape[0])
    positions = getattr(getattr(model, "config", None), "max_position_embeddings", None)
    if isinstance(positions, int) and corpus.ids.shape[1] > positions:
        raise DataError(
            f"the corpus has sequences of {corpus.ids.shape[1]} tokens, but the model has "
            f"{positions} positions: cut the corpus into shorter rows (seq_len, --seq-len)"
        )
    if corpus.max_id >= vocab:
        raise DataError(
            f"the corpus has token id {corpus.max_id}, but the LM head {head_name!r} has "
            f"{vocab} rows (K): token ids must lie in [0, {vocab})"
        )
    return CollapseProbe(
        model,
        list(layers) if layers is not None else [f"{head_name}:input"],
        num_classes=vocab,
        classifier=head_name,
        global_mean=global_mean,
        tokens=True,
        labels="labels",
        forward=_forward,
        empty_classes="drop",
    )


def _forward(model: nn.Module, batch: dict) -> Any:
    return model(
        input_ids=batch["input_ids"], attention_mask=batch["attention_mask"], use_cache=False
    )


def _device(model: nn.Module) -> torch.device | None:
    p = next(model.parameters(), None)
    return p.device if p is not None else None


def _head_name(model: nn.Module, classifier: str | None) -> str:
    if classifier is not None:
        return classifier
    get = getattr(model, "get_output_embeddings", None)
    head = get() if callable(get) else None
    name = next((n for n, m in model.named_modules() if m is head and head is not None), None)
    if name is None:
        raise DataError(
            "measure_lm: the model has no output embedding (get_output_embeddings()): name its "
            "LM head with classifier='name'"
        )
    return name


@contextmanager
def _head_output(head: nn.Module, logits: bool):
    """While measuring, the head's forward returns an empty (..., 0) tensor (its hooks still see
    its input) unless ``logits``: the model's N x K logits are neither computed nor kept."""
    if logits:
        yield
        return
    own = head.__dict__.get("forward")

    def empty(x: torch.Tensor, *args: Any, **kwargs: Any) -> torch.Tensor:
        return x.new_empty(*x.shape[:-1], 0)

    head.forward = empty
    try:
        yield
    finally:
        if own is None:
            del head.forward
        else:
            head.forward = own


def _study_metrics(m: Metrics, stats, is_classifier: bool, global_mean: str) -> None:
    """Add the study's metrics that :func:`~nclab.metrics.collapse_metrics` does not compute:
    ``gnc2``, and ``unc3`` on the classifier's input."""
    extra = {"gnc2": lambda: gnc2(stats, global_mean)}
    if is_classifier and stats.weights is not None:
        extra["unc3"] = lambda: unc3(stats, stats.weights, global_mean)
    for key, fn in extra.items():
        try:
            m[key] = fn()
        except DegenerateError as exc:
            m.skipped[key] = str(exc)
