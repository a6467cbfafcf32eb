"""Feature Collapse appendix A.3-A.5: the grammar generator, the grammar-matched network, the GPT-2
networks, the two experiments end to end (tiny sizes) and their resume."""

import json
from pathlib import Path

import pytest
import torch

from nclab.data.grammar import make_grammar
from nclab.errors import ConfigError
from nclab.experiments import get_experiment, resume_run, run_experiment
from nclab.experiments.fc_grammar import train as grammar_train
from nclab.experiments.fc_transformer import train as tf_train
from nclab.experiments.runner import redraw
from nclab.models.grammarnet import GrammarNet
from nclab.runs import RunDir

GEN = torch.Generator().manual_seed(0)


# --- the grammar ----------------------------------------------------------------------------------
def test_paper_grammar_lengths_and_only_allowed_sequences():
    """K=100, depth 4, 5 choices of 8 children: 4096 words; every segment at every level is one of
    the productions of the symbol above it, and the top one of its class's."""
    g = make_grammar(K=100, symbols=(10, 10, 10, 10), choices=5, children=8, seed=0)
    words, latents, y = g.sample(20, GEN)
    assert g.length == 4096 and words.shape == (20, 4096)
    assert [t.shape[1] for t in latents] == [512, 64, 8]
    assert g.rules[4].shape == (100, 5, 8) and g.rules[1].shape == (10, 5, 8)
    chain = [words, *latents, y[:, None]]
    for level in range(1, 5):  # latent labels match: level j's symbols generated level j-1's
        assert bool(g.generated_by(chain[level - 1], chain[level], level).all()), level
    assert int(words.max()) < 10 and int(latents[0].max()) < 10


def test_productions_are_distinct_and_a_wrong_parent_is_detected():
    g = make_grammar(K=4, symbols=(3, 3), choices=2, children=2, seed=1)  # 3^2 = 9 sequences
    for rules in g.rules[1:]:
        flat = rules.reshape(-1, rules.shape[-1])
        assert torch.unique(flat, dim=0).shape[0] == flat.shape[0]
    words, latents, y = g.sample(50, GEN)
    wrong = (latents[0] + 1) % 3
    assert not bool(g.generated_by(words, wrong, 1).all())
    with pytest.raises(ConfigError, match="distinct productions"):
        make_grammar(K=6, symbols=(2, 2), choices=3, children=1, seed=0)
    with pytest.raises(ConfigError):
        make_grammar(K=1, symbols=(3,), seed=0)


def test_sample_is_reproducible_and_classes_can_be_given():
    g = make_grammar(K=5, symbols=(4, 4), choices=2, children=3, seed=0)
    a = g.sample(7, torch.Generator().manual_seed(3))
    b = g.sample(7, torch.Generator().manual_seed(3))
    assert torch.equal(a[0], b[0]) and torch.equal(a[2], b[2])
    _, _, y = g.sample(4, GEN, labels=torch.tensor([0, 4, 4, 1]))
    assert y.tolist() == [0, 4, 4, 1]


def test_grammar_net_shares_blocks_across_positions():
    net = GrammarNet(vocab=5, K=3, depth=2, children=2, widths=(4, 6), hidden=8)
    x = torch.randint(0, 5, (3, 4), generator=GEN)
    (level1,) = net.levels(x)
    swapped = x[:, [2, 3, 0, 1]]  # the two level-1 segments exchanged
    (level1s,) = net.levels(swapped)
    torch.testing.assert_close(level1[:, 0], level1s[:, 1])  # same block at every position
    assert len(net.blocks) == 2 and isinstance(net.blocks[0][-1], torch.nn.LayerNorm)
    with pytest.raises(ConfigError, match="word ids"):
        net(torch.zeros(2, 5, dtype=torch.long))


# --- GPT-2 ----------------------------------------------------------------------------------------
def test_gpt2_classifier_and_language_model_tiny(capfd):
    pytest.importorskip("transformers")
    from nclab.models.gpt2 import GPT2Classifier, gpt2_language_model, word_embeddings

    a = GPT2Classifier(12, 7, d=8, n_layer=1, n_head=2, num_classes=4, seed=5)
    b = GPT2Classifier(12, 7, d=8, n_layer=1, n_head=2, num_classes=4, seed=5)
    ids = torch.randint(0, 12, (3, 7), generator=GEN)
    torch.testing.assert_close(a(ids), b(ids))  # the seed fixes the initialisation
    logits, hidden = a(ids, output_hidden_states=True)
    assert logits.shape == (3, 4) and len(hidden) == 2 and hidden[0].shape == (3, 7, 8)
    assert word_embeddings(a, 11).shape == (11, 8)
    lm = gpt2_language_model(12, 7, d=8, n_layer=1, n_head=2, seed=0)
    assert lm.lm_head.weight.data_ptr() == lm.transformer.wte.weight.data_ptr()  # tied, as GPT-2
    loss = lm(input_ids=ids, labels=ids).loss
    logits = lm(input_ids=ids).logits  # the loss is next-token cross-entropy, without a warning
    ce = torch.nn.functional.cross_entropy(logits[:, :-1].reshape(-1, 12), ids[:, 1:].reshape(-1))
    torch.testing.assert_close(loss, ce)
    assert "loss_type" not in capfd.readouterr().err
    with pytest.raises(ConfigError, match="multiple of n_head"):
        GPT2Classifier(12, 7, d=9, n_layer=1, n_head=2, num_classes=4)


TINY_TF = {
    "data.nw": 30,
    "data.L": 5,
    "data.K": 12,
    "data.nspl": 10,
    "data.n_test": 3,
    "model.d": 16,
    "model.n_head": 2,
    "model.n_layer": 1,
    "train.epochs": 2,
    "train.batch_size": 20,
    "log_every": 3,
    "checkpoint_every": 3,
    "measure_sentences": 20,
    "threads": 1,
}


@pytest.mark.slow  # the default run covers both presets through test_claim_checks' short runs
@pytest.mark.parametrize("preset", ["a3-uniform-quick", "a4-lm-quick"])
def test_transformer_experiment_tiny(tmp_path, preset):
    pytest.importorskip("transformers")
    exp = get_experiment("fc-transformer")
    s = run_experiment(exp, exp.config(preset, TINY_TF), tmp_path / "run", preset=preset)
    key = "test_acc" if preset.startswith("a3") else "test_loss"
    assert key in s and key in s["untrained"]
    emb, layers = s["embedding_metrics"], s["layers"]
    assert emb["items"] == 30 and len(layers) == 2  # embeddings + positions, after the block
    assert s["untrained"]["emb_nc1_trace"] > 0 and s["nc1_vs_untrained"] > 0
    assert (tmp_path / "run" / "figures" / "pca.png").is_file()
    json.dumps(s)
    (tmp_path / "run" / "figures" / "pca.png").unlink()  # drawn again from the run directory
    assert redraw(tmp_path / "run") == s["figures"]
    assert (tmp_path / "run" / "figures" / "pca.png").is_file()


def _crash_at(monkeypatch, cls, step):
    original = cls.train_step

    def crash(self, i):
        if i == step:
            raise RuntimeError("interrupted")
        return original(self, i)

    monkeypatch.setattr(cls, "train_step", crash)
    return original


@pytest.mark.parametrize(
    ("name", "preset", "over", "cls", "keys"),
    [
        pytest.param(
            "fc-transformer",
            "a3-uniform-quick",
            TINY_TF,
            tf_train.Trainer,
            ("test_acc",),
            marks=pytest.mark.slow,
        ),
        (
            "fc-grammar",
            "a5-cfg-quick",
            {
                "data.K": 6,
                "data.symbols": [4, 4, 4],
                "data.choices": 2,
                "data.children": 2,
                "model.widths": [4, 6, 6],
                "model.hidden": 8,
                "data.n_train": 60,
                "data.n_test": 20,
                "train.epochs": 2,
                "train.batch_size": 10,
                # of 12 steps: the crash at step 7 is inside the warm-up
                "train.schedule.kind": "warmup",
                "train.schedule.warmup": 10,
                "log_every": 3,
                "checkpoint_every": 3,
            },
            grammar_train.Trainer,
            ("test_acc", "max_level_nc1_trace"),
        ),
    ],
)
def test_resume_gives_the_uninterrupted_numbers(
    tmp_path, monkeypatch, name, preset, over, cls, keys
):
    if name == "fc-transformer":
        pytest.importorskip("transformers")
    exp = get_experiment(name)
    cfg = exp.config(preset, over)
    full = run_experiment(exp, cfg, tmp_path / "a")
    original = _crash_at(monkeypatch, cls, 7)
    with pytest.raises(RuntimeError, match="interrupted"):
        run_experiment(exp, cfg, tmp_path / "b")
    assert RunDir(tmp_path / "b").checkpoint_path.is_file()
    monkeypatch.setattr(cls, "train_step", original)
    resumed = resume_run(tmp_path / "b")
    for key in (*keys, "steps"):
        assert resumed[key] == pytest.approx(full[key], rel=1e-6), key
    assert len(RunDir(tmp_path / "b").read_metrics()) == len(RunDir(tmp_path / "a").read_metrics())


def test_presets_validate():
    for name in ("fc-transformer", "fc-grammar"):
        exp = get_experiment(name)
        for preset in exp.presets:
            exp.config(preset)
    tf = get_experiment("fc-transformer")
    a3 = tf.config("a3-uniform")
    m, d, t = a3.model, a3.data, a3.train
    assert (m.d, m.n_layer, m.n_head, d.K * d.nspl, t.epochs, t.lr) == (
        512,
        2,
        8,
        500_000,
        3,
        1e-4,
    )
    assert (t.weight_decay, t.betas) == (0.1, (0.9, 0.95))
    a4 = tf.config("a4-lm")
    assert a4.task == "lm" and a4.data.K * a4.data.nspl == 1_000_000 and a4.train.epochs == 1
    d = get_experiment("fc-grammar").config("a5-cfg").data
    assert (d.K, len(d.symbols), d.choices, d.children, d.n_test) == (100, 4, 5, 8, 1000)


def test_transformer_device():
    """The paper-size presets train where CUDA is (auto); the others on the CPU; a device the
    machine lacks is refused when the config resolves."""
    tf = get_experiment("fc-transformer")
    for name in tf.presets:
        assert tf.config(name).device == (
            "auto" if name in ("a3-uniform", "a3-zipf", "a4-lm") else "cpu"
        )
    with pytest.raises(ConfigError, match="device must be"):
        tf.config("a3-uniform-quick", {"device": "tpu"})
    if not torch.cuda.is_available():
        with pytest.raises(ConfigError, match="no CUDA device"):
            tf.config("a3-uniform-quick", {"device": "cuda"})


def test_grammar_figures_with_more_test_sentences_than_drawn(tmp_path):
    """The PCA figures draw the first 200 test sentences: their latent labels must be those
    sentences' (a run with n_test > 200 once failed there, after training)."""
    exp = get_experiment("fc-grammar")
    over = {"data.K": 4, "data.symbols": [3, 3, 3], "data.choices": 2, "data.children": 2}
    over |= {"model.widths": [4, 4, 4]}
    over |= {"model.hidden": 6, "data.n_train": 20, "data.n_test": 230, "train.epochs": 1}
    over |= {"train.batch_size": 10}
    summary = run_experiment(exp, exp.config("a5-cfg-quick", over), tmp_path / "run")
    assert [Path(f).name for f in summary["figures"]] == ["pca_trained.png", "pca_untrained.png"]
    assert all(Path(f).stat().st_size > 0 for f in summary["figures"])
    for f in summary["figures"]:  # drawn again from the run directory alone
        Path(f).unlink()
    assert redraw(tmp_path / "run") == summary["figures"]
    assert all(Path(f).stat().st_size > 0 for f in summary["figures"])


def test_grammar_warmup_grows_the_learning_rate_linearly():
    exp = get_experiment("fc-grammar")
    over = {"data.K": 4, "data.symbols": [3, 3, 3], "data.choices": 2, "data.children": 2}
    over |= {"model.widths": [4, 4, 4]}
    over |= {"model.hidden": 6, "data.n_train": 20, "data.n_test": 4, "train.batch_size": 10}
    over |= {"train.lr": 1e-3, "train.schedule.kind": "warmup"}
    tr = grammar_train.Trainer(exp.config("a5-cfg-quick", over | {"train.schedule.warmup": 4}))
    lrs = []
    for step in range(6):  # the learning rate each step takes
        lrs.append(tr.opt.param_groups[0]["lr"])
        tr.train_step(step)
    assert lrs == pytest.approx([2.5e-4, 5e-4, 7.5e-4, 1e-3, 1e-3, 1e-3])
    with pytest.raises(ConfigError, match="warmup"):
        exp.config("a5-cfg-quick", over | {"train.schedule.warmup": -1})


def test_grammar_zero_head_starts_at_the_uniform_prediction_and_learns():
    """zero_head: the logits' Linear starts at zero (logits constant, loss log K, the rest of the
    network as without it); one step moves it off zero. The trainer passes the field on."""
    torch.manual_seed(0)
    plain = GrammarNet(vocab=5, K=3, depth=2, children=2, widths=(4, 6), hidden=8)
    torch.manual_seed(0)
    zero = GrammarNet(vocab=5, K=3, depth=2, children=2, widths=(4, 6), hidden=8, zero_head=True)
    x = torch.randint(0, 5, (6, 4), generator=GEN)
    assert torch.count_nonzero(zero(x)) == 0 and torch.count_nonzero(plain(x)) > 0
    torch.testing.assert_close(zero.levels(x), plain.levels(x))  # only the head differs
    exp = get_experiment("fc-grammar")
    over = {"data.K": 4, "data.symbols": [3, 3, 3], "data.choices": 2, "data.children": 2}
    over |= {"model.widths": [4, 4, 4]}
    over |= {"model.hidden": 6, "data.n_train": 20, "data.n_test": 4, "train.batch_size": 10}
    over |= {"model.zero_head": True}
    tr = grammar_train.Trainer(exp.config("a5-cfg-quick", over))
    head = tr.net.blocks[-1][2]
    loss0 = torch.nn.functional.cross_entropy(tr.net(tr.x[:10].long()), tr.y[:10])
    assert float(loss0) == pytest.approx(float(torch.log(torch.tensor(4.0))))
    tr.train_step(0)
    assert torch.count_nonzero(head.weight) > 0
