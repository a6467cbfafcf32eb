"""Collapse metrics inside the training frameworks researchers use (optional extras).

* :mod:`nclab.integrations.lightning`: ``CollapseCallback``, a Lightning ``Callback`` that measures
  named layers every n training epochs and logs ``collapse/<layer>/<metric>`` (``pip install
  nclab[lightning]``);
* :mod:`nclab.integrations.transformers`: ``CollapseCallback``, a Hugging Face ``TrainerCallback``
  that measures at every evaluation, with dict batches, pooling and token mode, into
  ``trainer.state.log_history`` (``pip install nclab[transformers]``);
* :mod:`nclab.integrations.torchmetrics`: ``CollapseMetric``, a torchmetrics ``Metric`` over
  features and labels with an exact distributed sync (``pip install nclab[torchmetrics]``).

Importing this package imports none of the frameworks; importing a submodule without its framework
raises an ``ImportError`` that names the extra to install.

Under ``torch.distributed`` every measurement is exact: each rank measures its own shard (a
DataLoader over a map-style dataset is re-sharded without the padding a ``DistributedSampler`` adds,
see :func:`nclab.integrations.shard_loader`), the statistics are merged across ranks with the Chan
correction of :meth:`nclab.ClassStats.all_reduce`, and every rank holds the numbers one process
would have computed over the whole data set.
"""

from ._common import real_rows, shard_loader
from ._measure import flat_metrics

__all__ = ["flat_metrics", "real_rows", "shard_loader"]
