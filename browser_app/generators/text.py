"""BERT pre-training records, as google-research/bert's ``create_pretraining_data.py`` writes
them, with a small WordPiece ``vocab.txt`` beside them.

Each record is an Example with exactly the script's features: ``input_ids``, ``input_mask``,
``segment_ids`` (``max_seq_length`` int64 each, zero-padded), ``masked_lm_positions``,
``masked_lm_ids`` (``max_predictions_per_seq`` int64 each, padded with 0),
``masked_lm_weights`` (float: 1.0 for a prediction, 0.0 for padding) and
``next_sentence_labels`` (one int64: 1 when sentence B is a random one). Sentences A and B
come from a small corpus written here; tokens are ``[CLS] A [SEP] B [SEP]``; 15 % of them
(never ``[CLS]``/``[SEP]``, at most ``max_predictions_per_seq``) are chosen, 80 % of those
replaced by ``[MASK]``, 10 % kept, 10 % replaced by a random token, as the script does.

The vocab keeps the English BERT vocab's first ids: ``[PAD]`` 0, ``[unused0]`` …
``[unused98]``, ``[UNK]`` 100, ``[CLS]`` 101, ``[SEP]`` 102, ``[MASK]`` 103; then the corpus's
words, some only as WordPiece pieces (``brows`` ``##ing``), and single characters with their
``##`` forms so every word tokenizes.
"""

from __future__ import annotations

import random
import re
from pathlib import Path

from codec import example as ex
from codec.writer import write_records

__all__ = ["CORPUS", "MAX_PREDICTIONS", "MAX_SEQ_LENGTH", "build_vocab", "wordpiece", "write_bert"]

MAX_SEQ_LENGTH = 128
MAX_PREDICTIONS = 20
MASKED_LM_PROB = 0.15

CORPUS = (
    (
        "The river bends twice before it reaches the old mill.",
        "Fishermen gather on the stone bridge every morning.",
        "Their nets dry slowly in the pale winter sun.",
        "By noon the market opens and the square fills with voices.",
    ),
    (
        "A record file stores examples one after another.",
        "Each record begins with its length and a checksum.",
        "Readers skip damaged records and keep browsing the rest.",
        "Nobody needs a large framework to look inside the data.",
    ),
    (
        "The orchestra tuned their instruments in the dark hall.",
        "A single violin played the opening notes very softly.",
        "Slowly the other strings joined and the melody grew.",
        "When the drums arrived the whole audience was listening.",
    ),
    (
        "Mountain roads close early when snow starts falling.",
        "Drivers wait in the village until the ploughs have passed.",
        "The baker keeps her ovens burning through the night.",
        "Warm bread is the first thing travellers remember.",
    ),
)

_WORD = re.compile(r"\w+|[^\w\s]")
_SUFFIXES = ("ing", "ed", "ly", "s")


def _words(text: str) -> list[str]:
    return _WORD.findall(text.lower())


def build_vocab() -> list[str]:
    """The vocab's tokens in id order (see the module docstring)."""
    head = ["[PAD]", *(f"[unused{k}]" for k in range(99)), "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    words: list[str] = []
    pieces: list[str] = []
    for doc in CORPUS:
        for sentence in doc:
            for w in _words(sentence):
                cut = next((s for s in _SUFFIXES if w.endswith(s) and len(w) - len(s) >= 4), None)
                if cut and len(w) > 6:  # longer inflected words only as pieces
                    for t in (w[: -len(cut)], "##" + cut):
                        if t not in pieces and t not in words:
                            pieces.append(t)
                elif w not in words:
                    words.append(w)
    letters = [chr(c) for c in range(ord("a"), ord("z") + 1)]
    tail = sorted(set(words) | set(pieces) - set(letters))
    return head + letters + ["##" + c for c in letters] + [t for t in tail if t not in letters]


def wordpiece(word: str, vocab: dict[str, int]) -> list[str]:
    """Greedy longest-match-first WordPiece, as BERT's ``WordpieceTokenizer``."""
    out: list[str] = []
    start = 0
    while start < len(word):
        end = len(word)
        found = None
        while start < end:
            piece = word[start:end] if start == 0 else "##" + word[start:end]
            if piece in vocab:
                found = piece
                break
            end -= 1
        if found is None:
            return ["[UNK]"]
        out.append(found)
        start = end
    return out


def _tokens(sentence: str, vocab: dict[str, int]) -> list[str]:
    return [p for w in _words(sentence) for p in wordpiece(w, vocab)]


def _instance(
    rng: random.Random, doc: int, index: int, vocab: dict[str, int], words: list[str]
) -> bytes:
    sentences = CORPUS[doc]
    a = _tokens(sentences[index % len(sentences)], vocab)
    is_random_next = rng.random() < 0.5
    if is_random_next:
        other = (doc + 1 + rng.randrange(len(CORPUS) - 1)) % len(CORPUS)
        b = _tokens(rng.choice(CORPUS[other]), vocab)
    else:
        b = _tokens(sentences[(index + 1) % len(sentences)], vocab)
    tokens = ["[CLS]", *a, "[SEP]", *b, "[SEP]"]
    segment_ids = [0] * (len(a) + 2) + [1] * (len(b) + 1)
    candidates = [i for i, t in enumerate(tokens) if t not in ("[CLS]", "[SEP]")]
    rng.shuffle(candidates)
    count = min(MAX_PREDICTIONS, max(1, round(len(tokens) * MASKED_LM_PROB)))
    chosen = sorted(candidates[:count])
    output = list(tokens)
    labels = []
    for pos in chosen:
        r = rng.random()
        if r < 0.8:
            output[pos] = "[MASK]"
        elif r < 0.9:
            pass  # kept
        else:
            output[pos] = rng.choice(words)
        labels.append(tokens[pos])
    input_ids = [vocab[t] for t in output]
    input_mask = [1] * len(input_ids)
    pad = MAX_SEQ_LENGTH - len(input_ids)
    input_ids += [0] * pad
    input_mask += [0] * pad
    segment_ids += [0] * pad
    positions = chosen + [0] * (MAX_PREDICTIONS - len(chosen))
    label_ids = [vocab[t] for t in labels] + [0] * (MAX_PREDICTIONS - len(labels))
    weights = [1.0] * len(labels) + [0.0] * (MAX_PREDICTIONS - len(labels))
    return ex.encode_example(
        {
            "input_ids": ("int64", input_ids),
            "input_mask": ("int64", input_mask),
            "segment_ids": ("int64", segment_ids),
            "masked_lm_positions": ("int64", positions),
            "masked_lm_ids": ("int64", label_ids),
            "masked_lm_weights": ("float", weights),
            "next_sentence_labels": ("int64", [1 if is_random_next else 0]),
        }
    )


def write_bert(folder: str | Path, count: int = 16, *, name: str = "pretraining_data.tfrecord"
               ) -> Path:  # fmt: skip
    """``count`` pre-training records into ``folder/name`` and ``vocab.txt`` beside them."""
    out = Path(folder)
    out.mkdir(parents=True, exist_ok=True)
    tokens = build_vocab()
    (out / "vocab.txt").write_text("\n".join(tokens) + "\n", encoding="utf-8")
    vocab = {t: i for i, t in enumerate(tokens)}
    words = [t for t in tokens[104:] if len(t) > 2 and not t.startswith("##")]
    rng = random.Random(26)
    payloads = []
    for i in range(count):
        doc = i % len(CORPUS)
        payloads.append(_instance(rng, doc, i // len(CORPUS), vocab, words))
    path = out / name
    write_records(path, payloads)
    return path
