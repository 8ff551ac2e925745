"""The front end's exceptions: one tree, each with the exit code the command line gives it.

    AppError                        anything browser_app raises on purpose (exit 2)
    ├── UsageError                  a command used the wrong way: arguments, options (exit 2)
    ├── InputError                  an input cannot be opened or read (exit 2; has .path)
    │   └── PathRefused             a path outside the root folder (also ValueError)
    ├── SpecError                   a record selection such as "0:10,-1" that does not parse
    ├── EditError                   an edit that cannot be made; nothing was recorded
    │   ├── ValueParseError         typed text that is not a value of the feature's type
    │   └── ConversionError         a type change that would lose or change values
    ├── JournalError                a journal file that cannot be read or written
    │   └── JournalMismatchError    the source changed since its journal was started
    ├── Cancelled                   a job stopped by Ctrl+C (SIGINT); nothing kept (exit 130)
    └── ExportError                 an export or import that cannot be done; nothing written
        ├── ImportFormatError       a JSON Lines input that is not what export writes
        └── UploadError             an output could not be put in place in an object store
                                    (exit 3); nothing is left under its final name

Codec errors (:mod:`codec.errors`) stay codec errors: a damaged record is not a front-end
failure; their exit codes are in :data:`CODEC_EXIT_CODES` (a remote object that could not be
read exits 3, one that changed while it was read 4, a URL whose library is missing 2, a Dask
scheduler that cannot be reached or was lost 5, a job cancelled 130).
:func:`exit_code` and :func:`message` are the one place that turns any exception into what
the command line prints and returns; :func:`os_error_message` is the one place that puts an
operating-system error into words.
"""

from __future__ import annotations

import errno
import os
from typing import Any

from codec.errors import (
    CodecError,
    JobCancelled,
    LimitError,
    MissingExtraError,
    ObjectChangedError,
    RemoteError,
    SchedulerError,
    WriteError,
)
from codec.locations import is_url

__all__ = [
    "CODEC_EXIT_CODES",
    "EXIT_CHANGED",
    "EXIT_CLUSTER",
    "EXIT_DAMAGED",
    "EXIT_INTERRUPTED",
    "EXIT_OK",
    "EXIT_REMOTE",
    "EXIT_USAGE",
    "AppError",
    "Cancelled",
    "ConversionError",
    "EditError",
    "ExportError",
    "ImportFormatError",
    "InputError",
    "JournalError",
    "JournalMismatchError",
    "PathRefused",
    "SpecError",
    "UploadError",
    "UsageError",
    "ValueParseError",
    "exit_code",
    "message",
    "os_error_message",
]

EXIT_OK = 0  # done, and everything read was intact
EXIT_DAMAGED = 1  # done, but damage was found (or a damaged record could not be read)
EXIT_USAGE = 2  # a usage error, or an input or output that cannot be opened
EXIT_REMOTE = 3  # a remote object could not be read or written (network, server): try again
EXIT_CHANGED = 4  # a remote object changed while it was read: run the command again
EXIT_CLUSTER = 5  # the Dask scheduler could not be reached, or was lost during the job
EXIT_INTERRUPTED = 130  # Ctrl+C, as a shell reports a process stopped by SIGINT


def _show(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


class AppError(Exception):
    """Root of every exception the front end raises on purpose. ``str()`` is a message for a
    person (no traceback needed); ``exit_code`` is what the command line returns."""

    exit_code = EXIT_USAGE


class UsageError(AppError):
    """A command used the wrong way (arguments, options, a destination it cannot write)."""


class InputError(AppError):
    """An input that cannot be opened or read. ``path`` names it when known."""

    def __init__(self, message: str, path: str | None = None) -> None:
        super().__init__(message)
        self.path = path


class PathRefused(InputError, ValueError):
    """A path the app will not open (outside the root, ``..``, an escaping symlink); the
    message says why, in words for the person."""


class SpecError(AppError, ValueError):
    """A record selection that cannot be parsed."""


class EditError(AppError, ValueError):
    """An edit that cannot be made; nothing was recorded."""


class ValueParseError(EditError):
    """Text that is not a value of the feature's type. ``reason`` says why, ``text`` and
    ``type`` are what was given."""

    def __init__(self, type: str, text: str, reason: str) -> None:
        self.type = type
        self.text = text
        self.reason = reason
        super().__init__(f"{_show(text)} is not a valid {type} value: {reason}")


class ConversionError(EditError):
    """A type conversion that would lose or change values. ``problems`` lists
    ``(position, value, reason)`` for every value that does not convert exactly."""

    def __init__(
        self, from_type: str, to_type: str, problems: list[tuple[int, Any, str]], name: str = ""
    ) -> None:
        self.from_type = from_type
        self.to_type = to_type
        self.problems = problems
        where = f"feature {name!r}: " if name else ""
        first = "; ".join(f"value {i} ({_show(v)}): {r}" for i, v, r in problems[:3])
        more = f" (and {len(problems) - 3} more)" if len(problems) > 3 else ""
        super().__init__(
            f"{where}cannot convert {from_type} to {to_type} without losing values: {first}{more}"
        )


class JournalError(AppError):
    """A journal file that cannot be read or written."""


class JournalMismatchError(JournalError):
    """The source files changed since the journal was started. ``changes`` names what
    changed, one human-readable line per difference; ``journal`` is the journal's path."""

    def __init__(self, journal: str, changes: list[str]) -> None:
        self.journal = journal
        self.changes = changes
        super().__init__(
            f"the pending edits in {journal} were made on another version of the source: "
            + "; ".join(changes)
            + ". Open the file it was made for, or discard the journal."
        )


class Cancelled(AppError):
    """A job stopped by Ctrl+C (SIGINT) before it finished: its workers were stopped and
    nothing was kept."""

    exit_code = EXIT_INTERRUPTED


class ExportError(AppError):
    """An export that cannot be done as asked (it would overwrite the source, the written
    output failed verification...). Nothing was left at the destination."""


class ImportFormatError(ExportError, ValueError):
    """A JSON Lines input that is not what the JSON Lines export writes; names the line."""


class UploadError(ExportError):
    """An output could not be uploaded to, checked in or moved into place in an object store
    (after the library's retries). Nothing is left under the destination's final name, nor
    under the temporary name it was uploaded to."""

    exit_code = EXIT_REMOTE


# --------------------------------------------------------------------------------------------
# Turning errors into words and exit codes


_ERRNO_WORDS = {
    errno.ENOENT: "no such file or folder",
    errno.EACCES: "permission denied",
    errno.EPERM: "permission denied",
    errno.EISDIR: "is a folder, not a file",
    errno.ENOTDIR: "a part of the path is not a folder",
    errno.ENOSPC: "no space left on the device",
    errno.EROFS: "the file system is read-only",
    errno.ENAMETOOLONG: "the name is too long",
    errno.ELOOP: "too many symbolic links",
}


def os_error_message(exc: OSError, path: str | os.PathLike[str] | None = None) -> str:
    """``"<path>: <what went wrong>"`` for an operating-system error, in words. A remote
    object's error (its ``filename`` a URL, as shown) keeps the words it was given, which say
    what to do about an object ("no such object", "access denied (check the credentials...)");
    a :class:`~codec.errors.RemoteError` is its own message."""
    if isinstance(exc, RemoteError):
        return str(exc)
    where = os.fspath(path) if path is not None else (exc.filename or "")
    remote = isinstance(exc.filename, str) and is_url(exc.filename)
    what = (
        (exc.strerror if remote else None)
        or _ERRNO_WORDS.get(exc.errno or 0)
        or exc.strerror
        or str(exc)
    )
    return f"{where}: {what}" if where else what


CODEC_EXIT_CODES: dict[type[BaseException], int] = {
    MissingExtraError: EXIT_USAGE,  # install the extra the message names
    ObjectChangedError: EXIT_CHANGED,
    RemoteError: EXIT_REMOTE,
    SchedulerError: EXIT_CLUSTER,  # start the cluster, or check the address
    JobCancelled: EXIT_INTERRUPTED,
}
"""The exit codes of the codec's errors that have one of their own (the most specific class
that matches wins); other codec errors exit 1 (damage), OS errors and limits 2."""


def exit_code(exc: BaseException) -> int:
    """The exit code the command line returns for ``exc``."""
    if isinstance(exc, AppError):
        return exc.exit_code
    for cls in type(exc).__mro__:
        if cls in CODEC_EXIT_CODES:
            return CODEC_EXIT_CODES[cls]
    if isinstance(exc, (WriteError, OSError, LimitError)):
        return EXIT_USAGE  # a refused input (one past a limit) was never read: not damage
    if isinstance(exc, CodecError):
        return EXIT_DAMAGED
    return EXIT_USAGE


def message(exc: BaseException) -> str:
    """What to tell the person about ``exc``: the error's own message, or an OS error in
    words."""
    if isinstance(exc, OSError) and not isinstance(exc, AppError):
        return os_error_message(exc)
    text = str(exc)
    return text.strip("'\"") if isinstance(exc, KeyError) else text
