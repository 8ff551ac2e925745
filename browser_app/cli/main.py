"""The parser, the dispatch, and the one place that turns an error into words and an exit code.

A command is a :data:`~browser_app.cli.inputs.Handler` that its module registers on the parser
(``register(sub)`` sets ``handler``). It writes its report and returns an exit code, or raises;
:func:`run` catches what it raises and prints ``tfrecord-browser: <message>`` on stderr, with
the exit code the error carries (:func:`browser_app.errors.exit_code`): 2 for a usage error or
an input or output that cannot be opened, 1 for damage that stopped the command.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Sequence
from typing import TextIO

from browser_app.cli.inputs import Handler, add_anon, add_max_inflate, max_inflate
from browser_app.errors import (
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_REMOTE,
    EXIT_USAGE,
    AppError,
    exit_code,
    message,
)
from codec.errors import CodecError
from codec.locations import describe, is_url, redact_text

__all__ = ["EXIT_INTERRUPTED", "build_parser", "main", "run"]


# command -> the module of this package that registers it (in the order of ``--help``). A
# command line naming one imports that module alone: `tfrecord-browser verify` does not load
# the export, the filter language or the app's launcher.
COMMANDS = {
    "view": "launch",
    "info": "records",
    "verify": "records",
    "dump": "records",
    "index": "records",
    "show": "show",
    "export": "export",
    "import": "export",
    "schema": "schema",
    "filter": "filter",
    "evaluate": "evaluate",
    "duplicates": "duplicates",
    "diff": "diff",
    "sql": "sql",
    "clean": "clean",
}
_GLOBAL_VALUES = ("--max-inflate",)  # the options before a command that take a value


def command_of(argv: Sequence[str]) -> str | None:
    """The command ``argv`` names (its first word that is not an option or an option's
    value), or None when it names none or one that does not exist."""
    skip = False
    for word in argv:
        if skip:
            skip = False
        elif word in _GLOBAL_VALUES:
            skip = True
        elif not word.startswith("-"):
            return word if word in COMMANDS else None
        elif word == "--":
            return None
    return None


def build_parser(argv: Sequence[str] | None = None) -> argparse.ArgumentParser:
    """The ``tfrecord-browser`` parser: with the commands of the module registering the
    command ``argv`` names, or with every command (for ``--help``, a mistyped command, or
    when ``argv`` is not given)."""
    command = None if argv is None else command_of(argv)
    wanted = [COMMANDS[command]] if command else list(dict.fromkeys(COMMANDS.values()))
    parser = argparse.ArgumentParser(
        prog="tfrecord-browser",
        description="Open, page through, verify, edit and export TFRecord files. "
        "Without a command, opens the app on the bundled sample dataset.",
    )
    add_max_inflate(parser, command=False)
    add_anon(parser, command=False)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for module in wanted:
        importlib.import_module(f"{__package__}.{module}").register(sub)
    for p in sub.choices.values():  # every command opens files
        add_max_inflate(p)
        add_anon(p)
    return parser


def run(handler: Handler, args: argparse.Namespace, out: TextIO | None = None) -> int:
    """Run one command and return its exit code; an error it raises is printed on stderr as
    a message (never a traceback) and gives the error's exit code."""
    try:
        with max_inflate(args):
            return handler(args, out or sys.stdout)
    except BrokenPipeError:
        # `tfrecord-browser dump x | head`: the reader went away; that is not an error.
        try:
            sys.stdout = open(os.devnull, "w")  # noqa: SIM115
        except OSError:
            pass
        return EXIT_OK
    except KeyboardInterrupt:
        return EXIT_INTERRUPTED
    except (AppError, CodecError, OSError) as exc:
        sys.stderr.write(f"tfrecord-browser: {_redacted(message(exc), args)}\n")
        return exit_code(exc)
    except RecursionError:
        # An input nested past what any reader of it takes: refused as such, not a crash.
        sys.stderr.write("tfrecord-browser: the input is nested too deeply to be read\n")
        return EXIT_USAGE
    except Exception as exc:
        # A remote library's own error that reached here unwrapped (credentials missing,
        # a refused request): one line, credential-free, and the remote exit code.
        if not _from_remote_library(exc):
            raise
        sys.stderr.write(f"tfrecord-browser: {_redacted(describe(exc), args)}\n")
        return EXIT_REMOTE


# The packages whose errors are a remote store's (fsspec and the libraries behind its
# protocols): reported as a remote failure, never as a traceback.
_REMOTE_LIBRARIES = frozenset(
    {"fsspec", "s3fs", "gcsfs", "adlfs", "botocore", "aiobotocore", "boto3", "aiohttp"}
    | {"google", "azure", "urllib3", "requests"}
)


def _from_remote_library(exc: BaseException) -> bool:
    return type(exc).__module__.split(".", 1)[0] in _REMOTE_LIBRARIES


def _urls(args: argparse.Namespace) -> list[str]:
    """Every URL the command was given."""
    found: list[str] = []
    for value in vars(args).values():
        for v in value if isinstance(value, (list, tuple)) else [value]:
            if isinstance(v, str) and is_url(v):
                found.append(v)
    return found


def _redacted(text: str, args: argparse.Namespace) -> str:
    """``text`` with the credentials and query strings of every URL given taken out (a
    message is built from URLs as shown; this keeps it so whatever the message's origin)."""
    for url in _urls(args):
        text = redact_text(text, url)
    return redact_text(text, "")


def main(argv: Sequence[str] | None = None) -> int:
    """The ``tfrecord-browser`` command: parse ``argv`` (default: ``sys.argv[1:]``; nothing
    means ``view``), run the command, return the exit code."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv:
        argv = ["view"]
    parser = build_parser(argv)
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # argparse: usage errors exit 2, --help exits 0
        return int(exc.code or 0)
    handler: Handler | None = getattr(args, "handler", None)
    if handler is None:
        parser.print_help()
        return EXIT_USAGE
    return run(handler, args)
