"""MLPs and ResNets with deep linear heads (Jacot, Súkeník, Wang & Mondelli, ICLR 2025): layer-wise
collapse over training, linear and nonlinear depth sweeps, the Theorem 3.1 certificate.

``nclab run linear-head --preset NAME``: L1 nonlinear layers followed by L2 linear layers, trained
with MSE (or CE) and weight decay, measured layer by layer with :class:`~nclab.CollapseProbe`
every ``measure_every`` epochs from the backbone's output on (NC1 ``nc1_trace``, NC2 ``nc2_kappa``,
NC3 ``nc3_cos`` of Z_{L-1} with W_L, balancedness of consecutive weights, negativity of nonlinear
pre-activations, class-mean Gram matrices of the head), and certified at the end with Theorem 3.1
(:func:`nclab.theory.bounds.jacot_certificate`). Sweeps over the linear depth L2 (Fig. 2) or the
nonlinear depth L1 (Fig. 3) train one network per (depth, weight decay or learning rate, seed).

Runs under ``torchrun --nproc_per_node P`` (gloo on CPU, nccl on GPU): each rank trains on its
shard of every batch (DDP), the probe all-reduces its statistics, every rank reports the same
numbers and rank 0 alone writes the files (the runner's :meth:`nclab.runs.RunDir.for_rank`). One
unit per network (``units/<label>``; a run of one network trains in the run directory itself);
finished units are reused on ``--resume``. See ``docs/linear-head.md``.

Modules: :mod:`.config` (settings), :mod:`.presets`, :mod:`.units` (the units of a run and the
checks of its config), :mod:`.data`, :mod:`.train` (one network, one unit), :mod:`.measure`
(layer-wise metrics, Theorem 3.1's inputs and certificate), :mod:`.summary`, :mod:`.figures`,
:mod:`.distributed` (torchrun).
"""

from __future__ import annotations

from ..protocol import Experiment, Validity
from .config import LinearHeadConfig
from .presets import PAPER_SETTINGS, PRESETS, SMOKE
from .units import check, units

EXPERIMENT = Experiment(
    "linear-head",
    __doc__,
    LinearHeadConfig,
    PRESETS,
    "fig1-mlp-quick",
    check,
    units=units,
    setup="train:setup",
    summarize="summary:summarize",
    paper=PAPER_SETTINGS,
    bookkeeping=("measure_every",),
    # the premise of §6's depth sweeps (Figs. 2 and 3): every network fits its training set.
    # Theorem 3.1, which they illustrate, assumes approximate interpolation, and §6 trains its
    # networks (on MNIST, which they fit) to collapse; a seed where one network does not fit is
    # outside the statements' setting (0.99: the project's "fits" level,
    # nclab.reproduce.checks.INTERPOLATES). Summaries without a sweep are not held to it.
    validity=(
        Validity(
            "sweep[*].train_acc",
            ">=",
            0.99,
            "every network of the sweep fits its training set (§6's premise; Theorem 3.1 "
            "assumes approximate interpolation): one that does not is outside the statement",
        ),
    ),
    smoke=SMOKE,
    docs="docs/linear-head.md",
)

__all__ = ["EXPERIMENT", "PRESETS", "LinearHeadConfig"]
