"""``info``, ``verify``, ``dump`` and ``index``: reading TFRecord files from the command line.

Each command returns :data:`~browser_app.errors.EXIT_DAMAGED` when it found damage and
:data:`~browser_app.errors.EXIT_OK` otherwise; problems that stop it are raised.
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TextIO

import codec
from browser_app.cli.inputs import (
    add_input,
    add_names,
    anon,
    names_of,
    open_inputs,
    records_option,
    split_folder,
    with_split,
)
from browser_app.cli.jobs import add_job_options, executor_of, run_job
from browser_app.errors import EXIT_DAMAGED, EXIT_OK, UsageError
from browser_app.export.remote import object_kind
from browser_app.view.text import format_record_text, hex_preview
from codec import example
from codec.jobs import VerifyJob, tasks_of
from codec.kinds import DATA_CRC, RAW, RECORD_KINDS
from codec.locations import is_url, join_url, shown
from codec.text_index import parse_text_index
from codec.tfds import TFDS, check_shard_lengths
from codec.values import format_bytes, plural

if TYPE_CHECKING:
    from collections.abc import Mapping

    from browser_app.cli.inputs import Subcommands
    from codec.names import ClassNames
    from codec.tfds import SplitFolder

__all__ = ["cmd_dump", "cmd_index", "cmd_info", "cmd_verify", "register"]

AUTO = "auto"  # --kind: detect each record's kind


def register(sub: Subcommands) -> None:
    """Add ``info``, ``verify``, ``dump`` and ``index`` to the command line."""
    p = sub.add_parser(
        "info",
        help="records, bytes, compression and a damage summary",
        description="Records, bytes, compression and the header scan's problems of every file;"
        " of a TFDS dataset folder or a TFX ExampleGen output, its splits too: their records"
        " against the shard lengths dataset_info.json declares.",
    )
    add_input(p)
    add_split(p)
    p.add_argument("--json", action="store_true")
    p.set_defaults(handler=cmd_info)

    p = sub.add_parser(
        "verify",
        help="check every CRC; exit 1 when anything is damaged",
        description="Check every length and data CRC of every record, on every core (or a"
        " Dask cluster): large files are checked in byte ranges at once.",
    )
    add_input(p)
    p.add_argument("--json", action="store_true")
    add_job_options(p)
    p.set_defaults(handler=cmd_verify)

    p = sub.add_parser("dump", help="print records as JSON lines or text")
    p.add_argument("path", metavar="PATH")
    add_input(p, many=False)
    add_split(p)
    p.add_argument("--json", action="store_true", help="one JSON object per line")
    p.add_argument("--records", metavar="SPEC", help="e.g. 0:10,15,-1")
    p.add_argument("--kind", choices=[AUTO, *RECORD_KINDS], default=AUTO)
    add_names(p)
    p.set_defaults(handler=cmd_dump)

    p = sub.add_parser(
        "index",
        help="write the text index of NVIDIA DALI and the tfrecord package",
        description="Write '<offset> <size>' per record. A local file's index goes beside it"
        " (PATH.idx) unless --out says otherwise; a remote object's needs --beside (written"
        " next to it in its bucket, as URL.idx) or --out. Remote outputs are uploaded under a"
        " temporary name and moved into place once checked.",
    )
    add_input(p)
    p.add_argument(
        "--out",
        help="file (one input) or folder, local or a URL (a URL ending in / is a folder);"
        " default: PATH.idx beside it",
    )
    p.add_argument(
        "--beside",
        action="store_true",
        help="write each index next to its data, remote objects included (URL.idx)",
    )
    p.set_defaults(handler=cmd_index)


def add_split(p: argparse.ArgumentParser) -> None:
    """``--split NAME``: one split of a TFDS dataset or TFX ExampleGen folder (as
    ``FOLDER:NAME``)."""
    p.add_argument(
        "--split",
        metavar="NAME",
        help="the split of a TFDS dataset or TFX ExampleGen folder to read (as FOLDER:NAME)",
    )


# -- info --------------------------------------------------------------------------------


def cmd_info(args: argparse.Namespace, out: TextIO) -> int:
    """Records, bytes, compression and the header scan's problems of every input; the splits
    of every dataset folder among them (:func:`_datasets`)."""
    paths = with_split(args.paths, args.split)
    folders = [found for p in paths if (found := split_folder(p, anon=anon(args))) is not None]
    files = open_inputs(paths, args.compression, anon=anon(args))
    rows: list[dict[str, Any]] = []
    damaged = False
    for f in files:
        with f:
            count = len(f)
            problems = f.problems
            damaged |= bool(problems)
            first = f.recovered_from
            rows.append(
                {
                    "path": f.path,
                    "compression": f.compression,
                    "records": count,
                    "recovered": 0 if first is None else count - first,
                    "bytes": f.size,
                    "file_bytes": f.file_size,
                    "problems": len(problems),
                    "skipped_bytes": sum(p.skipped for p in problems),
                    "text_index": files.text_indexes.get(f.path),
                }
            )
    datasets = [_dataset(folder, split, rows) for folder, split in folders]
    damaged |= any(d["findings"] or any(s["findings"] for s in d["splits"]) for d in datasets)
    if args.json:
        doc: dict[str, Any] = {"files": rows}
        if datasets:
            doc["datasets"] = datasets
        json.dump(doc, out)
        out.write("\n")
    else:
        for r in rows:
            size = format_bytes(r["bytes"])
            if r["compression"] != "none":
                size += f" ({r['compression']}, {format_bytes(r['file_bytes'])} on disk)"
            state = "no damage found by the header scan (run verify to check every CRC)"
            if r["text_index"]:
                state = (
                    f"records counted from the text index beside it, {r['text_index']}"
                    " (run verify to check every CRC)"
                )
            if r["problems"]:
                recovered = (
                    f" ({r['recovered']:,} of the records were found after damage: recovered)"
                    if r["recovered"]
                    else ""
                )
                state = (
                    f"{plural(r['problems'], 'problem')},"
                    f" {r['skipped_bytes']:,} bytes skipped{recovered} (run verify for details)"
                )
            out.write(f"{r['path']}: {plural(r['records'], 'record')}, {size}; {state}\n")
        if len(rows) > 1:
            total = sum(r["records"] for r in rows)
            out.write(f"total: {plural(total, 'record')} in {len(rows)} files\n")
        for d in datasets:
            _write_dataset(d, out)
    return EXIT_DAMAGED if damaged else EXIT_OK


def _dataset(folder: SplitFolder, split: str | None, rows: list[dict[str, Any]]) -> dict[str, Any]:
    """A dataset folder's ``info``: what it is, its splits (``split`` alone when one was
    asked for) with the records counted in their files against the declared shard lengths
    (:func:`codec.tfds.check_shard_lengths`), its features as ``features.json`` declares
    them, and what does not check out."""
    counts = {os.path.realpath(r["path"]): r["records"] for r in rows}
    splits = []
    for s in folder.splits:
        if split is not None and s.name != split:
            continue
        records = [counts.get(os.path.realpath(p), 0) for p in s.files]
        declared = [d for d in s.declared_records if d is not None]
        splits.append(
            {
                "name": s.name,
                "records": sum(records),
                "declared_records": s.declared_total,
                "shards": len(s.shards),
                "shard_records": records,
                "declared_shard_records": declared if declared else None,
                "files": s.files,
                "missing": s.missing,
                "num_bytes": s.num_bytes,
                "findings": check_shard_lengths(s, records),
            }
        )
    doc: dict[str, Any] = {
        "kind": folder.kind,
        "folder": folder.folder,
        "name": folder.name,
        "splits": splits,
        "findings": list(folder.findings),
        "notes": list(folder.notes),
    }
    ds = folder.tfds
    if ds is not None:
        doc.update(
            {
                "dataset": ds.name,
                "version": ds.version,
                "config": ds.config,
                "description": ds.description,
                "citation": ds.citation,
                "homepage": ds.homepage,
                "supervised_keys": list(ds.supervised_keys) if ds.supervised_keys else None,
                "features": {
                    key: {
                        "kind": f.kind,
                        "dtype": f.dtype,
                        "shape": None if f.shape is None else list(f.shape),
                        "encoding": f.encoding,
                        "num_classes": f.num_classes,
                        "names_file": f.names_file,
                        "names": None if f.names is None else len(f.names),
                        "sample_rate": f.sample_rate,
                        "record_keys": list(f.record_keys),
                    }
                    for key, f in ds.features.items()
                },
            }
        )
    return doc


def _write_dataset(d: dict[str, Any], out: TextIO) -> None:
    what = "TFDS dataset" if d["kind"] == TFDS else "TFX ExampleGen output"
    out.write(f"{d['name']}: {what} in {d['folder']}\n")
    for s in d["splits"]:
        declared = ""
        if s["declared_records"] is not None:
            declared = (
                f" ({s['declared_records']:,} declared)"
                if s["declared_records"] != s["records"]
                else " (as declared)"
            )
        out.write(
            f"  {s['name']}: {plural(s['records'], 'record')} in"
            f" {plural(len(s['files']), 'shard')}{declared}\n"
        )
        for finding in s["findings"]:
            out.write(f"    {finding}\n")
    for finding in d["findings"]:
        out.write(f"  finding: {finding}\n")
    for note in d["notes"]:
        out.write(f"  note: {note}\n")


# -- verify ------------------------------------------------------------------------------


def cmd_verify(args: argparse.Namespace, out: TextIO) -> int:
    """Check every record's CRCs; one line per problem, then one verdict per file."""
    files = open_inputs(args.paths, args.compression, anon=anon(args), text_index=False)
    tasks = tasks_of(files, executor=executor_of(args), compression=args.compression)
    files.close()
    reports = run_job(VerifyJob(compression=args.compression), tasks, args)
    ok = all(r.ok for r in reports)
    if args.json:
        json.dump({"ok": ok, "files": [r.to_json() for r in reports]}, out)
        out.write("\n")
    else:
        for r in reports:
            for p in r.problems:
                at = f"byte {p.offset}" if p.offset is not None else "unknown offset"
                out.write(f"{r.path}: {at}: {p.kind}: {p.message}\n")
        for r in reports:
            verdict = "OK" if r.ok else "DAMAGED"
            extra = ""
            if not r.ok:
                recovered = (
                    f", {r.recovered:,} recovered after damage (their CRCs check, but they may"
                    " be content of a damaged record)"
                    if r.recovered
                    else ""
                )
                extra = (
                    f"{recovered}, {plural(r.damaged, 'damaged record')},"
                    f" {plural(len(r.problems), 'problem')},"
                    f" {r.skipped_bytes:,} bytes skipped"
                )
            out.write(
                f"{verdict} {r.path}: {plural(r.records, 'intact record')}{extra}"
                f" ({format_bytes(r.bytes)}, {r.compression})\n"
            )
        if len(reports) > 1:
            bad = sum(1 for r in reports if not r.ok)
            total = sum(r.records for r in reports)
            found_after = sum(r.recovered for r in reports)
            more = f", {found_after:,} recovered" if found_after else ""
            out.write(
                f"{'OK' if ok else 'DAMAGED'}: {len(reports)} files,"
                f" {plural(total, 'intact record')}"
                f"{more}, {plural(bad, 'damaged file')}\n"
            )
    return EXIT_OK if ok else EXIT_DAMAGED


# -- dump --------------------------------------------------------------------------------

Encoder = Callable[[bytes], tuple[str, object, str]]
"""``encode(payload) -> (kind, JSON value, text form)``."""


def _record_encoder(kind: str, names: Mapping[str, ClassNames] | None = None) -> Encoder:
    """The encoder for ``--kind``: raw bytes as base64 and hex, or a decoded record (its
    text followed by the class names of its labels, when ``names`` names some: the JSON
    form keeps the values as stored)."""
    if kind == RAW:

        def raw(payload: bytes) -> tuple[str, object, str]:
            return RAW, base64.b64encode(payload).decode("ascii"), hex_preview(payload)

        return raw

    def decoded(payload: bytes) -> tuple[str, object, str]:
        k = example.detect_kind(payload) if kind == AUTO else kind
        rec = example.decode(payload, k)
        return k, example.to_json(payload, k), format_record_text(rec) + names_text(rec, names)

    return decoded


def names_text(rec: example.Record, names: Mapping[str, ClassNames] | None) -> str:
    """The class names of a record's labels, as lines after its text (``dump``)::

        class names:
          label: 2 cat
          objects/label: 14 person, 1 bicycle, 99 (not named in objects-label.labels.txt)

    Empty when no feature of the record has class names."""
    if not names:
        return ""
    lines = []
    for feature, cn in names.items():
        f = rec.features.get(feature)
        if f is None or f.type != "int64" or not f.values:
            continue
        shown = []
        for v in list(dict.fromkeys(int(x) for x in f.values))[:20]:
            name = cn.name(v)
            where = os.path.basename(cn.source) or cn.source
            shown.append(f"{v} {name}" if name is not None else f"{v} (not named in {where})")
        lines.append(f"  {feature}: {', '.join(shown)}")
    return "\nclass names:\n" + "\n".join(lines) if lines else ""


def cmd_dump(args: argparse.Namespace, out: TextIO) -> int:
    """Every record (or the ``--records`` selection) as JSON lines or text. Over several
    files (a glob, a shard set) record numbers are global, as in the app, and each line names
    the file and the record's number in it. A record that cannot be read or decoded is named
    on stderr and the rest are still printed."""
    [path] = with_split([args.path], args.split)
    found = split_folder(path, anon=anon(args))
    if found is not None and found[1] is None and len(found[0].splits) > 1:
        folder = found[0]
        names = ", ".join(s.name for s in folder.splits)
        first = folder.splits[0].name
        raise UsageError(
            f"{args.path} holds the splits {names} of {folder.name}: dump one of them"
            f" ({args.path.rstrip('/')}:{first} or --split {first})"
        )
    files = open_inputs([path], args.compression, anon=anon(args))
    try:
        classes = names_of(args, [f.path for f in files], [path])
    except BaseException:
        files.close()
        raise
    encode = _record_encoder(args.kind, classes)
    damaged = False
    ds = codec.TFRecordDataset(files)
    try:
        wanted = records_option(args.records, ds) if args.records else range(len(ds))
        for i in wanted:
            k, local = ds.locate(i)
            f = ds.files[k]
            off, length = f.span(local)
            try:
                payload = f.read(local)
            except codec.CorruptRecordError as exc:
                damaged = True
                sys.stderr.write(f"{exc}\n")
                continue
            try:
                kind, value, text = encode(payload)
            except codec.CodecError as exc:
                damaged = True
                sys.stderr.write(f"{f.path}: record {local} at byte {off}: {exc}\n")
                continue
            recovered = f.is_recovered(local)
            if args.json:
                line: dict[str, object] = {
                    "index": i,
                    "path": f.path,
                    "local": local,
                    "offset": off,
                    "length": length,
                    "kind": kind,
                    "record": value,
                }
                if recovered:
                    line["recovered"] = True
                out.write(json.dumps(line, sort_keys=True, ensure_ascii=False) + "\n")
            else:
                where = f" ({f.path} record {local})" if len(files) > 1 else ""
                note = "  recovered (found after damage)" if recovered else ""
                out.write(f"record {i}{where}  offset {off}  length {length}  {kind}{note}\n")
                out.write(text.rstrip("\n") + "\n\n")
        for f in files:
            for p in f.problems:
                if p.kind != DATA_CRC:
                    damaged = True
                    sys.stderr.write(p.describe() + "\n")
    finally:
        for f in files:
            f.close()
    return EXIT_DAMAGED if damaged else EXIT_OK


# -- index -------------------------------------------------------------------------------


def cmd_index(args: argparse.Namespace, out: TextIO) -> int:
    """Write the DALI / ``tfrecord`` package text index (``<offset> <size>`` per record),
    beside each input or where ``--out`` says; a URL destination is written atomically (see
    :func:`browser_app.export.staging.output_file`)."""
    if args.out and args.beside:
        raise UsageError("give --out or --beside, not both")
    files = open_inputs(args.paths, args.compression, anon=anon(args), text_index=False)
    try:
        targets = [_index_target(f, args, len(files)) for f in files]
        damaged = False
        for f, target in zip(files, targets):
            _write_index(f, target, anon(args))
            damaged |= bool(f.problems)
            out.write(f"{shown(target)}: {plural(len(f), 'record')}\n")
            for p in f.problems:
                sys.stderr.write(p.describe() + "\n")
    finally:
        files.close()
    return EXIT_DAMAGED if damaged else EXIT_OK


def _index_target(f: codec.TFRecordFile, args: argparse.Namespace, count: int) -> str:
    """Where the index of ``f`` goes (see ``index --help``)."""
    given = f.url or f.path
    name = given.split("?", 1)[0].rstrip("/").rsplit("/", 1)[-1] + ".idx"
    if not args.out:
        if f.remote and not args.beside:
            raise UsageError(
                f"{f.path} is a remote object: add --beside to write {f.path}.idx next to it,"
                " or --out FILE or FOLDER"
            )
        if f.remote:
            base = given.split("?", 1)[0]
            return f"{base}.idx"
        return f.path + ".idx"
    dest = args.out
    if is_url(dest):
        folder = dest.endswith("/") or count > 1 or object_kind(dest, anon=anon(args)) == "folder"
        return join_url(dest, name) if folder else dest
    if os.path.isdir(dest):
        return os.path.join(dest, os.path.basename(name))
    if count > 1:
        raise UsageError("--out must be a folder when indexing several files")
    return dest


def _write_index(f: codec.TFRecordFile, target: str, anon: bool) -> None:
    """Write ``f``'s text index at ``target``: a local file atomically, a URL through the
    export staging (written, read back, uploaded under a temporary name, moved)."""
    if not is_url(target):
        f.write_text_index(target)
        return
    # Imported here: the export staging brings the edit journal, which no other command of
    # this module needs.
    from browser_app.export.staging import output_file

    count = len(f)
    with output_file(target, check=check_text_index, expected=count, anon=anon) as local:
        f.write_text_index(local)


def check_text_index(path: str, expected: int, shown: str) -> None:
    """Read a written text index back: ``expected`` entries."""
    with open(path, "rb") as fh:
        offsets, _sizes = parse_text_index(fh.read(), shown)
    if len(offsets) != expected:
        raise UsageError(f"{shown}: {len(offsets):,} index lines read back, {expected:,} written")
