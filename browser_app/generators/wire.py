"""Byte-level helpers for generated records: another map order, and a file.

A ``tf.train.Example`` is ``Features features = 1``, and ``Features`` is
``map<string, Feature> feature = 1``: on the wire, repeated entries (field 1, length-delimited)
each holding ``key = 1`` and ``value = 2``. Protobuf leaves the order of map entries
unspecified, and TensorFlow writes them in its hash table's order, which differs between
runs. :func:`shuffled_features` moves whole entries, byte for byte, so every key and value
stays exactly as it was; only where they sit changes.
"""

from __future__ import annotations

import os
import random
from collections.abc import Iterable
from typing import Any

from codec.wire import read_varint, skip_field
from codec.writer import TFRecordWriter

__all__ = ["shuffled_features", "write"]


def _fields(buf: bytes, start: int, end: int) -> list[tuple[int, int, int, int, int]]:
    """``(field, wire type, field start, content start, content end)`` of each field of the
    message ``buf[start:end]``."""
    out = []
    pos = start
    while pos < end:
        begin = pos
        tag, pos = read_varint(buf, pos)
        field, wire = tag >> 3, tag & 7
        lo, hi = skip_field(buf, pos, wire)
        out.append((field, wire, begin, lo, hi))
        pos = hi
    if pos != end:
        raise ValueError("a field runs past the end of its message")
    return out


def _entry_key(buf: bytes, lo: int, hi: int) -> bytes | None:
    key = None
    for field, wire, _, a, b in _fields(buf, lo, hi):
        if field == 1 and wire == 2:
            key = buf[a:b]
    return key


def _shuffled(items: list[bytes], keys: list[bytes | None], rng: Any) -> list[bytes]:
    order = list(range(len(items)))
    rng.shuffle(order)
    # Entries of one key keep their relative order (the last one is the one that counts).
    positions: dict[bytes, list[int]] = {}
    for slot, i in enumerate(order):
        key = keys[i]
        if key is not None:
            positions.setdefault(key, []).append(slot)
    originals: dict[bytes, list[int]] = {}
    for i, key in enumerate(keys):
        if key is not None:
            originals.setdefault(key, []).append(i)
    for key, slots in positions.items():
        for slot, i in zip(slots, originals[key]):
            order[slot] = i
    return [items[i] for i in order]


def _movable(items: list[bytes], keys: list[bytes | None]) -> bool:
    """Whether some other order exists: two different entries that are not of one key."""
    for i in range(len(items)):
        for j in range(i + 1, len(items)):
            if items[i] != items[j] and (keys[i] is None or keys[i] != keys[j]):
                return True
    return False


def shuffled_features(payload: bytes, rng: random.Random | Any) -> bytes:
    """``payload`` (a serialized Example) with the entries of its ``features`` map in another
    order drawn from ``rng`` (a ``random.Random`` or a numpy ``Generator``): different bytes
    whenever two entries differ, the same decoded features. Fields other than the map's
    entries stay where they are."""
    buf = bytes(payload)
    parts: list[bytes] = []
    pos = 0
    for field, wire, _begin, lo, hi in _fields(buf, 0, len(buf)):
        if field != 1 or wire != 2:
            continue
        entries = _fields(buf, lo, hi)
        items = [buf[b:e] for _, _, b, _, e in entries]
        if len(set(items)) < 2:
            continue
        keys = [_entry_key(buf, a, e) if f == 1 and w == 2 else None for f, w, _, a, e in entries]
        if not _movable(items, keys):
            continue
        while True:
            new = _shuffled(items, keys, rng)
            if new != items:
                break
        parts += [buf[pos:lo], b"".join(new)]
        pos = hi
    if not parts:
        return buf
    parts.append(buf[pos:])
    return b"".join(parts)


def write(
    path: str | os.PathLike[str], payloads: Iterable[bytes], compression: str | None = "none"
) -> int:
    """Write ``payloads`` as a TFRecord file at ``path`` (atomically; ``compression`` is
    ``none``, ``gzip`` or ``zlib``); the number of records written."""
    with TFRecordWriter(path, compression=compression) as writer:
        for payload in payloads:
            writer.write(payload)
        return writer.records
