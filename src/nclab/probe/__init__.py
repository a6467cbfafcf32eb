"""CollapseProbe: collapse metrics of named layers of any PyTorch model, streamed over a DataLoader.

Forward hooks on the measured modules feed one :class:`~nclab.ClassStats` per layer; a second pass
(needed by ``nc3_cos``, ``nc4``, ``ncc_acc`` and the default ``scatter="subspace"``) reads the
loader again. Hooks are removed and every module's train/eval mode restored afterwards, even on
error.

* **Taps** (:mod:`._taps`): a layer spec is a module's *output* (``"layer4"``) or its *input*
  (``"fc:input"``), optionally with a selector (``"encoder[0]"``, ``"bert[pooler_output]"``);
  :class:`Tap` also takes a callable. Tuples are read by their first tensor, dicts and
  ``ModelOutput`` by ``last_hidden_state``.
* **The classifier** is named (``classifier="fc"``), never inferred: its W and b apply to the tap
  on its input, ``"fc:input"``.
* **Pooling** (:mod:`._pooling`): ``reduce="flatten" | "avgpool" | "cls" | "last" | "mean"`` or a
  callable; ``tokens=True`` makes every token a sample.
* **Batches** (:mod:`._batches`): ``(x, y)``, ``(x, y, *rest)``, dicts (``model(**batch)``,
  ``labels``), or ``forward=`` / ``labels=`` / ``mask=`` for anything else.
* **Guards** (:mod:`._guards`): eval mode, warnings when the two passes may see different data,
  a memory limit on full D x D scatters.
* **Sessions** (:mod:`._session`): ``probe.session()`` measures on forward passes something else
  runs (a framework's validation loop), with the second pass from the features kept in memory.

>>> import torch
>>> from torch import nn
>>> model = nn.Sequential(nn.Linear(10, 16), nn.ReLU(), nn.Linear(16, 3))
>>> data = [(torch.randn(32, 10), torch.randint(0, 3, (32,))) for _ in range(4)]
>>> probe = CollapseProbe(model, layers=["1", "2:input", "2"], num_classes=3, classifier="2")
>>> result = probe.run(data)
>>> sorted(result.to_dict())
['1', '2', '2:input']
>>> "nc3" in result.to_dict()["2:input"], result.stats["2"].dim
(True, 3)
"""

from ._core import CollapseProbe, ProbeResult, Reduce
from ._pooling import REDUCTIONS
from ._session import ProbeSession
from ._taps import Layers, Tap

__all__ = ["REDUCTIONS", "CollapseProbe", "Layers", "ProbeResult", "ProbeSession", "Reduce", "Tap"]
