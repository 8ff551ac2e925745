"""TFRecordWriter: atomic output, uncompressed or GZIP/ZLIB.

Every output goes to a temporary file beside the destination, is flushed and fsynced, and is
renamed into place only when complete: a crash, an exception or a full disk leaves the
destination as it was and no partial file behind. Uncompressed output is byte-identical to
TensorFlow's for the same payloads.
"""

from __future__ import annotations

import contextlib
import os
import struct
import tempfile
import zlib
from collections.abc import Iterable, Iterator
from typing import IO, Any

from .errors import WriteError
from .framing import OVERHEAD, encode_footer, encode_header
from .kinds import COMPRESSIONS

_U64 = struct.Struct("<Q")


def fsync_dir(path: str) -> None:
    """fsync a folder, so a rename inside it survives a crash (best effort)."""
    try:
        fd = os.open(path or ".", os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


@contextlib.contextmanager
def atomic_output(target: str | os.PathLike[str], mode: str = "wb") -> Iterator[IO[Any]]:
    """Open a temporary file beside ``target``; on success fsync it and rename it over
    ``target``; on any failure remove it. OS errors become :class:`WriteError`."""
    target = os.fspath(target)
    directory = os.path.dirname(os.path.abspath(target))
    try:
        fd, tmp = tempfile.mkstemp(
            dir=directory, prefix=f".{os.path.basename(target)}.", suffix=".tmp"
        )
    except OSError as exc:
        raise WriteError(f"{target}: cannot write here: {exc.strerror or exc}") from exc
    try:
        with os.fdopen(fd, mode) as f:
            yield f
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, new_file_mode())
        os.replace(tmp, target)
        fsync_dir(directory)
    except BaseException as exc:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        if isinstance(exc, OSError):
            raise WriteError(
                f"{target}: write failed, nothing written: {exc.strerror or exc}"
            ) from exc
        raise


def _umask() -> int:
    """The process's umask, read without changing it where the system says it (changing it,
    even for a moment, would race with other threads creating files)."""
    try:
        with open("/proc/self/status", encoding="ascii") as f:
            for line in f:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError):
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def new_file_mode(directory: bool = False) -> int:
    """The permissions a file (or folder) the person creates gets: ``0666`` (``0777``) less
    the umask. Temporary files are created private; outputs get this before they appear."""
    return (0o777 if directory else 0o666) & ~_umask()


class TFRecordWriter:
    """Write records to ``path`` atomically.

    >>> with TFRecordWriter("out.tfrecord.gz", compression="gzip") as w:   # doctest: +SKIP
    ...     w.write(payload)

    The file appears at ``path`` only when the ``with`` block ends without an exception (or
    :meth:`close` is called); :meth:`abort` drops everything written so far.
    """

    def __init__(self, path: str | os.PathLike[str], compression: str | None = "none") -> None:
        compression = (compression or "none").lower()
        if compression not in COMPRESSIONS:
            raise ValueError(
                f"compression must be one of {', '.join(COMPRESSIONS)}, not {compression!r}"
            )
        self.path = os.fspath(path)
        self.compression = compression
        self.records = 0
        self.bytes_written = 0  # uncompressed stream bytes
        self._ctx = atomic_output(self.path, "wb")
        self._file = self._ctx.__enter__()
        self._closed = False
        self._z: Any = None
        if compression == "gzip":
            # mtime 0 and no file name: the same records always give the same bytes.
            self._z = zlib.compressobj(
                zlib.Z_DEFAULT_COMPRESSION, zlib.DEFLATED, 16 + zlib.MAX_WBITS
            )
        elif compression == "zlib":
            self._z = zlib.compressobj(zlib.Z_DEFAULT_COMPRESSION, zlib.DEFLATED, zlib.MAX_WBITS)

    def _emit(self, data: bytes) -> None:
        if self._z is not None:
            data = self._z.compress(data)
        if data:
            self._file.write(data)

    def write(self, payload: bytes | bytearray | memoryview) -> None:
        """Append one record."""
        if self._closed:
            raise WriteError(f"{self.path}: the writer is closed")
        try:
            self._emit(encode_header(len(payload)))
            self._emit(bytes(payload))
            self._emit(encode_footer(payload))
        except OSError as exc:
            self.abort()
            raise WriteError(
                f"{self.path}: write failed, nothing written: {exc.strerror or exc}"
            ) from exc
        self.records += 1
        self.bytes_written += len(payload) + 16

    def write_framed(self, framed: bytes | memoryview, records: int | None = None) -> None:
        """Append bytes that already are ``records`` complete, checked records (counted from
        their headers when not given): the way untouched records are copied byte for byte."""
        if self._closed:
            raise WriteError(f"{self.path}: the writer is closed")
        try:
            self._emit(bytes(framed))
        except OSError as exc:
            self.abort()
            raise WriteError(
                f"{self.path}: write failed, nothing written: {exc.strerror or exc}"
            ) from exc
        self.records += _count_framed(framed) if records is None else records
        self.bytes_written += len(framed)

    def write_all(self, payloads: Iterable[bytes]) -> None:
        for p in payloads:
            self.write(p)

    def close(self) -> None:
        """Finish the stream and move it into place."""
        if self._closed:
            return
        self._closed = True
        try:
            if self._z is not None:
                tail = self._z.flush()
                if tail:
                    self._file.write(tail)
        except BaseException as exc:
            self._ctx.__exit__(type(exc), exc, exc.__traceback__)
            raise
        self._ctx.__exit__(None, None, None)

    def abort(self) -> None:
        """Drop the output: the destination is left as it was."""
        if self._closed:
            return
        self._closed = True
        err = WriteError(f"{self.path}: aborted")
        try:
            self._ctx.__exit__(WriteError, err, None)
        except WriteError:
            pass

    def __enter__(self) -> TFRecordWriter:
        return self

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> None:
        if exc_type is None:
            self.close()
        else:
            self.abort()


def _count_framed(framed: bytes | memoryview) -> int:
    """How many records lie end to end in ``framed`` (their lengths are trusted)."""
    n = pos = 0
    end = len(framed)
    while pos + OVERHEAD <= end:
        (length,) = _U64.unpack_from(framed, pos)
        pos += OVERHEAD + length
        n += 1
    return n


def write_records(
    path: str | os.PathLike[str], payloads: Iterable[bytes], compression: str | None = "none"
) -> int:
    """Write every payload to ``path`` atomically; return the number of records."""
    with TFRecordWriter(path, compression) as w:
        w.write_all(payloads)
        return w.records
