"""The IMDB large movie review data set (Maas et al. 2011) from the user's copy of its public archive.

Nothing is downloaded. ``root`` is the folder ``aclImdb`` of the archive ``aclImdb_v1.tar.gz``
(or the folder holding it), laid out as ``train/pos/*.txt``, ``train/neg/*.txt``,
``test/pos/*.txt``, ``test/neg/*.txt`` (``train/unsup`` is not read). Labels: 0 = neg, 1 = pos.

Tokenisation is simple and documented: lower case, the archive's ``<br />`` line breaks become
spaces, tokens are runs of letters and digits with an optional apostrophe suffix (``don't``).
The vocabulary is built from the *training* reviews read (after subsampling): the
``vocab_size - 2`` most frequent tokens (ties broken alphabetically), with id 0 for padding and
1 for unknown tokens; each review keeps its first ``max_len`` tokens and is padded with 0.
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import torch

from ..errors import DataError
from .sentiment import TokenSplit

PAD, UNK = 0, 1
_TOKEN = re.compile(r"[a-z0-9]+(?:'[a-z]+)?")
_SPLITS = ("train", "test")
_LABELS = (("neg", 0), ("pos", 1))


def tokenize(text: str) -> list[str]:
    """Lower-cased tokens of a review.

    >>> tokenize("I didn't like it.<br /><br />2 stars!")
    ['i', "didn't", 'like', 'it', '2', 'stars']
    """
    return _TOKEN.findall(text.lower().replace("<br />", " "))


def _root(root: str | Path | None) -> Path:
    if root is None:
        raise DataError("the IMDB loader needs data_dir: the folder aclImdb of aclImdb_v1.tar.gz")
    base = Path(root).expanduser()
    for cand in (base, base / "aclImdb"):
        if all((cand / s / lab).is_dir() for s in _SPLITS for lab, _ in _LABELS):
            return cand
    raise DataError(
        f"no aclImdb folder at {base} (nor {base / 'aclImdb'}): expected train/pos, train/neg, "
        "test/pos and test/neg holding one review per .txt file (the layout of aclImdb_v1.tar.gz)"
    )


def _read(folder: Path, per_class: int | None, g: torch.Generator) -> tuple[list, list]:
    texts, labels = [], []
    for lab, y in _LABELS:
        files = sorted((folder / lab).glob("*.txt"))
        if not files:
            raise DataError(f"no .txt reviews in {folder / lab}")
        if per_class is not None:
            if per_class > len(files):
                raise DataError(
                    f"{per_class} reviews per class asked, {folder / lab} has {len(files)}"
                )
            keep = torch.randperm(len(files), generator=g)[:per_class].sort().values
            files = [files[i] for i in keep]
        texts += [tokenize(f.read_text(encoding="utf-8", errors="replace")) for f in files]
        labels += [y] * len(files)
    return texts, labels


def load_aclimdb(
    root: str | Path | None,
    vocab_size: int = 10_000,
    max_len: int = 256,
    samples_per_class: int | None = None,
    test_samples_per_class: int | None = None,
    seed: int = 0,
) -> TokenSplit:
    """Token ids (N x max_len) and labels of the IMDB reviews under ``root`` (module docstring);
    ``samples_per_class`` / ``test_samples_per_class`` subsample each class with ``seed``."""
    if vocab_size < 3 or max_len < 1:
        raise DataError(f"need vocab_size >= 3 and max_len >= 1, got {vocab_size}, {max_len}")
    base = _root(root)
    g = torch.Generator().manual_seed(int(seed))
    train, y_train = _read(base / "train", samples_per_class, g)
    test, y_test = _read(base / "test", test_samples_per_class, g)
    counts = Counter(t for doc in train for t in doc)
    words = sorted(counts, key=lambda w: (-counts[w], w))[: vocab_size - 2]
    ids = {w: i + 2 for i, w in enumerate(words)}

    def encode(docs: list[list[str]]) -> torch.Tensor:
        x = torch.full((len(docs), max_len), PAD, dtype=torch.long)
        for i, doc in enumerate(docs):
            row = [ids.get(t, UNK) for t in doc[:max_len]]
            x[i, : len(row)] = torch.tensor(row, dtype=torch.long)
        return x

    return TokenSplit(
        encode(train),
        torch.tensor(y_train),
        encode(test),
        torch.tensor(y_test),
        num_classes=2,
        vocab=len(ids) + 2,
        pad_id=PAD,
        name="imdb",
    )
