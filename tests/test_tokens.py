"""codec.tokens: WordPiece vocabs read as BERT reads them (size-capped), ids decoded to text
with special tokens, outside ids and masked positions marked; which features are token ids;
the BERT pre-training generator's layout."""

from __future__ import annotations

import os
import tracemalloc

import pytest

from browser_app.generators import text as gen
from codec import TFRecordFile
from codec import example as ex
from codec.errors import LimitError
from codec.tokens import (
    Vocab,
    decode_ids,
    is_special,
    is_token_ids,
    parse_vocab,
    read_vocab,
    token_id_features,
    vocab_beside,
)

WORDS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "the", "cat", "sat", "on", "mat", "##s",
         ".", "play", "##ing", "un", "##aff", "##able"]  # fmt: skip
VOCAB = Vocab(tuple(WORDS))
ID = {w: i for i, w in enumerate(WORDS)}


def ids(*tokens: str) -> list[int]:
    return [ID[t] for t in tokens]


def test_ids_are_line_numbers_as_bert_reads_them():
    v = parse_vocab("[PAD]\n  the \n\nplay\t-3.5\n")
    assert v.tokens == ("[PAD]", "the", "", "play")  # stripped; an empty line is a token
    assert v.id_of("play") == 3 and v.id_of("nope") is None
    assert parse_vocab("a\nb").tokens == ("a", "b")  # no newline at the end
    assert parse_vocab("").tokens == ()


def test_decode_merges_pieces_and_cleans_punctuation():
    t = decode_ids(ids("[CLS]", "the", "cat", "##s", "sat", "play", "##ing", ".", "[SEP]"), VOCAB)
    assert t.text == "[CLS] the cats sat playing. [SEP]"
    assert t.special == (0, 8) and not t.outside and not t.masked
    t = decode_ids(ids("un", "##aff", "##able"), VOCAB)
    assert t.text == "unaffable" and [x.continues for x in t.tokens] == [False, True, True]


def test_trailing_padding_is_counted_not_shown():
    t = decode_ids(ids("[CLS]", "cat", "[SEP]") + [0] * 125, VOCAB)
    assert t.text == "[CLS] cat [SEP]" and t.padding == 125 and len(t.tokens) == 128


def test_ids_outside_the_vocab_are_marked():
    t = decode_ids([ID["the"], 40000, -1, ID["cat"]], VOCAB)
    assert t.outside == (1, 2)
    assert t.text == "the [? 40000] [? -1] cat"
    assert t.tokens[1].text == "" and t.tokens[1].outside


def test_masked_positions_from_masked_lm_fields():
    sequence = ids("[CLS]", "the", "[MASK]", "sat", "on", "mat", "[SEP]")
    sequence[5] = ID["cat"]  # BERT's 10 %: a random token in place of the one masked
    positions = [2, 4, 5, 0, 0]
    originals = [*ids("cat", "on", "mat"), 0, 0]
    weights = [1.0, 1.0, 1.0, 0.0, 0.0]
    t = decode_ids(
        sequence,
        VOCAB,
        masked_positions=positions,
        masked_ids=originals,
        masked_weights=weights,
    )
    assert t.masked == (2, 4, 5)
    assert t.text == "[CLS] the [MASK] sat on cat [SEP]"
    assert t.marked == "[CLS] the [MASK→cat] sat [on] [cat→mat] [SEP]"
    assert t.tokens[2].original == "cat"
    # Without weights, BERT's padding entries (position 0, id 0) are still not masks.
    t = decode_ids(sequence, VOCAB, masked_positions=positions, masked_ids=originals)
    assert t.masked == (2, 4, 5)
    # Positions outside the sequence are ignored; no ids: [MASK] stays as it is.
    t = decode_ids(sequence, VOCAB, masked_positions=[2, 99, -3])
    assert t.masked == (2,) and t.marked.split()[2] == "[MASK]"


def test_special_tokens():
    for token in ("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "[unused12]", "<s>", "<pad>"):
        assert is_special(token), token
    for token in ("the", "[", "[cls]", "##s", "[MASK]x"):
        assert not is_special(token), token


def test_which_features_are_token_ids():
    feats = {
        "input_ids": ex.Feature("int64", [101, 5, 102]),
        "segment_ids": ex.Feature("int64", [0, 0, 1]),
        "masked_lm_ids": ex.Feature("int64", [5, 0]),
        "masked_lm_positions": ex.Feature("int64", [1, 0]),
        "label_ids": ex.Feature("int64", [3]),
        "text/token/id": ex.Feature("int64", [1]),
        "huge_ids": ex.Feature("int64", [10**9]),
        "float_ids": ex.Feature("float", [1.0]),
        "input_mask": ex.Feature("int64", [1, 1, 1]),
    }
    big = Vocab(tuple(f"t{i}" for i in range(200)))
    assert token_id_features(feats, None) == ["input_ids", "text/token/id"]
    assert token_id_features(feats, big) == ["input_ids", "masked_lm_ids", "text/token/id"]
    assert is_token_ids("bert/input_word_ids", ex.Feature("int64", [1]), None)
    assert not is_token_ids("doc_ids", ex.Feature("int64", []), big)


def test_read_vocab_and_find_it_beside_the_data(tmp_path):
    data = tmp_path / "data"
    data.mkdir()
    (tmp_path / "vocab.txt").write_text("[PAD]\nthe\n", encoding="utf-8")
    (data / "train.tfrecord").write_bytes(b"")
    assert vocab_beside(data) == str(tmp_path / "vocab.txt")  # the folder above
    assert vocab_beside(data / "train.tfrecord") == str(tmp_path / "vocab.txt")
    (data / "vocab.txt").write_bytes(b"[PAD]\n\xff\xfeword\n")
    found = vocab_beside(data)
    assert found == str(data / "vocab.txt")
    v = read_vocab(found)
    assert v.tokens == ("[PAD]", "\ufffd\ufffdword") and v.path == found
    other = tmp_path / "other"
    other.mkdir()
    (other / "spm.vocab").write_text("<pad>\t0\n▁the\t-1.5\n", encoding="utf-8")
    assert read_vocab(vocab_beside(other)).tokens == ("<pad>", "▁the")
    (other / "bert_vocab.txt").write_text("x\n")
    assert vocab_beside(other) is None  # two candidates: none is guessed
    empty = tmp_path / "empty"
    empty.mkdir()
    assert vocab_beside(empty) == str(tmp_path / "vocab.txt")
    (tmp_path / "vocab.txt").unlink()
    assert vocab_beside(empty) is None
    assert vocab_beside("s3://bucket/data") is None


def test_a_100_mb_vocab_is_refused_without_reading_it(tmp_path):
    path = tmp_path / "vocab.txt"
    with open(path, "wb") as f:
        f.truncate(100 << 20)  # sparse: 100 MB that take no disk
    tracemalloc.start()
    with pytest.raises(LimitError, match="104,857,600 bytes is larger"):
        read_vocab(path)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak < 1 << 20
    assert os.path.getsize(path) == 100 << 20
    small = tmp_path / "small.txt"
    small.write_text("a\nb\nc\n")
    with pytest.raises(LimitError):
        read_vocab(small, max_bytes=3)


def test_bert_pretraining_records(tmp_path):
    path = gen.write_bert(tmp_path, count=8)
    vocab = read_vocab(vocab_beside(path))
    assert vocab.tokens[:1] == ("[PAD]",)
    assert [vocab.id_of(t) for t in ("[UNK]", "[CLS]", "[SEP]", "[MASK]")] == [100, 101, 102, 103]
    with TFRecordFile(path) as f:
        records = [ex.decode(p) for p in f]
    assert len(records) == 8
    seen_masks = 0
    for r in records:
        feats = r.features
        assert list(feats) == [
            "input_ids",
            "input_mask",
            "segment_ids",
            "masked_lm_positions",
            "masked_lm_ids",
            "masked_lm_weights",
            "next_sentence_labels",
        ]
        for name in ("input_ids", "input_mask", "segment_ids"):
            assert len(feats[name].values) == gen.MAX_SEQ_LENGTH
        for name in ("masked_lm_positions", "masked_lm_ids", "masked_lm_weights"):
            assert len(feats[name].values) == gen.MAX_PREDICTIONS
        assert feats["masked_lm_weights"].type == "float"
        assert feats["next_sentence_labels"].values in ([0], [1])
        assert token_id_features(feats, vocab) == ["input_ids", "masked_lm_ids"]
        t = decode_ids(
            feats["input_ids"].values,
            vocab,
            masked_positions=feats["masked_lm_positions"].values,
            masked_ids=feats["masked_lm_ids"].values,
            masked_weights=feats["masked_lm_weights"].values,
        )
        real = sum(feats["input_mask"].values)
        assert t.padding == gen.MAX_SEQ_LENGTH - real
        assert t.text.startswith("[CLS] ") and t.text.endswith(" [SEP]")
        assert t.text.count("[SEP]") == 2 and not t.outside
        assert len(t.masked) == sum(1 for w in feats["masked_lm_weights"].values if w)
        seen_masks += t.text.count("[MASK]")
    assert seen_masks > 10
