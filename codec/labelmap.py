"""The Object Detection API's ``label_map.pbtxt``: class ids and their names.

A label map is protobuf text format::

    item {
      id: 1
      name: "/m/01g317"
      display_name: "person"
    }

Only ``id``, ``name`` and ``display_name`` of each top-level ``item`` are read; anything else
(keypoints, frequencies, comments) is skipped. Parsing is a small tokenizer, never ``eval``.
"""

from __future__ import annotations

import errno
import os
import re
import stat
from collections.abc import Iterator
from dataclasses import dataclass

from .errors import DecodeError
from .values import plural

__all__ = [
    "LABEL_MAP_NAMES",
    "MAX_LABEL_MAP_BYTES",
    "MAX_LABEL_MAP_ITEMS",
    "MAX_LABEL_MAP_TOKENS",
    "LabelMap",
    "find_label_map",
    "parse_label_map",
    "parse_label_map_bytes",
    "read_capped",
    "read_label_map",
]

_TOKEN = re.compile(
    r"""\s+|\#[^\n]*|(?P<str>"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*')|(?P<punct>[{}:;,])|(?P<word>[^\s{}:;,"'#]+)""",
    re.S,
)
_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "\\": "\\", '"': '"', "'": "'"}


@dataclass(frozen=True)
class LabelMap:
    """Class names by id: ``names[id]`` is the item's ``display_name`` when it has one, else
    its ``name``."""

    names: dict[int, str]

    def __contains__(self, label: object) -> bool:
        return label in self.names

    def __len__(self) -> int:
        return len(self.names)


def _unquote(text: str) -> str:
    body = text[1:-1]
    return re.sub(r"\\(.)", lambda m: _ESCAPES.get(m.group(1), m.group(1)), body)


MAX_LABEL_MAP_ITEMS = 100_000  # the largest public label maps hold some 20,000 classes
MAX_LABEL_MAP_TOKENS = 1_000_000  # ... in some 200,000 tokens: a bound on the work too


def _tokens(text: str) -> Iterator[tuple[str, str, int]]:
    """The tokens of ``text``, one at a time: nothing of the text is held but the token at
    hand, however large the input (a file of 16 MiB of ``{`` costs no more memory than one)."""
    pos = 0
    count = 0
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if m is None:
            raise DecodeError(f"label map: cannot read {text[pos : pos + 20]!r} (at {pos})")
        pos = m.end()
        if m.lastgroup is not None:
            count += 1
            if count > MAX_LABEL_MAP_TOKENS:
                raise DecodeError(
                    f"label map: more than {plural(MAX_LABEL_MAP_TOKENS, 'token')}; not a label map"
                )
        if m.group("str") is not None:
            yield ("str", _unquote(m.group("str")), m.start())
        elif m.group("punct") is not None:
            yield ("punct", m.group("punct"), m.start())
        elif m.group("word") is not None:
            yield ("word", m.group("word"), m.start())


class _Stream:
    """Tokens with one of lookahead."""

    def __init__(self, text: str) -> None:
        self._it = _tokens(text)
        self.head: tuple[str, str, int] | None = next(self._it, None)

    def take(self) -> tuple[str, str, int]:
        tok = self.head
        assert tok is not None
        self.head = next(self._it, None)
        return tok

    def at(self, kind: str, value: str | None = None) -> bool:
        return (
            self.head is not None
            and self.head[0] == kind
            and (value is None or self.head[1] == value)
        )


def _skip_value(toks: _Stream) -> None:
    """Skip one value: a scalar, or a ``{...}`` message however deep (counted, not
    recursed into)."""
    if not toks.at("punct", "{"):
        if toks.head is not None:
            toks.take()
        return
    depth = 0
    while toks.head is not None:
        _, value, _ = toks.take()
        if value == "{":
            depth += 1
        elif value == "}":
            depth -= 1
            if depth == 0:
                return
    raise DecodeError("label map: a '{' is never closed")


def _field(toks: _Stream, end: str | None = None) -> tuple[str, int] | None:
    """The next field's name and position (its ``:`` taken too), past separators; None at
    the end of the text or at ``end`` (an item's ``}``, left to take)."""
    while toks.head is not None and not (end is not None and toks.at("punct", end)):
        kind, value, at = toks.take()
        if kind == "punct" and value in ";,":
            continue
        if kind != "word":
            raise DecodeError(f"label map: unexpected {value!r} at {at}")
        if toks.at("punct", ":"):
            toks.take()
        return value, at
    return None


def _item(toks: _Stream, at: int) -> dict[str, str]:
    """The ``id``, ``name`` and ``display_name`` of the item whose ``{`` was just taken."""
    item: dict[str, str] = {}
    while (field := _field(toks, "}")) is not None:
        v = field[0]
        if toks.head is not None and toks.head[0] in ("str", "word") and v in _FIELDS:
            item[v] = toks.take()[1]
        else:
            _skip_value(toks)
    if toks.head is None:
        raise DecodeError(f"label map: the item at {at} is never closed with '}}'")
    toks.take()
    return item


_FIELDS = ("id", "name", "display_name")


def parse_label_map(text: str) -> LabelMap:
    """Parse a label map; raises :class:`~codec.errors.DecodeError` naming the problem (the
    first one met: a text that is no label map is refused at its first token that cannot
    be one, never after holding all of it)."""
    toks = _Stream(text)
    names: dict[int, str] = {}
    while (field := _field(toks)) is not None:
        value, at = field
        if value != "item":
            _skip_value(toks)
            continue
        if not toks.at("punct", "{"):
            raise DecodeError(f"label map: 'item' at {at} is not followed by '{{'")
        toks.take()
        item = _item(toks, at)
        if "id" not in item:
            raise DecodeError(f"label map: the item at {at} has no id")
        try:
            ident = int(item["id"])
        except ValueError:
            raise DecodeError(f"label map: id {item['id']!r} is not a whole number") from None
        names[ident] = item.get("display_name") or item.get("name") or str(ident)
        if len(names) > MAX_LABEL_MAP_ITEMS:
            many = plural(MAX_LABEL_MAP_ITEMS, "class", "classes")
            raise DecodeError(f"label map: more than {many}; not a label map")
    if not names:
        raise DecodeError("label map: no item with an id")
    return LabelMap(names)


MAX_LABEL_MAP_BYTES = 16 << 20  # label maps hold a few thousand items; larger is not one
LABEL_MAP_NAMES = ("label_map.pbtxt", "labelmap.pbtxt", "label_map.txt")


def read_label_map(path: str) -> LabelMap:
    """Read and parse the label map file at ``path``. Raises ``OSError`` when it cannot be
    read, :class:`~codec.errors.DecodeError` when it is not text, not a label map, or larger
    than :data:`MAX_LABEL_MAP_BYTES` (checked before reading it)."""
    return parse_label_map_bytes(read_capped(path, MAX_LABEL_MAP_BYTES, "label map"))


def read_capped(path: str, limit: int, what: str) -> bytes:
    """The bytes of the small file at ``path`` (a label map, a names file, a JSON
    description), its size checked before anything is read: larger than ``limit`` is a
    :class:`~codec.errors.DecodeError` naming ``what`` and both sizes, and nothing of it is
    read. Only a regular file is read (opened without blocking, so a pipe never waits for a
    writer); a folder or a pipe is an ``OSError``."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    try:
        st = os.fstat(fd)
        if stat.S_ISDIR(st.st_mode):
            raise IsADirectoryError(errno.EISDIR, "is a folder, not a file", path)
        if not stat.S_ISREG(st.st_mode):
            raise OSError(errno.EINVAL, "not a regular file (a pipe, a device or a socket)", path)
        if st.st_size > limit:
            raise DecodeError(
                f"{what}: {st.st_size:,} bytes is too large for a {what} (at most {limit:,})"
            )
        with os.fdopen(fd, "rb", closefd=False) as f:
            # What fstat says and a byte more (a read allocates all it may return): a file
            # grown since is caught below, never a buffer of the whole cap for a small file.
            data = f.read(st.st_size + 1)
            if len(data) > st.st_size:
                data += f.read(limit + 1 - len(data))
    finally:
        os.close(fd)
    if len(data) > limit:  # it grew while it was read
        raise DecodeError(f"{what}: more than {limit:,} bytes is too large for a {what}")
    return data


def parse_label_map_bytes(data: bytes) -> LabelMap:
    """:func:`parse_label_map` of UTF-8 bytes (an upload); raises
    :class:`~codec.errors.DecodeError` when they are not UTF-8 or too many."""
    if len(data) > MAX_LABEL_MAP_BYTES:
        raise DecodeError(f"label map: more than {MAX_LABEL_MAP_BYTES:,} bytes")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise DecodeError(f"label map: not UTF-8 text (byte {exc.start:,})") from None
    return parse_label_map(text)


def find_label_map(folder: str) -> str | None:
    """The path of a label map lying in ``folder`` under one of its usual names
    (:data:`LABEL_MAP_NAMES`), or None."""
    for name in LABEL_MAP_NAMES:
        path = os.path.join(folder, name)
        if os.path.isfile(path):
            return path
    return None
