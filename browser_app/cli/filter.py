"""``tfrecord-browser filter SRC... EXPR [--json]``: the records that match a filter.

Prints the matching global record numbers, one per line (with ``--json`` one object per line:
``{"index", "path", "local"}``). Exit 0 whether or not anything matches; exit 2, with the
message on standard error, for an expression that does not parse, names a feature no record
has, or a class name the feature's names file does not hold. The language is
:mod:`codec.filters`; with class names (``--names label=classes.txt``, or a names file beside
the data) ``label == "cat"`` compares ``label`` with the index of ``cat``.
"""

from __future__ import annotations

import argparse
import bisect
import itertools
import json
import sys
from typing import TYPE_CHECKING, TextIO

from browser_app.cli.inputs import COMPRESSION_CHOICES, add_names, anon, names_of, open_inputs
from browser_app.cli.jobs import add_job_options, executor_of, run_job
from browser_app.errors import EXIT_OK, UsageError
from codec.filters import FilterSyntaxError, compile_filter
from codec.jobs import FilterJob, tasks_of

if TYPE_CHECKING:
    from browser_app.cli.inputs import Subcommands

__all__ = ["cmd_filter", "register"]


def register(sub: Subcommands) -> None:
    """Add ``filter`` to the command line."""
    p = sub.add_parser(
        "filter",
        help="print the record numbers that match a filter expression",
        description="Run a filter such as 'label == 3 and any(image/object/bbox/xmax > 1)'"
        " over every record of the sources (the last argument is the expression). With class"
        " names (--names, or a names file beside the data) a label compares with a name:"
        " 'label == \"cat\"'.",
    )
    p.add_argument(
        "paths",
        nargs="+",
        metavar="SRC... EXPR",
        help="files, globs or shard patterns, then the filter expression",
    )
    p.add_argument("--compression", choices=COMPRESSION_CHOICES, default="auto")
    p.add_argument("--json", action="store_true", help='one {"index", "path", "local"} per line')
    p.add_argument("--limit", type=int, metavar="N", help="stop after N matches")
    add_names(p)
    add_job_options(p)
    p.set_defaults(handler=cmd_filter)


def cmd_filter(args: argparse.Namespace, out: TextIO) -> int:
    """Run the filter; the matches are printed once the run is complete, so an unknown name
    is reported before anything is printed."""
    if len(args.paths) < 2:
        raise UsageError("filter needs at least one source and an expression")
    *srcs, text = args.paths
    try:
        compile_filter(text)
    except FilterSyntaxError as exc:
        raise UsageError(f"the filter cannot be read: {exc}") from exc
    if args.limit is not None and args.limit < 1:
        raise UsageError("--limit must be at least 1")
    files = open_inputs(srcs, args.compression, anon=anon(args))
    shown_paths = [f.path for f in files]
    try:
        names = names_of(args, shown_paths, srcs)
        job = FilterJob(text, limit=args.limit, compression=args.compression, names=names)
        tasks = tasks_of(files, executor=executor_of(args), compression=args.compression)
    except FilterSyntaxError as exc:
        raise UsageError(f"the filter cannot be used: {exc}") from exc
    finally:
        files.close()
    try:
        result = run_job(job, tasks, args)
    except FilterSyntaxError as exc:
        raise UsageError(f"the filter cannot be used: {exc}") from exc
    found = result.matches
    firsts = list(itertools.accumulate(result.files, initial=0))
    for i in found:
        if args.json:
            k = bisect.bisect_right(firsts, i) - 1
            line = {"index": i, "path": shown_paths[k], "local": i - firsts[k]}
            out.write(json.dumps(line, ensure_ascii=False) + "\n")
        else:
            out.write(f"{i}\n")
    if not found:
        sys.stderr.write("no record matches\n")
    return EXIT_OK
