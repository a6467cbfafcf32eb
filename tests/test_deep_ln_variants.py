"""The deep-ln additions of issue 15: the pre-LN and patch transformers (identity blocks, features on
the sphere, padding masked), the embedding of depth L into L', the log-log slope fit, and the
depth-monotone run."""

import math

import pytest
import torch

from nclab.experiments import get_experiment, run_experiment
from nclab.experiments.deep_ln.data import patches
from nclab.experiments.deep_ln.measure import fit_loss
from nclab.experiments.deep_ln.summary import loglog_slope, slopes
from nclab.models.lnresnet import LNResNet, LNTransformer

EXP = get_experiment("deep-ln")


def _on_sphere(h: torch.Tensor, d: int) -> bool:
    return bool(h.sum(1).abs().max() < 1e-12 and (h.norm(dim=1) - math.sqrt(d)).abs().max() < 1e-12)


def _append_zero_block(net: LNTransformer) -> None:
    """One more block with W_V = 0 and zero MLP weights and biases (random W_Q, W_K)."""
    net.depth += 1
    w = net.width
    for mods in (net.q, net.k, net.v, net.mlp, *((net.second,) if net.block == "t12" else ())):
        extra = torch.nn.Linear(w, w, bias=mods is net.mlp).double()
        torch.nn.init.zeros_(extra.weight)
        if extra.bias is not None:
            torch.nn.init.zeros_(extra.bias)
        if mods is net.q or mods is net.k:
            torch.nn.init.normal_(extra.weight)
        mods.append(extra)


@pytest.mark.parametrize("tokens", ["words", "patches"])
def test_pre_ln_transformer_sphere_and_zero_block_identity(tokens):
    torch.manual_seed(0)
    if tokens == "words":
        net = LNTransformer(30, 5, 12, depth=4, num_classes=3, block="t11-pre").double()
        x = torch.randint(0, 30, (20, 5))
    else:
        net = LNTransformer(0, 4, 12, 4, 3, "t11-pre", token_dim=6).double()
        x = torch.randn(20, 4, 6, dtype=torch.float64)
    with torch.no_grad():
        h = net.features(x)
        assert _on_sphere(h, 12)  # the head reads LN(X_L): the GUFM's feasible set
        _append_zero_block(net)
        torch.testing.assert_close(net.features(x), h, rtol=1e-12, atol=1e-12)
    assert len(net.decayed_parameters()) == 4 * 4 + 1


def test_post_ln_transformer_on_patches_sphere_and_identity():
    torch.manual_seed(1)
    net = LNTransformer(0, 16, 8, 3, 10, "t11", token_dim=4).double()
    x = patches(torch.randn(5, 64, dtype=torch.float64), 2, "digits")
    assert x.shape == (5, 16, 4)
    with torch.no_grad():
        h = net.features(x)
        assert _on_sphere(h, 8)
        _append_zero_block(net)
        torch.testing.assert_close(net.features(x), h, rtol=1e-12, atol=1e-12)


def test_patches_are_the_image_blocks_in_row_order():
    img = torch.arange(2 * 4 * 4.0).view(1, 2, 4, 4)
    p = patches(img, 2, "cifar10")
    assert p.shape == (1, 4, 8)
    # the second patch (top right): channel 0 rows 0-1, columns 2-3, then channel 1
    assert p[0, 1].tolist() == [2.0, 3.0, 6.0, 7.0, 18.0, 19.0, 22.0, 23.0]


@pytest.mark.parametrize("block", ["t11", "t11-pre"])
def test_padding_is_masked(block):
    """Extra padding at the end changes nothing: padded keys get no attention weight."""
    torch.manual_seed(2)
    net = LNTransformer(10, 8, 8, 3, 2, block, pad_id=0).double()
    x = torch.tensor([[3, 4, 5, 0, 0, 0], [6, 7, 0, 0, 0, 0]])
    longer = torch.cat([x, torch.zeros(2, 2, dtype=torch.long)], 1)
    with torch.no_grad():
        torch.testing.assert_close(net.features(longer), net.features(x), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("block", ["rn1", "rn2"])
def test_embedding_keeps_the_objective_and_the_new_blocks_learn(block):
    torch.manual_seed(3)
    shallow = LNResNet(6, 10, depth=3, num_classes=4, block=block).double()
    deep = shallow.embed_into(7)
    x = torch.randn(40, 6, dtype=torch.float64)
    y = torch.arange(40) % 4
    onehot = torch.nn.functional.one_hot(y, 4).double()
    lam = 5e-3

    def objective(net):
        reg = sum((p * p).sum() for p in net.decayed_parameters())
        return fit_loss(net(x), y, onehot, "ce") + lam / 2 * reg

    a, b = objective(shallow), objective(deep)
    assert abs(float((b - a).detach())) <= 1e-13 * abs(float(a.detach()))
    b.backward()
    new = deep.blocks[-1].weight if block == "rn1" else deep.second[-1].weight
    assert float(new.grad.abs().max()) > 1e-8  # not a stationary point: depth can be used
    with pytest.raises(ValueError, match="depth"):
        shallow.embed_into(2)


def test_loglog_slope_and_slopes_over_seeds():
    depths = [2, 4, 8, 16]
    assert loglog_slope(depths, [3 * d**-0.5 for d in depths]) == pytest.approx(-0.5, rel=1e-12)
    assert loglog_slope([1, 1], [1.0, 2.0]) is None
    assert loglog_slope(depths, [0.0, 0.0, 0.0, 1.0]) is None  # one positive point only

    def row(d, a0, a1):
        return {"per_seed": [{"nc1": d**a0}, {"nc1": 2 * d**a1}]}

    s = slopes({d: row(d, -1.0, -0.5) for d in depths})["nc1"]
    assert s["per_seed"] == pytest.approx([-1.0, -0.5])
    assert s["mean"] == pytest.approx(-0.75) and s["std"] == pytest.approx(0.25)
    assert slopes({d: {"nc2_w": 0.5} for d in depths})["nc2_w"]["std"] == 0.0  # one seed


def test_monotone_run_embeds_exactly(tmp_path):
    sets = [
        "train.epochs=5",
        "monotone.epochs_after=5",
        "monotone.shallow=2",
        "monotone.deep=4",
        "model.width=16",
        "data.samples_per_class=10",
        "log_every=5",
    ]
    s = run_experiment(EXP, EXP.config("monotone-quick", sets), tmp_path / "m")
    assert s["mode"] == "monotone" and (s["shallow"], s["deep"]) == (2, 4)
    assert s["start_rel_diff_max"] <= 1e-9
    assert s["objective_embedded_at_embedding"] == pytest.approx(
        s["objective_shallow_at_embedding"], rel=1e-9
    )
    units = sorted(p.name for p in (tmp_path / "m" / "units").iterdir())
    assert units == ["continued_seed-0", "embedded_seed-0", "scratch_seed-0", "shallow_seed-0"]


def test_monotone_refuses_lambda_over_depth(tmp_path):
    from nclab.errors import ConfigError

    with pytest.raises(ConfigError, match="one λ"):  # when the config is resolved, before work
        EXP.config("monotone-quick", ["train.wd_over_depth=true"])
    cfg = EXP.config("monotone-quick")
    with pytest.raises(ConfigError, match="one λ"):  # and by the runner, for a config built so
        run_experiment(EXP, cfg.replace(train=cfg.train.replace(wd_over_depth=True)), tmp_path)
