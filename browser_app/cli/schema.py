"""``tfrecord-browser schema PATH... [--json] [--sample N] [--label-map FILE] [--names
FEATURE=FILE]``: the inferred schema, its drift and the checks of detection data, as findings
with the records involved.

Class names (``--names``, or names files beside the data, or a TFDS dataset's) are a matter of
how the report reads, never of the schema: the top values of a feature with names are named
(``3 "cat" (12)``), and labels its names file does not name are said. The JSON form keeps
every figure and adds the names beside them (:func:`browser_app.view.schema.named_schema`).
Names given for a box class list (``--names image/object/class/label=FILE``) check the
labels as ``--label-map`` does, when no label map is given.

Exit codes as for every command: 0 when every record read was intact, 1 when damage was
found (the schema of the intact records is still printed), 2 for usage errors or inputs that
cannot be opened.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TextIO

from browser_app.cli.inputs import (
    InputFiles,
    add_input,
    add_names,
    anon,
    names_of,
    open_inputs,
    positive,
)
from browser_app.cli.jobs import add_job_options, executor_of, run_job
from browser_app.errors import EXIT_DAMAGED, EXIT_OK, InputError, os_error_message
from browser_app.export.remote import open_input
from browser_app.view.schema import named_schema, named_tops, names_findings
from browser_app.view.text import format_schema
from codec.errors import DecodeError, RemoteError
from codec.jobs import SchemaJob, tasks_of
from codec.labelmap import MAX_LABEL_MAP_BYTES, parse_label_map_bytes
from codec.labelmap import read_label_map as load_label_map
from codec.locations import is_url, shown
from codec.schema import Schema, infer_schema

if TYPE_CHECKING:
    from browser_app.cli.inputs import Subcommands

__all__ = ["cmd_schema", "read_label_map", "register"]


def register(sub: Subcommands) -> None:
    """Add ``schema`` to the command line."""
    p = sub.add_parser(
        "schema",
        help="infer features, types, lengths and value statistics; report drift",
        description="Read every record (or --sample N of them) and report each feature's "
        "types, presence, list lengths and values, plus type conflicts, missing features and "
        "list-length drift with the record numbers involved.",
    )
    add_input(p)
    p.add_argument("--json", action="store_true", help="print the schema as one JSON object")
    p.add_argument(
        "--sample",
        type=positive,
        metavar="N",
        help="look at N records picked at random instead of all (the output says so; read"
        " in this process, or --workers N processes)",
    )
    p.add_argument("--top", type=positive, default=10, metavar="K", help="top values shown")
    p.add_argument(
        "--decode-images",
        action="store_true",
        help="fully decode every image to find undecodable ones (default: header checks)",
    )
    p.add_argument(
        "--stats", action="store_true", help="with --json: add chart data under 'statistics'"
    )
    p.add_argument(
        "--label-map",
        metavar="FILE",
        help="the Object Detection API's label_map.pbtxt (a file or a URL): check class labels"
        " and texts against it",
    )
    add_names(p)
    add_job_options(p)
    p.set_defaults(handler=cmd_schema)


def cmd_schema(args: argparse.Namespace, out: TextIO) -> int:
    """Infer the schema of the inputs and print it as text or JSON."""
    label_map = read_label_map(args.label_map, anon=anon(args)) if args.label_map else None
    files = open_inputs(args.paths, args.compression, anon=anon(args))
    try:
        names = names_of(args, [f.path for f in files], args.paths)
    except BaseException:
        files.close()
        raise
    if label_map is None:
        label_map = _given_label_map(args, names)
    if args.sample is None:
        # Every record: a job on the executor the options name.
        tasks = tasks_of(files, executor=executor_of(args), compression=args.compression)
        files.close()
        job = SchemaJob(
            decode_images=args.decode_images,
            label_map=label_map,
            compression=args.compression,
            per_shard=bool(args.json and args.stats),  # each file's statistics: only there
        )
        schema = run_job(job, tasks, args)
    else:
        schema = _sampled(files, args, label_map)
    doc = schema.to_json(top=args.top)
    if args.json:
        if args.stats:
            doc["statistics"] = schema.statistics(top=args.top)
        if names:
            doc = named_schema(doc, names)
        json.dump(doc, out, sort_keys=True, default=_jsonable)
        out.write("\n")
    else:
        out.write(format_schema(named_tops(doc, names) if names else doc))
        out.write(names_report(doc, names))
    damaged = bool(schema.builder.damaged.count or schema.problems)
    return EXIT_DAMAGED if damaged else EXIT_OK


def _sampled(
    files: InputFiles, args: argparse.Namespace, label_map: dict[int, str] | None
) -> Schema:
    """The schema of ``--sample N`` records picked at random, read in this process (or
    ``--workers N`` processes)."""
    progress = _progress_printer() if sys.stderr.isatty() or args.progress else None
    try:
        return infer_schema(
            files,
            sample=args.sample,
            progress=progress,
            workers=args.workers or 1,
            decode_images=args.decode_images,
            label_map=label_map,
        )
    finally:
        files.close()
        if progress:
            sys.stderr.write("\r" + " " * 40 + "\r")


def _given_label_map(args: argparse.Namespace, names: dict[str, Any]) -> dict[int, str] | None:
    """The names given by ``--names`` for a box class list (``<prefix>class/label``), as the
    label map the detection checks read; None when none was given."""
    given = {spec.partition("=")[0].strip() for spec in args.names or [] if "=" in spec}
    for feature in sorted(given):
        if feature.endswith("class/label") and feature in names:
            return dict(names[feature].names)
    return None


def names_report(doc: dict[str, Any], names: dict[str, Any]) -> str:
    """The text report's lines on class names: which names file names each feature, and the
    labels it does not name (:func:`browser_app.view.schema.names_findings`); empty without
    names for any feature of the schema."""
    present = {**doc.get("features", {}), **doc.get("feature_lists", {})}
    used = {k: cn for k, cn in names.items() if k in present}
    if not used:
        return ""
    lines = ["", "Class names:"]
    for feature, cn in used.items():
        lines.append(f"  {feature}: {cn.describe()}")
    for finding in names_findings(doc, used):
        lines.append(f"  names: {finding.message}")
    return "\n".join(lines) + "\n"


def read_label_map(path: str, *, anon: bool = False) -> dict[int, str]:
    """The ``{id: name}`` of a label map file (or a URL of one); raises :class:`InputError`
    when it cannot be read or parsed."""
    name = shown(path)
    try:
        if not is_url(path):
            return load_label_map(path).names
        with open_input(path, anon=anon) as f:
            return parse_label_map_bytes(f.read(MAX_LABEL_MAP_BYTES + 1)).names
    except RemoteError:
        raise
    except OSError as exc:
        raise InputError(os_error_message(exc, name), path=name) from exc
    except DecodeError as exc:
        raise InputError(f"{name}: {exc}", path=name) from exc


def _jsonable(x: object) -> object:
    """JSON for the values ``json`` does not know: bytes as text, NumPy scalars as numbers."""
    if isinstance(x, bytes):
        return x.decode("utf-8", "backslashreplace")
    item = getattr(x, "item", None)
    if item is not None:
        return item()
    raise TypeError(f"not JSON: {type(x).__name__}")


def _progress_printer() -> Callable[[int, int], None]:
    """A progress callback that rewrites one stderr line when the percentage changes."""
    last = [-1]

    def show(done: int, total: int) -> None:
        pct = int(100 * done / total) if total else 100
        if pct != last[0]:
            last[0] = pct
            sys.stderr.write(f"\rreading records: {pct}% ({done:,}/{total:,})")
            sys.stderr.flush()

    return show
