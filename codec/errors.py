"""The codec's exceptions: one tree, every message naming the file and byte offset.

    CodecError                      anything the codec raises on purpose
    ├── RecordError                 a record could not be read (has .path, .offset)
    │   ├── TruncatedRecordError    the stream ended inside a record ("truncated record at N")
    │   └── CorruptRecordError      a CRC did not match ("corrupted record at N")
    ├── DecodeError                 payload bytes are not the message they were taken for
    ├── FilterSyntaxError           a filter expression does not parse (codec.filters)
    ├── EncodeError                 a Python value does not fit the feature's type
    ├── ImageError                  image bytes cannot be decoded or do not match their shape
    ├── UnsupportedError            a valid input this codec does not handle (e.g. a dtype)
    ├── LimitError                  an input would cost more than the limit set for it
    │                               (shards in name@N, inflated bytes, a tensor's bytes)
    ├── NotAFileError (OSError)     a path that is a pipe, device or socket: never opened
    ├── ReaderClosedError           a reader was used after close()
    └── WriteError                  an output could not be written; nothing partial is left

A clean end of a file is not an error: iteration simply stops. ``OSError`` from the
operating system (missing file, no permission) is passed through unchanged, so callers can
tell "cannot open" from "opened, but damaged".
"""

from __future__ import annotations

import errno


class CodecError(Exception):
    """Root of every exception the codec raises on purpose."""


class RecordError(CodecError):
    """A record could not be read. ``offset`` is the record header's byte offset in the
    (decompressed) stream, or ``None`` when it is not known."""

    kind = "damaged"

    def __init__(self, message: str, *, path: str = "", offset: int | None = None) -> None:
        self.path = path
        self.offset = offset
        where = path or "<memory>"
        at = f" at byte {offset}" if offset is not None else ""
        super().__init__(f"{where}{at}: {message}")
        self.reason = message


class TruncatedRecordError(RecordError):
    """The stream ended inside a record: its header, payload or footer is incomplete."""

    kind = "truncated"


class CorruptRecordError(RecordError):
    """A record's length CRC or data CRC does not match its bytes."""

    def __init__(
        self, message: str, *, path: str = "", offset: int | None = None, kind: str = "data_crc"
    ) -> None:
        super().__init__(message, path=path, offset=offset)
        self.kind = kind


class DecodeError(CodecError):
    """Payload bytes could not be decoded as the message they were taken for."""


class EncodeError(CodecError, ValueError):
    """A Python value does not fit the type of the feature it was given for."""


class ImageError(CodecError):
    """Image bytes cannot be decoded, or a raw buffer does not match its declared shape."""


class UnsupportedError(CodecError):
    """A well-formed input that this codec does not handle, such as a tensor dtype."""


class LimitError(CodecError):
    """An input that would cost more (memory, disk, time) than the limit set for it. The
    message names the input, the limit and how to raise it."""


class NotAFileError(CodecError, OSError):
    """A path that is not a regular file (a pipe, a device, a socket): reading it could wait
    forever, so it is never opened."""

    def __init__(self, path: str) -> None:
        super().__init__(errno.EINVAL, "not a regular file (a pipe, a device or a socket)", path)


class ReaderClosedError(CodecError, ValueError):
    """A reader or dataset was used after it was closed."""


class WriteError(CodecError):
    """An output could not be written. The destination is left as it was."""
