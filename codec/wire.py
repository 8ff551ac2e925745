"""Protobuf wire-format helpers shared by the message, tensor and schema code.

Two flavours of the same few ideas: scalar functions for walking one message
(:func:`read_varint`, :func:`skip_field`) and numpy functions that do the same for many
positions at once (:func:`varints_at`, :func:`decode_varints`, :func:`ranges`), which is what
lets the schema walk read a million Examples in a couple of seconds.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .errors import DecodeError

__all__ = [
    "WIRE_FIXED32",
    "WIRE_FIXED64",
    "WIRE_LEN",
    "WIRE_VARINT",
    "WireError",
    "decode_varints",
    "ranges",
    "read_varint",
    "skip_field",
    "varints_at",
]

WIRE_VARINT = 0
WIRE_FIXED64 = 1
WIRE_LEN = 2
WIRE_FIXED32 = 5

_MAX_VARINT_BYTES = 10


class WireError(DecodeError):
    """Bytes that are not well-formed protobuf wire format (a cut or over-long varint, a
    field running past its end, a wire type that cannot occur)."""


def read_varint(buf: Any, pos: int) -> tuple[int, int]:
    """The varint at ``buf[pos]`` and the position after it. Raises :class:`WireError` when
    it is cut off or longer than 10 bytes / 64 bits."""
    try:
        c = buf[pos]
        if c < 0x80:
            return c, pos + 1
        result = c & 0x7F
        shift = 7
        pos += 1
        while True:
            c = buf[pos]
            pos += 1
            result |= (c & 0x7F) << shift
            if c < 0x80:
                if result >> 64:
                    raise WireError("varint beyond 64 bits")
                return result, pos
            shift += 7
            if shift >= 7 * _MAX_VARINT_BYTES:
                raise WireError("varint too long")
    except IndexError:
        raise WireError("truncated varint") from None


def skip_field(buf: Any, pos: int, wire: int) -> tuple[int, int]:
    """Skip the value of a field of wire type ``wire`` at ``pos``: ``(start, end)`` of its
    value (for a length-delimited field, of its content). Raises :class:`WireError`."""
    if wire == WIRE_VARINT:
        _, end = read_varint(buf, pos)
        return pos, end
    if wire == WIRE_LEN:
        length, start = read_varint(buf, pos)
        end = start + length
    elif wire == WIRE_FIXED64:
        start, end = pos, pos + 8
    elif wire == WIRE_FIXED32:
        start, end = pos, pos + 4
    else:
        raise WireError(f"unsupported wire type {wire}")
    if end > len(buf):
        raise WireError("a field runs past the end")
    return start, end


# -- vectorised ------------------------------------------------------------------------------


def varints_at(b: np.ndarray, p: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Varints of up to 5 bytes (lengths) at positions ``p`` of the byte array ``b``:
    ``(values, sizes)``; size 0 marks a varint longer than 5 bytes (not a plausible length).
    ``b`` must have at least 5 bytes after every position (pad it)."""
    val = b[p].astype(np.int64)
    size = np.ones(len(p), np.int64)
    more = val >= 0x80
    if not more.any():
        return val, size
    val &= 0x7F
    idx = np.flatnonzero(more)
    for k in range(1, 5):
        byte = b[p[idx] + k].astype(np.int64)
        val[idx] |= (byte & 0x7F) << (7 * k)
        size[idx] += 1
        cont = byte >= 0x80
        idx = idx[cont]
        if not idx.size:
            return val, size
    size[idx] = 0
    return val, size


def ranges(starts: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """Concatenated ``arange(s, s + n)`` for each ``(s, n)`` pair."""
    total = int(lengths.sum())
    if not total:
        return np.empty(0, np.int64)
    out_starts = np.cumsum(lengths) - lengths
    return np.arange(total, dtype=np.int64) + np.repeat(starts - out_starts, lengths)


def decode_varints(data: np.ndarray) -> np.ndarray:
    """Every varint in ``data`` (complete varints back to back) as int64 (two's complement).
    Raises ``ValueError`` for a varint longer than 10 bytes."""
    if not data.size:
        return np.empty(0, np.int64)
    ends = data < 0x80
    group: np.ndarray = np.cumsum(ends) - ends  # value number of each byte
    starts = np.flatnonzero(np.concatenate([[True], ends[:-1]]))
    pos = np.arange(data.size) - starts[group]
    if pos.max() > 9:
        raise ValueError("varint too long")
    contrib = (data.astype(np.uint64) & np.uint64(0x7F)) << (pos.astype(np.uint64) * np.uint64(7))
    vals = np.bitwise_or.reduceat(contrib, starts)
    return vals.view(np.int64)
