"""``tfrecord-browser export`` and ``tfrecord-browser import``.

    tfrecord-browser export SRC... DST [--format F] [--compression C] [--records SPEC]
                                      [--shards N] [--journal FILE|auto]
    tfrecord-browser import SRC.jsonl DST.tfrecord [--compression C]

The format is taken from DST's extension unless ``--format`` says otherwise (``.tfrecord``,
``.tfrecord.gz``, ``.jsonl``, ``.json``, ``.csv``, ``.parquet``, ``.zip`` for images; a
folder needs ``--format images``). ``--journal`` applies pending edits: a journal file, or
``auto`` for the one the app keeps for these files. Exit codes: 0 done, 1 done but damaged
source records were skipped, 2 usage error or a file that cannot be read or written (nothing
is left at DST then).
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any, TextIO

import codec
from browser_app import exporting
from browser_app.journal import Journal, JournalError, journal_path
from browser_app.selection import SpecError, parse_record_spec

EXIT_OK = 0
EXIT_DAMAGED = 1
EXIT_USAGE = 2


class _Usage(Exception):
    """A message for stderr, exit code 2."""


def register(sub: Any) -> None:
    """Add the ``export`` and ``import`` commands to the CLI's subparsers."""
    p = sub.add_parser(
        "export",
        help="write records (with pending edits) as TFRecord, JSON Lines, CSV, Parquet, JSON"
        " or image files",
        description="Export SRC files to DST. The last path is the destination.",
    )
    p.add_argument(
        "paths",
        nargs="+",
        metavar="PATH",
        help="source files, globs or shard patterns, then the destination DST",
    )
    p.add_argument(
        "--format",
        choices=list(exporting.FORMATS),
        help="default: from DST's extension",
    )
    p.add_argument(
        "--compression",
        choices=list(exporting.COMPRESSIONS),
        help="TFRecord output compression (default: from DST's name, else none)",
    )
    p.add_argument("--records", metavar="SPEC", help="a selection such as 0:100,150,-1")
    p.add_argument("--shards", type=int, metavar="N", help="split a TFRecord output into N files")
    p.add_argument(
        "--journal",
        metavar="FILE",
        help="apply the pending edits of this journal; 'auto' for the app's journal of SRC",
    )
    p.add_argument(
        "--int64-as-string",
        action="store_true",
        help="flat JSON: write every int64 as a string (beyond ±(2^53−1) they always are)",
    )
    p.add_argument("--no-verify", action="store_true", help="skip reading the output back")
    p.set_defaults(handler=cmd_export)

    p = sub.add_parser(
        "import",
        help="turn JSON Lines written by export back into a TFRecord file",
    )
    p.add_argument("src", metavar="SRC.jsonl")
    p.add_argument("dst", metavar="DST.tfrecord")
    p.add_argument(
        "--compression",
        choices=list(exporting.COMPRESSIONS),
        help="default: from DST's name, else none",
    )
    p.set_defaults(handler=cmd_import)


def _err(message: str) -> None:
    sys.stderr.write(f"tfrecord-browser: {message}\n")


def _report(report: exporting.ExportReport, out: TextIO) -> int:
    for p in report.skipped:
        sys.stderr.write(f"skipped: {p.describe()}\n")
    out.write(report.summary() + "\n")
    return EXIT_DAMAGED if report.skipped else EXIT_OK


def cmd_export(args: argparse.Namespace, out: TextIO) -> int:
    try:
        return _export(args, out)
    except _Usage as exc:
        _err(str(exc))
    except (codec.WriteError, exporting.ExportError, JournalError) as exc:
        _err(str(exc))
    except PermissionError as exc:
        _err(f"{exc.filename}: permission denied")
    except OSError as exc:
        _err(f"{exc.filename or ''}: {exc.strerror or exc}")
    except codec.CodecError as exc:
        _err(str(exc))
        return EXIT_DAMAGED
    return EXIT_USAGE


def _export(args: argparse.Namespace, out: TextIO) -> int:
    if len(args.paths) < 2:
        raise _Usage("export needs at least one source and a destination")
    *srcs, dst = args.paths
    fmt = args.format or exporting.format_for_path(dst)[0]
    if fmt is None:
        raise _Usage(
            f"{dst}: cannot tell the format from the name; add --format"
            f" ({', '.join(exporting.FORMATS)})"
        )
    if fmt != "tfrecord" and (args.compression or args.shards):
        raise _Usage("--compression and --shards apply to TFRecord output only")
    if args.shards is not None and args.shards < 1:
        raise _Usage("--shards must be at least 1")
    try:
        paths = codec.expand_paths(srcs)
    except FileNotFoundError as exc:
        raise _Usage(str(exc).strip("'\"")) from exc
    dataset = codec.TFRecordDataset(paths)
    journal: Journal | None = None
    try:
        if args.journal:
            jpath = journal_path(dataset.paths) if args.journal == "auto" else args.journal
            if args.journal != "auto" and not os.path.isfile(jpath):
                raise _Usage(f"{jpath}: no such journal file")
            journal = Journal(dataset, path=jpath)
            if args.journal == "auto" and not journal.pending:
                sys.stderr.write("no pending edits for these files; exporting them as they are\n")
        selection = None
        if args.records:
            try:
                selection = parse_record_spec(args.records, len(dataset))
            except SpecError as exc:
                raise _Usage(f"--records: {exc}") from exc
        source: Any = journal if journal is not None else dataset
        options: dict[str, Any] = {"selection": selection}
        if fmt == "tfrecord":
            options.update(compression=args.compression, shards=args.shards)
        if fmt in ("tfrecord", "jsonl", "csv", "json", "parquet"):
            options["verify"] = not args.no_verify
        if fmt == "json":
            options["int64_as_string"] = args.int64_as_string
        report = exporting.export(source, dst, format=fmt, **options)
        return _report(report, out)
    finally:
        if journal is not None:
            journal.close()
        dataset.close()


def cmd_import(args: argparse.Namespace, out: TextIO) -> int:
    try:
        report = exporting.import_jsonl(args.src, args.dst, compression=args.compression)
    except exporting.ImportFormatError as exc:
        _err(str(exc))
    except (codec.WriteError, exporting.ExportError) as exc:
        _err(str(exc))
    except FileNotFoundError as exc:
        _err(f"{exc.filename}: no such file")
    except PermissionError as exc:
        _err(f"{exc.filename}: permission denied")
    except OSError as exc:
        _err(f"{exc.filename or ''}: {exc.strerror or exc}")
    else:
        return _report(report, out)
    return EXIT_USAGE
