"""Deep regularised LayerNorm ResNets and transformers (Súkeník, Lampert & Mondelli 2025): NC and the
gap to the GUFM optimum against depth.

``nclab run deep-ln --preset NAME`` trains L-RN1 / L-RN2 networks (:mod:`nclab.models.lnresnet`) of
every depth L of ``depths`` on real data, minimising exactly

.. math:: \\mathcal{L}_{L}(\\theta) = \\mathrm{loss}(W_LX_L) + \\frac{\\lambda}{2}\\sum_{l=1}^{L}\\|W_l\\|_F^2

(cross-entropy averaged over the N samples, or MSE :math:`\\frac{1}{2N}\\|W_LX_L - Y\\|_F^2`: the
GUFM convention of :mod:`nclab.theory.gufm`), and measures the head's input X_L on the training
set: NC1, NC2 (ETF for CE, orthogonal frame for MSE), NC3, ‖w_k‖, and the objective beside the GUFM
optimum :math:`\\mathcal{L}^*_{\\rm GUFM}(K, d, \\lambda)`.

Since X_L lies on the LayerNorm sphere, :math:`\\mathcal{L}_L(\\theta) \\ge
\\mathcal{L}_{\\rm GUFM}(W_L, X_L) \\ge \\mathcal{L}^*_{\\rm GUFM}` for every network: a hard check.
The paper's main result (proved for L-RN1 in the appendix) says the optimum
:math:`\\mathcal{L}^*_L` decreases to :math:`\\mathcal{L}^*_{\\rm GUFM}` as L grows, so that
near-optimal deep networks are nearly collapsed; trained networks should show the gap and the NC
metrics falling with depth. ``wd_over_depth`` uses λ/L (the paper's setting
for two-layer blocks). One unit per (depth, seed) under ``units/``; finished units are skipped on
``--resume``. See ``docs/deep-ln.md``.

Modules: :mod:`.config` (settings), :mod:`.presets`, :mod:`.data` (vectors or sentences),
:mod:`.units` (the units of a run), :mod:`.train` (one network, one unit), :mod:`.measure` (the
objective, the GUFM optimum, collapse of X_L), :mod:`.summary`, :mod:`.figures`.
"""

from __future__ import annotations

from ..protocol import Experiment, Validity
from .config import DeepLNConfig
from .presets import PAPER_SETTINGS, PRESETS, SMOKE
from .units import check, units

EXPERIMENT = Experiment(
    "deep-ln",
    __doc__,
    DeepLNConfig,
    PRESETS,
    "rn1-ce-quick",
    check,
    units=units,
    setup="train:setup",
    summarize="summary:summarize",
    paper=PAPER_SETTINGS,
    # Súkeník et al. state collapse of the global optima of networks that fit their data: a depth
    # that never leaves chance accuracy says nothing of them (0.99: the project's "fits" level,
    # nclab.reproduce.checks.INTERPOLATES). A sweep's seed is valid when every depth fits.
    validity=(
        Validity(
            "train_acc_min",
            ">=",
            0.99,
            "every depth of the seed fits its training set: a network that did not train says "
            "nothing of the collapse of a trained one",
        ),
    ),
    smoke=SMOKE,
    docs="docs/deep-ln.md",
)

__all__ = ["EXPERIMENT", "PRESETS", "DeepLNConfig"]
