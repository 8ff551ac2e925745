"""GZIP and ZLIB streams inflated in bounded steps, keeping every byte that inflates.

A damaged compressed stream (a corrupt deflate block, a wrong trailer, a cut) stops inflation,
but never costs what inflated before the damage: the piece of input in which inflation failed
is fed again, from the decompressor's state before that piece, up to the last byte that still
inflates, so the output holds every byte the stream yields and the problem names the exact
compressed byte where it failed.

What is read follows TensorFlow: every member of a GZIP file (members are concatenated), and the
one stream of a ZLIB file. Bytes after the end (junk after a GZIP member, anything after a ZLIB
stream) are reported, never silently ignored, and never called a truncation.

Memory stays bounded: input is taken in 64 KiB pieces and output handed on in pieces of at most
4 MiB, whatever the compression ratio.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from .errors import LimitError
from .framing import Problem
from .kinds import COMPRESSION, GZIP, Compression
from .values import plural

__all__ = ["IN_STEP", "OUT_STEP", "InflateResult", "inflate"]

IN_STEP = 64 << 10  # compressed bytes fed at a time
OUT_STEP = 4 << 20  # inflated bytes produced at a time, at most
_GZIP_MAGIC = b"\x1f\x8b"
_NAMES = {GZIP: "GZIP"}


@dataclass
class InflateResult:
    """What :func:`inflate` did: ``inflated`` bytes written, ``consumed`` compressed bytes that
    inflated (up to the damage or the end of the last stream), ``members`` complete GZIP
    members (or ZLIB streams), and the ``problems`` met (kind ``compression``)."""

    inflated: int = 0
    consumed: int = 0
    members: int = 0
    problems: list[Problem] = field(default_factory=list)


def _feed(d: Any, data: bytes, sink: Callable[[bytes], None] | None) -> None:
    """Decompress all of ``data`` with ``d`` in bounded output steps (raises zlib.error)."""
    while data:
        out = d.decompress(data, OUT_STEP)
        if sink is not None and out:
            sink(out)
        if d.eof:
            return
        data = d.unconsumed_tail


def _longest_good_prefix(saved: Any, piece: bytes) -> int:
    """The length of the longest prefix of ``piece`` that inflates without an error from the
    decompressor state ``saved`` (which is left untouched)."""
    lo, hi = 0, len(piece) - 1  # piece[:lo] inflates; piece[:hi + 1] does not
    while lo < hi:
        mid = (lo + hi + 1) // 2
        try:
            _feed(saved.copy(), piece[:mid], None)
        except zlib.error:
            hi = mid - 1
        else:
            lo = mid
    return lo


def _reason(exc: zlib.error) -> str:
    text = str(exc)
    return text.split(": ", 1)[1] if ": " in text else text


def inflate(
    read: Callable[[int, int], bytes],
    size: int,
    compression: Compression,
    write: Callable[[bytes], object],
    *,
    path: str = "",
    progress: Callable[[int, int], None] | None = None,
    limit: int | None = None,
    why: str = "",
) -> InflateResult:
    """Inflate the ``size``-byte GZIP or ZLIB stream that ``read(offset, n)`` returns, handing
    the output to ``write`` in pieces. Never raises for damaged data: see :class:`InflateResult`.

    With ``limit``, raises :class:`~codec.errors.LimitError` as soon as the output would grow
    past ``limit`` bytes (a small file of compressed zeros can inflate to gigabytes); ``why``
    says where the limit comes from, for the message."""
    name = _NAMES.get(compression, "ZLIB")
    wbits = 16 + zlib.MAX_WBITS if compression == GZIP else zlib.MAX_WBITS
    result = InflateResult()

    def out(data: bytes) -> None:
        if limit is not None and result.inflated + len(data) > limit:
            raise LimitError(
                f"{path or 'the file'}: the {name} file ({size:,} bytes) inflates to more than"
                f" {limit:,} bytes, {why or 'the limit set'}; inflating stopped there"
            )
        result.inflated += len(data)
        write(data)

    def problem(message: str) -> None:
        result.problems.append(Problem(COMPRESSION, None, None, message, path))

    d = zlib.decompressobj(wbits)
    pending = b""
    at = 0  # compressed offset of pending[0]
    read_pos = 0
    started = False  # the current member/stream has been fed at least one byte
    while True:
        if not pending:
            pending = read(read_pos, IN_STEP)
            at = read_pos
            read_pos += len(pending)
            if not pending:
                if started:
                    problem(
                        f"the {name} stream is cut short: the file ends at compressed byte"
                        f" {size:,} before the stream does; the {result.inflated:,} bytes"
                        " inflated before that are kept"
                    )
                break
            if progress is not None:
                progress(read_pos, size)
        started = True
        saved = d.copy()
        try:
            _feed(d, pending, out)
        except zlib.error as exc:
            good = _longest_good_prefix(saved, pending)
            _feed(saved, pending[:good], out)
            failed_at = at + good
            result.consumed = failed_at
            after = size - failed_at - 1
            reason = _reason(exc)
            if "check" in reason:
                # The trailer (CRC and length of the data) is read after all the data: every
                # byte of the stream has been inflated. A GZIP data check leaves the 4-byte
                # length behind it.
                after -= 4 if compression == GZIP and "data" in reason else 0
                unread = (
                    f"; the {plural(after, 'byte')} after the trailer are not read"
                    if after > 0
                    else ""
                )
                problem(
                    f"the {name} trailer at compressed byte {failed_at:,} does not match the"
                    f" inflated data ({reason}); all {result.inflated:,} bytes inflated, and"
                    f" each record's own CRC tells whether it is intact{unread}"
                )
            else:
                trailer = 8 if compression == GZIP else 4
                lost = (
                    f"the {plural(after, 'compressed byte')} after it cannot be inflated; "
                    if after > trailer
                    # So few that they may be no more than the checksum after the data.
                    else f"the last {plural(after, 'compressed byte')} (no more than the"
                    f" {name} trailer holds) cannot be read; "
                )
                problem(
                    f"the {name} stream is damaged at compressed byte {failed_at:,} ({reason}):"
                    f" {lost if after > 0 else ''}the {result.inflated:,} bytes inflated"
                    " before it are kept"
                )
            return result
        if not d.eof:
            at += len(pending)
            pending = b""
            continue
        # The end of a member (GZIP) or of the stream (ZLIB).
        rest = d.unused_data
        end = at + len(pending) - len(rest)
        result.members += 1
        result.consumed = end
        started = False
        if compression != GZIP:
            trailing = size - end
            if trailing > 0:
                head = rest[:2] if rest else read(end, 2)
                what = (
                    "a second ZLIB stream, which is not read"
                    if len(head) == 2
                    and head[0] & 0x0F == 8
                    and int.from_bytes(head, "big") % 31 == 0
                    else "not read"
                )
                problem(
                    f"{plural(trailing, 'byte')} after the end of the ZLIB stream (from"
                    f" compressed byte {end:,}) are {what}: a ZLIB file holds one stream, as"
                    " TensorFlow reads it"
                )
            return result
        pending, at = rest, end
        if len(pending) < 2:
            more = read(read_pos, IN_STEP)
            read_pos += len(more)
            pending += more
        if not pending:
            return result
        if pending[:2] != _GZIP_MAGIC:
            trailing = size - end
            verb = "is" if trailing == 1 else "are"
            problem(
                f"{plural(trailing, 'byte')} after the end of the GZIP stream (from compressed"
                f" byte {end:,}) {verb} not a GZIP member: no records there; TensorFlow reads"
                " the records before them"
            )
            return result
        d = zlib.decompressobj(wbits)
    return result
