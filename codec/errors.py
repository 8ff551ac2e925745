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
    ├── RemoteError (OSError)       a remote object could not be read (after retries); the
    │   │                           message names the URL as shown, never a credential
    │   ├── MissingExtraError       the library a URL (or Dask) needs is not installed:
    │   │                           names the extra
    │   └── ObjectChangedError      the object changed since it was opened (a new version)
    ├── WriteError                  an output could not be written; nothing partial is left
    ├── JobCancelled                a job (codec.jobs) stopped because it was cancelled
    └── ExecutorError (OSError)     a job's executor failed or could not be started (not a
        │                           task: a task that keeps failing is reported for its input)
        └── SchedulerError          a Dask scheduler that cannot be reached, or was lost
                                    mid-job (has .address)

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


class RemoteError(CodecError, OSError):
    """A remote object (``s3://``, ``gs://``, ``https://`` ...) could not be listed or read,
    after retries. The message names the URL without credentials or query string."""

    def __init__(self, message: str) -> None:
        OSError.__init__(self, message)

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else ""


class MissingExtraError(RemoteError):
    """A URL whose protocol (or an executor, such as a Dask cluster) needs a library that is
    not installed. ``doing`` says what needs it."""

    def __init__(self, url: str, extra: str, library: str, doing: str = "reading this") -> None:
        self.extra = extra
        self.library = library
        super().__init__(
            f"{url}: {doing} needs {library}, which is not installed:"
            f" pip install 'tfrecord-browser[{extra}]'"
        )


class ObjectChangedError(RemoteError):
    """The remote object is no longer the version that was opened (its ETag, generation or
    size changed), or a local file a job's worker opens is no longer the one the job was
    planned on (``what="file"``): what was read of it is dropped, and it must be opened
    again."""

    def __init__(self, url: str, detail: str = "", *, what: str = "object") -> None:
        self.url = url
        more = f" ({detail})" if detail else ""
        super().__init__(
            f"{url}: the {what} changed since it was opened{more}; what was read of the old"
            " version is dropped — open it again to read the new one"
        )


class JobCancelled(CodecError):
    """A job was cancelled before it finished: no result. ``done`` of ``total`` tasks had
    finished."""

    def __init__(self, name: str, done: int, total: int) -> None:
        from .values import plural

        self.done = done
        self.total = total
        super().__init__(
            f"{name} was cancelled after {done:,} of {plural(total, 'task')}; nothing was kept"
        )


class ExecutorError(CodecError, OSError):
    """A job's executor failed, or could not be started (an unknown executor, a process pool
    that keeps breaking). A task that keeps failing is not this: it is reported as a problem
    of its input."""

    def __init__(self, message: str) -> None:
        OSError.__init__(self, message)

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else ""


class SchedulerError(ExecutorError):
    """The Dask scheduler at ``address`` could not be reached, or the connection to it was lost
    while a job ran (the job has no result)."""

    def __init__(self, address: str, message: str) -> None:
        self.address = address
        super().__init__(message)
