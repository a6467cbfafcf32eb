"""Feature Collapse App. A.3/A.4: a GPT-2 classifier (class token) and a GPT-2 language model on the
concept-word sentences, whose word embeddings collapse by concept.

``nclab run fc-transformer --preset a3-uniform-quick`` trains a GPT-2 classifier (class token
appended, read by the last layer) or, with ``task="lm"``, a GPT-2 language model on the
concept/word sentences, and measures the collapse by concept of the word embeddings (before the
positional embeddings are added) and of the token states after each layer, beside the same
measures of the untrained network (:mod:`nclab.collapse.latent`). Needs ``transformers``
(``pip install nclab[transformers]``). One unit per seed; each keeps the word embeddings of its
untrained and trained network in ``figure_data.pt`` for the PCA figure.

* :mod:`.config`, :mod:`.presets` (the paper's settings, the quick ones, ``PAPER``),
  :mod:`.train` (the AdamW ``Trainer``, resumable; ``train``: one unit), :mod:`.measure`,
  :mod:`.figures`.
"""

from __future__ import annotations

from ..protocol import Experiment, fits
from .config import TransformerConfig, check
from .presets import PAPER, PAPER_SETTINGS, PRESETS, SMOKE

EXPERIMENT = Experiment(
    "fc-transformer",
    __doc__,
    TransformerConfig,
    PRESETS,
    "a3-uniform-quick",
    check,
    paper=PAPER_SETTINGS,
    # A.3's classifier is trained on the task (a language model has no train accuracy: not held)
    validity=(fits(),),
    smoke=SMOKE,
    docs="docs/feature-collapse.md",
)

__all__ = ["EXPERIMENT", "PAPER", "PRESETS", "TransformerConfig"]
