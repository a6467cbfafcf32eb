"""The structure of an ``fc-transformer`` summary (:func:`.train.summarize`): the score (accuracy
of the classifier, next-word loss of the language model), the collapse by concept of the word
embeddings beside the untrained network's, and of the token states after each layer."""

from __future__ import annotations

from typing import Literal

from ..common.schema import CollapseType, LatentBrief, LatentCollapse, PaperSetting
from ..schema import Num, Record, Summary


class Layer(LatentBrief):
    """The collapse by concept of the token states at the word positions after ``layer`` blocks
    (0: the embeddings with positions)."""

    layer: int


class Pca2(Record):
    """The word embeddings as a 2-D PCA figure shows them
    (:func:`nclab.collapse.latent.pca_plane_collapse`): the trace ratio by concept of their
    projections on the top two principal directions, and the variance those hold."""

    nc1_trace: Num
    variance_kept: Num


class Untrained(Record):
    """The same network as initialised: its embeddings' collapse, each layer's, its score."""

    emb_nc1_trace: Num
    emb_dir_nc1: Num
    emb_etf: Num
    embedding_pca2: Pca2 | None = None  # written since issue 49
    collapse_type: CollapseType
    layers: list[Layer]
    test_acc: Num = None  # classifier
    test_loss: Num = None  # language model


class DataEntropy(Record):
    """The data model's next-word baselines in nats per word (:func:`.measure.lm_entropies`)."""

    unigram: Num
    floor: Num


class FcTransformerSummary(Summary):
    test_acc: Num = None  # classifier (task "classify")
    train_acc: Num = None
    test_loss: Num = None  # language model (task "lm"): mean next-word cross-entropy
    train_loss: Num = None
    #: the word embeddings' kept measures (:func:`nclab.experiments.common.latent.brief`)
    emb_nc1_trace: Num
    emb_dir_nc1: Num
    emb_nc1: Num
    emb_etf: Num
    emb_offset: Num
    emb_equinorm: Num
    emb_norm_cv: Num
    emb_collapse_type: CollapseType
    embedding_metrics: LatentCollapse  # every measure of the word embeddings by concept
    #: the same in the 2-D PCA plane the paper's Fig. 8 shows (written since issue 49)
    embedding_pca2: Pca2 | None = None
    layers: list[Layer]
    collapse_type: CollapseType  # the word embeddings'
    untrained: Untrained
    nc1_vs_untrained: Num  # the word embeddings' nc1_trace / the untrained network's
    paper: PaperSetting
    task: Literal["classify", "lm"]
    steps: int
    epochs: int
    records: int  # logged records
    #: language model: the data's baselines and how far the test loss goes from the unigram
    #: entropy (0) to the entropy rate (1) (written since issue 26)
    data_entropy: DataEntropy | None = None
    lm_learned_fraction: Num = None


SUMMARY = FcTransformerSummary
