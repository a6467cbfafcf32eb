"""The structure of a ``demo`` summary (:func:`.train.train`): accuracies, loss, and the probe's
collapse metrics of every hidden layer and of the classifier's input at the last epoch."""

from __future__ import annotations

from ..schema import Num, Summary, keyed

#: the probed layers (:func:`.train.probe_layers`): each ReLU's output but the last, and the
#: classifier's input (the last ReLU's output)
LAYER = r"relu\d+|classifier input"


class DemoSummary(Summary):
    train_acc: Num  # the probe's accuracy of the classifier on the training set
    test_acc: Num
    train_loss: Num
    #: layer -> metric -> value, as :meth:`nclab.CollapseProbe.run` returns them (its metrics)
    layers: keyed(dict[str, Num], LAYER, "a probed layer")


SUMMARY = DemoSummary
