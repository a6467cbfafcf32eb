"""The deep-ln experiment's data: flattened real data sets for the ResNets, sentences of the
concept/word model (:mod:`nclab.data.sentences`) for the transformers."""

from __future__ import annotations

from ..common.data import load_real
from .config import DataCfg, DeepLNConfig


class Sentences:
    """A sentence data set (nclab.data.sentences) with the attributes the experiment reads."""

    def __init__(self, d: DataCfg, seed: int):
        from ...data.sentences import make_dataset, make_task

        task = make_task(d.nc, d.nw, d.sentence_length, d.num_classes, freq=d.freq, seed=seed)
        data = make_dataset(task, d.nspl, seed=seed)
        self.x_train, self.y_train = data.x_train, data.y_train
        self.x_test, self.y_test = data.x_test, data.y_test
        self.num_classes, self.vocab = d.num_classes, d.nw


def load_data(cfg: DeepLNConfig):
    """Sentences for a transformer block, a flattened real data set otherwise (refusing a block
    that does not fit the data)."""
    from ...errors import ConfigError

    d = cfg.data
    sequence_model = cfg.model.block in ("t11", "t12")
    if sequence_model != (d.name == "sentences"):
        raise ConfigError(
            f"model.block={cfg.model.block!r} needs "
            + ("data.name='sentences'" if sequence_model else "vector data (not 'sentences')")
            + f", got data.name={d.name!r}"
        )
    if sequence_model:
        return Sentences(d, cfg.seed)
    return load_real(d, cfg.seed, flatten=True)
