"""Values typed as text, checked: parsing, rendering back, type conversion that loses nothing,
schema agreement, and the exact JSON form of a feature.

JSON forms, exact for every value: int64 as decimal strings, float32 as the shortest text that
reads back to the same float32 (``"nan"``, ``"inf"``, ``"-0.0"``; a NaN with a payload as
``"0x7fc00001"``, its bits), bytes as base64.
"""

from __future__ import annotations

import base64
import binascii
import contextlib
import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import Any

import numpy as np

from browser_app.errors import ConversionError, EditError, JournalError, ValueParseError
from codec import example as ex
from codec.errors import EncodeError
from codec.example import INT64_MAX, INT64_MIN, Feature, Record
from codec.kinds import BYTES, FEATURE_TYPES, FLOAT, INT64, NONE, RAW
from codec.values import format_float, is_text

__all__ = [
    "BYTES_PREFIXES",
    "ParsedValue",
    "Value",
    "check_value",
    "convert_values",
    "feature_from_json",
    "feature_to_json",
    "parse_value",
    "parse_values",
    "render_value",
    "type_warnings",
    "values_feature",
]

Value = int | float | bytes
"""One value of a feature: ``int`` for int64, ``float`` for float, ``bytes`` for bytes."""

BYTES_PREFIXES = ("hex:", "base64:", "text:")
_FLOAT32_MAX = float(np.finfo(np.float32).max)
_CANONICAL_NAN_BITS = 0x7FC00000


@dataclass(frozen=True)
class ParsedValue:
    """A value parsed from text, with a ``note`` when it was stored inexactly (a decimal that
    float32 cannot hold exactly), else ``None``."""

    value: Value
    note: str | None = None


# --------------------------------------------------------------------------------------------
# Typed text in, checked values out

_INT_RE = re.compile(r"^[+-]?(?:\d+|0[xX][0-9a-fA-F]+)$")
_LOOKS_FLOAT = re.compile(r"^[+-]?(?:\d+\.\d*|\.\d+|\d+(?:\.\d*)?[eE][+-]?\d+)$")
_SPECIAL_FLOATS = {
    "nan": math.nan,
    "+nan": math.nan,
    "-nan": math.nan,
    "inf": math.inf,
    "+inf": math.inf,
    "infinity": math.inf,
    "+infinity": math.inf,
    "-inf": -math.inf,
    "-infinity": -math.inf,
}


def _float32(x: float) -> float:
    """``x`` rounded to float32 (infinity when beyond its range)."""
    with np.errstate(over="ignore"):
        return float(np.float32(x))


def _parse_int64(text: str) -> ParsedValue:
    s = text.strip()
    if not s:
        raise ValueParseError(INT64, text, "empty: an int64 needs a whole number")
    if not _INT_RE.match(s):
        if _LOOKS_FLOAT.match(s) or s.lower() in _SPECIAL_FLOATS:
            reason = "not a whole number; int64 takes integers only (convert the feature to float)"
        else:
            reason = "not a whole number"
        raise ValueParseError(INT64, text, reason)
    sign = -1 if s[0] == "-" else 1
    body = s.lstrip("+-")
    value = sign * (int(body, 16) if body[:2].lower() == "0x" else int(body))
    if not INT64_MIN <= value <= INT64_MAX:
        raise ValueParseError(INT64, text, f"out of int64 range ({INT64_MIN} to {INT64_MAX})")
    return ParsedValue(value)


def _parse_float(text: str) -> ParsedValue:
    s = text.strip()
    if not s:
        raise ValueParseError(FLOAT, text, "empty: a float needs a number")
    special = _SPECIAL_FLOATS.get(s.lower())
    if special is not None:
        return ParsedValue(special)
    try:
        exact = Decimal(s.replace("_", ""))
        x = float(s)
    except (ValueError, InvalidOperation):
        raise ValueParseError(FLOAT, text, "not a number") from None
    if not exact.is_finite():  # e.g. "sNaN", which Decimal knows and float does not
        raise ValueParseError(FLOAT, text, "not a number")
    f = _float32(x)
    if math.isinf(f):
        raise ValueParseError(
            FLOAT, text, f"beyond float32's range (magnitude at most {_FLOAT32_MAX:.8g})"
        )
    note = None
    # No note for the text this app writes for a float32 (its shortest round-trip text, as
    # an unchanged list is typed back): only a value float32 cannot hold is worth one.
    if Decimal(f) != exact and Decimal(format_float(f)) != exact:
        note = f"{s} is not exactly representable as float32; stored as {f!r}"
        if f == 0.0 and exact != 0:
            note = f"{s} is too small for float32; stored as {format_float(f)}"
    return ParsedValue(f, note)


def _parse_bytes(text: str) -> ParsedValue:
    low = text[:7].lower()
    if low.startswith("hex:"):
        digits = re.sub(r"\s+", "", text[4:])
        try:
            return ParsedValue(bytes.fromhex(digits))
        except ValueError:
            bad = next((c for c in digits if c not in "0123456789abcdefABCDEF"), None)
            reason = (
                f"bad hex: {bad!r} is not a hex digit"
                if bad is not None
                else "bad hex: an odd number of digits"
            )
            raise ValueParseError(BYTES, text, reason) from None
    if low.startswith("base64:"):
        data = re.sub(r"\s+", "", text[7:])
        try:
            return ParsedValue(base64.b64decode(data, validate=True))
        except (binascii.Error, ValueError) as exc:
            raise ValueParseError(BYTES, text, f"bad base64: {exc}") from None
    if low.startswith("text:"):
        text = text[5:]
    try:
        return ParsedValue(text.encode("utf-8"))
    except UnicodeEncodeError as exc:
        raise ValueParseError(BYTES, text, f"not encodable as UTF-8: {exc.reason}") from None


_PARSERS: dict[str, Callable[[str], ParsedValue]] = {
    INT64: _parse_int64,
    FLOAT: _parse_float,
    BYTES: _parse_bytes,
}


def check_value(type: str, text: str) -> ParsedValue:
    """Parse ``text`` as a value of ``type`` (``int64``, ``float`` or ``bytes``) and say
    whether it was stored exactly.

    Syntax: int64 takes a whole number (``-12``, ``+7``, ``0x1f``) in int64's range; float
    takes a real number (``0.5``, ``1e-3``, ``nan``, ``inf``, ``-inf``) within float32's range,
    rounded to float32 (``note`` says so when that changes it); bytes takes UTF-8 text, or
    ``hex:00ff10`` / ``base64:AP8Q`` for binary (``text:`` in front keeps text that starts
    with one of these prefixes as it is). Raises :class:`ValueParseError` with the reason."""
    parser = _PARSERS.get(type)
    if parser is None:
        raise ValueParseError(
            type, text, f"unknown feature type (expected one of {', '.join(FEATURE_TYPES)})"
        )
    if not isinstance(text, str):
        raise ValueParseError(type, repr(text), "expected text")
    return parser(text)


def parse_value(type: str, text: str) -> Value:
    """The value ``text`` stands for as a ``type`` value (see :func:`check_value` for the
    syntax and notes). Raises :class:`ValueParseError` with the reason."""
    return check_value(type, text).value


def parse_values(type: str, text: str) -> tuple[list[Value], list[str]]:
    """Parse a list typed as text: int64 and float values separated by commas, spaces or
    newlines; bytes values one per line (an empty text is an empty list). Returns the values
    and the notes for inexact ones; raises :class:`ValueParseError` naming the first bad
    value and its position."""
    if type == BYTES:
        parts = text.split("\n") if text else []
        if parts and parts[-1] == "":
            parts.pop()
        parts = [p[:-1] if p.endswith("\r") else p for p in parts]
    else:
        parts = [p for p in re.split(r"[\s,]+", text.strip()) if p]
    values: list[Value] = []
    notes: list[str] = []
    for i, part in enumerate(parts):
        try:
            parsed = check_value(type, part)
        except ValueParseError as exc:
            raise ValueParseError(type, part, f"value {i}: {exc.reason}") from None
        values.append(parsed.value)
        if parsed.note:
            notes.append(f"value {i}: {parsed.note}")
    return values, notes


_PREFIXES_BYTES = tuple(p.encode("ascii") for p in BYTES_PREFIXES)


def render_value(type: str, value: Value) -> str:
    """The text :func:`parse_value` reads back as exactly ``value``: decimal for int64, the
    shortest float32 text for float (``nan``, ``inf``, ``-inf``), UTF-8 text for bytes when
    it is text (without a prefix that would be misread), else ``base64:...``."""
    if type == INT64:
        return str(int(value))
    if type == FLOAT:
        return format_float(float(value))
    if type == BYTES:
        b = bytes(value)  # type: ignore[arg-type]  # a bytes feature's values are bytes
        if is_text(b) and not b[:7].lower().startswith(_PREFIXES_BYTES):
            return b.decode("utf-8")
        return "base64:" + base64.b64encode(b).decode("ascii")
    raise ValueError(f"unknown feature type {type!r}")


def values_feature(type: str, values: Sequence[Value], name: str) -> Feature:
    """A checked :class:`Feature` of ``type`` (see :func:`codec.example.make_feature`);
    :class:`EditError` naming ``name`` when a value does not fit."""
    try:
        return ex.make_feature(type, list(values), name=name)
    except EncodeError as exc:
        raise EditError(str(exc)) from exc


# --------------------------------------------------------------------------------------------
# Type conversion that checks every value


def _convert_one(v: Value, src: str, dst: str) -> tuple[Value | None, str | None]:
    """``(converted, None)`` or ``(None, reason)``. ``v`` is a value of type ``src``."""
    if dst == BYTES:
        return (str(v) if src == INT64 else format_float(float(v))).encode("ascii"), None
    if src == BYTES:
        if isinstance(v, (int, float)):  # pragma: no cover - a bytes feature holds bytes
            return None, "not bytes"
        return _number_from_text(bytes(v), dst)
    x = float(v)
    if src == INT64 and dst == FLOAT:
        f = _float32(x)
        if math.isinf(f) or int(f) != v:
            return None, f"float32 cannot hold it exactly (it would become {format_float(f)})"
        return f, None
    if src == FLOAT and dst == INT64:
        if not math.isfinite(x):
            return None, f"{format_float(x)} has no int64 value"
        if x != int(x):
            return None, "not a whole number"
        if not INT64_MIN <= int(x) <= INT64_MAX:
            return None, "out of int64 range"
        return int(x), None
    return None, f"no conversion from {src} to {dst}"  # pragma: no cover


def _number_from_text(b: bytes, dst: str) -> tuple[Value | None, str | None]:
    """A bytes value as a number of type ``dst``, only when it is text that reads back the
    same."""
    try:
        text = b.decode("utf-8")
    except UnicodeDecodeError:
        return None, "not UTF-8 text"
    try:
        parsed = check_value(dst, text)
    except ValueParseError as exc:
        return None, exc.reason
    back = render_value(dst, parsed.value)
    if dst == INT64 and back != text:
        return None, f"reads back as {back!r}, not the same text"
    if dst == FLOAT and back != text.strip().lower():
        same = False
        with contextlib.suppress(InvalidOperation):
            same = Decimal(back) == Decimal(text)
        if not same:
            return None, f"float32 would hold it as {back}"
    return parsed.value, None


def convert_values(
    values: Sequence[Value], from_type: str, to_type: str, *, name: str = ""
) -> list[Value]:
    """Convert every value of a feature from one type to another, or raise
    :class:`ConversionError` listing each value that would be lost or changed.

    int64 → float only when float32 holds the integer exactly; float → int64 only for whole
    numbers in range; anything → bytes as decimal text (floats as their shortest float32
    text); bytes → int64/float only for text that reads back to the same number."""
    for t in (from_type, to_type):
        if t not in (*FEATURE_TYPES, NONE):
            raise EditError(f"unknown feature type {t!r}")
    if from_type == to_type or not values:
        return list(values)
    if to_type == NONE:
        raise ConversionError(from_type, to_type, [(0, values[0], "type none holds no values")])
    out: list[Value] = []
    problems: list[tuple[int, Any, str]] = []
    for i, v in enumerate(values):
        converted, reason = _convert_one(v, from_type, to_type)
        if converted is None:
            problems.append((i, v, reason or ""))
        else:
            out.append(converted)
    if problems:
        raise ConversionError(from_type, to_type, problems, name)
    return out


# --------------------------------------------------------------------------------------------
# Schema agreement


def type_warnings(
    record: Record,
    known_types: Mapping[str, str],
    known_list_types: Mapping[str, str] | None = None,
) -> list[str]:
    """Warnings for each feature of ``record`` whose type disagrees with ``known_types``
    (``{feature name: type}``, e.g. the dataset's schema), and for features the dataset does
    not know. ``known_list_types`` does the same for a SequenceExample's feature lists."""
    out: list[str] = []
    if record.kind == RAW:
        return out
    for name, feat in record.features.items():
        want = known_types.get(name)
        if want is None:
            out.append(f"feature {name!r} is not in the rest of the dataset")
        elif feat.type not in (want, NONE):
            out.append(
                f"feature {name!r} is {feat.type} here but {want} in the rest of the dataset"
            )
    if known_list_types is not None:
        for name, steps in record.feature_lists.items():
            want = known_list_types.get(name)
            if want is None:
                out.append(f"feature list {name!r} is not in the rest of the dataset")
                continue
            bad = sorted({s.type for s in steps} - {want, NONE})
            if bad:
                out.append(
                    f"feature list {name!r} has {', '.join(bad)} steps here but {want}"
                    " in the rest of the dataset"
                )
    return out


# --------------------------------------------------------------------------------------------
# JSON forms of values


def _float_to_json(v: float) -> str:
    if v != v:
        bits = int(np.array([v], dtype=np.float32).view(np.uint32)[0])
        return "nan" if bits == _CANONICAL_NAN_BITS else f"0x{bits:08x}"
    return format_float(v)


def _float_from_json(s: str | float) -> float:
    if isinstance(s, str) and s.startswith("0x"):
        return float(np.array([int(s, 16)], dtype=np.uint32).view(np.float32)[0])
    return float(np.float32(float(s)))


def feature_to_json(feat: Feature) -> dict[str, Any]:
    """``{"type": ..., "values": [...]}`` with exact value texts (see the module docstring)."""
    if feat.type == INT64:
        values: list[str] = [str(int(v)) for v in feat.values]
    elif feat.type == FLOAT:
        values = [_float_to_json(v) for v in feat.values]
    elif feat.type == BYTES:
        values = [base64.b64encode(bytes(v)).decode("ascii") for v in feat.values]
    else:
        values = []
    return {"type": feat.type, "values": values}


def feature_from_json(obj: Mapping[str, Any]) -> Feature:
    """The inverse of :func:`feature_to_json`."""
    t = obj["type"]
    vals = obj.get("values") or []
    if t == INT64:
        return Feature(INT64, [int(v) for v in vals])
    if t == FLOAT:
        return Feature(FLOAT, [_float_from_json(v) for v in vals])
    if t == BYTES:
        return Feature(BYTES, [base64.b64decode(v) for v in vals])
    if t == NONE:
        return Feature(NONE, [])
    raise JournalError(f"unknown feature type {t!r} in the journal")
