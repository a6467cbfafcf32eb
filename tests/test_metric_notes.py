"""Metrics that say when they mean little (issue 52): ``notes`` beside ``skipped``, the
rank-normalised NC1, the frame floors, and ``result.classes`` always a list."""

import copy
import json
import math
import os
import pickle
import warnings

import numpy as np
import pytest
import torch

from nclab import ClassStats, CollapseProbe
from nclab.cli import main
from nclab.metrics import (
    Metrics,
    collapse_metrics,
    etf_distance,
    frame_floor,
    nc1,
    nc1_parts,
    nc1_rank_norm,
    of_distance,
)


def _clusters(k: int, d: int, n: int = 600, seed: int = 0):
    g = torch.Generator().manual_seed(seed)
    y = torch.arange(n) % k
    x = 3 * torch.randn(k, d, generator=g, dtype=torch.float64)[y]
    return x + torch.randn(n, d, generator=g, dtype=torch.float64), y


def test_nc1_note_when_k_exceeds_d_plus_one_and_not_otherwise():
    x, y = _clusters(k=30, d=8)
    m = collapse_metrics(ClassStats.from_features(x, y))
    note = m.notes["nc1"]
    assert "rank(Sigma_B) = 8 < K - 1 = 29" in note and "K > D + 1 = 9" in note
    assert "nc1_rank_norm" in note and "cdnv" in note
    # the rank-normalised NC1 is tr(Sigma_W Sigma_B^+) / rank: nc1 * K / rank
    assert m["nc1_rank_norm"] == pytest.approx(m["nc1"] * 30 / 8, rel=1e-14)
    assert f"{m['nc1_rank_norm']:.4g}" in note
    assert {"nc2_etf", "nc2_of"} <= set(m.notes)

    x, y = _clusters(k=9, d=8)  # K = D + 1: the means span K - 1 directions
    m = collapse_metrics(ClassStats.from_features(x, y))
    assert set(m.notes) == {"nc2_of"}  # no nc1 note; 9 vectors in 8 dimensions are not orthogonal
    assert m["nc1_rank_norm"] == pytest.approx(m["nc1"] * 9 / 8, rel=1e-14)


def test_nc1_note_for_dependent_means_with_k_below_d():
    """K <= D + 1 but the class means span fewer directions: the same understatement."""
    g = torch.Generator().manual_seed(1)
    y = torch.arange(500) % 5
    mu = torch.zeros(5, 10, dtype=torch.float64)
    mu[:, 0] = torch.arange(5.0)  # five means on one line: rank 1
    e = torch.randn(500, 10, generator=g, dtype=torch.float64)
    e -= torch.stack([e[y == c].mean(0) for c in range(5)])[y]  # the class means stay on the line
    x = 4 * mu[y] + e
    m = collapse_metrics(ClassStats.from_features(x, y))
    assert "rank(Sigma_B) = 1 < K - 1 = 4" in m.notes["nc1"]
    assert "linearly dependent" in m.notes["nc1"]
    assert set(m.notes) == {"nc1"}  # D >= K: the frames can be reached


def test_rank_norm_agrees_with_a_dense_pseudo_inverse():
    x, y = _clusters(k=12, d=5, n=480)
    s = ClassStats.from_features(x, y)
    mu = torch.stack([x[y == c].mean(0) for c in range(12)])
    mc = mu - mu.mean(0)
    dev = x - mu[y]
    sw = dev.T @ dev / len(y)
    sb = mc.T @ mc / 12
    trace = float(torch.trace(sw @ torch.linalg.pinv(sb, hermitian=True)))
    rank = int(torch.linalg.matrix_rank(sb))
    assert rank == 5
    assert nc1(s) == pytest.approx(trace / 12, rel=1e-10)
    assert nc1_rank_norm(s) == pytest.approx(trace / rank, rel=1e-10)
    parts = nc1_parts(s, "sample")
    assert parts.rank == 5 and parts.understated


def test_notes_survive_copies_pickles_and_dicts():
    m = Metrics({"nc1": 0.1}, skipped={"nc4": "why"}, notes={"nc1": "caveat"})
    for other in (m.copy(), copy.copy(m), copy.deepcopy(m), pickle.loads(pickle.dumps(m))):
        assert other == m and other.notes == {"nc1": "caveat"} and other.skipped == m.skipped
        assert other.notes is not m.notes
    assert m.to_dict()["notes"] == {"nc1": "caveat"}
    assert Metrics.from_dict(m.to_dict()).notes == m.notes
    assert Metrics.from_dict({"metrics": {"nc1": 1.0}}).notes == {}  # records from before notes


def test_frame_floors_are_reached_by_an_even_projection():
    """A K x D matrix with D orthonormal columns in the frame's range is as close as possible."""
    k, d = 12, 4
    q, _ = torch.linalg.qr(torch.randn(k, k, dtype=torch.float64))
    centred = q - q.mean(0)  # columns orthogonal to the all-ones vector, rank K - 1
    basis, _ = torch.linalg.qr(centred[:, : d + 1])
    a = basis[:, :d]
    assert etf_distance(a) == pytest.approx(frame_floor("etf", k, d), rel=1e-12)
    assert of_distance(q[:, :d]) == pytest.approx(frame_floor("of", k, d), rel=1e-12)
    assert frame_floor("etf", k, k - 1) == 0.0 and frame_floor("of", k, k) == 0.0
    # any other K x D matrix is farther from the frame
    for seed in range(5):
        g = torch.Generator().manual_seed(seed)
        r = torch.randn(k, d, generator=g, dtype=torch.float64)
        assert etf_distance(r) >= frame_floor("etf", k, d)
        assert of_distance(r) >= frame_floor("of", k, d)
    assert math.isclose(frame_floor("etf", 50257, 768), math.sqrt(2 - 2 * math.sqrt(768 / 50256)))


def _gpt2(vocab: int, d: int):
    pytest.importorskip("transformers")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from transformers import GPT2Config, GPT2LMHeadModel

    torch.manual_seed(0)
    cfg = GPT2Config(
        vocab_size=vocab,
        n_positions=32,
        n_embd=d,
        n_layer=1,
        n_head=2,
        bos_token_id=0,
        eos_token_id=0,
    )
    return GPT2LMHeadModel(cfg)


def _lm_batches(vocab: int, n: int = 6, seed: int = 0):
    g = torch.Generator().manual_seed(seed)
    return [{"input_ids": torch.randint(0, vocab, (8, 16), generator=g)} for _ in range(n)]


def test_small_language_model_gets_the_note_and_a_list_of_classes():
    from nclab.integrations.transformers import next_token_labels

    vocab, d = 120, 16
    probe = CollapseProbe(
        _gpt2(vocab, d),
        ["transformer.h.0", "lm_head:input"],
        num_classes=vocab,
        tokens=True,
        labels=next_token_labels,
        classifier="lm_head",
        empty_classes="drop",
    )
    res = probe.run(_lm_batches(vocab), progress=False)
    assert isinstance(res.classes, list) and d + 1 < len(res.classes) <= vocab
    k = len(res.classes)
    for layer in ("transformer.h.0", "lm_head:input"):
        rank = nc1_parts(res.stats[layer]).rank
        assert rank <= d  # (after a LayerNorm the features lie in D - 1 dimensions)
        assert f"rank(Sigma_B) = {rank} < K - 1 = {k - 1}" in res.notes[layer]["nc1"]
        m = res.metrics[layer]
        assert m["nc1_rank_norm"] == pytest.approx(m["nc1"] * k / rank, rel=1e-12)
    assert "nc2_w_etf" in res.notes["lm_head:input"]  # the tied embedding rows: K > D + 1 too


def test_few_classes_have_no_note_and_classes_is_a_list():
    from torch import nn

    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(10, 16), nn.Tanh(), nn.Linear(16, 4))
    g = torch.Generator().manual_seed(0)
    data = [(torch.randn(40, 10, generator=g), torch.arange(40) % 4) for _ in range(3)]
    res = CollapseProbe(model, ["1", "2:input"], num_classes=4, classifier="2").run(
        data, progress=False
    )
    assert res.classes == [0, 1, 2, 3] and len(res.classes) == 4
    assert res.notes == {}
    assert all("nc1_rank_norm" in m for m in res.to_dict().values())


def _cli(args, capsys) -> str:
    try:
        main(args)
    except SystemExit as exc:
        assert not exc.code, capsys.readouterr().err
    return capsys.readouterr().out


def test_nclab_measure_prints_and_returns_the_notes(tmp_path, capsys):
    x, y = _clusters(k=30, d=8)
    path = tmp_path / "f.npz"
    np.savez(path, features=x.numpy(), labels=y.numpy())
    out = json.loads(_cli(["measure", str(path), "--json"], capsys))
    assert "nc1_rank_norm" in out["metrics"]
    assert "rank(Sigma_B) = 8 < K - 1 = 29" in out["notes"]["nc1"]
    text = " ".join(_cli(["measure", str(path)], capsys).split())
    assert "note nc1: rank(Sigma_B) = 8 < K - 1 = 29" in text
    assert "note nc2_etf: K = 30 > D + 1 = 9" in text


def test_the_callbacks_say_a_note_once():
    from nclab.integrations._measure import Measurement
    from nclab.probe import ProbeResult

    x, y = _clusters(k=30, d=8)
    stats = ClassStats.from_features(x, y)
    result = ProbeResult(
        {"fc:input": collapse_metrics(stats)}, {"fc:input": stats}, list(range(30))
    )
    measure = Measurement("fc:input", 30, "collapse", None, True, None, {})
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        values = measure.values(result)
        measure.values(result)
    said = [str(w.message) for w in seen if "collapse/fc:input/nc1:" in str(w.message)]
    assert len(said) == 1 and "nc1_rank_norm" in said[0]
    assert values["collapse/fc:input/nc1_rank_norm"] == result.metrics["fc:input"]["nc1_rank_norm"]
    quiet = Measurement("fc:input", 30, "collapse", ["cdnv"], True, None, {})
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        quiet.values(result)
    assert not [w for w in seen if "Sigma_B" in str(w.message)]  # nc1 not logged: no note
