"""The edit journal: pending changes to a dataset, kept on disk as they are made.

A :class:`Journal` sits beside an opened dataset (a :class:`codec.TFRecordDataset` or a single
:class:`codec.TFRecordFile`) and never writes to it. Every edit becomes a :class:`Change` that
is appended to a JSON Lines file in the cache folder and fsynced (per change, or per batch
inside ``with journal.batch():``), so a browser refresh, a second tab or a server restart
loses nothing. Opening a journal replays it; the journal remembers the identity of every
source file (path, size, mtime_ns, CRC32C of the first and last 64 KiB) and refuses with
:class:`JournalMismatchError` when a file changed underneath it.

Records are addressed by a :data:`RecordRef`: the ``int`` global index of a source record, or
the ``str`` id of a record added by the journal (``"n1"``, ``"n2"``, ...). A new record sits
after the record it was inserted after; :meth:`Journal.order` gives the edited dataset's order.

Edits are checked when they are made: :func:`parse_value` turns typed text into a value or
raises :class:`ValueParseError` with the reason, :func:`convert_values` changes a feature's
type only when no value is lost, image replacements must decode. A rejected edit raises before
anything is recorded, so nothing else is lost.

Errors (all :class:`codec.CodecError`)::

    EditError (also ValueError)      an edit that cannot be made (unknown feature, raw record...)
    ├── ValueParseError              typed text that is not a value of the type (.reason)
    └── ConversionError              a type change that would lose values (.problems)
    JournalError                     a journal file that cannot be read or written
    └── JournalMismatchError         the source changed since the journal was started (.changes)

JSON forms, exact for every value: int64 as decimal strings, float32 as the shortest text that
reads back to the same float32 (``"nan"``, ``"inf"``, ``"-0.0"``; a NaN with a payload as
``"0x7fc00001"``, its bits), bytes as base64.
"""

from __future__ import annotations

import base64
import binascii
import contextlib
import hashlib
import json
import math
import os
import re
import threading
import time
from collections import OrderedDict
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import Any, NamedTuple

import crc32c as _crc32c
import numpy as np

import codec
from codec import example as ex
from codec.cache import default_cache_dir
from codec.errors import CodecError, EncodeError
from codec.example import Feature, Record
from codec.values import format_float, is_text

try:  # POSIX advisory locks keep two processes appending to one journal in order
    import fcntl as _fcntl
except ImportError:  # pragma: no cover - not on POSIX
    _fcntl = None  # type: ignore[assignment]

__all__ = [
    "BYTES_PREFIXES",
    "FEATURE_TYPES",
    "MARK_STATUSES",
    "Change",
    "ConversionError",
    "EditError",
    "FeatureDiff",
    "FileIdentity",
    "Journal",
    "JournalError",
    "JournalMismatchError",
    "Mark",
    "ParsedValue",
    "RecordRef",
    "ValueParseError",
    "as_dataset",
    "check_value",
    "convert_values",
    "discard_journal",
    "feature_from_json",
    "feature_to_json",
    "journal_path",
    "parse_value",
    "parse_values",
    "render_value",
    "source_identity",
    "type_warnings",
]

RecordRef = int | str
"""A record: the global index of a source record (``int``) or the id of an added one (``str``)."""

FEATURE_TYPES = ("int64", "float", "bytes")
MARK_STATUSES = ("passed", "flagged")
BYTES_PREFIXES = ("hex:", "base64:", "text:")
JOURNAL_VERSION = 1
IDENTITY_WINDOW = 64 * 1024

INT64_MIN = -(1 << 63)
INT64_MAX = (1 << 63) - 1
_FLOAT32_MAX = float(np.finfo(np.float32).max)
_CANONICAL_NAN_BITS = 0x7FC00000


# --------------------------------------------------------------------------------------------
# Errors


class EditError(CodecError, ValueError):
    """An edit that cannot be made; nothing was recorded."""


class ValueParseError(EditError):
    """Text that is not a value of the feature's type. ``reason`` says why, ``text`` and
    ``type`` are what was given."""

    def __init__(self, type: str, text: str, reason: str) -> None:
        self.type = type
        self.text = text
        self.reason = reason
        super().__init__(f"{_show(text)} is not a valid {type} value: {reason}")


class ConversionError(EditError):
    """A type conversion that would lose or change values. ``problems`` lists
    ``(position, value, reason)`` for every value that does not convert exactly."""

    def __init__(
        self, from_type: str, to_type: str, problems: list[tuple[int, Any, str]], name: str = ""
    ) -> None:
        self.from_type = from_type
        self.to_type = to_type
        self.problems = problems
        where = f"feature {name!r}: " if name else ""
        first = "; ".join(f"value {i} ({_show(v)}): {r}" for i, v, r in problems[:3])
        more = f" (and {len(problems) - 3} more)" if len(problems) > 3 else ""
        super().__init__(
            f"{where}cannot convert {from_type} to {to_type} without losing values: {first}{more}"
        )


class JournalError(CodecError):
    """A journal file that cannot be read or written."""


class JournalMismatchError(JournalError):
    """The source files changed since the journal was started. ``changes`` names what
    changed, one human-readable line per difference; ``journal`` is the journal's path."""

    def __init__(self, journal: str, changes: list[str]) -> None:
        self.journal = journal
        self.changes = changes
        super().__init__(
            f"the pending edits in {journal} were made on another version of the source: "
            + "; ".join(changes)
            + ". Open the file it was made for, or discard the journal."
        )


def _show(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


# --------------------------------------------------------------------------------------------
# Values: typed text in, checked values out


@dataclass(frozen=True)
class ParsedValue:
    """A value parsed from text, with a ``note`` when it was stored inexactly (a decimal that
    float32 cannot hold exactly), else ``None``."""

    value: int | float | bytes
    note: str | None = None


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


def _parse_int64(text: str) -> ParsedValue:
    s = text.strip()
    if not s:
        raise ValueParseError("int64", text, "empty: an int64 needs a whole number")
    if not _INT_RE.match(s):
        if _LOOKS_FLOAT.match(s) or s.lower() in _SPECIAL_FLOATS:
            reason = "not a whole number; int64 takes integers only (convert the feature to float)"
        else:
            reason = "not a whole number"
        raise ValueParseError("int64", text, reason)
    sign = -1 if s[0] == "-" else 1
    body = s.lstrip("+-")
    value = sign * (int(body, 16) if body[:2].lower() == "0x" else int(body))
    if not INT64_MIN <= value <= INT64_MAX:
        raise ValueParseError("int64", text, f"out of int64 range ({INT64_MIN} to {INT64_MAX})")
    return ParsedValue(value)


def _parse_float(text: str) -> ParsedValue:
    s = text.strip()
    if not s:
        raise ValueParseError("float", text, "empty: a float needs a number")
    special = _SPECIAL_FLOATS.get(s.lower())
    if special is not None:
        return ParsedValue(special)
    try:
        exact = Decimal(s.replace("_", ""))
        x = float(s)
    except (ValueError, InvalidOperation):
        raise ValueParseError("float", text, "not a number") from None
    if not exact.is_finite():  # e.g. "sNaN", which Decimal knows and float does not
        raise ValueParseError("float", text, "not a number")
    with np.errstate(over="ignore"):
        f = float(np.float32(x))
    if math.isinf(f):
        raise ValueParseError(
            "float", text, f"beyond float32's range (magnitude at most {_FLOAT32_MAX:.8g})"
        )
    note = None
    if Decimal(f) != exact:
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
            bad = next(
                (c for c in digits if c not in "0123456789abcdefABCDEF"),
                None,
            )
            reason = (
                f"bad hex: {bad!r} is not a hex digit"
                if bad is not None
                else "bad hex: an odd number of digits"
            )
            raise ValueParseError("bytes", text, reason) from None
    if low.startswith("base64:"):
        data = re.sub(r"\s+", "", text[7:])
        try:
            return ParsedValue(base64.b64decode(data, validate=True))
        except (binascii.Error, ValueError) as exc:
            raise ValueParseError("bytes", text, f"bad base64: {exc}") from None
    if low.startswith("text:"):
        text = text[5:]
    try:
        return ParsedValue(text.encode("utf-8"))
    except UnicodeEncodeError as exc:
        raise ValueParseError("bytes", text, f"not encodable as UTF-8: {exc.reason}") from None


_PARSERS = {"int64": _parse_int64, "float": _parse_float, "bytes": _parse_bytes}


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


def parse_value(type: str, text: str) -> int | float | bytes:
    """The value ``text`` stands for as a ``type`` value (see :func:`check_value` for the
    syntax and notes). Raises :class:`ValueParseError` with the reason."""
    return check_value(type, text).value


def parse_values(type: str, text: str) -> tuple[list[Any], list[str]]:
    """Parse a list typed as text: int64 and float values separated by commas, spaces or
    newlines; bytes values one per line (an empty text is an empty list). Returns the values
    and the notes for inexact ones; raises :class:`ValueParseError` naming the first bad
    value and its position."""
    if type == "bytes":
        parts = text.split("\n") if text else []
        if parts and parts[-1] == "":
            parts.pop()
        parts = [p[:-1] if p.endswith("\r") else p for p in parts]
    else:
        parts = [p for p in re.split(r"[\s,]+", text.strip()) if p]
    values: list[Any] = []
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


def render_value(type: str, value: Any) -> str:
    """The text :func:`parse_value` reads back as exactly ``value``: decimal for int64, the
    shortest float32 text for float (``nan``, ``inf``, ``-inf``), UTF-8 text for bytes when
    it is text (without a prefix that would be misread), else ``base64:...``."""
    if type == "int64":
        return str(int(value))
    if type == "float":
        return format_float(value)
    if type == "bytes":
        b = bytes(value)
        if is_text(b) and not b[:7].lower().startswith((b"hex:", b"base64:", b"text:")):
            return b.decode("utf-8")
        return "base64:" + base64.b64encode(b).decode("ascii")
    raise ValueError(f"unknown feature type {type!r}")


def _values_feature(type: str, values: Sequence[Any], name: str) -> Feature:
    try:
        return ex.make_feature(type, list(values), name=name)
    except EncodeError as exc:
        raise EditError(str(exc)) from exc


def _float32(x: float) -> float:
    with np.errstate(over="ignore"):
        return float(np.float32(x))


# --------------------------------------------------------------------------------------------
# Type conversion that checks every value


def _convert_one(v: Any, src: str, dst: str) -> tuple[Any, str | None]:
    """``(converted, None)`` or ``(None, reason)``."""
    if src == "int64" and dst == "float":
        f = _float32(float(v))
        if math.isinf(f) or int(f) != v:
            return None, f"float32 cannot hold it exactly (it would become {format_float(f)})"
        return f, None
    if src == "float" and dst == "int64":
        if not math.isfinite(v):
            return None, f"{format_float(v)} has no int64 value"
        if v != int(v):
            return None, "not a whole number"
        if not INT64_MIN <= int(v) <= INT64_MAX:
            return None, "out of int64 range"
        return int(v), None
    if dst == "bytes":
        return (str(v) if src == "int64" else format_float(v)).encode("ascii"), None
    if src == "bytes":
        try:
            text = bytes(v).decode("utf-8")
        except UnicodeDecodeError:
            return None, "not UTF-8 text"
        try:
            parsed = check_value(dst, text)
        except ValueParseError as exc:
            return None, exc.reason
        back = str(parsed.value) if dst == "int64" else format_float(float(parsed.value))  # type: ignore[arg-type]
        if dst == "int64" and back != text:
            return None, f"reads back as {back!r}, not the same text"
        if dst == "float" and back != text.strip().lower():
            same = False
            with contextlib.suppress(InvalidOperation):
                same = Decimal(back) == Decimal(text)
            if not same:
                return None, f"float32 would hold it as {back}"
        return parsed.value, None
    return None, f"no conversion from {src} to {dst}"  # pragma: no cover


def convert_values(values: Sequence[Any], from_type: str, to_type: str, *, name: str = "") -> list:
    """Convert every value of a feature from one type to another, or raise
    :class:`ConversionError` listing each value that would be lost or changed.

    int64 → float only when float32 holds the integer exactly; float → int64 only for whole
    numbers in range; anything → bytes as decimal text (floats as their shortest float32
    text); bytes → int64/float only for text that reads back to the same number."""
    for t in (from_type, to_type):
        if t not in (*FEATURE_TYPES, "none"):
            raise EditError(f"unknown feature type {t!r}")
    if from_type == to_type or not values:
        return list(values)
    if to_type == "none":
        raise ConversionError(from_type, to_type, [(0, values[0], "type none holds no values")])
    out: list[Any] = []
    problems: list[tuple[int, Any, str]] = []
    for i, v in enumerate(values):
        converted, reason = _convert_one(v, from_type, to_type)
        if reason is not None:
            problems.append((i, v, reason))
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
    if record.kind == "raw":
        return out
    for name, feat in record.features.items():
        want = known_types.get(name)
        if want is None:
            out.append(f"feature {name!r} is not in the rest of the dataset")
        elif feat.type not in (want, "none"):
            out.append(
                f"feature {name!r} is {feat.type} here but {want} in the rest of the dataset"
            )
    if known_list_types is not None:
        for name, steps in record.feature_lists.items():
            want = known_list_types.get(name)
            if want is None:
                out.append(f"feature list {name!r} is not in the rest of the dataset")
                continue
            bad = sorted({s.type for s in steps} - {want, "none"})
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


def _float_from_json(s: Any) -> float:
    if isinstance(s, str) and s.startswith("0x"):
        return float(np.array([int(s, 16)], dtype=np.uint32).view(np.float32)[0])
    return float(np.float32(float(s)))


def feature_to_json(feat: Feature) -> dict[str, Any]:
    """``{"type": ..., "values": [...]}`` with exact value texts (see the module docstring)."""
    if feat.type == "int64":
        values: list[Any] = [str(int(v)) for v in feat.values]
    elif feat.type == "float":
        values = [_float_to_json(v) for v in feat.values]
    elif feat.type == "bytes":
        values = [base64.b64encode(bytes(v)).decode("ascii") for v in feat.values]
    else:
        values = []
    return {"type": feat.type, "values": values}


def feature_from_json(obj: Mapping[str, Any]) -> Feature:
    """The inverse of :func:`feature_to_json`."""
    t = obj["type"]
    vals = obj.get("values") or []
    if t == "int64":
        return Feature("int64", [int(v) for v in vals])
    if t == "float":
        return Feature("float", [_float_from_json(v) for v in vals])
    if t == "bytes":
        return Feature("bytes", [base64.b64decode(v) for v in vals])
    if t == "none":
        return Feature("none", [])
    raise JournalError(f"unknown feature type {t!r} in the journal")


def _part_to_json(section: str, value: Any) -> Any:
    if value is None:
        return None
    if section == "features":
        return feature_to_json(value)
    if section == "feature_lists":
        return [feature_to_json(f) for f in value]
    return None


def _part_from_json(section: str, value: Any) -> Any:
    if value is None:
        return None
    if section == "features":
        return feature_from_json(value)
    if section == "feature_lists":
        return [feature_from_json(f) for f in value]
    return None


# --------------------------------------------------------------------------------------------
# Source identity


@dataclass(frozen=True)
class FileIdentity:
    """What a journal remembers about one source file to notice it changing."""

    path: str
    size: int
    mtime_ns: int
    head_crc: int  # CRC32C of the first 64 KiB
    tail_crc: int  # CRC32C of the last 64 KiB

    @classmethod
    def of(cls, path: str | os.PathLike[str]) -> FileIdentity:
        real = os.path.realpath(os.fspath(path))
        with open(real, "rb") as f:
            st = os.fstat(f.fileno())
            head = f.read(IDENTITY_WINDOW)
            if st.st_size > IDENTITY_WINDOW:
                f.seek(max(0, st.st_size - IDENTITY_WINDOW))
                tail = f.read(IDENTITY_WINDOW)
            else:
                tail = head
        return cls(real, st.st_size, st.st_mtime_ns, _crc32c.crc32c(head), _crc32c.crc32c(tail))

    def to_json(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "size": self.size,
            "mtime_ns": self.mtime_ns,
            "head_crc32c": self.head_crc,
            "tail_crc32c": self.tail_crc,
        }

    @classmethod
    def from_json(cls, obj: Mapping[str, Any]) -> FileIdentity:
        return cls(
            obj["path"], obj["size"], obj["mtime_ns"], obj["head_crc32c"], obj["tail_crc32c"]
        )

    def differences(self, now: FileIdentity) -> list[str]:
        """What changed from ``self`` (the remembered identity) to ``now``."""
        out = []
        if self.size != now.size:
            out.append(f"{self.path}: size was {self.size:,} bytes, now {now.size:,}")
        if self.mtime_ns != now.mtime_ns:
            then_s = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(self.mtime_ns / 1e9))
            now_s = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(now.mtime_ns / 1e9))
            out.append(f"{self.path}: modified time was {then_s}, now {now_s}")
        if self.size <= IDENTITY_WINDOW and now.size <= IDENTITY_WINDOW:
            if self.head_crc != now.head_crc:
                out.append(f"{self.path}: the content differs")
            return out
        if self.head_crc != now.head_crc:
            out.append(f"{self.path}: the first 64 KiB differ")
        if self.tail_crc != now.tail_crc:
            out.append(f"{self.path}: the last 64 KiB differ")
        return out


def source_identity(paths: Sequence[str | os.PathLike[str]]) -> list[FileIdentity]:
    """The identity of each source file, in order."""
    return [FileIdentity.of(p) for p in paths]


def journal_path(
    paths: Sequence[str | os.PathLike[str]], cache_dir: str | os.PathLike[str] | None = None
) -> Path:
    """Where the journal of a source (its list of files) lives: keyed by the files' real
    paths, so a changed file finds its old journal and is told about the change."""
    base = Path(cache_dir) if cache_dir is not None else default_cache_dir()
    key = "\0".join(os.path.realpath(os.fspath(p)) for p in paths)
    digest = hashlib.sha256(key.encode("utf-8", "surrogateescape")).hexdigest()[:32]
    return base / "journals" / f"{digest}.jsonl"


def discard_journal(path: str | os.PathLike[str], reason: str = "discarded") -> Path | None:
    """Move a journal file aside (``<name>.<reason>-<time>.jsonl``) so a fresh one can start;
    returns the new name, or ``None`` when there was no journal."""
    p = Path(path)
    if not p.exists():
        return None
    stamp = time.strftime("%Y%m%d-%H%M%S")
    target = p.with_name(f"{p.stem}.{reason}-{stamp}-{os.getpid()}.jsonl")
    os.replace(p, target)
    return target


# --------------------------------------------------------------------------------------------
# The data model


@dataclass(frozen=True)
class Change:
    """One pending change.

    ``target`` is the record; ``op`` one of ``set_feature``, ``set_value``, ``add_feature``,
    ``delete_feature``, ``convert_feature``, ``replace_image``, ``set_feature_list``,
    ``set_step``, ``add_feature_list``, ``delete_feature_list``, ``delete_record``,
    ``add_record``; ``section`` is ``"features"`` (an Example's features, a SequenceExample's
    context), ``"feature_lists"`` or ``"record"``; ``name`` the feature (or feature list).
    ``before``/``after`` are the :class:`Feature` (or list of step Features) before and after;
    ``None`` means absent. For ``add_record``, ``after`` is the new :class:`Record`; for
    ``delete_record`` both are ``None`` (the record is the one :meth:`Journal.effective_record`
    gave before). ``detail`` holds op-specific facts (``after`` and ``source`` for a new
    record, ``index`` of a changed value, ``from``/``to`` types); ``warnings`` the schema
    warnings seen when it was made; ``timestamp`` is seconds since the epoch."""

    id: int
    target: RecordRef
    op: str
    section: str
    name: str | None
    before: Any
    after: Any
    timestamp: float
    detail: Mapping[str, Any] = field(default_factory=dict)
    warnings: tuple[str, ...] = ()

    def describe(self) -> str:
        """A one-line summary for a list of changes."""
        what = {
            "set_feature": "changed",
            "set_value": "changed a value of",
            "add_feature": "added",
            "delete_feature": "deleted",
            "convert_feature": "converted",
            "replace_image": "replaced an image in",
            "set_feature_list": "changed",
            "set_step": "changed a step of",
            "add_feature_list": "added",
            "delete_feature_list": "deleted",
        }.get(self.op)
        rec = f"record {self.target}"
        if self.op == "delete_record":
            return f"{rec}: deleted"
        if self.op == "add_record":
            how = "duplicated from" if self.detail.get("duplicate") else "copied from"
            return f"{rec}: new record {how} record {self.detail.get('source')}"
        noun = "feature list" if self.section == "feature_lists" else "feature"
        text = f"{rec}: {what or self.op} {noun} {self.name!r}"
        if self.op == "convert_feature":
            text += f" from {self.detail.get('from')} to {self.detail.get('to')}"
        return text


@dataclass(frozen=True)
class Mark:
    """A review mark on a record: ``status`` is ``"passed"`` or ``"flagged"``."""

    target: RecordRef
    status: str
    comment: str
    timestamp: float


class FeatureDiff(NamedTuple):
    """One difference between a record's source and its edited state. ``before``/``after``
    are Features (or lists of step Features for a feature list); ``None`` is absent."""

    feature: str
    before: Any
    after: Any

    @property
    def section(self) -> str:
        value = self.before if self.before is not None else self.after
        return "feature_lists" if isinstance(value, list) else "features"


DatasetSource = Any  # codec.TFRecordDataset, codec.TFRecordFile, a path or a list of paths


def as_dataset(source: DatasetSource) -> tuple[Any, bool]:
    """``(dataset-like, owned)`` for a dataset, a file, or paths (opened here, ``owned``)."""
    if isinstance(source, codec.TFRecordDataset):
        return source, False
    if isinstance(source, codec.TFRecordFile):
        return codec.TFRecordDataset(source), False  # the file stays the caller's
    if isinstance(source, (str, os.PathLike)) or (
        isinstance(source, Sequence) and all(isinstance(s, (str, os.PathLike)) for s in source)
    ):
        return codec.TFRecordDataset(source), True
    raise TypeError(f"not a dataset, file or path: {type(source).__name__}")


_CACHE_SIZE = 128


class Journal:
    """Pending edits to a dataset, saved as they are made and replayed when opened.

    >>> j = Journal(codec.TFRecordDataset("train.tfrecord"))      # doctest: +SKIP
    >>> j.set_value(3, "label", 0, "7")                            # doctest: +SKIP
    >>> j.effective_record(3).features["label"].values             # doctest: +SKIP
    [7]

    ``path`` defaults to the source's journal in the cache folder (:func:`journal_path`);
    it is created on the first change or mark. ``fsync="change"`` syncs every change to disk
    as it is written; ``"batch"`` only at the end of ``with journal.batch():`` blocks (and
    on :meth:`flush`). ``known_types`` (``{feature: type}``, e.g. from the schema) turns on
    type warnings for each change. Raises :class:`JournalMismatchError` when the journal was
    made for another version of the source files.
    """

    def __init__(
        self,
        source: DatasetSource,
        *,
        path: str | os.PathLike[str] | None = None,
        cache_dir: str | os.PathLike[str] | None = None,
        fsync: str = "change",
        known_types: Mapping[str, str] | None = None,
        known_list_types: Mapping[str, str] | None = None,
    ) -> None:
        if fsync not in ("change", "batch"):
            raise ValueError("fsync must be 'change' or 'batch'")
        self.source, self._owns_source = as_dataset(source)
        self.paths: list[str] = list(self.source.paths)
        self.path = Path(path) if path is not None else journal_path(self.paths, cache_dir)
        self.fsync = fsync
        self.known_types = dict(known_types) if known_types is not None else None
        self.known_list_types = dict(known_list_types) if known_list_types is not None else None
        self._lock = threading.RLock()
        self._identity: list[FileIdentity] | None = None
        self._reset_state()
        self._fd = -1
        self._batch_depth = 0
        self._write_depth = 0
        self._dirty = False
        try:
            self._load()
        except BaseException:
            self._close_fd()
            if self._owns_source:
                self.source.close()
            raise

    # -- state -----------------------------------------------------------------------------

    def _reset_state(self) -> None:
        self._changes: dict[int, Change] = {}  # every change ever made, by id
        self._undone: set[int] = set()
        self._by_target: dict[RecordRef, list[int]] = {}  # active change ids per record
        self._added: dict[str, Change] = {}  # add_record changes, active or not, by new id
        self._payloads: dict[str, bytes] = {}  # payload of each new record at creation
        self._deleted: set[RecordRef] = set()
        self._marks: dict[RecordRef, Mark] = {}
        self._next_id = 1
        self._next_new = 1
        self._offset = 0  # bytes of the journal file read so far
        self._cache: OrderedDict[RecordRef, Record | None] = OrderedDict()

    def identity(self) -> list[FileIdentity]:
        """The identity of the source files now."""
        return source_identity(self.paths)

    def _load(self) -> None:
        try:
            st = os.stat(self.path)
        except FileNotFoundError:
            return
        except OSError as exc:
            raise JournalError(f"{self.path}: cannot read the journal: {exc.strerror}") from exc
        if st.st_size == 0:
            return
        self._open_fd(create=False)
        self._catch_up()

    def _open_fd(self, create: bool) -> None:
        if self._fd >= 0:
            return
        flags = os.O_RDWR | os.O_APPEND | (os.O_CREAT if create else 0)
        try:
            if create:
                self.path.parent.mkdir(parents=True, exist_ok=True)
            self._fd = os.open(self.path, flags, 0o644)
        except OSError as exc:
            raise JournalError(
                f"{self.path}: cannot open the journal: {exc.strerror or exc}"
            ) from exc

    def _close_fd(self) -> None:
        if self._fd >= 0:
            with contextlib.suppress(OSError):
                os.close(self._fd)
            self._fd = -1

    @contextlib.contextmanager
    def _file_lock(self) -> Iterator[None]:
        if _fcntl is None or self._fd < 0:
            yield
            return
        _fcntl.flock(self._fd, _fcntl.LOCK_EX)
        try:
            yield
        finally:
            _fcntl.flock(self._fd, _fcntl.LOCK_UN)

    def _catch_up(self) -> None:
        """Apply lines appended to the journal file since it was last read (by this object,
        another tab's journal object or another process)."""
        if self._fd < 0:
            try:
                if not self.path.exists() or self.path.stat().st_size == 0:
                    return
            except OSError:
                return
            self._open_fd(create=False)
        size = os.fstat(self._fd).st_size
        if size < self._offset:
            # The journal was discarded and restarted (e.g. after replacing the source).
            self._reset_state()
        if size == self._offset:
            return
        data = os.pread(self._fd, size - self._offset, self._offset)
        end = data.rfind(b"\n") + 1  # a line still being written is read next time
        start = self._offset
        for n, line in enumerate(data[:end].split(b"\n")[:-1]):
            if not line.strip():
                continue
            try:
                obj = json.loads(line)
            except json.JSONDecodeError as exc:
                raise JournalError(
                    f"{self.path}: line at byte {start}: not JSON ({exc.msg}); the journal"
                    " is damaged"
                ) from exc
            self._apply_line(obj, n)
        self._offset += end

    def _apply_line(self, obj: Mapping[str, Any], n: int) -> None:
        t = obj.get("type")
        if t == "header":
            remembered = [FileIdentity.from_json(x) for x in obj.get("sources", [])]
            self._check_identity(remembered)
        elif t == "change":
            ch = self._change_from_json(obj)
            self._register(ch)
        elif t == "undo":
            for cid in obj.get("ids", []):
                self._undo_one(int(cid))
        elif t == "redo":
            for cid in obj.get("ids", []):
                self._redo_one(int(cid))
        elif t == "mark":
            target = _ref_from_json(obj["target"])
            if obj.get("status") is None:
                self._marks.pop(target, None)
            else:
                self._marks[target] = Mark(
                    target, obj["status"], obj.get("comment", ""), obj.get("ts", 0.0)
                )
        else:
            raise JournalError(f"{self.path}: unknown line type {t!r}")

    def _check_identity(self, remembered: list[FileIdentity]) -> None:
        now = self.identity()
        problems: list[str] = []
        old_paths = [r.path for r in remembered]
        new_paths = [n.path for n in now]
        if old_paths != new_paths:
            problems.append(
                f"the journal is for {', '.join(old_paths)}, not {', '.join(new_paths)}"
            )
        else:
            for then, cur in zip(remembered, now):
                problems.extend(then.differences(cur))
        if problems:
            raise JournalMismatchError(str(self.path), problems)
        self._identity = remembered

    # -- writing ---------------------------------------------------------------------------

    def _append(self, obj: Mapping[str, Any]) -> None:
        line = (json.dumps(obj, ensure_ascii=False, separators=(",", ":")) + "\n").encode()
        try:
            os.write(self._fd, line)
            if self._batch_depth == 0 and self.fsync == "change":
                os.fsync(self._fd)
            else:
                self._dirty = True
        except OSError as exc:
            # Take back a line that may have reached the file: the change was not made.
            with contextlib.suppress(OSError):
                os.ftruncate(self._fd, self._offset)
            raise JournalError(
                f"{self.path}: cannot save the change: {exc.strerror or exc}; it was not made"
            ) from exc
        self._offset += len(line)

    @contextlib.contextmanager
    def _writing(self) -> Iterator[None]:
        """Lock, catch up with other writers, and make sure the file and header exist."""
        with self._lock:
            if self._write_depth:
                self._write_depth += 1
                try:
                    yield
                finally:
                    self._write_depth -= 1
                return
            self._open_fd(create=True)
            with self._file_lock():
                self._catch_up()
                if self._offset == 0:
                    ident = self.identity()
                    self._append(
                        {
                            "type": "header",
                            "version": JOURNAL_VERSION,
                            "created": time.time(),
                            "sources": [i.to_json() for i in ident],
                        }
                    )
                    self._identity = ident
                self._write_depth = 1
                try:
                    yield
                finally:
                    self._write_depth = 0

    @contextlib.contextmanager
    def batch(self) -> Iterator[Journal]:
        """Group changes: with ``fsync="batch"`` (or always inside this block) the journal is
        synced once at the end instead of once per change."""
        with self._lock:
            self._batch_depth += 1
            try:
                yield self
            finally:
                self._batch_depth -= 1
                if self._batch_depth == 0:
                    self.flush()

    def flush(self) -> None:
        """Sync every change written so far to disk."""
        with self._lock:
            if self._dirty and self._fd >= 0:
                try:
                    os.fsync(self._fd)
                except OSError as exc:
                    raise JournalError(
                        f"{self.path}: cannot sync the journal: {exc.strerror or exc}"
                    ) from exc
                self._dirty = False

    def refresh(self) -> None:
        """Pick up changes another tab or process appended to the same journal."""
        with self._lock:
            self._catch_up()

    def close(self) -> None:
        """Sync and close the journal (and the source, when the journal opened it)."""
        with self._lock:
            with contextlib.suppress(JournalError):
                self.flush()
            self._close_fd()
            if self._owns_source:
                self.source.close()

    def __enter__(self) -> Journal:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- changes: registration, undo -------------------------------------------------------

    def _register(self, ch: Change) -> None:
        self._changes[ch.id] = ch
        self._next_id = max(self._next_id, ch.id + 1)
        self._activate(ch)

    def _activate(self, ch: Change) -> None:
        self._by_target.setdefault(ch.target, []).append(ch.id)
        self._by_target[ch.target].sort()
        if ch.op == "add_record":
            new_id = str(ch.target)
            self._added[new_id] = ch
            m = re.match(r"^n(\d+)$", new_id)
            if m:
                self._next_new = max(self._next_new, int(m.group(1)) + 1)
        if ch.op == "delete_record":
            self._deleted.add(ch.target)
        self._cache.pop(ch.target, None)

    def _undo_one(self, cid: int) -> None:
        ch = self._changes.get(cid)
        if ch is None or cid in self._undone:
            return
        self._undone.add(cid)
        ids = self._by_target.get(ch.target, [])
        if cid in ids:
            ids.remove(cid)
        if not ids:
            self._by_target.pop(ch.target, None)
        if ch.op == "delete_record":
            self._deleted.discard(ch.target)
        self._cache.pop(ch.target, None)

    def _redo_one(self, cid: int) -> None:
        ch = self._changes.get(cid)
        if ch is None or cid not in self._undone:
            return
        self._undone.discard(cid)
        self._activate(ch)

    def _dependents(self, ch: Change) -> list[int]:
        """Later active changes on the same record that build on ``ch``."""
        out = []
        for cid in self._by_target.get(ch.target, []):
            if cid <= ch.id:
                continue
            later = self._changes[cid]
            if (
                ch.section == "record"
                or later.section == "record"
                or (later.section == ch.section and later.name == ch.name)
            ):
                out.append(cid)
        return out

    def undo(self, change_id: int) -> list[int]:
        """Revert a change, and every later change on the same feature of the same record that
        builds on it (undoing a new record reverts every change to it). Returns the ids
        reverted, oldest first."""
        with self._writing():
            ch = self._changes.get(change_id)
            if ch is None or change_id in self._undone:
                raise EditError(f"change {change_id} is not pending")
            ids = sorted({change_id, *self._dependents(ch)})
            self._append({"type": "undo", "ids": ids, "ts": time.time()})
            for cid in ids:
                self._undo_one(cid)
            return ids

    def undo_all(self) -> list[int]:
        """Revert every pending change (review marks stay). Returns the ids reverted."""
        with self._writing():
            ids = sorted(c for c in self._changes if c not in self._undone)
            if ids:
                self._append({"type": "undo", "ids": ids, "ts": time.time()})
                for cid in ids:
                    self._undo_one(cid)
            return ids

    def redo(self, change_id: int) -> None:
        """Re-apply an undone change (for an "undo the undo" button)."""
        with self._writing():
            if change_id not in self._undone:
                raise EditError(f"change {change_id} was not undone")
            self._append({"type": "redo", "ids": [change_id], "ts": time.time()})
            self._redo_one(change_id)

    # -- reading the model -----------------------------------------------------------------

    def changes(self, include_undone: bool = False) -> list[Change]:
        """Pending changes, oldest first (with ``include_undone``, the whole history)."""
        with self._lock:
            self._catch_up()
            return [
                c
                for cid, c in sorted(self._changes.items())
                if include_undone or cid not in self._undone
            ]

    def changes_for(self, record: RecordRef) -> list[Change]:
        """Pending changes to one record, oldest first."""
        with self._lock:
            self._catch_up()
            return [self._changes[cid] for cid in self._by_target.get(record, [])]

    def is_undone(self, change_id: int) -> bool:
        return change_id in self._undone

    @property
    def pending(self) -> int:
        """How many changes are pending."""
        with self._lock:
            self._catch_up()
            return len(self._changes) - len(self._undone)

    def is_touched(self, record: RecordRef) -> bool:
        """Whether a record has pending changes (a new record always counts as touched)."""
        return bool(self._by_target.get(record))

    def edited_records(self) -> list[RecordRef]:
        """Every record with pending changes (source indices first, then new ids)."""
        with self._lock:
            self._catch_up()
            keys = list(self._by_target)
        return sorted(k for k in keys if isinstance(k, int)) + sorted(
            (k for k in keys if isinstance(k, str)), key=_new_sort_key
        )

    def is_deleted(self, record: RecordRef) -> bool:
        return record in self._deleted

    def added_records(self) -> list[str]:
        """Ids of the records added and not undone, in creation order."""
        with self._lock:
            self._catch_up()
            return [k for k in sorted(self._added, key=_new_sort_key) if self._exists(k)]

    def _exists(self, record: RecordRef) -> bool:
        if isinstance(record, str):
            ch = self._added.get(record)
            return ch is not None and ch.id not in self._undone
        return True

    def ref(self, path: str | os.PathLike[str], local: int) -> int:
        """The global index of record ``local`` of the source file ``path``."""
        real = os.path.realpath(os.fspath(path))
        for k, p in enumerate(self.paths):
            if os.path.realpath(p) == real:
                return int(self.source.global_index(k, local))
        raise EditError(f"{path}: not one of this dataset's files")

    def locate(self, record: RecordRef) -> tuple[str, int] | None:
        """``(file path, local index)`` of a source record; ``None`` for a new record."""
        if isinstance(record, str):
            return None
        k, j = self.source.locate(record)
        return self.paths[k], j

    def source_payload(self, record: RecordRef) -> bytes:
        """The payload the record had before any change: from the source file for a source
        record (data CRC checked), as created for a new one."""
        if isinstance(record, str):
            if not self._exists(record):
                raise EditError(f"record {record!r} does not exist")
            return self._payloads[record]
        return bytes(self.source.read(record))

    def source_record(self, record: RecordRef) -> Record:
        """The record before any change (see :meth:`source_payload`)."""
        if isinstance(record, str):
            kind = (
                self._added[record].detail.get("kind", "auto") if record in self._added else "auto"
            )
            return ex.decode(self.source_payload(record), kind)
        return ex.decode(self.source_payload(record))

    def effective_record(self, record: RecordRef) -> Record | None:
        """The record with every pending change applied; ``None`` when it is deleted.
        Raises :class:`codec.CorruptRecordError` for a damaged source record and
        ``IndexError`` for an index out of range."""
        with self._lock:
            self._catch_up()
            if record in self._cache:
                self._cache.move_to_end(record)
                return self._cache[record]
            if isinstance(record, str) and not self._exists(record):
                raise EditError(f"record {record!r} does not exist")
            if record in self._deleted:
                rec: Record | None = None
            else:
                rec = self.source_record(record)
                for cid in self._by_target.get(record, []):
                    rec = _apply(rec, self._changes[cid])
            self._cache[record] = rec
            if len(self._cache) > _CACHE_SIZE:
                self._cache.popitem(last=False)
            return rec

    def effective_payload(self, record: RecordRef) -> bytes | None:
        """The serialized effective record (the source bytes themselves when untouched);
        ``None`` when deleted."""
        with self._lock:
            if record in self._deleted:
                return None
            if not self.is_touched(record) or (
                isinstance(record, str) and self._by_target.get(record) == [self._added[record].id]
            ):
                return self.source_payload(record)
            rec = self.effective_record(record)
            if rec is None:
                return None
            try:
                return ex.encode(rec)
            except EncodeError as exc:  # pragma: no cover - edits are checked when made
                raise EditError(f"record {record}: {exc}") from exc

    def diff(self, record: RecordRef) -> list[FeatureDiff]:
        """``(feature, before, after)`` for every feature and feature list that differs
        between the source record (for a new record: the record it was copied from, as
        copied) and the effective one; a deleted record lists every feature with ``after``
        ``None``."""
        before = self.source_record(record)
        after = self.effective_record(record)
        out: list[FeatureDiff] = []
        after_features = after.features if after is not None else {}
        after_lists = after.feature_lists if after is not None else {}
        for name in _union(before.features, after_features):
            b, a = before.features.get(name), after_features.get(name)
            if not _same_feature(b, a):
                out.append(FeatureDiff(name, b, a))
        for name in _union(before.feature_lists, after_lists):
            bl, al = before.feature_lists.get(name), after_lists.get(name)
            if not _same_steps(bl, al):
                out.append(FeatureDiff(name, bl, al))
        return out

    def order(self, total: int | None = None) -> Iterator[RecordRef]:
        """The records of the edited dataset in order: source records that are not deleted,
        each followed by the records added after it. ``total`` is the number of source
        records (default: ``len(source)``, which indexes every file)."""
        self.refresh()
        n = len(self.source) if total is None else total
        # Undone new records stay in the tree (not yielded), so records added after them
        # keep their place.
        children: dict[RecordRef, list[str]] = {}
        for new_id in sorted(self._added, key=_new_sort_key):
            children.setdefault(self._added[new_id].detail["after"], []).append(new_id)
        deleted = self._deleted
        if not children and not deleted:  # the common case: nothing to interleave
            yield from range(n)
            return

        def with_children(ref: RecordRef) -> Iterator[RecordRef]:
            stack: list[RecordRef] = [ref]
            while stack:
                r = stack.pop()
                if r not in deleted and self._exists(r):
                    yield r
                stack.extend(reversed(children.get(r, ())))

        for i in range(n):
            if i in children:
                yield from with_children(i)
            elif i not in deleted:
                yield i

    def deleted_records(self) -> list[RecordRef]:
        """Records deleted by pending changes (source indices first, then new ids)."""
        with self._lock:
            self._catch_up()
            gone = [d for d in self._deleted if self._exists(d)]
        return sorted(d for d in gone if isinstance(d, int)) + sorted(
            (d for d in gone if isinstance(d, str)), key=_new_sort_key
        )

    def inserted_after(self, new_id: str) -> RecordRef:
        """The record a new record was inserted after (itself possibly a new record)."""
        ch = self._added.get(new_id)
        if ch is None:
            raise EditError(f"record {new_id!r} was not added by this journal")
        after: RecordRef = ch.detail["after"]
        return after

    def label(self, ref: RecordRef) -> str:
        """How a person calls a record: ``Record 12`` or ``New record n1 (after record 12)``."""
        if isinstance(ref, int):
            return f"Record {ref:,}"
        try:
            after: RecordRef = self.inserted_after(ref)
        except EditError:
            after = "?"
        return f"New record {ref} (after record {after})"

    def anchor(self, ref: RecordRef) -> int | None:
        """The source record that ``ref`` stands at: itself for a source record, else the
        source record a chain of added records was inserted after (``None`` if unknown)."""
        seen: set[RecordRef] = set()
        while isinstance(ref, str):
            if ref in seen:
                return None
            seen.add(ref)
            try:
                ref = self.inserted_after(ref)
            except EditError:
                return None
        return ref

    def count(self, total: int | None = None) -> int:
        """How many records the edited dataset has."""
        self.refresh()
        n = len(self.source) if total is None else total
        deleted_source = sum(1 for d in self._deleted if isinstance(d, int))
        added = len(self.added_records())
        deleted_new = sum(1 for d in self._deleted if isinstance(d, str) and self._exists(d))
        return n - deleted_source + added - deleted_new

    # -- review marks ----------------------------------------------------------------------

    def set_mark(self, record: RecordRef, status: str | None, comment: str = "") -> Mark | None:
        """Mark a record ``"passed"`` or ``"flagged"`` with a comment; ``status=None`` clears
        the mark. Marks are not changes: undo leaves them alone."""
        if status is not None and status not in MARK_STATUSES:
            raise EditError(f"mark status must be one of {', '.join(MARK_STATUSES)} or None")
        self._check_ref(record, allow_deleted=True)
        with self._writing():
            ts = time.time()
            self._append(
                {
                    "type": "mark",
                    "target": record,
                    "status": status,
                    "comment": comment,
                    "ts": ts,
                }
            )
            if status is None:
                self._marks.pop(record, None)
                return None
            mark = Mark(record, status, comment, ts)
            self._marks[record] = mark
            return mark

    def marks(self) -> dict[RecordRef, Mark]:
        """Every review mark, by record."""
        with self._lock:
            self._catch_up()
            return dict(self._marks)

    # -- making changes --------------------------------------------------------------------

    def _check_ref(self, record: RecordRef, allow_deleted: bool = False) -> None:
        if isinstance(record, bool) or not isinstance(record, (int, str)):
            raise EditError(f"{record!r} is not a record index or a new record's id")
        if isinstance(record, str):
            if not self._exists(record):
                raise EditError(f"record {record!r} does not exist")
        else:
            if record < 0:
                raise EditError(f"record {record}: indices start at 0")
            try:
                self.source.locate(record)
            except IndexError as exc:
                raise EditError(f"record {record} is out of range") from exc
        if not allow_deleted and record in self._deleted:
            raise EditError(f"record {record} is deleted; undo the deletion to edit it")

    def _current(self, record: RecordRef) -> Record:
        self._check_ref(record)
        rec = self.effective_record(record)
        assert rec is not None  # _check_ref refused deleted records
        return rec

    def _editable(self, record: RecordRef) -> Record:
        rec = self._current(record)
        if rec.kind == "raw":
            raise EditError(
                f"record {record} is not an Example or SequenceExample; it can only be"
                " deleted or duplicated"
            )
        return rec

    def _record_change(
        self,
        record: RecordRef,
        op: str,
        section: str,
        name: str | None,
        before: Any,
        after: Any,
        detail: Mapping[str, Any] | None = None,
        payload: bytes | None = None,
        notes: Sequence[str] = (),
    ) -> Change:
        with self._writing():
            cid = self._next_id
            ch = Change(
                id=cid,
                target=record,
                op=op,
                section=section,
                name=name,
                before=before,
                after=after,
                timestamp=time.time(),
                detail=dict(detail or {}),
            )
            warnings = [*self._warnings_for(ch, payload), *notes]
            if warnings:
                ch = Change(**{**ch.__dict__, "warnings": tuple(warnings)})
            obj = self._change_to_json(ch, payload)
            self._append(obj)
            if payload is not None:
                self._payloads[str(record)] = payload
            self._register(ch)
            return ch

    def _warnings_for(self, ch: Change, payload: bytes | None) -> list[str]:
        if self.known_types is None or ch.op in ("delete_record",):
            return []
        try:
            if ch.op == "add_record":
                return []
            rec = self.effective_record(ch.target)
            if rec is None:
                return []
            rec = _apply(rec, ch)
        except CodecError:
            return []
        mine = type_warnings(rec, self.known_types, self.known_list_types)
        if ch.section == "record" or ch.name is None:
            return mine
        quoted = repr(ch.name)
        return [w for w in mine if quoted in w]

    def set_feature(
        self, record: RecordRef, name: str, feature: Feature | tuple[str, Sequence[Any]]
    ) -> Change:
        """Replace (or add) a context/Example feature with a checked :class:`Feature` or a
        ``(type, values)`` pair. The type of an existing feature cannot change here: use
        :meth:`convert_feature`."""
        rec = self._editable(record)
        feat = _as_feature(feature, name)
        old = rec.features.get(name)
        if old is not None and old.type not in (feat.type, "none") and feat.values:
            raise EditError(
                f"feature {name!r} is {old.type}; change its type with convert_feature"
                f" (which checks every value) before giving it {feat.type} values"
            )
        return self._record_change(record, "set_feature", "features", name, old, feat)

    def set_values(self, record: RecordRef, name: str, text: str) -> Change:
        """Replace a feature's values with a list typed as text (:func:`parse_values`);
        the notes about inexact floats are in the change's ``warnings``."""
        rec = self._editable(record)
        old = rec.features.get(name)
        if old is None:
            raise EditError(f"record {record} has no feature {name!r}; add it first")
        if old.type == "none":
            raise EditError(f"feature {name!r} has no type; give it one with convert_feature")
        values, notes = parse_values(old.type, text)
        return self._record_change(
            record,
            "set_feature",
            "features",
            name,
            old,
            _values_feature(old.type, values, name),
            notes=notes,
        )

    def set_value(self, record: RecordRef, name: str, index: int, text: str) -> Change:
        """Set value ``index`` of a feature from text (:func:`parse_value`); ``index`` equal
        to the number of values appends one. The note about an inexact float is in the
        change's ``warnings``."""
        rec = self._editable(record)
        old = rec.features.get(name)
        if old is None:
            raise EditError(f"record {record} has no feature {name!r}; add it first")
        values = _replace_at(old, index, name)
        parsed = check_value(old.type, text)
        values[index] = parsed.value
        new = _values_feature(old.type, values, name)
        return self._record_change(
            record,
            "set_value",
            "features",
            name,
            old,
            new,
            {"index": index},
            notes=[parsed.note] if parsed.note else [],
        )

    def delete_value(self, record: RecordRef, name: str, index: int) -> Change:
        """Remove value ``index`` of a feature."""
        rec = self._editable(record)
        old = rec.features.get(name)
        if old is None or not 0 <= index < len(old.values):
            raise EditError(f"record {record}: feature {name!r} has no value {index}")
        values = list(old.values)
        del values[index]
        return self._record_change(
            record,
            "set_feature",
            "features",
            name,
            old,
            Feature(old.type, values),
            {"index": index},
        )

    def add_feature(
        self, record: RecordRef, name: str, type: str, values: Sequence[Any] | str = ()
    ) -> Change:
        """Add a feature of ``type`` (``int64``, ``float``, ``bytes``) with values given as a
        list or as text (:func:`parse_values`). Refuses a name the record already has."""
        rec = self._editable(record)
        _check_name(name)
        if type not in FEATURE_TYPES:
            raise EditError(f"unknown feature type {type!r} (expected one of int64, float, bytes)")
        if name in rec.features:
            raise EditError(f"record {record} already has a feature named {name!r}")
        notes: list[str] = []
        if isinstance(values, str):
            vals, notes = parse_values(type, values)
        else:
            vals = list(values)
        feat = _values_feature(type, vals, name)
        return self._record_change(record, "add_feature", "features", name, None, feat, notes=notes)

    def delete_feature(self, record: RecordRef, name: str) -> Change:
        """Remove a feature (an Example's, or a SequenceExample's context feature)."""
        rec = self._editable(record)
        old = rec.features.get(name)
        if old is None:
            raise EditError(f"record {record} has no feature {name!r}")
        return self._record_change(record, "delete_feature", "features", name, old, None)

    def rename_feature(self, record: RecordRef, name: str, new_name: str) -> list[Change]:
        """Rename a feature: recorded as adding ``new_name`` and deleting ``name``."""
        rec = self._editable(record)
        _check_name(new_name)
        old = rec.features.get(name)
        if old is None:
            raise EditError(f"record {record} has no feature {name!r}")
        if new_name in rec.features:
            raise EditError(f"record {record} already has a feature named {new_name!r}")
        with self.batch():
            a = self._record_change(record, "add_feature", "features", new_name, None, old)
            b = self._record_change(record, "delete_feature", "features", name, old, None)
        return [a, b]

    def convert_feature(self, record: RecordRef, name: str, new_type: str) -> Change:
        """Change a feature's type, checking every value (:func:`convert_values`); raises
        :class:`ConversionError` when any value would be lost or changed."""
        rec = self._editable(record)
        old = rec.features.get(name)
        if old is None:
            raise EditError(f"record {record} has no feature {name!r}")
        if new_type not in FEATURE_TYPES:
            raise EditError(f"unknown feature type {new_type!r}")
        if new_type == old.type:
            raise EditError(f"feature {name!r} already is {new_type}")
        values = convert_values(old.values, old.type, new_type, name=name)
        new = _values_feature(new_type, values, name)
        return self._record_change(
            record,
            "convert_feature",
            "features",
            name,
            old,
            new,
            {"from": old.type, "to": new_type},
        )

    def replace_image(self, record: RecordRef, name: str, index: int, data: bytes) -> Change:
        """Replace value ``index`` of a bytes feature with new image bytes, after checking
        that they decode as an image (:mod:`codec.images`). The change's ``warnings`` name
        height/width features that no longer match the new image."""
        rec = self._editable(record)
        old = rec.features.get(name)
        if old is None:
            raise EditError(f"record {record} has no feature {name!r}")
        if old.type != "bytes":
            raise EditError(f"feature {name!r} is {old.type}; images live in bytes features")
        values = _replace_at(old, index, name)
        size = _check_image(bytes(data))
        values[index] = bytes(data)
        new = Feature("bytes", values)
        return self._record_change(
            record,
            "replace_image",
            "features",
            name,
            old,
            new,
            {"index": index, "width": size[0], "height": size[1]},
            notes=_size_warnings(rec, name, size),
        )

    # -- SequenceExample feature lists -----------------------------------------------------

    def _sequence(self, record: RecordRef) -> Record:
        rec = self._editable(record)
        if rec.kind != "sequence_example":
            raise EditError(f"record {record} is an Example: it has no feature lists")
        return rec

    def set_feature_list(
        self, record: RecordRef, name: str, steps: Sequence[Feature | tuple[str, Sequence[Any]]]
    ) -> Change:
        """Replace (or add) a feature list with checked step Features."""
        rec = self._sequence(record)
        new = [_as_feature(s, f"{name}[{i}]") for i, s in enumerate(steps)]
        old = rec.feature_lists.get(name)
        op = "set_feature_list" if old is not None else "add_feature_list"
        return self._record_change(record, op, "feature_lists", name, old, new)

    def add_feature_list(
        self, record: RecordRef, name: str, type: str, steps: Sequence[Sequence[Any]] = ()
    ) -> Change:
        """Add a feature list of ``type`` with the given values per step."""
        rec = self._sequence(record)
        _check_name(name)
        if type not in FEATURE_TYPES:
            raise EditError(f"unknown feature type {type!r} (expected one of int64, float, bytes)")
        if name in rec.feature_lists:
            raise EditError(f"record {record} already has a feature list named {name!r}")
        new = [_values_feature(type, list(s), f"{name}[{i}]") for i, s in enumerate(steps)]
        return self._record_change(record, "add_feature_list", "feature_lists", name, None, new)

    def delete_feature_list(self, record: RecordRef, name: str) -> Change:
        rec = self._sequence(record)
        old = rec.feature_lists.get(name)
        if old is None:
            raise EditError(f"record {record} has no feature list {name!r}")
        return self._record_change(record, "delete_feature_list", "feature_lists", name, old, None)

    def set_step(self, record: RecordRef, name: str, step: int, text: str) -> Change:
        """Replace the values of one step of a feature list with values typed as text
        (:func:`parse_values`), of the step's type."""
        rec = self._sequence(record)
        old = rec.feature_lists.get(name)
        if old is None:
            raise EditError(f"record {record} has no feature list {name!r}")
        if not 0 <= step < len(old):
            raise EditError(f"feature list {name!r} has no step {step} ({len(old)} steps)")
        type_ = old[step].type if old[step].type != "none" else _list_type(old)
        if type_ is None:
            raise EditError(f"feature list {name!r} has no type to parse values with")
        values, notes = parse_values(type_, text)
        new = list(old)
        new[step] = _values_feature(type_, values, f"{name}[{step}]")
        return self._record_change(
            record, "set_step", "feature_lists", name, old, new, {"step": step}, notes=notes
        )

    def set_step_value(
        self, record: RecordRef, name: str, step: int, index: int, text: str
    ) -> Change:
        """Set value ``index`` of step ``step`` of a feature list from text."""
        rec = self._sequence(record)
        old = rec.feature_lists.get(name)
        if old is None:
            raise EditError(f"record {record} has no feature list {name!r}")
        if not 0 <= step < len(old):
            raise EditError(f"feature list {name!r} has no step {step} ({len(old)} steps)")
        values = _replace_at(old[step], index, f"{name}[{step}]")
        parsed = check_value(old[step].type, text)
        values[index] = parsed.value
        new = list(old)
        new[step] = _values_feature(old[step].type, values, f"{name}[{step}]")
        return self._record_change(
            record,
            "set_step",
            "feature_lists",
            name,
            old,
            new,
            {"step": step, "index": index},
            notes=[parsed.note] if parsed.note else [],
        )

    # -- whole records ---------------------------------------------------------------------

    def delete_record(self, record: RecordRef) -> Change:
        """Leave a record out of the edited dataset (a damaged source record can be deleted
        too)."""
        self._check_ref(record)
        return self._record_change(record, "delete_record", "record", None, None, None)

    def add_record(
        self, after: RecordRef, record: Record | None = None, *, copy_of: RecordRef | None = None
    ) -> str:
        """Insert a new record after record ``after`` and return its id: ``record`` when
        given, else a copy of ``copy_of`` (default: ``after``) as it is now, edits included.
        The copy of an untouched record keeps its exact bytes."""
        self._check_ref(after, allow_deleted=True)
        source: RecordRef = after if copy_of is None else copy_of
        if record is None:
            self._check_ref(source)
            payload = self.effective_payload(source)
            assert payload is not None
            new_rec = self.effective_record(source)
            assert new_rec is not None
        else:
            try:
                payload = ex.encode(record)
            except EncodeError as exc:
                raise EditError(f"the new record: {exc}") from exc
            new_rec = record
        with self._writing():
            new_id = f"n{self._next_new}"
            self._record_change(
                new_id,
                "add_record",
                "record",
                None,
                None,
                new_rec,
                {
                    "after": after,
                    "source": None if record is not None else source,
                    "duplicate": record is None and copy_of is None,
                    "kind": new_rec.kind,
                },
                payload=payload,
            )
        return new_id

    def duplicate_record(self, record: RecordRef) -> str:
        """Insert a copy of a record right after it; returns the new record's id."""
        return self.add_record(record)

    # -- JSON ------------------------------------------------------------------------------

    def _change_to_json(self, ch: Change, payload: bytes | None) -> dict[str, Any]:
        obj: dict[str, Any] = {
            "type": "change",
            "id": ch.id,
            "ts": ch.timestamp,
            "target": ch.target,
            "op": ch.op,
            "section": ch.section,
            "name": ch.name,
            "before": _part_to_json(ch.section, ch.before),
            "after": _part_to_json(ch.section, ch.after),
            "detail": dict(ch.detail),
        }
        if ch.warnings:
            obj["warnings"] = list(ch.warnings)
        if payload is not None:
            obj["payload"] = base64.b64encode(payload).decode("ascii")
        return obj

    def _change_from_json(self, obj: Mapping[str, Any]) -> Change:
        try:
            section = obj["section"]
            target = _ref_from_json(obj["target"])
            detail = dict(obj.get("detail") or {})
            if "after" in detail:
                detail["after"] = _ref_from_json(detail["after"])
            if detail.get("source") is not None:
                detail["source"] = _ref_from_json(detail["source"])
            after: Any = _part_from_json(section, obj.get("after"))
            if obj["op"] == "add_record":
                payload = base64.b64decode(obj["payload"])
                self._payloads[str(target)] = payload
                after = ex.decode(payload, detail.get("kind", "auto"))
            return Change(
                id=int(obj["id"]),
                target=target,
                op=obj["op"],
                section=section,
                name=obj.get("name"),
                before=_part_from_json(section, obj.get("before")),
                after=after,
                timestamp=float(obj.get("ts", 0.0)),
                detail=detail,
                warnings=tuple(obj.get("warnings") or ()),
            )
        except (KeyError, TypeError, ValueError, binascii.Error) as exc:
            raise JournalError(f"{self.path}: a change line is damaged: {exc!r}") from exc

    def discard(self) -> Path | None:
        """Move this journal's file aside and start empty (e.g. after the edits were written
        over the source, or to drop edits made on another version of the file)."""
        with self._lock:
            self._close_fd()
            moved = discard_journal(self.path)
            self._reset_state()
            self._identity = None
            return moved


# --------------------------------------------------------------------------------------------
# Helpers


def _ref_from_json(v: Any) -> RecordRef:
    if isinstance(v, bool) or not isinstance(v, (int, str)):
        raise JournalError(f"bad record reference {v!r} in the journal")
    return v


def _new_sort_key(k: str) -> tuple[int, str]:
    m = re.match(r"^n(\d+)$", k)
    return (int(m.group(1)), k) if m else (1 << 62, k)


def _union(a: Mapping[str, Any], b: Mapping[str, Any]) -> list[str]:
    return list(dict.fromkeys([*a, *b]))


def _same_feature(a: Feature | None, b: Feature | None) -> bool:
    if a is None or b is None:
        return a is b
    return feature_to_json(a) == feature_to_json(b)  # NaN-aware, exact


def _same_steps(a: list[Feature] | None, b: list[Feature] | None) -> bool:
    if a is None or b is None:
        return a is b
    return len(a) == len(b) and all(_same_feature(x, y) for x, y in zip(a, b))


def _apply(rec: Record, ch: Change) -> Record:
    if ch.section == "features":
        features = dict(rec.features)
        if ch.after is None:
            features.pop(ch.name or "", None)
        else:
            features[ch.name or ""] = ch.after
        return Record(rec.kind, features, rec.feature_lists, rec.raw)
    if ch.section == "feature_lists":
        lists = dict(rec.feature_lists)
        if ch.after is None:
            lists.pop(ch.name or "", None)
        else:
            lists[ch.name or ""] = list(ch.after)
        return Record(rec.kind, rec.features, lists, rec.raw)
    return rec  # add_record's state is the payload itself; delete is handled by the caller


def _as_feature(feature: Feature | tuple[str, Sequence[Any]], name: str) -> Feature:
    if isinstance(feature, Feature):
        return (
            _values_feature(feature.type, feature.values, name)
            if feature.type != "none"
            else Feature("none", [])
        )
    if isinstance(feature, tuple) and len(feature) == 2:
        t, values = feature
        if t not in FEATURE_TYPES:
            raise EditError(f"unknown feature type {t!r} (expected one of int64, float, bytes)")
        if isinstance(values, str):
            vals, _notes = parse_values(t, values)
            return _values_feature(t, vals, name)
        return _values_feature(t, list(values), name)
    raise EditError(f"feature {name!r}: {feature!r} is not a Feature or a (type, values) pair")


def _check_name(name: str) -> None:
    if not isinstance(name, str) or not name:
        raise EditError("a feature name must be a non-empty text")
    try:
        name.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise EditError(f"feature name {name!r} is not valid UTF-8") from exc


def _replace_at(feat: Feature, index: int, name: str) -> list[Any]:
    values = list(feat.values)
    if feat.type == "none":
        raise EditError(f"feature {name!r} has no type; give it one with convert_feature")
    if index == len(values):
        values.append(None)
    elif not 0 <= index < len(values):
        raise EditError(f"feature {name!r} has no value {index} ({len(values)} values)")
    return values


def _list_type(steps: list[Feature]) -> str | None:
    types = [s.type for s in steps if s.type != "none"]
    return types[0] if types else None


def _check_image(data: bytes) -> tuple[int, int]:
    """``(width, height)`` of encoded image bytes, or :class:`EditError` when they do not
    decode as an image."""
    from codec import images

    try:
        img = images.decode_image(data)
        img.load()
    except CodecError as exc:
        raise EditError(f"not a decodable image: {exc}") from exc
    except Exception as exc:  # the imaging library's own errors for damaged files
        raise EditError(f"not a decodable image: {exc}") from exc
    return int(img.width), int(img.height)


_SIZE_KEYS = (
    ("height", "width"),
    ("image/height", "image/width"),
)


def _size_warnings(rec: Record, name: str, size: tuple[int, int]) -> list[str]:
    width, height = size
    out = []
    for hkey, wkey in _SIZE_KEYS:
        prefix = name.rsplit("/", 1)[0] + "/" if "/" in name and "/" in hkey else ""
        if prefix and not hkey.startswith(prefix):
            continue
        h, w = rec.features.get(hkey), rec.features.get(wkey)
        if h is not None and h.type == "int64" and h.values and h.values[0] != height:
            out.append(f"feature {hkey!r} says {h.values[0]} but the new image is {height} high")
        if w is not None and w.type == "int64" and w.values and w.values[0] != width:
            out.append(f"feature {wkey!r} says {w.values[0]} but the new image is {width} wide")
    return out
