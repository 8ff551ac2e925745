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

import os
import re
from dataclasses import dataclass

from .errors import DecodeError

__all__ = [
    "LABEL_MAP_NAMES",
    "MAX_LABEL_MAP_BYTES",
    "LabelMap",
    "find_label_map",
    "parse_label_map",
    "parse_label_map_bytes",
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


def _tokens(text: str) -> list[tuple[str, str, int]]:
    out = []
    pos = 0
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if m is None:
            raise DecodeError(f"label map: cannot read {text[pos : pos + 20]!r} (at {pos})")
        pos = m.end()
        if m.group("str") is not None:
            out.append(("str", _unquote(m.group("str")), m.start()))
        elif m.group("punct") is not None:
            out.append(("punct", m.group("punct"), m.start()))
        elif m.group("word") is not None:
            out.append(("word", m.group("word"), m.start()))
    return out


def parse_label_map(text: str) -> LabelMap:
    """Parse a label map; raises :class:`~codec.errors.DecodeError` naming the problem."""
    toks = _tokens(text)
    names: dict[int, str] = {}
    i = 0

    def skip_value(i: int) -> int:
        """Skip one value (a scalar or a ``{...}`` message) starting at ``i``."""
        if i < len(toks) and toks[i] == ("punct", "{", toks[i][2]):
            depth = 0
            while i < len(toks):
                if toks[i][:2] == ("punct", "{"):
                    depth += 1
                elif toks[i][:2] == ("punct", "}"):
                    depth -= 1
                    if depth == 0:
                        return i + 1
                i += 1
            raise DecodeError("label map: a '{' is never closed")
        return i + 1

    while i < len(toks):
        kind, value, at = toks[i]
        if kind == "punct" and value in ";,":
            i += 1
            continue
        if kind != "word":
            raise DecodeError(f"label map: unexpected {value!r} at {at}")
        field = value
        i += 1
        if i < len(toks) and toks[i][:2] == ("punct", ":"):
            i += 1
        if field != "item":
            i = skip_value(i)
            continue
        if i >= len(toks) or toks[i][:2] != ("punct", "{"):
            raise DecodeError(f"label map: 'item' at {at} is not followed by '{{'")
        i += 1
        item: dict[str, str] = {}
        while i < len(toks) and toks[i][:2] != ("punct", "}"):
            k, v, a = toks[i]
            if k == "punct" and v in ";,":
                i += 1
                continue
            if k != "word":
                raise DecodeError(f"label map: unexpected {v!r} at {a}")
            i += 1
            if i < len(toks) and toks[i][:2] == ("punct", ":"):
                i += 1
            if (
                i < len(toks)
                and toks[i][0] in ("str", "word")
                and v in ("id", "name", "display_name")
            ):
                item[v] = toks[i][1]
                i += 1
            else:
                i = skip_value(i)
        if i >= len(toks):
            raise DecodeError("label map: an item is never closed with '}'")
        i += 1
        if "id" not in item:
            raise DecodeError(f"label map: the item at {at} has no id")
        try:
            ident = int(item["id"])
        except ValueError:
            raise DecodeError(f"label map: id {item['id']!r} is not a whole number") from None
        names[ident] = item.get("display_name") or item.get("name") or str(ident)
    if not names:
        raise DecodeError("label map: no item with an id")
    return LabelMap(names)


MAX_LABEL_MAP_BYTES = 16 << 20  # label maps hold a few thousand items; larger is not one
LABEL_MAP_NAMES = ("label_map.pbtxt", "labelmap.pbtxt", "label_map.txt")


def read_label_map(path: str) -> LabelMap:
    """Read and parse the label map file at ``path``. Raises ``OSError`` when it cannot be
    read, :class:`~codec.errors.DecodeError` when it is not text, not a label map, or larger
    than :data:`MAX_LABEL_MAP_BYTES` (checked before reading it)."""
    with open(path, "rb") as f:
        size = os.fstat(f.fileno()).st_size
        if size > MAX_LABEL_MAP_BYTES:
            raise DecodeError(
                f"label map: {size:,} bytes is too large for a label map"
                f" (at most {MAX_LABEL_MAP_BYTES:,})"
            )
        data = f.read(MAX_LABEL_MAP_BYTES + 1)
    return parse_label_map_bytes(data)


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
