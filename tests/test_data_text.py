"""The text data of the deep-ln transformers: the synthetic sentiment task (the IMDB stand-in) and
the aclImdb folder loader, on a tiny folder written here."""

import pytest
import torch

from nclab.data.imdb import load_aclimdb, tokenize
from nclab.data.sentiment import make_sentiment
from nclab.errors import DataError


def test_sentiment_is_balanced_deterministic_and_carries_its_label():
    s = make_sentiment(n_train=300, n_test=50, seed=3)
    assert s.x_train.shape == (600, 32) and s.x_test.shape == (100, 32)
    assert torch.equal(torch.bincount(s.y_train), torch.tensor([300, 300]))
    again = make_sentiment(n_train=300, n_test=50, seed=3)
    assert torch.equal(again.x_train, s.x_train) and torch.equal(again.x_test, s.x_test)
    assert not torch.equal(make_sentiment(n_train=300, n_test=50, seed=4).x_train, s.x_train)
    # padding only at the end, every review at least min_len = 8 words long
    nonpad = s.x_train != 0
    lengths = nonpad.sum(1)
    assert int(lengths.min()) >= 8
    assert torch.equal(nonpad, torch.arange(32)[None, :] < lengths[:, None])
    # positive words (ids 1..20) dominate in positive reviews, negative ones (21..40) in negative
    pos = ((s.x_train >= 1) & (s.x_train <= 20)).sum(1)
    neg = ((s.x_train >= 21) & (s.x_train <= 40)).sum(1)
    vote = (pos > neg).long()
    agree = float((vote == s.y_train)[pos != neg].double().mean())
    assert 0.8 < agree < 1.0  # informative, not separable word by word


def test_sentiment_rejects_bad_settings():
    with pytest.raises(DataError, match="min_len"):
        make_sentiment(min_len=40, seq_len=32)
    with pytest.raises(DataError, match="vocab"):
        make_sentiment(vocab=30, n_polar=20)


def _write(root, split, label, texts):
    d = root / "aclImdb" / split / label
    d.mkdir(parents=True, exist_ok=True)
    for i, t in enumerate(texts):
        (d / f"{i}_{7 if label == 'pos' else 2}.txt").write_text(t, encoding="utf-8")


@pytest.fixture
def imdb_dir(tmp_path):
    _write(tmp_path, "train", "pos", ["A great film.<br />Great acting!", "great fun", "loved it"])
    _write(tmp_path, "train", "neg", ["Awful. Just awful, didn't like it", "boring film", "bad"])
    _write(tmp_path, "test", "pos", ["great great", "unseen words here"])
    _write(tmp_path, "test", "neg", ["awful boring", "bad film"])
    (tmp_path / "aclImdb" / "train" / "unsup").mkdir()  # not read
    return tmp_path


def test_aclimdb_loader_reads_the_archive_layout(imdb_dir):
    s = load_aclimdb(imdb_dir, vocab_size=6, max_len=5)  # the parent folder is accepted too
    assert s.x_train.shape == (6, 5) and s.x_test.shape == (4, 5)
    assert s.y_train.tolist() == [0, 0, 0, 1, 1, 1] and s.num_classes == 2 and s.vocab == 6
    # vocabulary: the 4 most frequent training tokens after pad (0) and unknown (1)
    # counts: great 3, awful 2, film 2, it 2, ... -> great=2, awful=3, film=4, it=5
    pos0 = tokenize("A great film.<br />Great acting!")
    assert pos0 == ["a", "great", "film", "great", "acting"]
    assert s.x_train[3].tolist() == [1, 2, 4, 2, 1]
    assert s.x_test[2].tolist() == [2, 2, 0, 0, 0]  # padded with 0
    assert s.x_test[3].tolist() == [1, 1, 1, 0, 0]  # unseen words are unknown (1)
    same = load_aclimdb(imdb_dir / "aclImdb", vocab_size=6, max_len=5)
    assert torch.equal(same.x_train, s.x_train)
    sub = load_aclimdb(imdb_dir, samples_per_class=2, test_samples_per_class=1, seed=1)
    assert torch.equal(torch.bincount(sub.y_train), torch.tensor([2, 2])) and len(sub.y_test) == 2


def test_aclimdb_loader_errors_name_the_layout(tmp_path):
    with pytest.raises(DataError, match="train/pos"):
        load_aclimdb(tmp_path)
    with pytest.raises(DataError, match="data_dir"):
        load_aclimdb(None)
