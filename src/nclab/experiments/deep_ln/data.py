"""The deep-ln experiment's data: flattened real data sets for the ResNets; token sequences for the
transformers: sentences of the concept/word model (:mod:`nclab.data.sentences`), the synthetic
sentiment task (:mod:`nclab.data.sentiment`, the IMDB stand-in), IMDB reviews from the user's
``aclImdb`` folder (:mod:`nclab.data.imdb`), or images cut into p x p patches (``model.patch``)."""

from __future__ import annotations

import os

import torch

from ...data.imdb import load_aclimdb
from ...data.sentences import make_dataset, make_task
from ...data.sentiment import make_sentiment
from ...errors import ConfigError
from ..common.data import load_real
from .config import DataCfg, DeepLNConfig

TEXT = ("sentences", "sentiment", "imdb")
TRANSFORMERS = ("t11", "t12", "t11-pre")


class Sentences:
    """A sentence data set (nclab.data.sentences) with the attributes the experiment reads."""

    def __init__(self, d: DataCfg, seed: int):

        task = make_task(d.nc, d.nw, d.sentence_length, d.num_classes, freq=d.freq, seed=seed)
        data = make_dataset(task, d.nspl, seed=seed)
        self.x_train, self.y_train = data.x_train, data.y_train
        self.x_test, self.y_test = data.x_test, data.y_test
        self.num_classes, self.vocab, self.pad_id = d.num_classes, d.nw, None


def patches(x: torch.Tensor, p: int, name: str) -> torch.Tensor:
    """Images N x C x H x W (digits: N x 64, read as 1 x 8 x 8) as N x T x (C p p) patch tokens,
    row by row (the ViT's order).

    >>> patches(torch.arange(64.).view(1, 64), 4, "digits").shape
    torch.Size([1, 4, 16])
    """

    if x.dim() == 2 and name == "digits":
        x = x.view(-1, 1, 8, 8)
    if x.dim() != 4:
        raise ConfigError(f"model.patch needs image data (N x C x H x W), got {name!r}")
    n, c, h, w = x.shape
    if p < 1 or h % p or w % p:
        raise ConfigError(f"model.patch = {p} must divide the image size {h} x {w}")
    t = x.unfold(2, p, p).unfold(3, p, p)  # n, c, h/p, w/p, p, p
    return t.permute(0, 2, 3, 1, 4, 5).reshape(n, (h // p) * (w // p), c * p * p)


def load_data(cfg: DeepLNConfig):
    """Tokens for a transformer block, a flattened real data set otherwise (refusing a block that
    does not fit the data)."""

    d, m = cfg.data, cfg.model
    sequence_model = m.block in TRANSFORMERS
    tokens = d.name in TEXT or m.patch > 0
    if sequence_model != tokens:
        raise ConfigError(
            f"model.block={m.block!r} needs "
            + (
                "token data (data.name in 'sentences', 'sentiment', 'imdb', or model.patch > 0)"
                if sequence_model
                else "vector data (not 'sentences', 'sentiment' or 'imdb', model.patch = 0)"
            )
            + f", got data.name={d.name!r}, model.patch={m.patch}"
        )
    if d.name == "sentences":
        return Sentences(d, cfg.seed)
    if d.name == "sentiment":
        return make_sentiment(
            d.nspl,
            d.nspl_test,
            vocab=d.text_vocab,
            seq_len=d.text_len,
            polar_rate=d.polar_rate,
            agreement=d.agreement,
            seed=cfg.seed,
        )
    if d.name == "imdb":
        return load_aclimdb(
            d.data_dir or os.environ.get("NCLAB_DATA_DIR"),
            vocab_size=d.text_vocab,
            max_len=d.text_len,
            samples_per_class=d.samples_per_class,
            test_samples_per_class=d.test_samples_per_class,
            seed=cfg.seed,
        )
    if m.patch > 0:
        split = load_real(d, cfg.seed, flatten=False)
        split.x_train = patches(split.x_train, m.patch, d.name)
        split.x_test = patches(split.x_test, m.patch, d.name)
        return split
    return load_real(d, cfg.seed, flatten=True)
