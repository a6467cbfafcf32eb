"""Token corpora for measuring language models: every token a sample, the next token its class.

:class:`TokenCorpus` holds token ids in rows of at most ``seq_len`` and gives the batches
:func:`nclab.integrations.causal_lm.measure_lm` runs (``input_ids``, ``attention_mask``, next-token
``labels``); :func:`load_corpus` reads the user's files (token ids or text with a local tokenizer),
:func:`synthetic_corpus` generates one. Nothing is downloaded.
"""

from __future__ import annotations

import math
import os
import pickle
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch

from ..errors import DataError

__all__ = ["CORPUS_SUFFIXES", "TokenCorpus", "load_corpus", "synthetic_corpus"]

#: token files :func:`load_corpus` reads (text files need ``tokenizer=``)
CORPUS_SUFFIXES = (".npy", ".pt", ".pth", ".bin", ".txt")


@dataclass
class TokenCorpus:
    """Token ids in rows of at most ``seq_len`` (``ids``: (R, T) int64, right-padded with 0;
    ``lengths``: the tokens of each row). Every token but a row's last is a sample, its class
    the next token of the row."""

    ids: torch.Tensor
    lengths: torch.Tensor
    source: str = ""

    @property
    def tokens(self) -> int:
        return int(self.lengths.sum())

    @property
    def samples(self) -> int:
        """Tokens with a next token in their row: the samples measured."""
        return int((self.lengths - 1).clamp_min(0).sum())

    @property
    def max_id(self) -> int:
        return int(self.ids.max()) if self.ids.numel() else -1

    def batches(self, batch_size: int) -> list[dict[str, torch.Tensor]]:
        """Dicts of ``input_ids``, ``attention_mask`` and ``labels`` (the next token of each
        position, -100 where there is none: a row's last token, padding)."""
        if not isinstance(batch_size, int) or batch_size < 1:
            raise DataError(f"batch_size must be a positive integer, got {batch_size!r}")
        out = []
        for i in range(0, self.ids.shape[0], batch_size):
            ids, n = self.ids[i : i + batch_size], self.lengths[i : i + batch_size]
            t = int(n.max())
            ids = ids[:, :t]
            pos = torch.arange(t)
            mask = (pos[None, :] < n[:, None]).long()
            labels = torch.full_like(ids, -100)
            labels[:, :-1] = torch.where(pos[None, 1:] < n[:, None], ids[:, 1:], -100)
            out.append({"input_ids": ids, "attention_mask": mask, "labels": labels})
        return out


def _rows(streams: Sequence[torch.Tensor], seq_len: int, source: str) -> TokenCorpus:
    """Each 1-D stream of ids cut into rows of ``seq_len`` (its last row shorter)."""
    if not isinstance(seq_len, int) or seq_len < 2:
        raise DataError(f"seq_len must be an integer >= 2, got {seq_len!r}")
    chunks = [c for s in streams for c in s.split(seq_len) if c.numel() >= 2]
    if not chunks:
        raise DataError(f"{source}: no sequence of at least 2 tokens (a token needs a next one)")
    ids = torch.zeros(len(chunks), max(c.numel() for c in chunks), dtype=torch.int64)
    for r, c in enumerate(chunks):
        ids[r, : c.numel()] = c
    lengths = torch.tensor([c.numel() for c in chunks], dtype=torch.int64)
    return TokenCorpus(ids, lengths, source)


def synthetic_corpus(
    vocab_size: int,
    tokens: int,
    seq_len: int = 128,
    seed: int = 0,
    zipf: float = 1.1,
    follow: float = 0.5,
) -> TokenCorpus:
    """A generated corpus of about ``tokens`` token ids in ``[0, vocab_size)``: each token is,
    with probability ``follow``, the fixed successor of the previous one (a random map of the
    vocabulary, the corpus's "grammar"), else drawn from a Zipf law of exponent ``zipf`` over a
    random order of the vocabulary (a few tokens frequent, most rare, as in text).

    >>> c = synthetic_corpus(1000, 500, seq_len=100)
    >>> c.ids.shape, c.tokens, c.samples, c.max_id < 1000
    (torch.Size([5, 100]), 500, 495, True)
    """
    for name, v in (("vocab_size", vocab_size), ("tokens", tokens)):
        if not isinstance(v, int) or v < 2:
            raise DataError(f"{name} must be an integer >= 2, got {v!r}")
    if not 0.0 <= follow < 1.0:
        raise DataError(f"follow must lie in [0, 1), got {follow!r}")
    if not zipf > 0:
        raise DataError(f"zipf must be positive, got {zipf!r}")
    g = torch.Generator().manual_seed(seed)
    order = torch.randperm(vocab_size, generator=g)
    p = torch.arange(1, vocab_size + 1, dtype=torch.float64).pow_(-zipf)
    draw = lambda n: order[torch.multinomial(p, n, replacement=True, generator=g)]  # noqa: E731
    successor = draw(vocab_size)
    rows = math.ceil(tokens / seq_len)
    ids = torch.empty(rows, seq_len, dtype=torch.int64)
    ids[:, 0] = draw(rows)
    for t in range(1, seq_len):
        follows = torch.rand(rows, generator=g) < follow
        ids[:, t] = torch.where(follows, successor[ids[:, t - 1]], draw(rows))
    return _rows(list(ids.flatten()[:tokens].split(seq_len)), seq_len, "synthetic")


def load_corpus(
    paths: str | os.PathLike | Sequence[str | os.PathLike],
    seq_len: int = 128,
    tokenizer: Any = None,
    bin_dtype: str = "uint16",
    max_tokens: int | None = None,
) -> TokenCorpus:
    """The token ids of the user's files (a folder: its files of the accepted kinds, in name
    order), cut into rows of ``seq_len``:

    * ``.npy`` (memory-mapped) or ``.pt``: integer ids, 1-D (one stream) or 2-D (rows);
    * ``.bin``: a raw stream of ``bin_dtype`` ids (``"uint16"``, nanoGPT's and the study's
      format, or ``"uint32"``, ``"int32"``, ``"int64"``);
    * ``.txt``: text, tokenised by ``tokenizer`` (a Hugging Face tokenizer or the folder of one,
      read offline), one stream per file.

    ``max_tokens`` keeps the first so many tokens.
    """
    files = _corpus_files(paths)
    streams, total = [], 0
    for path in files:
        for s in _read_ids(path, tokenizer, bin_dtype):
            if max_tokens is not None:
                s = s[: max(0, max_tokens - total)]
            total += s.numel()
            streams.append(s)
        if max_tokens is not None and total >= max_tokens:
            break
    return _rows(streams, seq_len, ", ".join(str(p) for p in files))


def _corpus_files(paths) -> list[Path]:
    if isinstance(paths, str | os.PathLike):
        paths = [paths]
    files: list[Path] = []
    for p in map(Path, paths):
        if p.is_dir():
            files += sorted(f for f in p.iterdir() if f.suffix in CORPUS_SUFFIXES)
        elif p.is_file():
            if p.suffix not in CORPUS_SUFFIXES:
                raise DataError(
                    f"{p}: a corpus file is one of {', '.join(CORPUS_SUFFIXES)} (token ids, or "
                    "text with a tokenizer)"
                )
            files.append(p)
        else:
            raise DataError(f"{p}: no such file or folder")
    if not files:
        raise DataError(f"no corpus files ({', '.join(CORPUS_SUFFIXES)}) in {list(paths)}")
    return files


def _read_ids(path: Path, tokenizer, bin_dtype: str) -> Iterator[torch.Tensor]:
    """The 1-D int64 streams of one file (a 2-D array: one per row)."""
    if path.suffix == ".txt":
        yield torch.tensor(_tokenize(path, tokenizer), dtype=torch.int64)
        return
    if path.suffix == ".bin" and bin_dtype not in ("uint16", "uint32", "int32", "int64"):
        raise DataError(f"bin_dtype must be uint16, uint32, int32 or int64, got {bin_dtype!r}")
    try:
        if path.suffix == ".npy":
            arr = np.load(path, mmap_mode="r")
        elif path.suffix == ".bin":
            arr = np.memmap(path, dtype=bin_dtype, mode="r")
        else:
            arr = torch.load(path, map_location="cpu", weights_only=True)
            arr = arr.numpy() if isinstance(arr, torch.Tensor) else np.asarray(arr)
    except (OSError, ValueError, RuntimeError, pickle.UnpicklingError) as exc:
        raise DataError(f"{path}: cannot read token ids ({exc})") from exc
    if arr.ndim not in (1, 2) or not np.issubdtype(arr.dtype, np.integer):
        raise DataError(
            f"{path}: token ids must be a 1-D or 2-D integer array, got {arr.ndim}-D {arr.dtype}"
        )
    if arr.size and int(arr.min()) < 0:
        raise DataError(f"{path}: token ids must be >= 0, found {int(arr.min())}")
    for row in arr if arr.ndim == 2 else [arr]:
        yield torch.tensor(np.asarray(row), dtype=torch.int64)  # a copy: the file stays closed


def _tokenize(path: Path, tokenizer) -> list[int]:
    if tokenizer is None:
        raise DataError(f"{path}: a text file needs a tokenizer (tokenizer=..., --tokenizer DIR)")
    if isinstance(tokenizer, str | os.PathLike):
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        from transformers import AutoTokenizer

        try:
            tokenizer = AutoTokenizer.from_pretrained(str(tokenizer), local_files_only=True)
        except (OSError, ValueError) as exc:
            raise DataError(
                f"tokenizer {str(tokenizer)!r}: cannot load it offline ({exc})"
            ) from exc
    return list(tokenizer(path.read_text())["input_ids"])
