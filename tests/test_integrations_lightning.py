"""nclab.integrations.lightning.CollapseCallback with the real Lightning: per-epoch logging, the
model's modes untouched, early errors, and DDP (2 gloo processes) equal to one process."""

import importlib
import sys

import lightning as L
import pytest
import torch
from lightning.pytorch.loggers import Logger
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

from nclab import CollapseProbe
from nclab.errors import DataError
from nclab.integrations.lightning import CollapseCallback

LAYERS = ["body", "fc:input", "fc"]


class Net(L.LightningModule):
    def __init__(self, lr: float = 0.2):
        super().__init__()
        self.lr = lr
        self.body = nn.Sequential(nn.Linear(8, 16), nn.BatchNorm1d(16), nn.ReLU())
        self.frozen = nn.Dropout(0.5)  # kept in eval mode by the user: must stay so
        self.fc = nn.Linear(16, 3)
        self.modes_seen: list[tuple[bool, bool, bool]] = []

    def forward(self, x):
        return self.fc(self.frozen(self.body(x)))

    def training_step(self, batch, i):
        self.modes_seen.append((self.training, self.body.training, self.frozen.training))
        return nn.functional.cross_entropy(self(batch[0]), batch[1])

    def validation_step(self, batch, i):
        self.log("val_loss", nn.functional.cross_entropy(self(batch[0]), batch[1]))

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=self.lr)


class Memory(Logger):
    """A logger that keeps what it is given."""

    def __init__(self):
        super().__init__()
        self.rows: list[tuple[int, dict]] = []

    name, version = "memory", 0

    def log_metrics(self, metrics, step=None):
        self.rows.append((step, dict(metrics)))

    def log_hyperparams(self, params, *args, **kwargs):
        pass


def _dataset(n=61, seed=0):
    g = torch.Generator().manual_seed(seed)
    y = torch.arange(n) % 3
    x = 2 * torch.randn(3, 8, generator=g)[y] + torch.randn(n, 8, generator=g)
    return TensorDataset(x, y)


def _trainer(callback, **kw):
    kw = {
        "max_epochs": 2,
        "accelerator": "cpu",
        "enable_checkpointing": False,
        "enable_progress_bar": False,
        "enable_model_summary": False,
        "num_sanity_val_steps": 0,
        **kw,
    }
    return L.Trainer(callbacks=[callback], **kw)


def _fit(callback, seed=0, **kw):
    torch.manual_seed(seed)
    model = Net()
    model.frozen.eval()
    ds = _dataset()
    train = DataLoader(ds, batch_size=16, shuffle=True)
    trainer = _trainer(callback, **kw)
    trainer.fit(model, train, DataLoader(ds, batch_size=16))
    return model, trainer


def test_fit_logs_collapse_every_epoch_through_the_logger():
    logger = Memory()
    cb = CollapseCallback(LAYERS, num_classes=3, classifier="fc")  # default: the val loader
    model, trainer = _fit(cb, logger=logger)
    assert [h["epoch"] for h in cb.history] == [0, 1]
    logged = [m for _, m in logger.rows if "collapse/fc:input/nc1" in m]
    assert [m["epoch"] for m in logged] == [0, 1]
    assert {"collapse/body/nc1", "collapse/fc:input/nc3", "collapse/fc:input/nc4"} <= set(
        logged[-1]
    )
    assert logged[0]["collapse/body/nc1"] != logged[1]["collapse/body/nc1"]  # it trained
    # the last measurement is the probe's on the final model over the validation set
    ref = CollapseProbe(model, LAYERS, 3, classifier="fc").run(
        DataLoader(_dataset(), batch_size=16), progress=False
    )
    for layer, values in ref.to_dict().items():
        for key, value in values.items():
            got = cb.history[-1][f"collapse/{layer}/{key}"]
            assert got == pytest.approx(value, rel=1e-9, abs=1e-12), (layer, key)
    assert float(trainer.callback_metrics["collapse/fc:input/nc1"]) == pytest.approx(
        cb.history[-1]["collapse/fc:input/nc1"], rel=1e-6
    )
    # the probe ran in eval mode and gave every module its mode back: training saw no change
    assert set(model.modes_seen) == {(True, True, False)}


def test_the_history_goes_into_checkpoints(tmp_path):
    cb = CollapseCallback("fc:input", num_classes=3, loader=DataLoader(_dataset(), batch_size=16))
    model, trainer = _fit(cb, logger=False, max_epochs=1)
    trainer.save_checkpoint(tmp_path / "last.ckpt")
    resumed = CollapseCallback("fc:input", num_classes=3)
    ckpt = torch.load(tmp_path / "last.ckpt", weights_only=False)
    (state,) = [v for k, v in ckpt["callbacks"].items() if "CollapseCallback" in k]
    resumed.load_state_dict(state)
    assert resumed.history == cb.history and len(cb.history) == 1


def test_every_n_epochs_a_given_loader_and_chosen_metrics():
    ds = _dataset(seed=1)
    cb = CollapseCallback(
        "fc:input",
        num_classes=3,
        loader=DataLoader(ds, batch_size=10, shuffle=True, drop_last=True),  # read in order
        every_n_epochs=2,
        metrics=["nc1", "nc2_etf"],
    )
    _fit(cb, max_epochs=3, logger=False)
    assert [h["epoch"] for h in cb.history] == [1]
    assert sorted(k for k in cb.history[0] if "/" in k) == [
        "collapse/fc:input/nc1",
        "collapse/fc:input/nc2_etf",
    ]
    assert cb.result.stats["fc:input"].num_samples == len(ds)  # every sample, none dropped


def test_a_wrong_layer_fails_before_training():
    cb = CollapseCallback(["bdy"], num_classes=3)
    model = Net()
    with pytest.raises(DataError, match="did you mean"):
        _trainer(cb, logger=False).fit(model, DataLoader(_dataset(), batch_size=16))
    assert model.modes_seen == []
    with pytest.raises(DataError, match="every_n_epochs"):
        CollapseCallback("fc", num_classes=3, every_n_epochs=0)
    with pytest.raises(DataError, match="'val' or 'train'"):
        CollapseCallback("fc", num_classes=3, loader="test")


def test_no_validation_loader_is_a_clear_error():
    cb = CollapseCallback("fc:input", num_classes=3)
    with pytest.raises(DataError, match="no val loader"):
        _trainer(cb, logger=False, max_epochs=1).fit(Net(), DataLoader(_dataset(), batch_size=16))


def test_missing_lightning_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "lightning.pytorch", None)
    monkeypatch.delitem(sys.modules, "nclab.integrations.lightning")
    with pytest.raises(ImportError, match=r"pip install nclab\[lightning\]"):
        importlib.import_module("nclab.integrations.lightning")


class SavingCallback(CollapseCallback):
    """Writes each rank's history and sample count to a file (spawned ranks share no memory)."""

    def __init__(self, out_dir, *args, **kw):
        super().__init__(*args, **kw)
        self.out_dir = out_dir

    def on_train_end(self, trainer, pl_module):
        n = self.result.stats["body"].num_samples
        torch.save((self.history, n), f"{self.out_dir}/rank{trainer.global_rank}.pt")


@pytest.mark.slow
def test_ddp_two_processes_equal_one_process(tmp_path):
    """ddp_spawn with 2 gloo CPU processes: each rank measures its shard of the 61 validation
    samples (31 + 30: no padding), the statistics are merged exactly, every rank holds the numbers
    of one process on the final weights (which Lightning copies back from rank 0)."""
    cb = SavingCallback(str(tmp_path), LAYERS, 3, classifier="fc", loader=DataLoader(_dataset()))
    model, trainer = _fit(cb, strategy="ddp_spawn", devices=2, logger=False)
    # one sample a batch on both sides: float32 features do not depend on how batches are cut
    ref = CollapseProbe(model, LAYERS, 3, classifier="fc").run(
        DataLoader(_dataset()), progress=False
    )
    for rank in range(2):
        history, n = torch.load(tmp_path / f"rank{rank}.pt")
        assert n == 61 and [h["epoch"] for h in history] == [0, 1]
        for layer, values in ref.to_dict().items():
            for key, value in values.items():
                got = history[-1][f"collapse/{layer}/{key}"]
                assert got == pytest.approx(value, rel=1e-9, abs=1e-12), (rank, layer, key)
    logged = float(trainer.callback_metrics["collapse/fc:input/nc1"])  # rank 0's, sent back
    assert logged == pytest.approx(ref.to_dict()["fc:input"]["nc1"], rel=1e-6)
