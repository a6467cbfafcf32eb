"""Issue 52: linguistic collapse at vocabulary size, the model run over the corpus once
(``nclab.integrations.causal_lm``), against a float64 truth computed here from the features."""

from __future__ import annotations

import itertools
import math
import os

import numpy as np
import pytest
import torch

from nclab import CollapseProbe
from nclab.errors import DataError

transformers = pytest.importorskip("transformers")
os.environ.setdefault("HF_HUB_OFFLINE", "1")

from nclab.integrations.causal_lm import (  # noqa: E402
    TokenCorpus,
    load_corpus,
    measure_lm,
    synthetic_corpus,
)

VOCAB, D = 400, 16


def gpt2(vocab: int = VOCAB, d: int = D, layers: int = 2):
    torch.manual_seed(0)
    cfg = transformers.GPT2Config(
        vocab_size=vocab,
        n_positions=64,
        n_embd=d,
        n_layer=layers,
        n_head=2,
        bos_token_id=0,
        eos_token_id=0,
    )
    return transformers.GPT2LMHeadModel(cfg).eval()


def corpus(tokens: int = 3000, seq_len: int = 48) -> TokenCorpus:
    return synthetic_corpus(VOCAB, tokens, seq_len=seq_len, seed=3)


def truth(model, corp: TokenCorpus) -> dict[str, float]:
    """The study's metrics and NC1 in float64 from the features themselves, by the definitions
    (dense K x K matrices, pinv of Sigma_B, explicit distances): independent of nclab's code."""
    xs, ys = [], []
    with torch.no_grad():
        for b in corp.batches(8):
            h = model.transformer(input_ids=b["input_ids"], attention_mask=b["attention_mask"])
            keep = b["labels"] != -100
            xs.append(h.last_hidden_state[keep].double())
            ys.append(b["labels"][keep])
    x, y = torch.cat(xs), torch.cat(ys)
    classes = torch.unique(y)
    y = torch.searchsorted(classes, y)
    k, n = len(classes), len(y)
    w = model.lm_head.weight.detach().double()[classes]
    mu = torch.zeros(k, x.shape[1], dtype=torch.float64).index_add_(0, y, x)
    mu /= torch.bincount(y, minlength=k).double()[:, None]
    mg = mu.mean(0)
    mc = mu - mg
    dev = x - mu[y]
    sw = dev.T @ dev / n
    sb = mc.T @ mc / k
    out = {"nc1": float(torch.trace(sw @ torch.linalg.pinv(sb, hermitian=True, rtol=1e-10))) / k}
    var = torch.zeros(k, dtype=torch.float64).index_add_(0, y, (dev * dev).sum(1))
    var /= torch.bincount(y, minlength=k).double()
    d2 = torch.cdist(mu, mu) ** 2
    off = ~torch.eye(k, dtype=torch.bool)
    out["cdnv"] = float(((var[:, None] + var[None, :]) / (2 * d2))[off].mean())
    norms = mc.norm(dim=1)
    out["nc2_equinorm"] = float(norms.std(correction=0) / norms.mean())
    u = mc / norms[:, None]
    cos = (u @ u.T)[torch.triu(torch.ones(k, k, dtype=torch.bool), 1)]
    out["nc2_equiangle"] = float(cos.std(correction=0))
    dist = torch.cdist(u, u)[torch.triu(torch.ones(k, k, dtype=torch.bool), 1)]
    out["gnc2"] = float((-dist.log()).var(correction=0))
    out["unc3"] = float(((w * mc).sum(1) / (w.norm(dim=1) * norms)).var(correction=0))
    ncc = torch.cdist(x, mu).argmin(1)
    clf = (x @ w.T).argmax(1)  # GPT-2's head has no bias
    out["nc4"] = float((clf != ncc).double().mean())
    out["ncc_acc"] = float((ncc == y).double().mean())
    return out


def test_one_forward_per_batch_and_the_float64_truth():
    model, corp = gpt2(), corpus()
    lm = measure_lm(model, corp, batch_size=8, progress=False)
    assert lm.batches == math.ceil(corp.ids.shape[0] / 8)
    assert lm.forward_passes == lm.batches  # the model ran over the corpus once
    assert lm.samples == corp.samples
    got = lm.result.to_dict()["lm_head:input"]
    for key, want in truth(model, corp).items():
        assert got[key] == pytest.approx(want, rel=1e-9, abs=1e-12), key
    assert "nc1" in lm.result.notes["lm_head:input"]  # hundreds of classes in 16 dimensions
    assert model.lm_head.forward.__func__ is type(model.lm_head).forward  # the head restored


def test_the_one_pass_numbers_are_those_of_two_reads_with_logits():
    """Reading the corpus twice (the model run twice, the logits computed) gives the same
    statistics: the cache replays exactly the features of the one pass."""
    model, corp = gpt2(), corpus(1500)
    lm = measure_lm(model, corp, layers=["transformer.h.0", "lm_head:input"], progress=False)
    probe = CollapseProbe(
        model,
        ["transformer.h.0", "lm_head:input"],
        VOCAB,
        classifier="lm_head",
        tokens=True,
        empty_classes="drop",
    )
    two = probe.run(corp.batches(8), progress=False)
    for layer, values in two.to_dict().items():
        for key, want in values.items():
            assert lm.result.to_dict()[layer][key] == pytest.approx(want, rel=1e-12), (layer, key)
    assert lm.result.classes == two.classes and len(lm.result.classes) < VOCAB
    assert {"gnc2", "unc3"} <= set(lm.result.to_dict()["lm_head:input"])
    assert "unc3" not in lm.result.to_dict()["transformer.h.0"]  # W applies to the head's input


def test_beyond_the_cache_budget_the_features_spill_and_the_model_still_runs_once(tmp_path):
    model, corp = gpt2(), corpus(2000)
    in_memory = measure_lm(model, corp, progress=False)
    spilled = measure_lm(model, corp, cache_budget="20kB", spill=tmp_path, progress=False)
    assert spilled.forward_passes == spilled.batches
    assert spilled.result.to_dict() == in_memory.result.to_dict()
    assert in_memory.cache["spilled_bytes"] == 0 < in_memory.cache["memory_bytes"]
    assert 0 < spilled.cache["memory_bytes"] <= 20_000 < spilled.cache["spilled_bytes"]
    with pytest.raises(DataError, match="cache_budget"):
        measure_lm(model, corp, cache_budget="20kB", spill=False, progress=False)
    assert model.lm_head.forward.__func__ is type(model.lm_head).forward  # restored after errors


def test_the_synthetic_corpus_has_a_vocabulary_shape():
    c = synthetic_corpus(50257, 20000, seq_len=128, seed=0)
    assert c.tokens == 20000 and c.max_id < 50257
    counts = torch.bincount(c.ids.flatten(), minlength=50257)
    assert 1000 < int((counts > 0).sum()) < 20000  # Zipfian: many distinct tokens, most rare
    assert torch.equal(c.ids, synthetic_corpus(50257, 20000, seq_len=128, seed=0).ids)
    (b,) = synthetic_corpus(100, 10, seq_len=10).batches(4)
    assert b["labels"][0, :-1].tolist() == b["input_ids"][0, 1:].tolist()
    assert b["labels"][0, -1] == -100


def test_token_files_of_every_kind(tmp_path):
    ids = np.arange(1, 301) % 97
    np.save(tmp_path / "a.npy", ids)
    np.save(tmp_path / "rows.npy", ids.reshape(3, 100))
    ids.astype(np.uint16).tofile(tmp_path / "b.bin")
    torch.save(torch.tensor(ids), tmp_path / "c.pt")
    for name in ("a.npy", "rows.npy", "b.bin", "c.pt"):
        c = load_corpus(tmp_path / name, seq_len=64)
        assert c.tokens == 300 and c.ids[0, :5].tolist() == ids[:5].tolist(), name
    both = load_corpus(tmp_path, seq_len=64, max_tokens=450)  # a folder: its files in order
    assert both.tokens == 450
    assert load_corpus([tmp_path / "rows.npy"], seq_len=64).ids.shape == (6, 64)


def test_text_with_a_local_tokenizer(tmp_path):
    tokenizers = pytest.importorskip("tokenizers")
    words = ["[UNK]", "the", "cat", "sat", "on", "mat", "."]
    tok = tokenizers.Tokenizer(
        tokenizers.models.WordLevel({w: i for i, w in enumerate(words)}, unk_token="[UNK]")
    )
    tok.pre_tokenizer = tokenizers.pre_tokenizers.Whitespace()
    fast = transformers.PreTrainedTokenizerFast(tokenizer_object=tok, unk_token="[UNK]")
    fast.save_pretrained(tmp_path / "tok")
    (tmp_path / "story.txt").write_text("the cat sat on the mat . " * 20)
    c = load_corpus(tmp_path / "story.txt", seq_len=16, tokenizer=tmp_path / "tok")
    assert c.tokens == 140 and c.ids[0, :4].tolist() == [1, 2, 3, 4]
    with pytest.raises(DataError, match="needs a tokenizer"):
        load_corpus(tmp_path / "story.txt")


def test_bad_input_is_a_clear_error(tmp_path):
    model = gpt2()
    with pytest.raises(DataError, match=r"token id \d+, but the LM head 'lm_head' has 400 rows"):
        measure_lm(model, synthetic_corpus(1000, 500, seq_len=50), progress=False)
    (tmp_path / "x.csv").write_text("1,2,3")
    with pytest.raises(DataError, match="a corpus file is one of"):
        load_corpus(tmp_path / "x.csv")
    with pytest.raises(DataError, match="no such file"):
        load_corpus(tmp_path / "missing.npy")
    np.save(tmp_path / "neg.npy", np.array([1, -2, 3]))
    with pytest.raises(DataError, match=">= 0"):
        load_corpus(tmp_path / "neg.npy")
    np.save(tmp_path / "f.npy", np.ones(5))
    with pytest.raises(DataError, match="integer array"):
        load_corpus(tmp_path / "f.npy")
    with pytest.raises(DataError, match="seq_len"):
        synthetic_corpus(10, 100, seq_len=1)
    with pytest.raises(DataError, match="batch_size"):
        measure_lm(model, corpus(200), batch_size=0, progress=False)
    with pytest.raises(DataError, match="corpus must be a TokenCorpus"):
        measure_lm(model, [[1, 2, 3]], progress=False)
    torch.save({"ids": object()}, tmp_path / "obj.pt")
    with pytest.raises(DataError, match="cannot read token ids"):
        load_corpus(tmp_path / "obj.pt")
    np.arange(10, dtype=np.uint16).tofile(tmp_path / "t.bin")
    with pytest.raises(DataError, match="bin_dtype must be"):
        load_corpus(tmp_path / "t.bin", bin_dtype="float32")
    with pytest.raises(DataError, match="no such layer|not a module|did you mean"):
        measure_lm(model, corpus(200), layers=["transformer.h9"], progress=False)
    with pytest.raises(DataError, match="no output embedding"):
        measure_lm(torch.nn.Linear(3, 3), corpus(200), progress=False)


def test_the_study_keys_are_all_reported():
    from nclab.integrations.causal_lm import STUDY_KEYS

    lm = measure_lm(gpt2(), corpus(1500), progress=False)
    got = lm.result.to_dict()["lm_head:input"]
    for key in itertools.chain(STUDY_KEYS, ("nc1", "nc1_rank_norm", "ncc_acc")):
        assert key in got and math.isfinite(got[key]), key
    d = lm.to_dict()
    assert d["forward_passes"] == d["batches"] and d["classes"] == len(lm.result.classes)


def _cli(args, capsys):
    from nclab.cli import main

    code = 0
    try:
        main(args)
    except SystemExit as exc:
        code = exc.code or 0
    out = capsys.readouterr()
    return code, out.out, out.err


def test_nclab_measure_lm_on_a_saved_model_and_token_files(tmp_path, capsys):
    import json

    model = gpt2()
    model.save_pretrained(tmp_path / "model")
    corp = corpus(1200)
    np.save(tmp_path / "ids.npy", corp.ids.flatten().numpy())  # 25 full rows of 48
    code, out, err = _cli(
        [
            "measure-lm",
            str(tmp_path / "ids.npy"),
            "--model",
            str(tmp_path / "model"),
            "--json",
            "--seq-len",
            "48",
            "--layer",
            "transformer.h.1",
            "--layer",
            "lm_head:input",
        ],
        capsys,
    )
    assert code == 0, err
    res = json.loads(out)
    assert res["forward_passes"] == res["batches"] and res["vocab_size"] == VOCAB
    assert set(res["metrics"]) == {"transformer.h.1", "lm_head:input"}
    assert "nc1" in res["notes"]["lm_head:input"]
    ref = measure_lm(model, load_corpus(tmp_path / "ids.npy", seq_len=48), progress=False)
    assert res["metrics"]["lm_head:input"]["nc1"] == pytest.approx(
        ref.result.to_dict()["lm_head:input"]["nc1"], rel=1e-12
    )


def test_nclab_measure_lm_builds_gpt2_shapes_and_says_what_is_wrong(tmp_path, capsys):
    import json

    code, out, err = _cli(
        ["measure-lm", "--config", "gpt2-tiny", "--synthetic", "1500", "--seq-len", "64"], capsys
    )
    assert code == 0, err
    text = " ".join(out.split())
    assert "of the 50257 next-token classes occur" in text and "note lm_head:input nc1" in text
    (tmp_path / "config.json").write_text(gpt2(vocab=90).config.to_json_string())
    code, out, err = _cli(
        [
            "measure-lm",
            "--config",
            str(tmp_path),
            "--synthetic",
            "600",
            "--seq-len",
            "50",
            "--json",
        ],
        capsys,
    )
    assert code == 0, err
    assert json.loads(out)["vocab_size"] == 90
    for args, msg in (
        (["--synthetic", "100"], "needs a model"),
        (["--config", "gpt9", "--synthetic", "100"], "unknown config 'gpt9'"),
        (["--config", "gpt2-tiny"], "needs a corpus"),
        (["--model", str(tmp_path / "none"), "--synthetic", "100"], "cannot load a causal LM"),
        (["--config", str(tmp_path), "--synthetic", "600"], "but the model has 64 positions"),
    ):
        code, _, err = _cli(["measure-lm", *args], capsys)
        assert code == 2 and msg in err and len(err.strip().splitlines()) == 1, (args, err)
