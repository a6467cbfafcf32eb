"""GPT-2 networks of *Feature Collapse* appendix A.3–A.4 (Laurent, von Brecht & Bresson, ICLR 2024),
built from Hugging Face ``transformers``' own ``GPT2Model`` / ``GPT2LMHeadModel`` and a
``GPT2Config`` — never pretrained weights, nothing fetched from the network.

* :class:`GPT2Classifier` (A.3): the sentence's words, then a class token appended at the end
  (position L; with GPT-2's causal attention the last position sees every word), GPT-2 blocks with
  absolute learned positional embeddings, a linear head (d → K) on the last layer's state of the
  class token.
* :func:`gpt2_language_model` (A.4): ``GPT2LMHeadModel`` (output layer tied to the word embeddings,
  as GPT-2) over the data model's words plus a begin-of-sentence token.

:func:`word_embeddings` is the table measured by the paper: ``wte`` rows of the words, *before*
positional embeddings are added. ``transformers`` is an optional dependency
(``pip install nclab[transformers]``), imported when a network is built.

>>> net = GPT2Classifier(vocab_size=10, n_positions=6, d=16, n_layer=1, n_head=2, num_classes=3)
>>> net(torch.tensor([[1, 2, 3, 9]])).shape
torch.Size([1, 3])
"""

from __future__ import annotations

import os
from typing import Any

import torch
from torch import nn

from ..errors import ConfigError

__all__ = [
    "GPT2_SHAPES",
    "GPT2Classifier",
    "gpt2_config",
    "gpt2_language_model",
    "gpt2_shaped",
    "word_embeddings",
]

#: GPT-2 language models by name (``nclab measure-lm --config NAME``, ``benchmarks/bench_lm.py``):
#: GPT-2 small's shape (124M parameters) and a tiny one, both with GPT-2's vocabulary of 50,257
GPT2_SHAPES: dict[str, dict[str, int]] = {
    "gpt2": {"vocab_size": 50257, "n_positions": 1024, "d": 768, "n_layer": 12, "n_head": 12},
    "gpt2-tiny": {"vocab_size": 50257, "n_positions": 256, "d": 64, "n_layer": 2, "n_head": 2},
}


def _transformers() -> Any:
    """The ``transformers`` module, offline, or a :class:`ConfigError` saying how to install it."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")  # build from a config only: never download
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    try:
        import transformers
    except ImportError as exc:
        raise ConfigError(
            "the GPT-2 networks need Hugging Face transformers: pip install nclab[transformers]"
        ) from exc
    return transformers


def gpt2_config(
    vocab_size: int,
    n_positions: int,
    d: int,
    n_layer: int,
    n_head: int,
    dropout: float = 0.0,
) -> Any:
    """A ``GPT2Config`` of the given sizes (GPT-2's defaults otherwise: GELU, pre-LayerNorm blocks,
    4d MLP, initialiser range 0.02); ``dropout`` for the residual, embedding and attention dropouts."""
    for name, v in (
        ("vocab_size", vocab_size),
        ("n_positions", n_positions),
        ("d", d),
        ("n_layer", n_layer),
        ("n_head", n_head),
    ):
        if not isinstance(v, int) or v < 1:
            raise ConfigError(f"{name} must be a positive integer, got {v!r}")
    if d % n_head:
        raise ConfigError(f"the width d={d} must be a multiple of n_head={n_head}")
    if not 0.0 <= dropout < 1.0:
        raise ConfigError(f"dropout must lie in [0, 1), got {dropout}")
    tf = _transformers()
    return tf.GPT2Config(
        vocab_size=vocab_size,
        n_positions=n_positions,
        n_embd=d,
        n_layer=n_layer,
        n_head=n_head,
        resid_pdrop=dropout,
        embd_pdrop=dropout,
        attn_pdrop=dropout,
        bos_token_id=vocab_size - 1,
        eos_token_id=vocab_size - 1,
    )


def _seeded(seed: int | None, build):
    """``build()`` with torch's global RNG seeded (GPT-2's initialisation draws from it), the
    caller's RNG state restored after."""
    if seed is None:
        return build()
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        return build()


class GPT2Classifier(nn.Module):
    """GPT-2 blocks over ``[words..., class token]`` and a linear head on the class token."""

    def __init__(
        self,
        vocab_size: int,
        n_positions: int,
        d: int,
        n_layer: int,
        n_head: int,
        num_classes: int,
        dropout: float = 0.0,
        seed: int | None = None,
    ):
        super().__init__()
        if not isinstance(num_classes, int) or num_classes < 2:
            raise ConfigError(f"num_classes must be an integer >= 2, got {num_classes!r}")
        cfg = gpt2_config(vocab_size, n_positions, d, n_layer, n_head, dropout)
        tf = _transformers()

        def build():
            return tf.GPT2Model(cfg), nn.Linear(d, num_classes)

        self.transformer, self.head = _seeded(seed, build)
        self.config = cfg

    def forward(self, ids: torch.Tensor, output_hidden_states: bool = False):
        """Logits (N, K) from the last position's final state; with ``output_hidden_states`` also
        the tuple of hidden states (embeddings + positions, after each block; the last one after
        the final LayerNorm)."""
        out = self.transformer(input_ids=ids, output_hidden_states=output_hidden_states)
        logits = self.head(out.last_hidden_state[:, -1])
        return (logits, out.hidden_states) if output_hidden_states else logits


def gpt2_language_model(
    vocab_size: int,
    n_positions: int,
    d: int,
    n_layer: int,
    n_head: int,
    dropout: float = 0.0,
    seed: int | None = None,
) -> nn.Module:
    """``GPT2LMHeadModel`` from a :func:`gpt2_config` (weights tied, initialised from ``seed``)."""
    cfg = gpt2_config(vocab_size, n_positions, d, n_layer, n_head, dropout)
    tf = _transformers()
    net = _seeded(seed, lambda: tf.GPT2LMHeadModel(cfg))
    # the next-token loss GPT-2 uses anyway: named, so transformers does not warn on every run
    # that it cannot guess it from the class name
    net.loss_type = "ForCausalLM"
    return net


def gpt2_shaped(name: str, seed: int | None = 0, **overrides: int) -> nn.Module:
    """The ``GPT2LMHeadModel`` of :data:`GPT2_SHAPES` ``name`` with random weights from ``seed``
    (``overrides``: any of its sizes, e.g. ``vocab_size=1000``)."""
    if name not in GPT2_SHAPES:
        raise ConfigError(f"unknown GPT-2 shape {name!r}; shapes: {', '.join(GPT2_SHAPES)}")
    return gpt2_language_model(**{**GPT2_SHAPES[name], **overrides}, seed=seed)


def word_embeddings(net: nn.Module, num_words: int) -> torch.Tensor:
    """The first ``num_words`` rows of the token-embedding table ``wte`` (before positions)."""
    body = net.transformer
    return body.wte.weight[:num_words]
