"""``tfrecord-browser clean FOLDER...``: remove what exports that are over left in the folders
they wrote to, without running another export there.

In a local folder: the temporary outputs and lock files of runs whose lock nobody holds
(:func:`browser_app.export.tempfiles.clean_stale`). In a remote folder (``s3://bucket/out``):
the markers of runs killed on this machine, then the temporary objects of every run without
a marker (:func:`browser_app.export.remote.clean_stale`). A live run's files, a run of
another machine, and anything not named as an export's are never touched. The next export
to a folder does the same by itself; this is for a folder nothing will be exported to soon.

Prints a line per folder: what was removed (files and their bytes, or objects), or nothing.
Exit codes: 0; 2 for a folder that does not exist or is a file; 3 for a remote store that
cannot be reached.
"""

from __future__ import annotations

import argparse
import os
from typing import TYPE_CHECKING, TextIO

from browser_app.cli.inputs import anon
from browser_app.errors import EXIT_OK, InputError
from browser_app.export import remote, tempfiles
from codec.locations import is_url, shown
from codec.values import format_bytes, plural

if TYPE_CHECKING:
    from browser_app.cli.inputs import Subcommands

__all__ = ["cmd_clean", "register"]


def register(sub: Subcommands) -> None:
    """Add ``clean`` to the command line."""
    p = sub.add_parser(
        "clean",
        help="remove what killed exports left in folders",
        description="Remove what exports that are over (killed, or the machine lost power)"
        " left in the folders they wrote to: temporary outputs and lock files in a local"
        " folder; in a remote one, the markers of runs killed on this machine and the"
        " temporary objects of runs without a marker. A live export's files, another"
        " machine's runs and files not named as an export's are left alone. The next export"
        " to a folder does the same by itself.",
    )
    p.add_argument(
        "folders",
        nargs="+",
        metavar="FOLDER",
        help="folders exports wrote to: local paths or URLs (s3://bucket/out)",
    )
    p.set_defaults(handler=cmd_clean)


def cmd_clean(args: argparse.Namespace, out: TextIO) -> int:
    """Clean each folder and say what was removed from it."""
    for folder in args.folders:
        out.write(_clean(folder, anon=anon(args)) + "\n")
    return EXIT_OK


def _clean(folder: str, *, anon: bool) -> str:
    if is_url(folder):
        kind = remote.object_kind(folder, anon=anon)
        if kind == "object":
            raise InputError(f"{shown(folder)} is an object, not a folder")
        removed = remote.clean_stale(folder, anon=anon) if kind == "folder" else 0
        what = plural(removed, "leftover object")
        return f"{shown(folder)}: removed " + (what if removed else "nothing")
    if not os.path.isdir(folder):
        raise InputError(f"{folder}: no such folder")
    cleaned = tempfiles.clean_stale(folder)
    if not cleaned.entries:
        return f"{folder}: removed nothing"
    what = plural(cleaned.entries, "leftover file or folder", "leftover files and folders")
    return f"{folder}: removed {what} ({format_bytes(cleaned.bytes)})"
