"""Feature collapse in a depth-4 context-free grammar (Laurent, von Brecht & Bresson, ICLR 2024,
appendix A.5, Figs. 9–11).

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

from ..protocol import Experiment, Lazy
from .config import GrammarConfig, check
from .presets import PAPER, PRESETS

EXPERIMENT = Experiment(
    name="fc-grammar",
    description="Feature Collapse App. A.5: depth-4 context-free grammar and the matched "
    "MLP + LayerNorm network; representations collapse by latent symbol at each level",
    config_cls=GrammarConfig,
    presets=PRESETS,
    default_preset="a5-cfg-quick",
    check=check,
    train=Lazy(f"{__name__}.train:train"),
    figures=Lazy(f"{__name__}.figures:figures"),
)

__all__ = ["EXPERIMENT", "PAPER", "PRESETS", "GrammarConfig"]
