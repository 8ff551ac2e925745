"""The ``tfrecord-browser`` command: view | info | verify | dump | export | import | schema.

``main(argv) -> int``. Codec errors become messages and exit codes here, never tracebacks:
0 when everything read is intact, 1 when damage was found, 2 for a usage error or an input
that cannot be opened (missing file, no permission).
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import sys
from collections.abc import Callable, Sequence
from typing import Any, TextIO

import codec
from browser_app.selection import SpecError, parse_record_spec
from browser_app.view.text import format_record_text, hex_preview
from codec.values import format_bytes

EXIT_OK = 0
EXIT_DAMAGED = 1
EXIT_USAGE = 2


class CliError(Exception):
    """A problem to report on stderr with exit code 2."""


def open_inputs(paths: Sequence[str], compression: str) -> list[codec.TFRecordFile]:
    try:
        expanded = codec.expand_paths(list(paths))
    except FileNotFoundError as exc:
        raise CliError(str(exc).strip("'\"")) from exc
    files: list[codec.TFRecordFile] = []
    try:
        for p in expanded:
            files.append(codec.TFRecordFile(p, compression=compression))
    except IsADirectoryError as exc:
        raise CliError(f"{exc.filename}: is a folder, not a file") from exc
    except PermissionError as exc:
        raise CliError(f"{exc.filename}: permission denied") from exc
    except OSError as exc:
        raise CliError(f"{exc.filename or ''}: cannot open: {exc.strerror or exc}") from exc
    return files


# -- info --------------------------------------------------------------------------------


def cmd_info(args: argparse.Namespace, out: TextIO) -> int:
    files = open_inputs(args.paths, args.compression)
    rows: list[dict[str, Any]] = []
    damaged = False
    for f in files:
        with f:
            count = len(f)
            problems = f.problems
            damaged |= bool(problems)
            rows.append(
                {
                    "path": f.path,
                    "compression": f.compression,
                    "records": count,
                    "bytes": f.size,
                    "file_bytes": f.file_size,
                    "problems": len(problems),
                    "skipped_bytes": sum(p.skipped for p in problems),
                }
            )
    if args.json:
        json.dump({"files": rows}, out)
        out.write("\n")
    else:
        for r in rows:
            size = format_bytes(r["bytes"])
            if r["compression"] != "none":
                size += f" ({r['compression']}, {format_bytes(r['file_bytes'])} on disk)"
            state = "no damage found by the header scan (run verify to check every CRC)"
            if r["problems"]:
                state = (
                    f"{r['problems']} problem{'s' if r['problems'] != 1 else ''},"
                    f" {r['skipped_bytes']:,} bytes skipped (run verify for details)"
                )
            out.write(f"{r['path']}: {r['records']:,} records, {size}; {state}\n")
        if len(rows) > 1:
            total = sum(r["records"] for r in rows)
            out.write(f"total: {total:,} records in {len(rows)} files\n")
    return EXIT_DAMAGED if damaged else EXIT_OK


# -- verify ------------------------------------------------------------------------------


def cmd_verify(args: argparse.Namespace, out: TextIO) -> int:
    files = open_inputs(args.paths, args.compression)
    paths = [f.path for f in files]
    for f in files:
        f.close()
    reports = codec.verify_paths(paths, workers=args.workers, compression=args.compression)
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
                extra = (
                    f", {r.damaged} damaged record{'s' if r.damaged != 1 else ''},"
                    f" {len(r.problems)} problem{'s' if len(r.problems) != 1 else ''},"
                    f" {r.skipped_bytes:,} bytes skipped"
                )
            out.write(
                f"{verdict} {r.path}: {r.records:,} intact records{extra}"
                f" ({format_bytes(r.bytes)}, {r.compression})\n"
            )
        if len(reports) > 1:
            bad = sum(1 for r in reports if not r.ok)
            total = sum(r.records for r in reports)
            out.write(
                f"{'OK' if ok else 'DAMAGED'}: {len(reports)} files, {total:,} intact records,"
                f" {bad} damaged file{'s' if bad != 1 else ''}\n"
            )
    return EXIT_OK if ok else EXIT_DAMAGED


# -- dump --------------------------------------------------------------------------------


def _record_encoder(kind: str) -> Callable[[bytes], tuple[str, Any, str]]:
    """Returns fn(payload) -> (kind, json value, text form)."""
    if kind == "raw":

        def raw(payload: bytes) -> tuple[str, Any, str]:
            return "raw", base64.b64encode(payload).decode("ascii"), hex_preview(payload)

        return raw
    from codec import example

    def decoded(payload: bytes) -> tuple[str, Any, str]:
        k = example.detect_kind(payload) if kind == "auto" else kind
        rec = example.decode(payload, k)
        return k, example.to_json(payload, k), format_record_text(rec)

    return decoded


def cmd_dump(args: argparse.Namespace, out: TextIO) -> int:
    files = open_inputs([args.path], args.compression)
    encode = _record_encoder(args.kind)
    damaged = False
    for f in files:
        with f:
            total = len(f)
            try:
                wanted = parse_record_spec(args.records, total) if args.records else range(total)
            except SpecError as exc:
                raise CliError(f"--records: {exc}") from exc
            for i in wanted:
                off, length = f.span(i)
                try:
                    payload = f.read(i)
                except codec.CorruptRecordError as exc:
                    damaged = True
                    sys.stderr.write(f"{exc}\n")
                    continue
                try:
                    kind, value, text = encode(payload)
                except codec.CodecError as exc:
                    damaged = True
                    sys.stderr.write(f"{f.path}: record {i} at byte {off}: {exc}\n")
                    continue
                if args.json:
                    line = {
                        "index": i,
                        "offset": off,
                        "length": length,
                        "kind": kind,
                        "record": value,
                    }
                    out.write(json.dumps(line, sort_keys=True, ensure_ascii=False) + "\n")
                else:
                    out.write(f"record {i}  offset {off}  length {length}  {kind}\n")
                    out.write(text.rstrip("\n") + "\n\n")
            for p in f.problems:
                if p.kind != "data_crc":
                    damaged = True
                    sys.stderr.write(p.describe() + "\n")
    return EXIT_DAMAGED if damaged else EXIT_OK


# -- index -------------------------------------------------------------------------------


def cmd_index(args: argparse.Namespace, out: TextIO) -> int:
    """Write the DALI / ``tfrecord`` package text index (``<offset> <size>`` per record)."""
    files = open_inputs(args.paths, args.compression)
    if args.out and len(files) > 1 and not os.path.isdir(args.out):
        raise CliError("--out must be a folder when indexing several files")
    damaged = False
    for f in files:
        with f:
            name = os.path.basename(f.path) + ".idx"
            if args.out:
                target = os.path.join(args.out, name) if os.path.isdir(args.out) else args.out
            else:
                target = f.path + ".idx"
            f.write_text_index(target)
            damaged |= bool(f.problems)
            out.write(f"{target}: {len(f):,} records\n")
            for p in f.problems:
                sys.stderr.write(p.describe() + "\n")
    return EXIT_DAMAGED if damaged else EXIT_OK


# -- parser ------------------------------------------------------------------------------


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
        choices=["auto", "none", "gzip", "zlib"],
        default="auto",
        help="default: detected from the first bytes",
    )


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="tfrecord-browser",
        description="Open, page through, verify, edit and export TFRecord files. "
        "Without a command, opens the app on the bundled sample dataset.",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    p = sub.add_parser("view", help="start the browser app")
    p.add_argument("paths", nargs="*", metavar="PATH")
    p.add_argument("--root", help="the folder the app may open files from")
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=8501)
    p.add_argument("--no-browser", action="store_true", help="do not open a web browser")

    p = sub.add_parser("info", help="records, bytes, compression and a damage summary")
    add_input(p)
    p.add_argument("--json", action="store_true")

    p = sub.add_parser("verify", help="check every CRC; exit 1 when anything is damaged")
    add_input(p)
    p.add_argument("--json", action="store_true")
    p.add_argument("--workers", type=int, default=None, help="processes (default: all cores)")

    p = sub.add_parser("dump", help="print records as JSON lines or text")
    p.add_argument("path", metavar="PATH")
    add_input(p, many=False)
    p.add_argument("--json", action="store_true", help="one JSON object per line")
    p.add_argument("--records", metavar="SPEC", help="e.g. 0:10,15,-1")
    p.add_argument("--kind", choices=["auto", "example", "sequence_example", "raw"], default="auto")
    p = sub.add_parser("index", help="write the text index of NVIDIA DALI and the tfrecord package")
    add_input(p)
    p.add_argument("--out", help="file (one input) or folder; default: PATH.idx beside it")
    _add_more_commands(sub)
    return parser


def _add_more_commands(sub: Any) -> None:
    """Commands whose work lives in other modules register here."""
    import importlib

    for name in ("browser_app.cmd_export", "browser_app.cmd_schema"):
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as exc:
            if exc.name != name:
                raise
            continue
        module.register(sub)


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv:
        argv = ["view"]
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # argparse: usage errors exit 2, --help exits 0
        return int(exc.code or 0)
    handlers: dict[str, Callable[[argparse.Namespace, TextIO], int]] = {
        "info": cmd_info,
        "verify": cmd_verify,
        "dump": cmd_dump,
        "index": cmd_index,
    }
    try:
        if args.command == "view":
            from browser_app.launch import launch

            return launch(args)
        handler = handlers.get(args.command) or getattr(args, "handler", None)
        if handler is None:
            parser.print_help()
            return EXIT_USAGE
        return handler(args, sys.stdout)
    except CliError as exc:
        sys.stderr.write(f"tfrecord-browser: {exc}\n")
        return EXIT_USAGE
    except codec.WriteError as exc:
        sys.stderr.write(f"tfrecord-browser: {exc}\n")
        return EXIT_USAGE
    except codec.CodecError as exc:
        sys.stderr.write(f"tfrecord-browser: {exc}\n")
        return EXIT_DAMAGED
    except BrokenPipeError:
        # `tfrecord-browser dump x | head`: the reader went away; that is not an error.
        try:
            sys.stdout = open(os.devnull, "w")  # noqa: SIM115
        except OSError:
            pass
        return EXIT_OK
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
