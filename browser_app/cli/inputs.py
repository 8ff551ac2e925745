"""What the reading commands share: the input arguments, opening the inputs, ``--records``.

Problems become :mod:`browser_app.errors` exceptions (an input that cannot be opened is an
:class:`~browser_app.errors.InputError`, a selection that does not parse a
:class:`~browser_app.errors.UsageError`); :func:`browser_app.cli.main.run` puts them into words.
"""

from __future__ import annotations

import argparse
import contextlib
import os
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, TextIO

import codec
from browser_app.errors import InputError, SpecError, UsageError, message, os_error_message
from browser_app.selection import parse_record_spec
from codec.cache import MAX_INFLATE_ENV, parse_size
from codec.errors import LimitError
from codec.kinds import COMPRESSIONS

if TYPE_CHECKING:
    from typing import TypeAlias

    Subcommands: TypeAlias = "argparse._SubParsersAction[argparse.ArgumentParser]"

__all__ = [
    "COMPRESSION_CHOICES",
    "Handler",
    "add_input",
    "add_max_inflate",
    "expand_inputs",
    "max_inflate",
    "open_inputs",
    "records_option",
]

Handler = Callable[[argparse.Namespace, TextIO], int]
"""A command: ``handler(args, out) -> exit code``; it writes its report to ``out`` and raises
for anything that stops it."""

COMPRESSION_CHOICES = ("auto", *COMPRESSIONS)  # what --compression accepts when reading


def add_input(p: argparse.ArgumentParser, many: bool = True) -> None:
    """The input arguments every reading command shares: PATH... and --compression."""
    if many:
        p.add_argument(
            "paths",
            nargs="+",
            metavar="PATH",
            help="files, globs, shard patterns (train-*-of-00010) or name@N",
        )
    p.add_argument(
        "--compression",
        choices=COMPRESSION_CHOICES,
        default="auto",
        help="default: detected from the first bytes",
    )


def _size(text: str) -> int:
    try:
        n = parse_size(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from exc
    if n <= 0:
        raise argparse.ArgumentTypeError(f"{text!r}: give a size above 0")
    return n


def add_max_inflate(p: argparse.ArgumentParser, *, command: bool = True) -> None:
    """``--max-inflate SIZE``, on the main parser and (``command``) on every command, so it
    may come before the command or after it."""
    p.add_argument(
        "--max-inflate",
        type=_size,
        metavar="SIZE",
        default=argparse.SUPPRESS if command else None,
        help="how far a GZIP/ZLIB file may inflate (10G, 500M or bytes; default: 100 times"
        f" its size, within the cache disk's free space; also {MAX_INFLATE_ENV})",
    )


@contextlib.contextmanager
def max_inflate(args: argparse.Namespace) -> Iterator[None]:
    """While a command runs, the ``--max-inflate`` it was given is the limit of every file it
    opens, in this process, in the processes it starts and in the app ``view`` starts (the
    environment carries it)."""
    size = getattr(args, "max_inflate", None)
    if size is None:
        yield
        return
    before = os.environ.get(MAX_INFLATE_ENV)
    os.environ[MAX_INFLATE_ENV] = str(size)
    try:
        yield
    finally:
        if before is None:
            os.environ.pop(MAX_INFLATE_ENV, None)
        else:
            os.environ[MAX_INFLATE_ENV] = before


def expand_inputs(paths: Sequence[str]) -> list[str]:
    """The files named by ``paths`` (files, folders, globs, shard patterns); raises
    :class:`InputError` when one of them names nothing, or ``name@N`` too many shards."""
    try:
        return codec.expand_paths(list(paths))
    except (FileNotFoundError, LimitError) as exc:
        raise InputError(message(exc)) from exc


def open_inputs(paths: Sequence[str], compression: str) -> list[codec.TFRecordFile]:
    """Every file named by ``paths``, open; raises :class:`InputError` naming the first one
    that cannot be opened (the ones opened before it are closed again)."""
    files: list[codec.TFRecordFile] = []
    for p in expand_inputs(paths):
        try:
            files.append(codec.TFRecordFile(p, compression=compression))
        except OSError as exc:
            for f in files:
                f.close()
            raise InputError(os_error_message(exc), path=exc.filename or p) from exc
        except LimitError as exc:  # it would inflate past the limit: not opened
            for f in files:
                f.close()
            raise InputError(str(exc), path=p) from exc
    return files


def records_option(spec: str, total: int) -> list[int]:
    """The record numbers a ``--records`` selection picks out of ``total``; raises
    :class:`UsageError` naming the option when it does not parse."""
    try:
        return parse_record_spec(spec, total)
    except SpecError as exc:
        raise UsageError(f"--records: {exc}") from exc
