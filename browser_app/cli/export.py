"""``tfrecord-browser export`` and ``tfrecord-browser import``.

    tfrecord-browser export SRC... DST [--format F] [--compression C] [--records SPEC]
                                      [--shards N] [--journal FILE|auto]
                                      [--csv-neutralize-formulas]
                                      [--executor SPEC | --dask ADDR | --workers N]
                                      [--names FEATURE=FILE]...
    tfrecord-browser import SRC.jsonl DST.tfrecord [--compression C]

The format is taken from DST's extension unless ``--format`` says otherwise (``.tfrecord``,
``.tfrecord.gz``, ``.jsonl``, ``.json``, ``.csv``, ``.parquet``, ``.zip`` for images; a
folder needs ``--format images``). ``--journal`` applies pending edits: a journal file, or
``auto`` for the one the app keeps for these files. Sources and DST may be URLs (``s3://``,
``gs://``, ``az://``; sources also ``https://``): a remote DST is written and verified locally,
uploaded to a temporary name beside it, checked, and only then moved to its name (an existing
object of that name is replaced, as a local file is). CSV text cells that a spreadsheet would
run as formulas are kept exact and named in a warning, or written with a leading ``'`` with
``--csv-neutralize-formulas``. Class names given with ``--names FEATURE=FILE`` travel with a
TFRecord output: each is written beside it under the name the conventions look for
(``<feature>.labels.txt``, ``label_map.pbtxt``, ``vocabulary.csv``,
``class_labels_indices.csv``), so the app and the other commands name its labels too. The
shards of a sharded output are written in parallel (by default a process per core, at most
one per shard; ``--executor``, ``--dask`` and ``--workers`` say where): each is written and
verified beside its name, and none is moved into place until all are. Exit codes: 0 done, 1
done but damaged source records were skipped, 2 usage error or a file that cannot be read or
written (nothing is left at DST then).
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import TYPE_CHECKING, TextIO

import codec
from browser_app.cli.inputs import add_names, anon, names_of, open_inputs, records_option
from browser_app.cli.jobs import add_job_options, executor_of
from browser_app.edits import Journal, journal_path
from browser_app.errors import EXIT_DAMAGED, EXIT_OK, UsageError
from browser_app.export import FORMATS, ExportReport, export, format_for_path, import_jsonl
from browser_app.export.base import COCO, CSV, JSON, JSONL, PARQUET, TFRECORD
from codec.jobs import ExecutorSpec
from codec.kinds import COMPRESSIONS
from codec.locations import is_url

if TYPE_CHECKING:
    from browser_app.cli.inputs import Subcommands
    from codec.names import ClassNames

__all__ = ["cmd_export", "cmd_import", "register"]

AUTO_JOURNAL = "auto"  # --journal: the journal the app keeps for the sources
_VERIFIED = (TFRECORD, JSONL, CSV, JSON, PARQUET)  # formats read back after writing


def register(sub: Subcommands) -> None:
    """Add ``export`` and ``import`` to the command line."""
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
    p.add_argument("--format", choices=list(FORMATS), help="default: from DST's extension")
    p.add_argument(
        "--compression",
        choices=list(COMPRESSIONS),
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
    p.add_argument(
        "--csv-neutralize-formulas",
        action="store_true",
        help="CSV: write text cells that start with =, +, -, @, a tab or a carriage return with"
        " a leading ' so that a spreadsheet shows them as text instead of running them"
        " (default: exact values, and a warning)",
    )
    p.add_argument("--no-verify", action="store_true", help="skip reading the output back")
    add_job_options(p, progress=False)
    p.add_argument(
        "--no-index-map",
        action="store_true",
        help="do not write DST.index-map.csv, which says where every source record went"
        " (file and index in the output, or why it was left out)",
    )
    add_names(p)
    p.set_defaults(handler=cmd_export)

    p = sub.add_parser(
        "import",
        help="turn JSON Lines written by export back into a TFRecord file",
    )
    p.add_argument("src", metavar="SRC.jsonl")
    p.add_argument("dst", metavar="DST.tfrecord")
    p.add_argument(
        "--compression",
        choices=list(COMPRESSIONS),
        help="default: from DST's name, else none",
    )
    p.set_defaults(handler=cmd_import)


def _report(report: ExportReport, out: TextIO) -> int:
    """Print what was done; damaged source records that were skipped, or pictures that could
    not be converted, are named on stderr and make it exit 1. CSV cells that a spreadsheet
    would run as formulas are a warning on stderr."""
    for line in report.left_out():
        sys.stderr.write(f"skipped: {line}\n")
    warning = report.formula_warning()
    if warning is not None:
        sys.stderr.write(f"warning: {warning}; --csv-neutralize-formulas writes them as text\n")
    out.write(report.summary() + "\n")
    return EXIT_OK if report.ok else EXIT_DAMAGED


def _format(args: argparse.Namespace, dst: str) -> str:
    """The output format, after checking the options that depend on it."""
    fmt = args.format or format_for_path(dst)[0]
    if fmt is None:
        raise UsageError(
            f"{dst}: cannot tell the format from the name; add --format ({', '.join(FORMATS)})"
        )
    if fmt != TFRECORD and (args.compression or args.shards):
        raise UsageError("--compression and --shards apply to TFRecord output only")
    if fmt != CSV and args.csv_neutralize_formulas:
        raise UsageError("--csv-neutralize-formulas applies to CSV output only")
    if args.shards is not None and args.shards < 1:
        raise UsageError("--shards must be at least 1")
    return fmt


def export_executor(args: argparse.Namespace) -> ExecutorSpec:
    """Where the export's pieces are written, as ``--executor`` / ``--dask`` / ``--workers``
    name it; by default a process per core, at most one per shard (this process for an
    output that is not split)."""
    spec = executor_of(args)
    return spec.fit(args.shards or 1) if spec.is_default else spec


def _open_journal(arg: str, dataset: codec.TFRecordDataset) -> Journal:
    """The journal ``--journal`` names: a file, or ``auto`` for the app's journal."""
    if arg == AUTO_JOURNAL:
        journal = Journal(dataset, path=journal_path(dataset.paths))
        if not journal.pending:
            sys.stderr.write("no pending edits for these files; exporting them as they are\n")
        return journal
    if not os.path.isfile(arg):
        raise UsageError(f"{arg}: no such journal file")
    return Journal(dataset, path=arg)


def cmd_export(args: argparse.Namespace, out: TextIO) -> int:
    """Export the sources (with a journal's edits) to the destination, the last path."""
    if len(args.paths) < 2:
        raise UsageError("export needs at least one source and a destination")
    *srcs, dst = args.paths
    fmt = _format(args, dst)
    files = open_inputs(srcs, "auto", anon=anon(args))
    dataset = codec.TFRecordDataset(files)
    journal: Journal | None = None
    try:
        if args.journal:
            journal = _open_journal(args.journal, dataset)
        options: dict[str, object] = {
            "selection": records_option(args.records, len(dataset)) if args.records else None,
            "index_map": not args.no_index_map,
            "anon": anon(args),
            "executor": export_executor(args),
        }
        if fmt == TFRECORD:
            options.update(compression=args.compression, shards=args.shards)
        if fmt in _VERIFIED:
            options["verify"] = not args.no_verify
        if fmt == JSON:
            options["int64_as_string"] = args.int64_as_string
        if fmt == CSV:
            options["neutralize_formulas"] = args.csv_neutralize_formulas
        if fmt == COCO:
            # Categories named, and class texts turned into labels, as `evaluate` does.
            from codec.jobs.evaluate import PREDICTIONS_PREFIX, TRUTH_PREFIX, label_map_of

            found = names_of(args, [f.path for f in files], srcs)
            options["names"] = label_map_of(found, TRUTH_PREFIX, PREDICTIONS_PREFIX)
        given = _given(args, names_of(args, [], ())) if args.names else {}
        source = journal if journal is not None else dataset
        code = _report(export(source, dst, format=fmt, **options), out)
        if given:
            _names_beside_output(given, dst, fmt, out)
        return code
    finally:
        if journal is not None:
            journal.close()
        dataset.close()
        files.close()


def _given(args: argparse.Namespace, names: dict[str, ClassNames]) -> dict[str, ClassNames]:
    """The names ``--names`` gave (read before the export, so a bad file stops it first)."""
    from codec.names import parse_names_spec

    wanted = []
    for spec in args.names:
        try:
            wanted.append(parse_names_spec(spec)[0])
        except ValueError as exc:  # pragma: no cover - names_of said so already
            raise UsageError(f"--names {exc}") from exc
    return {k: names[k] for k in wanted if k in names}


def _names_beside_output(names: dict[str, ClassNames], dst: str, fmt: str, out: TextIO) -> None:
    """Write each names file beside a local TFRecord output, under its conventional name;
    an existing file of that name is left as it is (said when it differs)."""
    from codec.writer import atomic_output

    if fmt != TFRECORD or is_url(dst):
        sys.stderr.write("note: --names files are written beside a local TFRecord output only\n")
        return
    folder = os.path.dirname(os.path.abspath(dst))
    for feature, cn in names.items():
        got = _names_file(feature, cn)
        if got is None:
            sys.stderr.write(
                f"warning: the names of {feature} ({cn.describe()}) have no file name the"
                " conventions find for it; not written beside the output\n"
            )
            continue
        base, data = got
        target = os.path.join(folder, base)
        if os.path.exists(target):
            try:
                with open(target, "rb") as fh:
                    same = fh.read(len(data) + 1) == data
            except OSError:
                same = False
            if not same:
                sys.stderr.write(f"warning: {target} exists and differs; left as it is\n")
            continue
        with atomic_output(target) as fh:
            fh.write(data)
        out.write(f"class names of {feature}: {target}\n")


def _names_file(feature: str, cn: ClassNames) -> tuple[str, bytes] | None:
    """The file name the conventions find the names of ``feature`` under, and its bytes: the
    file given, copied, when its kind and name already follow them (a TFDS labels file named
    for the feature, a label map for a box class list, YouTube-8M's or AudioSet's class list
    for ``labels``); else a TFDS labels file (``<feature>.labels.txt``, one name a line)
    when the names run from 0 without a gap; else None."""
    from codec import names as nm
    from codec.labelmap import read_capped

    base = os.path.basename(cn.source)
    copy: str | None = None
    if cn.kind == nm.TFDS_LABELS and nm.feature_of_labels_file(base, [feature]) == feature:
        copy = base
    elif cn.kind == nm.LABEL_MAP and feature.endswith("class/label"):
        copy = "label_map.pbtxt"
    elif feature == "labels" and base in (nm.YT8M_VOCABULARY, nm.AUDIOSET_CLASSES):
        copy = base
    if copy is not None and not is_url(cn.source):
        try:
            return copy, read_capped(cn.source, nm.MAX_NAMES_BYTES, "names file")
        except (OSError, codec.DecodeError):
            pass  # written from the names below, when they can be
    listed = cn.as_list()
    if not listed or any(n is None or "\n" in n or not n.strip() for n in listed):
        return None
    return nm.labels_file_name([feature]), ("\n".join(str(n) for n in listed) + "\n").encode()


def cmd_import(args: argparse.Namespace, out: TextIO) -> int:
    """Turn JSON Lines written by ``export`` back into a TFRecord file."""
    report = import_jsonl(args.src, args.dst, compression=args.compression, anon=anon(args))
    return _report(report, out)
