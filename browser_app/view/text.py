"""Plain text for the command line: records (``dump`` without ``--json``) and the schema
report (``schema`` without ``--json``)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from browser_app.view.schema import number_text, value_text
from codec.audio import AUDIO_FORMATS, describe_audio
from codec.errors import DecodeError
from codec.example import Feature, Record, classify_bytes
from codec.kinds import RAW, SEQUENCE_EXAMPLE
from codec.schema import findings
from codec.tensor import describe_tensor
from codec.values import format_float, plural

__all__ = ["format_record_text", "format_schema", "hex_preview"]

_TEXT_LIMIT = 20  # values shown per feature in format_record_text


def _value_text(t: str, v: Any) -> str:
    if t == "float":
        return format_float(v)
    if t == "int64":
        return str(v)
    kind = classify_bytes(v)
    if kind == "text":
        s = v.decode("utf-8")
        return repr(s if len(s) <= 80 else s[:77] + "...")
    if kind == "tensor":
        try:
            dtype, shape = describe_tensor(v)
            return f"<tensor {dtype} {list(shape)}: {len(v)} bytes>"
        except DecodeError:  # pragma: no cover - is_serialized_tensor said it parses
            pass
    if kind.startswith("image/"):
        return f"<{kind}: {len(v)} bytes>"
    if kind.startswith("audio/"):
        info = describe_audio(v)
        return f"<{info.text() if info is not None else kind}: {len(v)} bytes>"
    head = v[:16].hex(" ")
    return f"<binary: {len(v)} bytes: {head}{' …' if len(v) > 16 else ''}>"


def _feature_text(name: str, f: Feature) -> str:
    shown = [_value_text(f.type, v) for v in f.values[:_TEXT_LIMIT]]
    more = len(f.values) - len(shown)
    if more > 0:
        shown.append(f"… {more} more")
    return f"{name} ({f.type}, {len(f.values)}): [{', '.join(shown)}]"


def format_record_text(record: Record) -> str:
    """A readable multi-line text form of a record (for ``dump`` without ``--json``):
    features and feature lists by name, as the schema lists them (not in the order the
    writer put them in the map)."""
    lines = [f"kind: {record.kind}"]
    if record.kind == RAW:
        raw = record.raw or b""
        lines.append(f"raw: {_value_text('bytes', raw)}")
        return "\n".join(lines)
    lines.append("context:" if record.kind == SEQUENCE_EXAMPLE else "features:")
    if not record.features:
        lines.append("  (none)")
    for name, f in sorted(record.features.items()):
        lines.append("  " + _feature_text(name, f))
    if record.kind == SEQUENCE_EXAMPLE:
        lines.append("feature_lists:")
        if not record.feature_lists:
            lines.append("  (none)")
        for name, steps in sorted(record.feature_lists.items()):
            lines.append(f"  {name} ({plural(len(steps), 'step')}):")
            for i, f in enumerate(steps[:_TEXT_LIMIT]):
                lines.append(f"    {_feature_text(f'[{i}]', f)}")
            if len(steps) > _TEXT_LIMIT:
                lines.append(f"    … {len(steps) - _TEXT_LIMIT} more steps")
    return "\n".join(lines)


def hex_preview(payload: bytes, limit: int = 64) -> str:
    """The first ``limit`` bytes as hex and as printable text, with the total size."""
    head = payload[:limit]
    text = "".join(chr(b) if 32 <= b < 127 else "." for b in head)
    more = f" … ({len(payload)} bytes)" if len(payload) > limit else f" ({len(payload)} bytes)"
    return f"{head.hex(' ')}  |{text}|{more}"


# -- the schema report ---------------------------------------------------------------------

_RECORDS_SHOWN = 12  # record numbers listed per line of the schema report


def _num(x: float | int | None) -> str:
    return number_text(x, missing="-")


def _record_numbers(recs: Sequence[int], count: int) -> str:
    """The first record numbers of ``recs``, then how many of ``count`` are not shown."""
    shown = ", ".join(str(r) for r in recs[:_RECORDS_SHOWN])
    more = count - min(len(recs), _RECORDS_SHOWN)
    return shown + (f", … ({more:,} more)" if more > 0 else "")


def _feature_lines(name: str, d: Mapping[str, Any], records: int, label: str = "") -> list[str]:
    """One feature's (or feature list's) block: types, presence, lengths, values, pictures."""
    steps = "min_steps" in d
    types = ", ".join(f"{t} {c:,}" for t, c in d["types"].items()) or "no values"
    lines = [f"{label}{name}: {types}"]
    present = d["present"]
    if steps:
        lines.append(
            f"  steps: min {_num(d['min_steps'])}, mean {_num(d['mean_steps'])},"
            f" max {_num(d['max_steps'])} (in {plural(present, 'record')})"
        )
    else:
        lines.append(f"  present in {present:,} of {plural(records, 'record')}")
    lines.append(
        f"  values per {'step' if steps else 'record'}: min {_num(d['min_len'])},"
        f" mean {_num(d['mean_len'])}, max {_num(d['max_len'])}"
    )
    num = d.get("numeric")
    if num:
        extra = ""
        if num["nan"] or num["inf"]:
            extra = f", NaN {num['nan']:,}, Inf {num['inf']:,}"
        low, high = value_text(num["min"], "-"), value_text(num["max"], "-")
        lines.append(f"  numbers: min {low}, mean {_num(num['mean'])}, max {high}{extra}")
    iv = d.get("int_values")
    if iv:
        approx = "" if iv["exact"] else "~"
        tops = ", ".join(f"{v} ({c:,})" for v, c in iv["top"])
        lines.append(f"  {approx}{iv['distinct']:,} distinct values; top: {tops}")
    bv = d.get("bytes")
    if bv:
        approx = "" if bv["exact"] else "~"
        tops = ", ".join(f"{v!r} ({c:,})" for v, c in bv["top"])
        line = f"  bytes: {bv['text']:,} text, {bv['binary']:,} binary"
        if bv["top"]:  # values too long to count one by one (audio, documents) have none
            line += f"; {approx}{bv['distinct']:,} distinct; top: {tops}"
        lines.append(line)
    heard = d.get("audio")
    if heard:
        fmts = ", ".join(f"{AUDIO_FORMATS.get(k, k)} {v:,}" for k, v in heard["formats"].items())
        lines.append(f"  audio: {heard['count']:,} ({fmts})")
    im = d.get("images")
    if im:
        fmts = ", ".join(f"{k} {v:,}" for k, v in im["formats"].items())
        sizes = ", ".join(f"{w}x{h} ({c:,})" for w, h, c in im["sizes"][:5])
        lines.append(f"  images: {im['count']:,} ({fmts}); sizes: {sizes}")
        if im["undecodable"]:
            recs = _record_numbers(im["undecodable_records"], im["undecodable"])
            lines.append(f"  UNDECODABLE images: {im['undecodable']:,} (records {recs})")
    return lines


def format_schema(doc: Mapping[str, Any]) -> str:
    """The text report of a schema's JSON form (:meth:`codec.schema.Schema.to_json`): a
    summary, one block per feature and feature list, then the drift, one line per
    :func:`codec.schema.findings` sentence with the record numbers involved."""
    records = doc["records"]
    what = plural(records, "record")
    if doc.get("sampled"):
        of = doc["sample"]["of"]
        what = f"SAMPLE of {records:,} of {plural(of, 'record')} (not every record)"
    kinds = ", ".join(f"{k} {v:,}" for k, v in doc["kinds"].items())
    lines = [what + (f" ({kinds})" if kinds else "")]
    if len(doc.get("files", [])) > 1:
        lines.append(f"{len(doc['files'])} files")
    if doc["damaged"] or doc["problems"]:
        damaged = doc["damaged"]
        fail = plural(damaged, "record fails its CRC", "records fail their CRC")
        lines.append(
            f"DAMAGED: {fail}"
            + (f" ({_record_numbers(doc['damaged_records'], damaged)})" if damaged else "")
            + (f"; {doc['problems']} other problems (run verify)" if doc["problems"] else "")
        )
    lines.append("")
    for name, d in doc["features"].items():
        lines.extend(_feature_lines(name, d, records))
    for name, d in doc.get("feature_lists", {}).items():
        lines.extend(_feature_lines(name, d, records, "feature list "))
    found = [
        f"  {f.check}: {f.message}: {_record_numbers(f.records, f.count)}"
        for f in findings(doc)
        if f.check != "damaged"  # said above
    ]
    lines.append("")
    if not records:
        lines.append("No records were read: there is nothing to check.")
    elif found:
        lines.append("Findings:")
        lines.extend(found)
    else:
        lines.append(
            "No findings: every feature has one type and is in every record, and nothing"
            " else the checks look for was found."
        )
    return "\n".join(lines) + "\n"
