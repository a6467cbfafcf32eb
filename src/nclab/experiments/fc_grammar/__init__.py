"""Feature Collapse App. A.5: a depth-4 context-free grammar and the matched MLP + LayerNorm network,
whose representations collapse by latent symbol at each level.

``nclab run fc-grammar --preset a5-cfg-quick`` samples sentences of a random probabilistic
context-free grammar (:mod:`nclab.data.grammar`), trains the network matched to it
(:class:`nclab.models.grammarnet.GrammarNet`: MLP + LayerNorm blocks on concatenated child vectors)
to predict the category, and measures at each hidden level the collapse of the segment
representations by the latent symbol that generated them (:mod:`nclab.collapse.latent`), beside the
untrained network's; PCA figures as Fig. 11, drawn from the level representations each unit (one
per seed) keeps in ``figure_data.pt``.

* :mod:`.config`, :mod:`.presets` (``PAPER``), :mod:`.train` (the AdamW ``Trainer``; ``train``:
  one unit), :mod:`.figures`.
"""

from __future__ import annotations

from ..protocol import Experiment, fits
from .config import GrammarConfig, check
from .presets import PAPER, PAPER_SETTINGS, PRESETS, SMOKE

EXPERIMENT = Experiment(
    "fc-grammar",
    __doc__,
    GrammarConfig,
    PRESETS,
    "a5-cfg-quick",
    check,
    paper=PAPER_SETTINGS,
    # A.5's representations are those of a network trained on the grammar task: one at chance
    # (the paper's optimiser on the CPU presets' budget) says nothing of them
    validity=(fits(),),
    smoke=SMOKE,
    docs="docs/feature-collapse.md",
)

__all__ = ["EXPERIMENT", "PAPER", "PRESETS", "GrammarConfig"]
