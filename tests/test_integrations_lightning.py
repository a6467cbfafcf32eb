"""nclab.integrations.lightning.CollapseCallback with the real Lightning: measured in the validation
loop (no forward pass of its own, logged beside val_loss, usable by EarlyStopping and
ModelCheckpoint, the probe's numbers), on a loader of its own, early errors, and DDP (2 gloo
processes) equal to one process."""

import importlib
import sys
import warnings

import lightning as L
import pytest
import torch
from lightning.pytorch.callbacks import EarlyStopping, ModelCheckpoint
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
        self.forwards = 0

    def forward(self, x):
        self.forwards += 1
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
    kw.setdefault("callbacks", [callback])
    return L.Trainer(**kw)


def _fit(callback, seed=0, **kw):
    torch.manual_seed(seed)
    model = Net()
    model.frozen.eval()
    ds = _dataset()
    train = DataLoader(ds, batch_size=16, shuffle=True)
    trainer = _trainer(callback, **kw)
    trainer.fit(model, train, DataLoader(ds, batch_size=16))
    return model, trainer


def _probe_reference(model, loader=None, **kw):
    loader = loader or DataLoader(_dataset(), batch_size=16)
    return CollapseProbe(model, LAYERS, 3, classifier="fc").run(loader, progress=False, **kw)


def _largest_gap(values: dict, ref) -> float:
    """The largest relative difference between logged values and the probe's (every key)."""
    gaps = []
    for layer, metrics in ref.to_dict().items():
        for key, value in metrics.items():
            got = values[f"collapse/{layer}/{key}"]
            gaps.append(abs(got - value) / max(abs(value), 1e-300))
    return max(gaps)


def test_fit_logs_collapse_in_the_validation_loop_beside_val_loss():
    logger = Memory()
    cb = CollapseCallback(LAYERS, num_classes=3, classifier="fc")  # default: the val loop
    model, trainer = _fit(cb, logger=logger)
    assert [h["epoch"] for h in cb.history] == [0, 1]
    # logged with the validation metrics: the same row as val_loss, at the logger's step
    val_rows = [(step, m) for step, m in logger.rows if "val_loss" in m]
    assert len(val_rows) == 2
    for (step, row), h in zip(val_rows, cb.history, strict=True):
        assert "collapse/fc:input/nc1" in row and step == h["step"]
        assert row["collapse/fc:input/nc1"] == pytest.approx(h["collapse/fc:input/nc1"], rel=1e-6)
    assert {"collapse/body/nc1", "collapse/fc:input/nc3", "collapse/fc:input/nc4"} <= set(
        val_rows[-1][1]
    )
    assert cb.history[0]["collapse/body/nc1"] != cb.history[1]["collapse/body/nc1"]  # it trained
    # the last measurement is the probe's on the final model over the validation set, exactly
    assert _largest_gap(cb.history[-1], _probe_reference(model)) < 1e-12
    assert float(trainer.callback_metrics["collapse/fc:input/nc1"]) == pytest.approx(
        cb.history[-1]["collapse/fc:input/nc1"], rel=1e-6
    )
    # the validation loop ran in eval mode; training saw its own modes
    assert set(model.modes_seen) == {(True, True, False)}


def test_no_forward_pass_of_its_own():
    """The callback adds no forward pass to a fit: the validation loop's are measured."""
    ds = _dataset()
    counts = []
    for callbacks in ([], [CollapseCallback(LAYERS, num_classes=3, classifier="fc")]):
        torch.manual_seed(0)
        model = Net()
        trainer = L.Trainer(
            max_epochs=2,
            callbacks=callbacks,
            logger=False,
            enable_checkpointing=False,
            enable_progress_bar=False,
            enable_model_summary=False,
            num_sanity_val_steps=2,  # the sanity check is not measured either
        )
        trainer.fit(model, DataLoader(ds, batch_size=16), DataLoader(ds, batch_size=16))
        counts.append(model.forwards)
    assert counts[0] == counts[1]
    assert len(callbacks[0].history) == 2


def test_early_stopping_and_checkpoints_monitor_a_collapse_metric(tmp_path):
    key = "collapse/fc:input/nc1"
    stop = EarlyStopping(monitor=key, mode="min", patience=0, check_on_train_epoch_end=False)
    best = ModelCheckpoint(dirpath=tmp_path, monitor=key, mode="min")
    cb = CollapseCallback("fc:input", num_classes=3, classifier="fc")
    torch.manual_seed(0)
    trainer = L.Trainer(
        max_epochs=6,
        callbacks=[stop, best, cb],  # the stopper before the callback: the values are there
        logger=False,
        enable_progress_bar=False,
        enable_model_summary=False,
        num_sanity_val_steps=0,
    )
    train = DataLoader(_dataset(), batch_size=16, shuffle=True)
    trainer.fit(Net(lr=2.0), train, DataLoader(_dataset(), batch_size=16))
    assert float(stop.best_score) == pytest.approx(min(h[key] for h in cb.history), rel=1e-6)
    assert float(best.best_model_score) == pytest.approx(float(stop.best_score))
    assert best.best_model_path


def test_start_epoch_waits_and_early_stopping_waits_for_the_key():
    """NC1 often rises in the first epochs: start_epoch leaves them out (nothing measured, nothing
    logged), and EarlyStopping(strict=False) waits for the key instead of failing."""
    key = "collapse/fc:input/nc1"
    stop = EarlyStopping(monitor=key, mode="min", patience=5, strict=False)
    cb = CollapseCallback("fc:input", num_classes=3, classifier="fc", start_epoch=2)
    _, trainer = _fit(cb, max_epochs=4, logger=False, callbacks=[stop, cb])
    assert [h["epoch"] for h in cb.history] == [2, 3]
    assert float(stop.best_score) == pytest.approx(min(h[key] for h in cb.history), rel=1e-6)
    late = CollapseCallback(
        "fc:input", num_classes=3, loader=DataLoader(_dataset(), batch_size=16), start_epoch=1,
        every_n_epochs=2,
    )  # fmt: skip
    _fit(late, max_epochs=4, logger=False)
    assert [h["epoch"] for h in late.history] == [1, 3]
    for bad in (-1, 1.5, True):
        with pytest.raises(DataError, match="start_epoch must be an integer >= 0"):
            CollapseCallback("fc:input", num_classes=3, start_epoch=bad)


def test_history_steps_are_the_loggers_steps():
    """With gradient accumulation the logger's step is not trainer.global_step."""
    logger = Memory()
    cb = CollapseCallback("fc:input", num_classes=3, classifier="fc")
    _fit(cb, logger=logger, accumulate_grad_batches=2)
    steps = [step for step, m in logger.rows if "collapse/fc:input/nc1" in m]
    assert steps == [h["step"] for h in cb.history] and len(steps) == 2


def test_validate_alone_is_measured_too():
    cb = CollapseCallback(LAYERS, num_classes=3, classifier="fc")
    torch.manual_seed(0)
    model = Net()
    out = _trainer(cb, logger=False).validate(model, DataLoader(_dataset(), batch_size=16))
    assert out[0]["collapse/fc:input/nc1"] == pytest.approx(
        _probe_reference(model).to_dict()["fc:input"]["nc1"], rel=1e-6
    )


def test_beyond_the_cache_budget_one_pass_with_a_warning():
    """The pooled features outgrow cache_budget: nc4/ncc_acc are left out, nc1 comes from the full
    scatter (the numbers of one pass), said once."""
    cb = CollapseCallback(LAYERS, num_classes=3, classifier="fc", cache_budget=3000)
    with pytest.warns(UserWarning, match="outgrew cache_budget") as seen:
        model, _ = _fit(cb, logger=False)
    assert sum("outgrew cache_budget" in str(w.message) for w in seen) == 1
    ref = _probe_reference(model, second_pass=False)
    assert "collapse/fc:input/nc4" not in cb.history[-1]
    assert _largest_gap(cb.history[-1], ref) < 1e-12


def test_layers_by_name_and_metric_names_any_case():
    cb = CollapseCallback(
        {"features": "body", "penultimate": "fc:input"},
        num_classes=3,
        classifier="fc",
        metrics=["NC1", "nc4"],
    )
    _fit(cb, logger=False, max_epochs=1)
    assert sorted(k for k in cb.history[0] if "/" in k) == [
        "collapse/features/nc1",
        "collapse/penultimate/nc1",
        "collapse/penultimate/nc4",
    ]


def test_metrics_are_checked_when_the_callback_is_built():
    with pytest.raises(DataError, match=r"unknown metric 'nc9'.*nc1, nc1_trace, cdnv"):
        CollapseCallback("fc:input", num_classes=3, metrics=["nc1", "nc9"])
    with pytest.raises(DataError, match="did you mean 'ncc_acc'"):
        CollapseCallback("fc:input", num_classes=3, metrics=["ncc_accc"])
    with pytest.warns(UserWarning, match="nc3 needs the classifier") as seen:
        cb = CollapseCallback("fc:input", num_classes=3, metrics=["nc1", "nc3"])
    assert len(seen) == 1
    with warnings.catch_warnings(record=True) as later:
        warnings.simplefilter("always")
        _fit(cb, logger=False, max_epochs=2)
    assert not [w for w in later if "metrics=" in str(w.message)]  # said once, when built
    assert sorted(k for k in cb.history[0] if "/" in k) == ["collapse/fc:input/nc1"]


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


def test_a_loader_of_its_own_leaves_the_training_randomness_alone():
    """Each pass over a DataLoader draws a base seed from torch's generator: unless the callback
    restores it, the shuffling of every later epoch (and so the trained model) would change."""
    ds = _dataset(seed=2)
    plain = _fit(CollapseCallback("fc:input", 3, every_n_epochs=99), max_epochs=3, logger=False)[0]
    cb = CollapseCallback("fc:input", 3, loader=DataLoader(ds, batch_size=10))
    measured = _fit(cb, max_epochs=3, logger=False)[0]
    assert len(cb.history) == 3
    for a, b in zip(plain.parameters(), measured.parameters(), strict=True):
        assert torch.equal(a, b)


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


def test_no_validation_loader_is_an_error_at_fit_start():
    cb = CollapseCallback("fc:input", num_classes=3)
    model = Net()
    with pytest.raises(DataError, match="no val loader.*loader=DataLoader"):
        _trainer(cb, logger=False, max_epochs=1).fit(model, DataLoader(_dataset(), batch_size=16))
    assert model.modes_seen == []  # before the first training step
    train, val = DataLoader(_dataset(), batch_size=16), DataLoader(_dataset(), batch_size=16)
    with pytest.raises(DataError, match="limit_val_batches=0"):
        _trainer(cb, logger=False, limit_val_batches=0).fit(model, train, val)
    assert model.modes_seen == []


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
@pytest.mark.parametrize("route", ["loop", "loader"])
def test_ddp_two_processes_equal_one_process(tmp_path, route):
    """ddp_spawn with 2 gloo CPU processes: each rank measures its shard of the 61 validation
    samples (31 + 30: the sample a DistributedSampler pads with is left out in the loop, a loader of
    its own is re-sharded), the statistics are merged exactly, every rank holds the numbers of one
    process on the final weights (which Lightning copies back from rank 0)."""
    own = {"loader": DataLoader(_dataset())} if route == "loader" else {}
    cb = SavingCallback(str(tmp_path), LAYERS, 3, classifier="fc", **own)
    torch.manual_seed(0)
    model = Net()
    model.frozen.eval()
    trainer = _trainer(cb, strategy="ddp_spawn", devices=2, logger=False)
    # one sample a batch on both sides: float32 features do not depend on how batches are cut
    trainer.fit(model, DataLoader(_dataset(), batch_size=16), DataLoader(_dataset()))
    ref = _probe_reference(model, DataLoader(_dataset()))
    for rank in range(2):
        history, n = torch.load(tmp_path / f"rank{rank}.pt")
        assert n == 61 and [h["epoch"] for h in history] == [0, 1]
        assert _largest_gap(history[-1], ref) < 1e-9, rank
    logged = float(trainer.callback_metrics["collapse/fc:input/nc1"])  # rank 0's, sent back
    assert logged == pytest.approx(ref.to_dict()["fc:input"]["nc1"], rel=1e-6)
