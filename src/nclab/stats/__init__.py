"""Streaming per-class statistics of features, exact in float64.

Modules: :mod:`._core` (the :class:`ClassStatsBase` container, first pass, merge, distributed
reduction, persistence), :mod:`._second_pass` (the decision pass and the projected scatter, one
function per form of batch) and :mod:`._in_memory` (``from_features``).

:class:`ClassStatsBase` is the state every collapse metric is computed from; the public
:class:`nclab.ClassStats` (:mod:`nclab.collapse`) is the same class with ``compute()``, the metrics
being a layer above: this package never imports :mod:`nclab.metrics`. It holds, in float64
whatever the input dtype and on the device of the features:

* ``counts`` (K,): samples per class,
* ``means`` (K, D): class means,
* ``class_ss`` (K,): per-class within-class sums of squares :math:`\\sum_{y_i=c}\\|h_i-\\mu_c\\|^2`,
* the pooled within-class scatter :math:`S_W=\\sum_i (h_i-\\mu_{y_i})(h_i-\\mu_{y_i})^\\top`
  (not divided by N), in one of three forms chosen by ``scatter``:

  - ``"subspace"`` (the default of ``ClassStats(...)``, ``from_features`` and the probe alike):
    only :math:`Q^\\top S_W Q` for an orthonormal basis Q of the span of the class means,
    accumulated by the second pass :meth:`decision_pass` (O(N D K) work). This is all that
    ``nc1`` needs, and far cheaper for wide features; it needs the data twice;
  - ``"full"``: the D x D matrix ``scatter``, accumulated by :meth:`update` in one pass
    (O(N D^2) work and D^2 memory). Needed when the data can be read only once (statistics
    gathered during training, a stream), for ``per_class_scatter`` and for code that reads
    ``stats.scatter`` itself;
  - ``"none"``: no scatter (``nc1`` unavailable; every other metric works);

* optionally ``class_scatter`` (K, D, D) with ``per_class_scatter=True``;
* the classifier ``weights`` (K, D) and ``bias`` (K) it was measured with, when given (see
  :meth:`ClassStatsBase.set_classifier`): ``collapse_metrics`` and ``ClassStats.compute()`` use
  them.

Batches are merged with Chan et al.'s pairwise update: a batch is centred on its own class means
(themselves computed relative to the first sample of each class), then combined with a rank-one
correction, never as E[xx^T] - mu mu^T. The statistics stay exact when features are nearly collapsed
(class means far from the origin, tiny within-class spread).

The second pass (:meth:`decision_pass`) runs over the same features once the means are final; it
accumulates what depends on each sample *and* the final means: ``nc3_cos``, ``nc4``, ``ncc_acc`` and,
in ``"subspace"`` mode, the projected scatter.

>>> import torch
>>> g = torch.Generator().manual_seed(0)
>>> x = torch.randn(100, 5, generator=g); y = torch.arange(100) % 4
>>> s = ClassStatsBase(4, 5, scatter="full")
>>> s.update(x[:50], y[:50]); s.update(x[50:], y[50:])
>>> t = ClassStatsBase(4, 5, scatter="full"); t.update(x, y)
>>> torch.allclose(s.scatter, t.scatter) and torch.allclose(s.means, t.means)
True
"""

from ._core import SCATTER_MODES, ClassStatsBase, ScatterMode
from ._in_memory import CANCEL
from ._second_pass import DecisionStats

__all__ = ["CANCEL", "SCATTER_MODES", "ClassStatsBase", "DecisionStats", "ScatterMode"]
