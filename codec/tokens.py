"""Token ids as text: a WordPiece ``vocab.txt`` (BERT's, id = line number), ids decoded with
``##`` pieces merged, special tokens, ids outside the vocab and masked positions marked; and
the rule of which int64 features hold token ids.

The vocab is read as BERT's ``tokenization.load_vocab`` reads it: one token a line, stripped
of surrounding whitespace, the id its line number (an empty line is a token too); the newline
that ends the last line starts no token. A SentencePiece ``*.vocab`` (``piece<TAB>score``)
reads the same way, its first column the token. The file's size is checked before anything is
read (:data:`VOCAB_MAX_BYTES`), and no more than that is ever read.

Decoding follows BERT's pre-training records (``create_pretraining_data.py``):
``masked_lm_positions`` / ``masked_lm_ids`` / ``masked_lm_weights`` are padded to
``max_predictions_per_seq`` with position 0, id 0 and weight 0; padding entries are not
masks. ``[PAD]`` at the end of ``input_ids`` is counted, not shown.
"""

from __future__ import annotations

import glob
import os
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from codec.errors import LimitError

__all__ = [
    "SPECIAL_TOKENS",
    "VOCAB_MAX_BYTES",
    "VOCAB_NAMES",
    "Token",
    "TokenText",
    "Vocab",
    "decode_ids",
    "is_special",
    "is_token_ids",
    "parse_vocab",
    "read_vocab",
    "token_id_features",
    "vocab_beside",
]

VOCAB_MAX_BYTES = 32 << 20  # BERT's English vocab is 226 KiB, the multilingual one 950 KiB
SPECIAL_TOKENS = ("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]")
VOCAB_NAMES = ("vocab.txt", "*vocab*.txt", "*.vocab")

_SPECIAL = re.compile(r"^(\[(PAD|UNK|CLS|SEP|MASK|unused\d+)\]|<(s|/s|pad|unk|mask|cls|sep)>)$")
_PAD = {"[PAD]", "<pad>"}


@dataclass(frozen=True)
class Vocab:
    """A token vocabulary: ``tokens[id]``; ``path`` where it was read from (``None`` when
    parsed from text)."""

    tokens: tuple[str, ...]
    path: str | None = None
    _ids: dict[str, int] = field(default_factory=dict, repr=False, compare=False)

    def __len__(self) -> int:
        return len(self.tokens)

    def id_of(self, token: str) -> int | None:
        """The id of ``token`` (the first line holding it), or ``None``."""
        if not self._ids and self.tokens:
            ids: dict[str, int] = {}
            for i, t in enumerate(self.tokens):
                ids.setdefault(t, i)
            object.__setattr__(self, "_ids", ids)
        return self._ids.get(token)

    def token(self, i: int) -> str | None:
        return self.tokens[i] if 0 <= i < len(self.tokens) else None


def parse_vocab(text: str, path: str | None = None) -> Vocab:
    """A :class:`Vocab` from the text of a ``vocab.txt`` (or a SentencePiece ``.vocab``)."""
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()  # the newline ending the last line
    tokens = tuple(line.split("\t", 1)[0].strip() for line in lines)
    return Vocab(tokens, path)


def read_vocab(path: str | os.PathLike[str], *, max_bytes: int = VOCAB_MAX_BYTES) -> Vocab:
    """The vocab in ``path``. Raises :class:`LimitError` when the file is larger than
    ``max_bytes`` (checked before reading; a file that grows while it is read is cut off at
    the limit and refused the same way), ``OSError`` when it cannot be read. Bytes that are
    not UTF-8 become U+FFFD."""
    p = os.fspath(path)
    with open(p, "rb") as f:
        size = os.fstat(f.fileno()).st_size
        if size > max_bytes:
            raise LimitError(
                f"{p}: a vocab of {size:,} bytes is larger than the {max_bytes:,} read"
            )
        data = f.read(max_bytes + 1)
    if len(data) > max_bytes:
        raise LimitError(f"{p}: the vocab grew past {max_bytes:,} bytes while it was read")
    return parse_vocab(data.decode("utf-8", errors="replace"), p)


def vocab_beside(folder: str | os.PathLike[str]) -> str | None:
    """The vocab file that lies beside data in ``folder`` (a local folder, or a file whose
    folder is meant): ``vocab.txt`` there, else the one file there named ``*vocab*.txt`` or
    ``*.vocab``, else ``vocab.txt`` in the folder above (BERT's data folders sit beside the
    model's). ``None`` when there is none, or several that could be meant."""
    start = os.fspath(folder)
    if "://" in start:
        return None
    if os.path.isfile(start):
        start = os.path.dirname(start) or "."
    exact = os.path.join(start, VOCAB_NAMES[0])
    if os.path.isfile(exact):
        return exact
    found: set[str] = set()
    for pattern in VOCAB_NAMES[1:]:
        found.update(glob.glob(os.path.join(glob.escape(start), pattern)))
    found = {p for p in found if os.path.isfile(p)}
    if found:
        return found.pop() if len(found) == 1 else None
    above = os.path.join(os.path.dirname(os.path.abspath(start)), VOCAB_NAMES[0])
    return above if os.path.isfile(above) else None


def is_special(token: str) -> bool:
    """``[PAD]``, ``[UNK]``, ``[CLS]``, ``[SEP]``, ``[MASK]``, ``[unusedN]`` and the
    ``<s>``-style tokens of other vocabularies."""
    return bool(_SPECIAL.match(token))


@dataclass(frozen=True)
class Token:
    """One id of a sequence: its vocab entry (``""`` when ``outside`` the vocab), whether it
    is special, a ``##`` continuation, at a masked position (with the token that was there,
    from ``masked_lm_ids``, in ``original``)."""

    id: int
    text: str
    special: bool = False
    outside: bool = False
    continues: bool = False
    masked: bool = False
    original: str | None = None

    def shown(self) -> str:
        """The token as text shows it: an id outside the vocab as ``[? 40000]``."""
        return f"[? {self.id}]" if self.outside else self.text


@dataclass(frozen=True)
class TokenText:
    """Decoded ids: every token, the ``text`` with ``##`` pieces merged and trailing
    padding left out (``padding`` counts it), and ``marked``, the same text with each masked
    position written ``[MASK→cat]`` (the token ``masked_lm_ids`` names; ``[MASK]`` stays when
    unknown), a position BERT left as it was (or replaced by a random token) ``[dog]`` (or
    ``[tree→dog]``), and each id outside the vocab ``[? id]``."""

    tokens: tuple[Token, ...]
    text: str
    marked: str
    padding: int

    @property
    def special(self) -> tuple[int, ...]:
        return tuple(i for i, t in enumerate(self.tokens) if t.special)

    @property
    def outside(self) -> tuple[int, ...]:
        return tuple(i for i, t in enumerate(self.tokens) if t.outside)

    @property
    def masked(self) -> tuple[int, ...]:
        return tuple(i for i, t in enumerate(self.tokens) if t.masked)


_CLEANUPS = (
    (" .", "."),
    (" ?", "?"),
    (" !", "!"),
    (" ,", ","),
    (" ' ", "'"),
    (" n't", "n't"),
    (" 'm", "'m"),
    (" 's", "'s"),
    (" 've", "'ve"),
    (" 're", "'re"),
)


def _join(words: Iterable[tuple[str, bool]]) -> str:
    out: list[str] = []
    for text, continues in words:
        if continues and out:
            out[-1] += text
        else:
            out.append(text)
    joined = " ".join(out)
    for a, b in _CLEANUPS:
        joined = joined.replace(a, b)
    return joined


def _masks(
    positions: Sequence[int] | None,
    ids: Sequence[int] | None,
    weights: Sequence[float] | None,
    vocab: Vocab,
    length: int,
) -> dict[int, str | None]:
    out: dict[int, str | None] = {}
    if not positions:
        return out
    for k, pos in enumerate(positions):
        weight = weights[k] if weights is not None and k < len(weights) else None
        original_id = ids[k] if ids is not None and k < len(ids) else None
        if weight is not None:
            if weight == 0:
                continue
        elif pos == 0 and (original_id in (0, None)):
            continue  # BERT's padding entry: position 0 ([CLS]) is never masked
        if not 0 <= pos < length:
            continue
        out[pos] = vocab.token(original_id) if original_id is not None else None
    return out


def decode_ids(
    ids: Sequence[int],
    vocab: Vocab,
    *,
    masked_positions: Sequence[int] | None = None,
    masked_ids: Sequence[int] | None = None,
    masked_weights: Sequence[float] | None = None,
) -> TokenText:
    """``ids`` as tokens and text (see :class:`TokenText`). ``masked_positions`` (with
    ``masked_ids`` and ``masked_weights`` when there are) are BERT's
    ``masked_lm_positions`` / ``masked_lm_ids`` / ``masked_lm_weights``."""
    masks = _masks(masked_positions, masked_ids, masked_weights, vocab, len(ids))
    tokens: list[Token] = []
    for i, raw in enumerate(ids):
        t = vocab.token(int(raw))
        masked = i in masks
        if t is None:
            tokens.append(Token(int(raw), "", outside=True, masked=masked))
            continue
        special = is_special(t)
        continues = t.startswith("##") and len(t) > 2 and not special
        tokens.append(
            Token(
                int(raw),
                t,
                special=special,
                continues=continues,
                masked=masked,
                original=masks.get(i),
            )
        )
    end = len(tokens)
    while end and tokens[end - 1].text in _PAD:
        end -= 1
    shown = tokens[:end]

    def piece(t: Token, marked: bool) -> tuple[str, bool]:
        text = t.shown()[2:] if t.continues else t.shown()
        if not (marked and t.masked):
            return text, t.continues
        original = t.original[2:] if t.original and t.original.startswith("##") else t.original
        if t.text == "[MASK]":
            return (f"[MASK→{original}]" if original else "[MASK]"), t.continues
        if not original or original == text:
            return f"[{text}]", t.continues
        return f"[{text}→{original}]", t.continues

    text = _join(piece(t, False) for t in shown)
    marked = _join(piece(t, True) for t in shown)
    return TokenText(tuple(tokens), text, marked, len(tokens) - end)


# --------------------------------------------------------------------------------------------
# Which features hold token ids

_ALWAYS = {"input_ids", "input_word_ids", "token_ids"}
_NOT_TOKENS = {
    "segment_ids",
    "token_type_ids",
    "position_ids",
    "label_ids",
    "input_type_ids",
    "masked_lm_positions",
    "class_ids",
    "video_ids",
    "image_ids",
}


def is_token_ids(name: str, feature: Any, vocab: Vocab | None) -> bool:
    """Whether the int64 feature ``name`` holds token ids: ``input_ids`` (also
    ``input_word_ids``, ``token_ids``, ``text/token/id``) always; with a ``vocab``, any other
    ``*_ids`` (``masked_lm_ids``) whose values all lie inside it, but not the ids that are not
    tokens (``segment_ids``, ``token_type_ids``, ``position_ids`` …). ``name``'s last path
    part is what counts (``text/input_ids``)."""
    if getattr(feature, "type", "int64") != "int64":
        return False
    last = name.rsplit("/", 1)[-1].lower()
    if last in _ALWAYS or name.lower().endswith("token/id"):
        return True
    if vocab is None or last in _NOT_TOKENS or not last.endswith("_ids"):
        return False
    values = getattr(feature, "values", feature)
    try:
        return bool(values) and all(0 <= int(v) < len(vocab) for v in values)
    except (TypeError, ValueError):
        return False


def token_id_features(features: Mapping[str, Any], vocab: Vocab | None) -> list[str]:
    """The names of ``features`` that :func:`is_token_ids` takes for token ids, in order."""
    return [n for n, f in features.items() if is_token_ids(n, f, vocab)]
