"""The structure of a ``resnet-ufm`` summary (:func:`.summary.summarize`): the two feature levels'
metrics at the start and the end of training, for the network (``net``) and the extended UFM
(``ufm``), and the comparisons the claims read (``derived``)."""

from __future__ import annotations

from typing import Literal

from ..schema import Num, Record, Summary

Frame = Literal["orthogonal frame", "simplex ETF"]


class FirstLevel(Record):
    """The metrics of the level one block before the penultimate (:data:`.measure.FEATURE_KEYS`;
    None where undefined)."""

    nc1: Num
    nc2_etf: Num
    nc2_of: Num


class SecondLevel(FirstLevel):
    """The penultimate level's metrics, with the classifier's (:data:`.measure.CLASSIFIER_KEYS`)
    and, in the network, its training accuracy."""

    nc2_w_etf: Num
    nc2_w_of: Num
    nc3: Num
    nc3_of: Num
    acc: Num = None  # the network's only


class Levels(Record):
    first: FirstLevel
    second: SecondLevel


class LevelNames(Record):
    """The network's layers the two levels are read at (``levels.first`` / ``levels.second``)."""

    first: str
    second: str


class Net(Record):
    model: str
    levels: LevelNames
    start: Levels
    end: Levels
    train_acc: Num
    test_acc: Num
    train_loss: Num
    epochs: int


class Ufm(Record):
    """The extended UFM at the network's K, loss and bias."""

    model: str
    start: Levels
    end: Levels
    objective: Num
    steps: int


class Derived(Record):
    """The comparisons of :mod:`.summary` (None where a metric is undefined)."""

    net_of_minus_etf: Num
    net_frame: Frame | None
    net_nc1_level_ratio: Num
    net_nc2_of_level_ratio: Num
    ufm_of_minus_etf: Num = None  # without a UFM run, no ufm_* and no same_frame
    ufm_frame: Frame | None = None
    ufm_nc1_level_ratio: Num = None
    ufm_nc2_of_level_ratio: Num = None
    same_frame: Num = None  # 1.0 when both end closer to the same frame, else 0.0


class ResnetUfmSummary(Summary):
    model: str
    K: int
    net: Net
    derived: Derived
    ufm: Ufm | None = None  # absent without a UFM run


class UfmRun(Record):
    """What marks the extended UFM of a unit trained (``<unit>/ufm/finished.json``, not a run
    summary), so that a resumed run trains the network only."""

    model: str
    steps: int


SUMMARY = ResnetUfmSummary
