"""TFRecord framing: pure functions over bytes.

A TFRecord stream is records laid end to end, with no file header and no sync marker::

    uint64 length                   little-endian
    uint32 masked_crc32c(length)    CRC32C of the 8 length bytes, masked, little-endian
    byte   data[length]
    uint32 masked_crc32c(data)

``mask(crc) = ((crc >> 15) | (crc << 17)) + 0xa282ead8`` (mod 2**32), as in TensorFlow's
``crc32c.h``. GZIP and ZLIB wrap the whole stream, so offsets here are always offsets in the
decompressed stream.

The scanner walks headers only (no payload is touched) and reports damage as data: a
:class:`Problem` per damaged place, and after a bad header it resynchronises by looking for
the next 12-byte window whose length CRC checks out and whose record's data CRC checks out too.

A stream that is not all in memory yet (a remote object, read in blocks) is read through the
same functions: ``need(start, end)`` is called before any byte of ``[start, end)`` is looked at,
so the caller can fetch it first. Without ``need`` every byte is taken to be there.
"""

from __future__ import annotations

import struct
from array import array
from collections.abc import Callable
from dataclasses import dataclass, field
from itertools import repeat
from typing import Any

import crc32c as _crc32c
import numpy as np

from .errors import CorruptRecordError, TruncatedRecordError
from .kinds import DATA_CRC, LENGTH_CRC, TRUNCATED, ProblemKind

HEADER_SIZE = 12  # uint64 length + uint32 masked CRC of the length
FOOTER_SIZE = 4  # uint32 masked CRC of the data
OVERHEAD = HEADER_SIZE + FOOTER_SIZE
MASK_DELTA = 0xA282EAD8

_HEADER = struct.Struct("<QI")
_U32 = struct.Struct("<I")
_U64 = struct.Struct("<Q")

Need = Callable[[int, int], None]
"""``need(start, end)``: bytes ``[start, end)`` of the stream are about to be read."""


def _all_there(start: int, end: int) -> None:
    """The ``need`` of a stream that is all in memory."""


def crc32c(data: Any) -> int:
    """Plain CRC32C (Castagnoli) of a bytes-like object."""
    return int(_crc32c.crc32c(data))


def mask_crc(crc: int) -> int:
    """TensorFlow's CRC mask: rotate right by 15 bits and add a constant."""
    return ((((crc >> 15) | (crc << 17)) & 0xFFFFFFFF) + MASK_DELTA) & 0xFFFFFFFF


def unmask_crc(masked: int) -> int:
    """Inverse of :func:`mask_crc`."""
    rot = (masked - MASK_DELTA) & 0xFFFFFFFF
    return ((rot >> 17) | (rot << 15)) & 0xFFFFFFFF


def mask_crcs(crc: np.ndarray) -> np.ndarray:
    """:func:`mask_crc` of every uint32 of an array."""
    c = np.asarray(crc, dtype=np.uint32)
    return ((c >> np.uint32(15)) | (c << np.uint32(17))) + np.uint32(MASK_DELTA)


def masked_crc32c(data: Any) -> int:
    return mask_crc(int(_crc32c.crc32c(data)))


def encode_header(length: int) -> bytes:
    """The 12-byte header for a payload of ``length`` bytes."""
    raw = _U64.pack(length)
    return raw + _U32.pack(masked_crc32c(raw))


def encode_footer(payload: Any) -> bytes:
    return _U32.pack(masked_crc32c(payload))


def encode_record(payload: bytes) -> bytes:
    """One framed record: header, payload, footer."""
    return encode_header(len(payload)) + bytes(payload) + encode_footer(payload)


def header_ok(buf: Any, offset: int) -> bool:
    """Whether the 12 bytes at ``offset`` are a header whose length CRC checks out."""
    length_bytes = buf[offset : offset + 8]
    (stored,) = _U32.unpack_from(buf, offset + 8)
    return masked_crc32c(length_bytes) == stored


def data_ok(buf: Any, offset: int, length: int) -> bool:
    """Whether the record whose header is at ``offset`` has a matching data CRC.
    The caller has checked that the record lies inside ``buf``."""
    start = offset + HEADER_SIZE
    mv = memoryview(buf)[start : start + length]
    try:
        (stored,) = _U32.unpack_from(buf, start + length)
        return masked_crc32c(mv) == stored
    finally:
        mv.release()


def read_at(buf: Any, offset: int, size: int, *, path: str = "") -> tuple[bytes, int] | None:
    """Read the record whose header is at ``offset``: TensorFlow's three outcomes.

    Returns ``(payload, next_offset)``, or ``None`` at a clean end of the stream (``offset ==
    size``). Raises :class:`TruncatedRecordError` when the stream ends inside the record (1-11
    stray bytes included, which TensorFlow ignores silently) and :class:`CorruptRecordError`
    when a CRC fails. The length is used only after its CRC has checked out and it fits in the
    stream, so a damaged length never turns into an allocation."""
    if offset >= size:
        return None
    if size - offset < HEADER_SIZE:
        raise TruncatedRecordError(
            f"truncated record: {size - offset} stray bytes, too few for a header",
            path=path,
            offset=offset,
        )
    if not header_ok(buf, offset):
        suffix = " (Is this even a TFRecord file?)" if offset == 0 else ""
        raise CorruptRecordError(
            f"corrupted record: the length CRC does not match{suffix}",
            path=path,
            offset=offset,
            kind=LENGTH_CRC,
        )
    (length,) = _U64.unpack_from(buf, offset)
    if length > size - offset - OVERHEAD:
        raise TruncatedRecordError(
            f"truncated record: the header promises {length} payload bytes but the stream ends"
            f" {size - offset - HEADER_SIZE} bytes after it",
            path=path,
            offset=offset,
        )
    if not data_ok(buf, offset, length):
        raise CorruptRecordError(
            f"corrupted record: the data CRC does not match its {length} payload bytes",
            path=path,
            offset=offset,
            kind=DATA_CRC,
        )
    start = offset + HEADER_SIZE
    return bytes(buf[start : start + length]), start + length + FOOTER_SIZE


@dataclass(frozen=True)
class Problem:
    """One damaged place in a stream.

    ``offset`` is the byte offset of the damaged record's header in the (decompressed) stream
    (``None`` when unknown); ``end`` is where readable data resumes, so ``[offset, end)`` is the
    skipped region (``end == offset`` when nothing was skipped, e.g. a bad data CRC whose
    length could be trusted).
    """

    kind: ProblemKind
    offset: int | None
    end: int | None
    message: str
    path: str = ""

    @property
    def skipped(self) -> int:
        if self.offset is None or self.end is None:
            return 0
        return max(0, self.end - self.offset)

    def describe(self) -> str:
        where = self.path or "<memory>"
        at = f" at byte {self.offset}" if self.offset is not None else ""
        return f"{where}{at}: {self.message}"

    def to_json(self) -> dict[str, Any]:
        return {"offset": self.offset, "problem": self.kind, "message": self.describe()}


@dataclass
class ScanChunk:
    """What one call of :func:`scan` found: record offsets and payload lengths in stream
    order, the problems met, and where the next call should start."""

    offsets: array = field(default_factory=lambda: array("Q"))
    lengths: array = field(default_factory=lambda: array("Q"))
    problems: list[Problem] = field(default_factory=list)
    next_offset: int = 0
    done: bool = False
    # Records whose data CRC fails and whose length had to be corrected (see _broken_chain):
    # the data-CRC problem of each, by header offset.
    damaged: list[Problem] = field(default_factory=list)
    # The corrected length of the record before ``start`` (``prev``), when it was one of those.
    prev_length: int | None = None


def _crc_tables() -> np.ndarray:
    """Slicing-by-8 tables for CRC32C: row k advances a byte through k further zero bytes."""
    poly = 0x82F63B78
    tables = np.zeros((8, 256), dtype=np.uint32)
    for i in range(256):
        c = i
        for _ in range(8):
            c = (c >> 1) ^ poly if c & 1 else c >> 1
        tables[0, i] = c
    for k in range(1, 8):
        prev = tables[k - 1]
        tables[k] = (prev >> 8) ^ tables[0][prev & 0xFF]
    return tables


_TABLES = _crc_tables()
_INIT_BYTES = np.frombuffer(b"\xff\xff\xff\xff\x00\x00\x00\x00", dtype=np.uint8)


def _masked_crc_of_u64(values: np.ndarray) -> np.ndarray:
    """Masked CRC32C of the 8 little-endian bytes of each uint64, vectorised (slicing-by-8:
    one table lookup per byte, no loop-carried dependency)."""
    raw = np.ascontiguousarray(values, dtype="<u8").view(np.uint8).reshape(-1, 8)
    crc = _TABLES[7][raw[:, 0] ^ 0xFF]
    for k in range(1, 8):
        b = raw[:, k] ^ _INIT_BYTES[k] if k < 4 else raw[:, k]
        crc ^= _TABLES[7 - k][b]
    crc ^= np.uint32(0xFFFFFFFF)
    return mask_crcs(crc)


def _u32_at(buf: Any, positions: np.ndarray) -> np.ndarray:
    """Little-endian uint32 values at arbitrary byte positions of ``buf`` (a gather through a
    byte-strided view: nothing is copied but the result)."""
    data = np.frombuffer(buf, dtype=np.uint8)
    u32 = np.ndarray(shape=(len(data) - 3,), dtype="<u4", buffer=data, strides=(1,))
    return u32[positions]


def _u64_at(buf: Any, positions: np.ndarray) -> np.ndarray:
    """Little-endian uint64 values at arbitrary byte positions of ``buf`` (as :func:`_u32_at`)."""
    data = np.frombuffer(buf, dtype=np.uint8)
    u64 = np.ndarray(shape=(len(data) - 7,), dtype="<u8", buffer=data, strides=(1,))
    return np.asarray(u64[positions], dtype=np.uint64)


def headers_hold(buf: Any, offsets: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """Whether the header at each of ``offsets`` holds the payload length in ``lengths`` and
    its length CRC checks out, vectorised (the headers must lie inside ``buf``): for checking
    an index made elsewhere against the stream's own headers."""
    if not len(offsets):
        return np.zeros(0, bool)
    stored = _u64_at(buf, offsets.astype(np.intp))
    crcs = np.asarray(_u32_at(buf, (offsets + 8).astype(np.intp)), dtype=np.uint32)
    return (stored == lengths.astype(np.uint64)) & (_masked_crc_of_u64(stored) == crcs)


def data_crcs(buf: Any, offsets: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """The stored (masked) data CRC of every record whose header is at ``offsets`` with the
    payload ``lengths``, gathered without copying the payloads."""
    if not len(offsets):
        return np.empty(0, np.uint32)
    pos = np.asarray(offsets, np.int64) + HEADER_SIZE + np.asarray(lengths, np.int64)
    return np.asarray(_u32_at(buf, pos.astype(np.intp)), dtype="<u4")


def failing_data_crcs(buf: Any, offsets: Any, lengths: Any, lo: int = 0, hi: int = -1) -> list[int]:
    """Positions ``lo..hi`` (default: to the end) of ``offsets`` whose record's data CRC
    fails (headers at ``offsets``, payload ``lengths``; every byte is there).

    Per record only the CRC call runs in Python (``map`` over payload bounds computed with
    NumPy, stored CRCs gathered and compared for all at once): half the CPU, or less, of a
    loop that slices, masks and unpacks each record, which is most of a verify of small
    records."""
    hi = len(offsets) if hi < 0 else hi
    if hi <= lo:
        return []
    offs = np.frombuffer(offsets, np.uint64)[lo:hi].astype(np.int64)
    lens = np.frombuffer(lengths, np.uint64)[lo:hi].astype(np.int64)
    starts = offs + HEADER_SIZE
    spans = map(slice, starts.tolist(), (starts + lens).tolist())
    with memoryview(buf) as mv:
        got = np.fromiter(map(_crc32c.crc32c, map(mv.__getitem__, spans)), np.uint32, hi - lo)
    return (np.flatnonzero(mask_crcs(got) != data_crcs(buf, offs, lens)) + lo).tolist()


def _first_bad_header(buf: Any, offsets: array, lengths: np.ndarray) -> int:
    """Index of the first header in a contiguous run whose length CRC fails, or -1."""
    if not offsets:
        return -1
    pos = np.frombuffer(offsets, dtype=np.uint64).astype(np.intp) + 8
    bad = np.flatnonzero(_masked_crc_of_u64(lengths) != _u32_at(buf, pos))
    return int(bad[0]) if bad.size else -1


_RESYNC_WINDOW = 1 << 20
_FIRST_WINDOW = 1 << 16


def _le_at(window: np.ndarray, at: np.ndarray, first: int, n: int, dtype: Any) -> np.ndarray:
    """The little-endian unsigned values of bytes ``first..first + n`` after each position
    ``at`` of ``window`` (slices when ``at`` is every position)."""
    count = len(at)
    every = count == 0 or (at[0] == 0 and at[-1] == count - 1)
    out = np.zeros(count, dtype=dtype)
    for k in range(n):
        b = window[first + k : first + k + count] if every else window[at + first + k]
        out |= b.astype(dtype) << dtype(8 * k)
    return out


def _header_candidates(window: np.ndarray, pos: int, count: int, used: int) -> np.ndarray:
    """The positions ``0 <= i < count`` of ``window`` (bytes from stream offset ``pos``) where
    a header's length could be: its bytes ``used..7`` zero (a length that fits in the
    stream). In data that is not mostly zeros, few.

    When 3 or more length bytes must be zero, they hold a zero 16-bit word at an even stream
    offset: those words are found first, at memory speed over half as many elements, and
    only the positions 2-6 bytes before one are looked at (in random data, one word in
    65,536). Else, or when such words are many, every byte is tested, the top one first."""
    if 8 - used >= 3 and count >= 64:
        lead = pos & 1  # from the first even stream offset
        pairs = (len(window) - lead) // 2
        words = window[lead : lead + 2 * pairs].view(np.uint16)
        zero = np.flatnonzero(words == 0)
        if len(zero) * 16 <= count:
            even = zero * 2 + lead  # positions in the window of zero words at even offsets
            # a header at i has its zeros in [i + used, i + 8): i from even - 6 to even - used
            near = (even[:, None] - np.arange(used, 7)[None, :]).ravel()
            at = np.unique(near[(near >= 0) & (near < count)])
            for k in range(7, used - 1, -1):
                at = at[window[at + k] == 0]
            return at
    at = np.flatnonzero(window[7 : 7 + count] == 0) if used < 8 else np.arange(count)
    for k in range(6, used - 1, -1):
        if len(at) * 4 > count:
            break
        at = at[window[at + k] == 0]
    if len(at) * 4 > count:  # mostly zeros: slices over every position are cheaper
        at = np.arange(count)
    return at


def find_next_record(buf: Any, start: int, size: int, need: Need | None = None) -> int | None:
    """The first offset >= ``start`` holding a header whose length CRC checks out and whose
    record lies inside the stream with a matching data CRC; ``None`` if there is none.

    Candidates are found a window at a time, vectorised: the byte positions whose length
    would fit in the stream, then the length CRC of those; so a megabyte of junk costs a
    millisecond or two, and memory stays bounded by the window."""
    need = need or _all_there
    data = np.frombuffer(buf, dtype=np.uint8)
    # A length that fits in the stream is below 256**used: its higher bytes are zero.
    used = max(1, -(-size.bit_length() // 8))
    pos = start
    step = _FIRST_WINDOW  # small first (a boundary is usually near), then growing
    while pos + HEADER_SIZE <= size:
        count = min(step, size - HEADER_SIZE - pos + 1)
        step = min(2 * step, _RESYNC_WINDOW)
        need(pos, pos + count + HEADER_SIZE - 1)
        window = data[pos : pos + count + HEADER_SIZE - 1]
        at = _header_candidates(window, pos, count, used)
        if not len(at):
            pos += count
            continue
        # Little-endian u64 / u32 values at those positions.
        u64 = _le_at(window, at, 0, 8, np.uint64)
        stored = _le_at(window, at, 8, 4, np.uint32)
        match = _masked_crc_of_u64(u64) == stored
        for hit, length in zip(at[match].tolist(), u64[match].tolist()):
            cand = pos + hit
            if length > size - cand - OVERHEAD:
                continue
            need(cand, cand + OVERHEAD + length)
            if data_ok(buf, cand, length):
                return cand
        pos += count
    return None


def scan(
    buf: Any,
    start: int,
    size: int,
    *,
    max_records: int = 1 << 20,
    max_bytes: int | None = None,
    path: str = "",
    prev: tuple[int, int] | None = None,
    need: Need | None = None,
) -> ScanChunk:
    """Walk record headers from ``start`` and return up to about ``max_records`` of them,
    stopping early once the walk has passed ``start + max_bytes``.

    Pure over ``buf`` (bytes, mmap or memoryview): reads headers only, allocates nothing from a
    length it has not checked, and turns every kind of damage into a :class:`Problem`. Call again
    with ``next_offset`` until ``done``; ``prev`` is ``(offset, length)`` of the record before
    ``start``, if any; ``need`` (see the module's docstring) is told of every range read."""
    need = need or _all_there
    out = ScanChunk(next_offset=start)
    unpack = _U64.unpack_from
    off = start
    last_header = size - HEADER_SIZE
    limit = last_header if max_bytes is None else min(last_header, start + max_bytes)
    need(start, limit + HEADER_SIZE)
    while len(out.offsets) < max_records:
        # Fast path: follow the length chain; the length CRCs of the run are checked in bulk
        # right after, before any offset of the run is kept.
        run = array("Q")
        append = run.append
        for _ in repeat(None, max_records - len(out.offsets)):
            if off > limit:
                break
            (length,) = unpack(buf, off)
            append(off)
            off += OVERHEAD + length
        if off > size:
            # The last header read promises more bytes than the stream holds.
            off = run.pop()
        if run:
            offs_np = np.frombuffer(run, dtype=np.uint64)
            lens_np = np.empty_like(offs_np)
            lens_np[:-1] = np.diff(offs_np) - np.uint64(OVERHEAD)
            lens_np[-1] = np.uint64(off - int(offs_np[-1]) - OVERHEAD)
            bad = _first_bad_header(buf, run, lens_np)
            if bad >= 0:
                out.offsets.extend(run[:bad])
                out.lengths.frombytes(lens_np[:bad].tobytes())
                _broken_chain(buf, run[bad], size, out, path, prev, LENGTH_CRC, need=need)
                if out.done:
                    return out
                off = out.next_offset
                continue
            out.offsets.extend(run)
            out.lengths.frombytes(lens_np.tobytes())
        if len(out.offsets) >= max_records or off >= size or limit < off <= last_header:
            break
        if off > last_header:
            left = size - off
            message = (
                f"truncated record: {left} stray byte{'s' if left != 1 else ''} after the"
                " last record, too few for a 12-byte header"
            )
            _broken_chain(
                buf, off, size, out, path, prev, TRUNCATED, message, resync=False, need=need
            )
            if out.done:
                return out
            off = out.next_offset
            continue
        # A whole header is there but its record would run past the end of the stream.
        if header_ok(buf, off):
            (length,) = unpack(buf, off)
            message = (
                f"truncated record: the header promises {length} payload bytes but the stream"
                f" ends {size - off - HEADER_SIZE} bytes after it"
            )
            _resync(buf, off, size, out, path, TRUNCATED, message, need)  # its length checked
        else:
            _broken_chain(buf, off, size, out, path, prev, LENGTH_CRC, need=need)
        if out.done:
            return out
        off = out.next_offset
    out.next_offset = off
    out.done = off >= size
    return out


def _broken_chain(
    buf: Any,
    off: int,
    size: int,
    out: ScanChunk,
    path: str,
    prev: tuple[int, int] | None,
    kind: ProblemKind,
    message: str | None = None,
    *,
    resync: bool = True,
    need: Need = _all_there,
) -> None:
    """The chain of lengths led to ``off``, where no record can start (its length CRC fails,
    it runs past the end, or too few bytes are left for a header).

    When the record before ``off`` fails its data CRC, its length is what is wrong: bytes were
    removed from or added to its payload, and the true next record may start before ``off``.
    Reading then resumes at the first record after that record's header (both CRCs must check),
    so an intact neighbour is never lost, and the record is kept as damaged with its length
    corrected to end there. Otherwise the bytes at ``off`` are skipped to the next record."""
    if out.offsets:
        last: tuple[int, int] | None = (out.offsets[-1], out.lengths[-1])
    else:
        last = prev
    if last is not None and last[0] + OVERHEAD + last[1] == off:
        p_off, p_len = last
        need(p_off, p_off + OVERHEAD + p_len)
        if not data_ok(buf, p_off, p_len):
            nxt = find_next_record(buf, p_off + HEADER_SIZE, size, need)
            end = size if nxt is None else nxt
            fixed = max(0, end - p_off - OVERHEAD)
            if out.offsets:
                out.lengths[-1] = fixed
            else:
                out.prev_length = fixed
            where = (
                f"reading resumes at byte {nxt}"
                if nxt is not None
                else f"no intact record follows ({size - off} bytes to the end)"
            )
            out.damaged.append(
                Problem(
                    DATA_CRC,
                    p_off,
                    end,
                    f"corrupted record: the data CRC does not match its {p_len} payload bytes,"
                    f" and that length leads to byte {off}, where no record starts: bytes were"
                    f" removed from or added to its payload; {where}",
                    path,
                )
            )
            out.next_offset = end
            out.done = nxt is None
            return
    if not resync:
        assert message is not None
        out.problems.append(Problem(kind, off, size, message, path))
        out.next_offset = size
        out.done = True
        return
    _resync(buf, off, size, out, path, kind, message, need)


def _resync(
    buf: Any,
    off: int,
    size: int,
    out: ScanChunk,
    path: str,
    kind: ProblemKind,
    message: str | None = None,
    need: Need = _all_there,
) -> None:
    nxt = find_next_record(buf, off + 1, size, need)
    end = size if nxt is None else nxt
    if message is None:
        message = "corrupted record: the length CRC does not match"
        if off == 0:
            message += " (Is this even a TFRecord file?)"
    skipped = end - off
    if nxt is None:
        message += f"; no intact record follows ({skipped} bytes skipped to the end)"
    else:
        message += f"; {skipped} bytes skipped, reading resumes at byte {nxt}"
    out.problems.append(Problem(kind, off, end, message, path))
    out.next_offset = end
    out.done = nxt is None
