"""Records as plain text, for ``tfrecord-browser dump`` without ``--json``."""

from __future__ import annotations

from typing import Any

from codec.errors import DecodeError
from codec.example import Feature, Record, classify_bytes
from codec.kinds import RAW, SEQUENCE_EXAMPLE
from codec.tensor import describe_tensor
from codec.values import format_float

__all__ = ["format_record_text", "hex_preview"]

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
    head = v[:16].hex(" ")
    return f"<binary: {len(v)} bytes: {head}{' …' if len(v) > 16 else ''}>"


def _feature_text(name: str, f: Feature) -> str:
    shown = [_value_text(f.type, v) for v in f.values[:_TEXT_LIMIT]]
    more = len(f.values) - len(shown)
    if more > 0:
        shown.append(f"… {more} more")
    return f"{name} ({f.type}, {len(f.values)}): [{', '.join(shown)}]"


def format_record_text(record: Record) -> str:
    """A readable multi-line text form of a record (for ``dump`` without ``--json``)."""
    lines = [f"kind: {record.kind}"]
    if record.kind == RAW:
        raw = record.raw or b""
        lines.append(f"raw: {_value_text('bytes', raw)}")
        return "\n".join(lines)
    lines.append("context:" if record.kind == SEQUENCE_EXAMPLE else "features:")
    if not record.features:
        lines.append("  (none)")
    for name, f in record.features.items():
        lines.append("  " + _feature_text(name, f))
    if record.kind == SEQUENCE_EXAMPLE:
        lines.append("feature_lists:")
        if not record.feature_lists:
            lines.append("  (none)")
        for name, steps in record.feature_lists.items():
            lines.append(f"  {name} ({len(steps)} steps):")
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
