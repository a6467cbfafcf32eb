"""The structure of an ``fc-grammar`` summary (:func:`.train.summarize`): accuracy, and per level of
the matched network the collapse of the segment representations by their latent symbol, beside the
untrained network's."""

from __future__ import annotations

from ..common.schema import LatentBrief, LatentCollapse, PaperSetting
from ..schema import Num, Summary


class Level(LatentCollapse):
    """One level (``levels[level=1]``: by concept, 2: by meta-concept, ...)."""

    level: int
    symbol: str  # what groups the representations: "concept", "meta-concept", ...
    untrained: LatentBrief
    nc1_vs_untrained: Num  # nc1_trace / the untrained network's


class FcGrammarSummary(Summary):
    test_acc: Num
    train_acc: Num
    untrained_test_acc: Num
    levels: list[Level]
    max_level_nc1_trace: Num
    max_level_dir_nc1: Num
    min_untrained_nc1_trace: Num
    max_nc1_vs_untrained: Num
    paper: PaperSetting
    steps: int
    records: int


SUMMARY = FcGrammarSummary
