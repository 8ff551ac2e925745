"""``tfrecord-browser schema PATH... [--json] [--sample N]``: the inferred schema and its drift.

Exit codes as for every command: 0 when every record read was intact, 1 when damage was
found (the schema of the intact records is still printed), 2 for usage errors or inputs that
cannot be opened.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any, TextIO

from browser_app.cli import EXIT_DAMAGED, EXIT_OK, add_input, open_inputs
from codec.schema import Schema, infer_schema


def register(sub: Any) -> None:
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
        type=_positive,
        metavar="N",
        help="look at N records picked at random instead of all (the output says so)",
    )
    p.add_argument("--top", type=_positive, default=10, metavar="K", help="top values shown")
    p.add_argument(
        "--workers",
        type=_positive,
        default=1,
        metavar="N",
        help="processes for large inputs (default 1)",
    )
    p.add_argument(
        "--decode-images",
        action="store_true",
        help="fully decode every image to find undecodable ones (default: header checks)",
    )
    p.add_argument(
        "--stats", action="store_true", help="with --json: add chart data under 'statistics'"
    )
    p.set_defaults(handler=cmd_schema)


def _positive(text: str) -> int:
    try:
        n = int(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from exc
    if n < 1:
        raise argparse.ArgumentTypeError("must be at least 1")
    return n


def cmd_schema(args: argparse.Namespace, out: TextIO) -> int:
    files = open_inputs(args.paths, args.compression)
    progress = _progress_printer() if sys.stderr.isatty() and not args.json else None
    try:
        schema = infer_schema(
            files,
            sample=args.sample,
            progress=progress,
            workers=args.workers,
            decode_images=args.decode_images,
        )
    finally:
        for f in files:
            f.close()
        if progress:
            sys.stderr.write("\r" + " " * 40 + "\r")
    if args.json:
        doc = schema.to_json(top=args.top)
        if args.stats:
            doc["statistics"] = schema.statistics(top=args.top)
        json.dump(doc, out, sort_keys=True, default=_jsonable)
        out.write("\n")
    else:
        out.write(format_schema(schema, top=args.top))
    damaged = bool(schema.builder.damaged.count or schema.problems)
    return EXIT_DAMAGED if damaged else EXIT_OK


def _jsonable(x: Any) -> Any:
    if isinstance(x, bytes):
        return x.decode("utf-8", "backslashreplace")
    if hasattr(x, "item"):
        return x.item()
    raise TypeError(f"not JSON: {type(x).__name__}")


def _progress_printer() -> Any:
    last = [-1]

    def show(done: int, total: int) -> None:
        pct = int(100 * done / total) if total else 100
        if pct != last[0]:
            last[0] = pct
            sys.stderr.write(f"\rreading records: {pct}% ({done:,}/{total:,})")
            sys.stderr.flush()

    return show


def _num(x: Any) -> str:
    if x is None:
        return "-"
    if isinstance(x, float):
        return f"{x:.6g}"
    return str(x)


def _records(recs: list[int], count: int, limit: int = 12) -> str:
    shown = ", ".join(str(r) for r in recs[:limit])
    more = count - min(len(recs), limit)
    return shown + (f", … ({more:,} more)" if more > 0 else "")


def format_schema(schema: Schema, top: int = 10) -> str:
    """The text report: one block per feature, then the drift."""
    doc = schema.to_json(top=top)
    lines: list[str] = []
    what = f"{doc['records']:,} records"
    if schema.is_sample:
        what = f"SAMPLE of {doc['records']:,} of {schema.total:,} records (not every record)"
    kinds = ", ".join(f"{k} {v:,}" for k, v in doc["kinds"].items())
    lines.append(f"{what}" + (f" ({kinds})" if kinds else ""))
    if len(doc.get("files", [])) > 1:
        lines.append(f"{len(doc['files'])} files")
    if doc["damaged"] or doc["problems"]:
        lines.append(
            f"DAMAGED: {doc['damaged']} records fail their CRC"
            + (f" ({_records(doc['damaged_records'], doc['damaged'])})" if doc["damaged"] else "")
            + (f"; {doc['problems']} other problems (run verify)" if doc["problems"] else "")
        )
    lines.append("")

    def block(name: str, d: dict[str, Any], label: str = "") -> None:
        types = ", ".join(f"{t} {c:,}" for t, c in d["types"].items()) or "no values"
        lines.append(f"{label}{name}: {types}")
        present = d["present"]
        if "min_steps" in d:
            lines.append(
                f"  steps: min {_num(d['min_steps'])}, mean {_num(d['mean_steps'])},"
                f" max {_num(d['max_steps'])} (in {present:,} records)"
            )
        else:
            lines.append(f"  present in {present:,} of {doc['records']:,} records")
        lines.append(
            f"  values per {'step' if 'min_steps' in d else 'record'}: min {_num(d['min_len'])},"
            f" mean {_num(d['mean_len'])}, max {_num(d['max_len'])}"
        )
        num = d.get("numeric")
        if num:
            extra = ""
            if num["nan"] or num["inf"]:
                extra = f", NaN {num['nan']:,}, Inf {num['inf']:,}"
            lines.append(
                f"  numbers: min {_num(num['min'])}, mean {_num(num['mean'])},"
                f" max {_num(num['max'])}{extra}"
            )
        iv = d.get("int_values")
        if iv:
            approx = "" if iv["exact"] else "~"
            tops = ", ".join(f"{v} ({c:,})" for v, c in iv["top"])
            lines.append(f"  {approx}{iv['distinct']:,} distinct values; top: {tops}")
        bv = d.get("bytes")
        if bv:
            approx = "" if bv["exact"] else "~"
            tops = ", ".join(f"{v!r} ({c:,})" for v, c in bv["top"][:top])
            kinds = f"{bv['text']:,} text, {bv['binary']:,} binary"
            lines.append(f"  bytes: {kinds}; {approx}{bv['distinct']:,} distinct; top: {tops}")
        im = d.get("images")
        if im:
            fmts = ", ".join(f"{k} {v:,}" for k, v in im["formats"].items())
            sizes = ", ".join(f"{w}x{h} ({c:,})" for w, h, c in im["sizes"][:5])
            lines.append(f"  images: {im['count']:,} ({fmts}); sizes: {sizes}")
            if im["undecodable"]:
                recs = _records(im["undecodable_records"], im["undecodable"])
                lines.append(f"  UNDECODABLE images: {im['undecodable']:,} (records {recs})")

    for name, d in doc["features"].items():
        block(name, d)
    for name, d in doc.get("feature_lists", {}).items():
        block(name, d, "feature list ")
    drift: list[str] = []
    for name, recs in doc["type_conflicts"].items():
        major = schema.features[name].majority_type()
        count = len(recs)
        drift.append(
            f"type: {name} is {major} in most records but not in records {_records(recs, count)}"
        )
    for name, recs in doc["missing"].items():
        count = doc["missing_counts"][name]
        drift.append(f"missing: {name} is absent from {count:,} records: {_records(recs, count)}")
    for name, d in doc["length_drift"].items():
        drift.append(
            f"length: {name} has {d['usual_len']} values in most records but not in"
            f" {d['count']:,}: {_records(d['records'], d['count'])}"
        )
    for name, d in doc.get("feature_lists", {}).items():
        if d.get("type_conflicts"):
            recs = d["type_conflicts"]
            drift.append(
                f"type: feature list {name} changes type in records {_records(recs, len(recs))}"
            )
        if d.get("missing"):
            drift.append(
                f"missing: feature list {name} is absent from {d['missing']:,} records:"
                f" {_records(d['missing_records'], d['missing'])}"
            )
    lines.append("")
    if drift:
        lines.append("Drift:")
        lines.extend(f"  {x}" for x in drift)
    else:
        lines.append("No drift: every feature has one type and is in every record.")
    return "\n".join(lines) + "\n"
