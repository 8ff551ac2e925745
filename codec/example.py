"""``tf.train.Example`` and ``tf.train.SequenceExample``: decode, encode, detect the kind.

The decoded model is small and plain: a :class:`Record` holds :class:`Feature` values as Python
lists (``int`` for int64, ``float`` for float, ``bytes`` for bytes). Parsing goes through the
protobuf runtime (upb); the conversion touches each feature a handful of times and each value
never, which is what keeps decoding above 150k small records a second.

Kinds (:data:`KINDS`):

- ``sequence_example`` when the payload parses as a SequenceExample and has ``feature_lists``
  (top-level field 2). A SequenceExample also parses *without error* as an Example, its feature
  lists dropped as an unknown field (docs/format.md §2), so this is checked first.
- ``example`` when it parses, with no unknown field anywhere. ``b""`` is an Example with no
  features.
- ``raw`` otherwise: not a protobuf, or a protobuf that is not plausibly one of ours (random
  bytes that happen to parse leave unknown fields behind).

Map order. TensorFlow writes the ``feature`` map in the order of its own hash table. Decoding
keeps entries in the order they were written (parsing through wire-compatible "repeated entry"
twins of the map messages), and encoding writes them in the order of the ``dict`` it is given.
So ``encode(decode(p)) == p`` for every record TensorFlow writes (all golden records), and
encoding is deterministic.

Strict type checks (:func:`make_feature`): ``int64`` takes ``int``, ``bool`` and numpy
integers in [-2**63, 2**63 - 1], never floats (not even ``3.0``) or strings. ``float`` takes
``int``, ``float`` and numpy reals within float32 range (NaN and ±Inf allowed; values are
rounded to float32), never ``bool`` (use int64 for flags, as TensorFlow's tutorial does) or
strings. ``bytes`` takes ``bytes``, ``bytearray``, ``memoryview`` and ``str`` (UTF-8 encoded).
"""

from __future__ import annotations

import base64
import binascii
import math
import struct
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from google.protobuf import json_format
from google.protobuf.message import DecodeError as _ProtoDecodeError

from codec.errors import DecodeError, EncodeError
from codec.kinds import (
    EXAMPLE,
    FEATURE_TYPES,
    NONE,
    RAW,
    RECORD_KINDS,
    SEQUENCE_EXAMPLE,
    RecordKind,
)
from codec.protos import example_pb2
from codec.tensor import is_serialized_tensor
from codec.values import format_float, image_magic, is_text
from codec.wire import WireError, read_varint

__all__ = [
    "FEATURE_TYPES",
    "KINDS",
    "Feature",
    "Record",
    "classify_bytes",
    "decode",
    "detect_file_kind",
    "detect_kind",
    "encode",
    "encode_example",
    "encode_sequence_example",
    "format_float",
    "from_json",
    "make_feature",
    "to_json",
]

KINDS = RECORD_KINDS
NONE_TYPE = NONE  # a Feature message with no list set

INT64_MIN = -(1 << 63)
INT64_MAX = (1 << 63) - 1
_FLOAT32_MAX = float(np.finfo(np.float32).max)
# Largest double that still rounds to float32's max rather than to infinity.
_FLOAT32_EDGE = math.nextafter(_FLOAT32_MAX + 2.0**103, 0.0)


@dataclass(frozen=True, slots=True)
class Feature:
    """One feature: ``type`` is ``"bytes"``, ``"float"``, ``"int64"`` (or ``"none"`` for a
    Feature with no list set, whose ``values`` is empty); ``values`` a list of ``bytes``,
    ``float`` or ``int``."""

    type: str
    values: list[Any]


@dataclass(frozen=True, slots=True)
class Record:
    """A decoded record. ``features`` holds an Example's features or a SequenceExample's
    context; ``feature_lists`` a SequenceExample's feature lists (else ``{}``); ``raw`` the
    payload of a ``raw`` record."""

    kind: RecordKind
    features: dict[str, Feature]
    feature_lists: dict[str, list[Feature]]
    raw: bytes | None = None


# --------------------------------------------------------------------------------------------
# Decoding

_WireExample = example_pb2.WireExample
_WireSequenceExample = example_pb2.WireSequenceExample
_new = object.__new__


# Slots (no per-object __dict__) keep decoded records small and light on the garbage
# collector; the hot path fills the slots directly instead of going through the frozen
# dataclass __init__ (one object.__setattr__ per field).
_set_type = Feature.__dict__["type"].__set__
_set_values = Feature.__dict__["values"].__set__
_set_kind = Record.__dict__["kind"].__set__
_set_features = Record.__dict__["features"].__set__
_set_lists = Record.__dict__["feature_lists"].__set__
_set_raw = Record.__dict__["raw"].__set__


def _feature(t: str, v: list[Any]) -> Feature:
    f = _new(Feature)
    _set_type(f, t)
    _set_values(f, v)
    return f


def _record(
    kind: str,
    features: dict[str, Feature],
    lists: dict[str, list[Feature]],
    raw: bytes | None = None,
) -> Record:
    r = _new(Record)
    _set_kind(r, kind)
    _set_features(r, features)
    _set_lists(r, lists)
    _set_raw(r, raw)
    return r


def _convert(f: Any) -> Feature:
    which = f.WhichOneof("kind")
    if which == "int64_list":
        return _feature("int64", f.int64_list.value[:])
    if which == "float_list":
        return _feature("float", f.float_list.value[:])
    if which == "bytes_list":
        return _feature("bytes", f.bytes_list.value[:])
    return _feature(NONE_TYPE, [])


_TYPE_OF = {"int64_list": "int64", "float_list": "float", "bytes_list": "bytes"}


def _features(entries: Any) -> dict[str, Feature]:
    out: dict[str, Feature] = {}
    type_of = _TYPE_OF
    for e in entries:
        f = e.value
        which = f.WhichOneof("kind")
        if which is None:
            feat = _feature(NONE_TYPE, [])
        else:
            feat = _feature(type_of[which], getattr(f, which).value[:])
        out[e.key] = feat  # a repeated key: the last one wins, as with a protobuf map
    return out


def _feature_lists(entries: Any) -> dict[str, list[Feature]]:
    return {e.key: [_convert(f) for f in e.value.feature] for e in entries}


def _parse(cls: Any, payload: bytes) -> Any:
    msg = cls()
    try:
        msg.ParseFromString(payload)
    except (_ProtoDecodeError, RuntimeError, ValueError, TypeError) as exc:
        raise DecodeError(f"not a {_NAMES[cls]}: {exc}") from exc
    return msg


_NAMES = {_WireExample: "tf.train.Example", _WireSequenceExample: "tf.train.SequenceExample"}


def _sniff(payload: bytes) -> tuple[RecordKind, Any]:
    """The kind of ``payload`` and, unless raw, its parsed wire SequenceExample."""
    if not payload:
        return EXAMPLE, None
    msg = _WireSequenceExample()
    try:
        msg.ParseFromString(payload)
    except Exception:  # any parse failure, whatever the runtime raises, means "not ours"
        return RAW, None
    # No unknown field anywhere: discard them and the size must still match. A mismatch can
    # also be a legitimate non-canonical encoding (e.g. unpacked lists): then compare the
    # serializations with and without unknown fields.
    msg.DiscardUnknownFields()
    if msg.ByteSize() != len(payload):
        full = _WireSequenceExample()
        full.ParseFromString(payload)
        if full.SerializeToString() != msg.SerializeToString():
            return RAW, None
    if msg.HasField("feature_lists"):
        return SEQUENCE_EXAMPLE, msg
    return EXAMPLE, msg


# --------------------------------------------------------------------------------------------
# Fast path: a strict walk over the wire bytes
#
# Building upb wrapper objects for every entry, feature and list costs more than reading the
# few bytes they stand for, so decode() first walks the payload itself. The walk accepts only
# the canonical layout protobuf writers produce (known tags with the right wire types, packed
# lists in one chunk, every length inside its parent); it gives up (_Fallback, or an
# IndexError/UnicodeDecodeError/struct.error) on anything else, and decode() then takes the
# upb path, which decides. Everything the walk accepts parses identically with protobuf and
# has no unknown field, so both paths agree (tests/test_example.py checks it on random input).
# The inner levels read a field's tag and length inline rather than through _field: a call
# per value costs about 13% of the decode rate (python -m benchmarks --only messages).


class _Fallback(Exception):
    """The walk met something outside the canonical layout; use the protobuf path."""


_WALK_ERRORS = (
    _Fallback,
    WireError,
    IndexError,
    UnicodeDecodeError,
    struct.error,
    _ProtoDecodeError,
)
_BIG_INT64_LIST = 96  # packed int64 bytes above which upb decodes the list (C varint loop)
_FLOAT_STRUCTS = {n: struct.Struct(f"<{n}f") for n in range(1, 65)}
_Int64List = example_pb2.Int64List


def _field(b: bytes, pos: int, end: int) -> tuple[int, int, int]:
    """``(tag, start, stop)`` of the length-delimited field at ``pos``, which must lie inside
    ``end``: the one step every level of the walk repeats."""
    tag = b[pos]
    ln = b[pos + 1]
    pos += 2
    if ln >= 0x80:
        ln, pos = read_varint(b, pos - 1)
    stop = pos + ln
    if stop > end:
        raise _Fallback
    return tag, pos, stop


def _walk_feature(b: bytes, pos: int, end: int) -> Feature:
    if pos == end:
        return _feature(NONE_TYPE, [])
    tag = b[pos]
    ln = b[pos + 1]
    pos += 2
    if ln >= 0x80:
        ln, pos = read_varint(b, pos - 1)
    if pos + ln != end:  # exactly one list, filling the Feature
        raise _Fallback
    if tag == 0x0A:  # bytes_list: repeated bytes value = 1
        values: list[Any] = []
        append = values.append
        while pos < end:
            if b[pos] != 0x0A:
                raise _Fallback
            ln = b[pos + 1]
            pos += 2
            if ln >= 0x80:
                ln, pos = read_varint(b, pos - 1)
            stop = pos + ln
            if stop > end:
                raise _Fallback
            append(b[pos:stop])
            pos = stop
        feat = _new(Feature)
        _set_type(feat, "bytes")
        _set_values(feat, values)
        return feat
    if tag == 0x12:  # float_list: packed float value = 1
        if pos == end:
            values = []
        else:
            if b[pos] != 0x0A:
                raise _Fallback
            ln = b[pos + 1]
            pos += 2
            if ln >= 0x80:
                ln, pos = read_varint(b, pos - 1)
            if pos + ln != end or ln & 3:
                raise _Fallback
            count = ln >> 2
            unpacker = _FLOAT_STRUCTS.get(count)
            if unpacker is None:
                unpacker = struct.Struct(f"<{count}f")
            values = list(unpacker.unpack_from(b, pos))
        feat = _new(Feature)
        _set_type(feat, "float")
        _set_values(feat, values)
        return feat
    if tag == 0x1A:  # int64_list: packed int64 value = 1
        start = pos
        values = []
        if pos < end:
            if b[pos] != 0x0A:
                raise _Fallback
            ln = b[pos + 1]
            pos += 2
            if ln >= 0x80:
                ln, pos = read_varint(b, pos - 1)
            if pos + ln != end:
                raise _Fallback
            if ln > _BIG_INT64_LIST:
                values = _Int64List.FromString(b[start:end]).value[:]
            else:
                append = values.append
                while pos < end:
                    c = b[pos]
                    if c < 0x80:
                        append(c)
                        pos += 1
                    else:
                        v, pos = read_varint(b, pos)
                        append(v - (1 << 64) if v >> 63 else v)
                if pos != end:
                    raise _Fallback
        feat = _new(Feature)
        _set_type(feat, "int64")
        _set_values(feat, values)
        return feat
    raise _Fallback


def _walk_entry(b: bytes, pos: int, end: int, is_list: bool) -> tuple[str, Any]:
    """One map entry (key = 1, value = 2) between ``pos`` and ``end``."""
    key = ""
    value: Any = None
    while pos < end:
        tag, pos, stop = _field(b, pos, end)
        if tag == 0x0A:
            key = b[pos:stop].decode("utf-8")
        elif tag == 0x12 and value is None:
            value = _walk_steps(b, pos, stop) if is_list else _walk_feature(b, pos, stop)
        else:
            raise _Fallback
        pos = stop
    if pos != end:
        raise _Fallback
    if value is None:
        value = [] if is_list else _feature(NONE_TYPE, [])
    return key, value


def _walk_steps(b: bytes, pos: int, end: int) -> list[Feature]:
    """A FeatureList: repeated Feature feature = 1."""
    steps = []
    while pos < end:
        tag, pos, stop = _field(b, pos, end)
        if tag != 0x0A:
            raise _Fallback
        steps.append(_walk_feature(b, pos, stop))
        pos = stop
    if pos != end:
        raise _Fallback
    return steps


def _walk_map(b: bytes, pos: int, end: int, is_list: bool) -> dict[str, Any]:
    """Features (``is_list`` false) or FeatureLists: repeated entries with tag 1."""
    out: dict[str, Any] = {}
    while pos < end:
        if b[pos] != 0x0A:
            raise _Fallback
        ln = b[pos + 1]
        pos += 2
        if ln >= 0x80:
            ln, pos = read_varint(b, pos - 1)
        stop = pos + ln
        if stop > end:
            raise _Fallback
        # The canonical entry, short: key (tag 1) then value (tag 2), filling the entry.
        kend = pos + 2 + b[pos + 1]
        if (
            b[pos] == 0x0A
            and b[pos + 1] < 0x80
            and kend + 2 <= stop
            and b[kend] == 0x12
            and b[kend + 1] < 0x80
            and kend + 2 + b[kend + 1] == stop
        ):
            key = b[pos + 2 : kend].decode("utf-8")
            if is_list:
                out[key] = _walk_steps(b, kend + 2, stop)
            else:
                out[key] = _walk_feature(b, kend + 2, stop)
        else:
            key, value = _walk_entry(b, pos, stop, is_list)
            out[key] = value  # a repeated key: the last one wins, as with a protobuf map
        pos = stop
    if pos != end:
        raise _Fallback
    return out


def _walk(b: bytes) -> tuple[dict[str, Feature] | None, dict[str, list[Feature]] | None]:
    """(features or context, feature lists): ``None`` for a field that is absent."""
    n = len(b)
    pos = 0
    features = None
    lists = None
    while pos < n:
        tag, pos, stop = _field(b, pos, n)
        if tag == 0x0A and features is None:
            features = _walk_map(b, pos, stop, False)
        elif tag == 0x12 and lists is None:
            lists = _walk_map(b, pos, stop, True)
        else:
            raise _Fallback
        pos = stop
    if pos != n:
        raise _Fallback
    return features, lists


def detect_kind(payload: bytes) -> RecordKind:
    """``"example"``, ``"sequence_example"`` or ``"raw"`` (see the module docstring)."""
    return _sniff(bytes(payload))[0]


def detect_file_kind(payloads: Iterable[bytes], sample: int = 64) -> str:
    """The kind of most of the first ``sample`` payloads (``"example"`` when there are none).

    Ties go to ``sequence_example``, then ``example``: a SequenceExample without feature lists
    is indistinguishable from an Example, so seeing any feature list is strong evidence."""
    counts: Counter[str] = Counter()
    for i, p in enumerate(payloads):
        if i >= sample:
            break
        counts[detect_kind(p)] += 1
    if not counts:
        return EXAMPLE
    best = max(counts.values())
    for kind in (SEQUENCE_EXAMPLE, EXAMPLE, RAW):
        if counts[kind] == best:
            return kind
    return EXAMPLE  # pragma: no cover


def decode(payload: bytes, kind: str = "auto") -> Record:
    """Decode one record payload.

    ``kind="auto"`` detects it and never raises (unparseable payloads come back as ``raw``).
    A forced ``"example"`` or ``"sequence_example"`` raises :class:`DecodeError` when the
    payload does not parse as that message (unknown fields are then ignored); ``"raw"`` wraps
    the payload as it is."""
    payload = payload if type(payload) is bytes else bytes(payload)
    if kind != RAW:
        try:
            features, lists = _walk(payload)
        except _WALK_ERRORS:
            pass
        else:
            if kind == "auto":
                kind = EXAMPLE if lists is None else SEQUENCE_EXAMPLE
            if kind == EXAMPLE:
                return _record(kind, features or {}, {})
            if kind == SEQUENCE_EXAMPLE:
                return _record(kind, features or {}, lists or {})
    return _decode_slow(payload, kind)


def _decode_slow(payload: bytes, kind: str) -> Record:
    """decode() through protobuf's parser: for payloads the strict walk declines."""
    if kind == "auto":
        kind, msg = _sniff(payload)
        if kind == RAW:
            return _record(RAW, {}, {}, payload)
        if msg is None:
            return _record(kind, {}, {})
        lists = _feature_lists(msg.feature_lists.feature_list) if kind != EXAMPLE else {}
        return _record(kind, _features(msg.context.feature), lists)
    if kind == EXAMPLE:
        msg = _parse(_WireExample, payload)
        return _record(kind, _features(msg.features.feature), {})
    if kind == SEQUENCE_EXAMPLE:
        msg = _parse(_WireSequenceExample, payload)
        return _record(
            kind,
            _features(msg.context.feature),
            _feature_lists(msg.feature_lists.feature_list),
        )
    if kind == RAW:
        return _record(RAW, {}, {}, payload)
    raise ValueError(f"unknown kind {kind!r} (expected auto or one of {', '.join(KINDS)})")


# --------------------------------------------------------------------------------------------
# Strict type checks


def _show(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _where(name: str) -> str:
    return f"feature {name!r}" if name else "feature"


def _int64_values(values: list[Any], name: str) -> list[int]:
    out = []
    for v in values:
        if isinstance(v, (int, np.integer)) and not isinstance(v, np.bool_):
            i = int(v)
            if INT64_MIN <= i <= INT64_MAX:
                out.append(i)
                continue
        elif isinstance(v, np.bool_):
            out.append(int(v))
            continue
        raise EncodeError(
            f"{_where(name)}: {_show(v)} is not an int64"
            f" (expected an integer in [{INT64_MIN}, {INT64_MAX}])"
        )
    return out


def _float_values(values: list[Any], name: str) -> list[float]:
    out = []
    for v in values:
        if isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(
            v, (bool, np.bool_)
        ):
            try:
                x = float(v)
            except OverflowError:  # an int beyond double range
                x = _FLOAT32_EDGE * 2
            if not math.isfinite(x) or abs(x) <= _FLOAT32_EDGE:
                out.append(x)
                continue
            raise EncodeError(
                f"{_where(name)}: {_show(v)} is out of float32 range"
                f" (expected a real number with magnitude at most {_FLOAT32_MAX:g},"
                " or NaN/±inf)"
            )
        raise EncodeError(
            f"{_where(name)}: {_show(v)} is not a float"
            " (expected a real number: int or float, not bool or str)"
        )
    return out


def _bytes_values(values: list[Any], name: str) -> list[bytes]:
    out = []
    for v in values:
        if isinstance(v, bytes):
            out.append(bytes(v))
        elif isinstance(v, str):
            out.append(v.encode("utf-8"))
        elif isinstance(v, (bytearray, memoryview)):
            out.append(bytes(v))
        else:
            raise EncodeError(
                f"{_where(name)}: {_show(v)} is not bytes (expected bytes, bytearray or str)"
            )
    return out


_CHECKERS: dict[str, Callable[[list[Any], str], list[Any]]] = {
    "int64": _int64_values,
    "float": _float_values,
    "bytes": _bytes_values,
}


def make_feature(type: str, values: Iterable[Any], *, name: str = "") -> Feature:
    """A :class:`Feature` after strict type checks (see the module docstring).

    ``values`` is an iterable (a list, tuple or numpy array); a single ``str``, ``bytes``,
    ``int`` or ``float`` is taken as a one-value list. Raises :class:`EncodeError` naming the
    feature, the value and the expected type."""
    if isinstance(values, np.ndarray):
        items: list[Any] = values.reshape(-1).tolist()
    elif isinstance(values, (str, bytes, bytearray, int, float, np.generic)):
        items = [values]
    elif values is None:
        raise EncodeError(f"{_where(name)}: None is not a list of {type} values")
    else:
        try:
            items = list(values)
        except TypeError:
            raise EncodeError(
                f"{_where(name)}: {_show(values)} is not a list of {type} values"
            ) from None
    if type == NONE_TYPE:
        if items:
            raise EncodeError(f"{_where(name)}: a feature of type none cannot hold values")
        return Feature(NONE_TYPE, [])
    checker = _CHECKERS.get(type)
    if checker is None:
        raise EncodeError(
            f"{_where(name)}: unknown feature type {type!r}"
            f" (expected one of {', '.join(FEATURE_TYPES)})"
        )
    return Feature(type, checker(items, name))


# --------------------------------------------------------------------------------------------
# Encoding

FeatureSpec = Feature | tuple[str, Sequence[Any]]


def _checked(name: Any, spec: Any) -> Feature:
    if not isinstance(name, str):
        raise EncodeError(f"feature name {_show(name)} is not a str")
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        raise EncodeError(f"feature name {_show(name)} is not valid Unicode text") from None
    if isinstance(spec, Feature):
        return make_feature(spec.type, spec.values, name=name)
    if isinstance(spec, tuple) and len(spec) == 2 and isinstance(spec[0], str):
        return make_feature(spec[0], spec[1], name=name)
    raise EncodeError(f"{_where(name)}: {_show(spec)} is not a Feature or a (type, values) pair")


def _fill(dst: Any, feat: Feature) -> None:
    t = feat.type
    if t == "int64":
        dst.int64_list.SetInParent()
        dst.int64_list.value.extend(feat.values)
    elif t == "float":
        dst.float_list.SetInParent()
        dst.float_list.value.extend(feat.values)
    elif t == "bytes":
        dst.bytes_list.SetInParent()
        dst.bytes_list.value.extend(feat.values)


def _fill_features(dst: Any, features: Mapping[str, Any]) -> None:
    add = dst.feature.add
    for name, spec in features.items():
        feat = _checked(name, spec)
        entry = add()
        entry.key = name
        entry.value.SetInParent()
        _fill(entry.value, feat)


def encode_example(features: Mapping[str, FeatureSpec]) -> bytes:
    """Serialize an Example. Entries are written in the mapping's order; the ``features``
    field is always written (an Example with no features is ``b"\\n\\x00"``, as TensorFlow
    writes ``Example(features=Features())``). Raises :class:`EncodeError`."""
    msg = _WireExample()
    msg.features.SetInParent()
    _fill_features(msg.features, features)
    return bytes(msg.SerializeToString())


def encode_sequence_example(
    context: Mapping[str, FeatureSpec],
    feature_lists: Mapping[str, Sequence[FeatureSpec]],
) -> bytes:
    """Serialize a SequenceExample. ``context`` is written only when it has features;
    ``feature_lists`` always (even empty), so the record is still detected as a
    SequenceExample. Raises :class:`EncodeError`."""
    msg = _WireSequenceExample()
    if context:
        msg.context.SetInParent()
        _fill_features(msg.context, context)
    msg.feature_lists.SetInParent()
    add = msg.feature_lists.feature_list.add
    for name, steps in feature_lists.items():
        if not isinstance(name, str):
            raise EncodeError(f"feature list name {_show(name)} is not a str")
        _checked(name, ("none", []))  # the name check
        if isinstance(steps, (str, bytes, Feature)) or not isinstance(steps, Iterable):
            raise EncodeError(f"feature list {name!r}: {_show(steps)} is not a list of features")
        entry = add()
        entry.key = name
        entry.value.SetInParent()
        for i, spec in enumerate(steps):
            _fill(entry.value.feature.add(), _checked(f"{name}[{i}]", spec))
    return bytes(msg.SerializeToString())


def encode(record: Record) -> bytes:
    """Serialize a :class:`Record` of any kind (a ``raw`` record gives back its payload)."""
    if record.kind == EXAMPLE:
        return encode_example(record.features)
    if record.kind == SEQUENCE_EXAMPLE:
        return encode_sequence_example(record.features, record.feature_lists)
    if record.kind == RAW:
        if record.raw is None:
            raise EncodeError("raw record has no payload")
        return bytes(record.raw)
    raise EncodeError(f"unknown record kind {record.kind!r}")


# --------------------------------------------------------------------------------------------
# JSON (the proto3 JSON mapping, exactly json_format.MessageToDict)


def _feature_json(f: Any) -> dict[str, Any]:
    return json_format.MessageToDict(f)


def _features_json(msg: Any) -> dict[str, Any]:
    entries = msg.feature
    if not len(entries):
        return {}
    return {"feature": {e.key: _feature_json(e.value) for e in entries}}


def to_json(payload: bytes, kind: str) -> object:
    """``json_format.MessageToDict`` of the payload read as ``kind`` (``"auto"`` detects it);
    the base64 text of the payload for ``raw``. Keys of the feature maps come in the order they
    were written, so :func:`from_json` gives back the same bytes."""
    payload = bytes(payload)
    if kind == "auto":
        kind = detect_kind(payload)
    if kind == RAW:
        return base64.b64encode(payload).decode("ascii")
    if kind == EXAMPLE:
        msg = _parse(_WireExample, payload)
        return {"features": _features_json(msg.features)} if msg.HasField("features") else {}
    if kind == SEQUENCE_EXAMPLE:
        msg = _parse(_WireSequenceExample, payload)
        out: dict[str, Any] = {}
        if msg.HasField("context"):
            out["context"] = _features_json(msg.context)
        if msg.HasField("feature_lists"):
            lists = msg.feature_lists.feature_list
            out["featureLists"] = (
                {
                    "featureList": {
                        e.key: (
                            {"feature": [_feature_json(f) for f in e.value.feature]}
                            if len(e.value.feature)
                            else {}
                        )
                        for e in lists
                    }
                }
                if len(lists)
                else {}
            )
        return out
    raise ValueError(f"unknown kind {kind!r} (expected auto or one of {', '.join(KINDS)})")


def _object(obj: Any, allowed: tuple[str, ...] | None, where: str) -> Mapping[str, Any]:
    """``obj`` as a JSON object whose members are all ``allowed`` (None: any name, a map's
    keys)."""
    if not isinstance(obj, Mapping):
        raise DecodeError(f"{where}: expected a JSON object, not {_show(obj)}")
    if allowed is not None:
        extra = [k for k in obj if k not in allowed]
        if extra:
            raise DecodeError(f"{where}: unknown field {extra[0]!r}")
    return obj


def _member(obj: Mapping[str, Any], *names: str) -> Any:
    for n in names:
        if n in obj:
            return obj[n]
    return None


def _float_json(x: Any) -> Any:
    # json_format refuses its own text for float32's max ("3.4028235e+38" is a little above
    # FLT_MAX as a double): give it the exact value that text stands for.
    try:
        v = float(x) if isinstance(x, (int, float, str)) and not isinstance(x, bool) else None
    except ValueError:
        return x
    if v is not None and _FLOAT32_MAX < abs(v) <= _FLOAT32_EDGE:
        return math.copysign(_FLOAT32_MAX, v)
    return x


def _parse_feature_json(obj: Any, dst: Any, where: str) -> None:
    obj = _object(
        obj,
        ("bytesList", "bytes_list", "floatList", "float_list", "int64List", "int64_list"),
        where,
    )
    floats = _member(obj, "floatList", "float_list")
    if isinstance(floats, Mapping) and isinstance(floats.get("value"), list):
        obj = dict(obj)
        key = "floatList" if "floatList" in obj else "float_list"
        obj[key] = {**floats, "value": [_float_json(x) for x in floats["value"]]}
    json_format.ParseDict(obj, dst)
    dst.SetInParent()


def _parse_features_json(obj: Any, dst: Any, where: str) -> None:
    obj = _object(obj, ("feature",), where)
    dst.SetInParent()
    entries = _object(_member(obj, "feature") or {}, None, where)  # a map: any key
    for key, value in entries.items():
        entry = dst.feature.add()
        entry.key = key
        _parse_feature_json(value, entry.value, f"{where}.feature[{key}]")


def from_json(obj: Any, kind: str) -> bytes:
    """The inverse of :func:`to_json`: payload bytes from the proto3 JSON form (features via
    ``json_format.ParseDict``, so field names may be camelCase or as in the .proto). Map
    entries are written in the JSON object's order. Raises :class:`DecodeError` when ``obj``
    is not a valid message of that kind."""
    if kind == RAW:
        if not isinstance(obj, str):
            raise DecodeError(f"a raw record's JSON must be a base64 string, not {_show(obj)}")
        try:
            return base64.b64decode(obj, validate=True)
        except (binascii.Error, ValueError) as exc:
            raise DecodeError(f"raw record: invalid base64: {exc}") from exc
    try:
        if kind == EXAMPLE:
            top = _object(obj, ("features",), "Example")
            msg = _WireExample()
            features = _member(top, "features")
            if features is not None:
                _parse_features_json(features, msg.features, "Example.features")
        elif kind == SEQUENCE_EXAMPLE:
            top = _object(obj, ("context", "featureLists", "feature_lists"), "SequenceExample")
            msg = _WireSequenceExample()
            context = _member(top, "context")
            if context is not None:
                _parse_features_json(context, msg.context, "SequenceExample.context")
            lists = _member(top, "featureLists", "feature_lists")
            if lists is not None:
                where = "SequenceExample.featureLists"
                lists = _object(lists, ("featureList", "feature_list"), where)
                msg.feature_lists.SetInParent()
                entries = _member(lists, "featureList", "feature_list") or {}
                for key, value in _object(entries, None, where).items():
                    entry = msg.feature_lists.feature_list.add()
                    entry.key = key
                    entry.value.SetInParent()
                    steps = _member(_object(value, ("feature",), f"{where}[{key}]"), "feature")
                    if steps is None:
                        steps = []
                    if not isinstance(steps, list):
                        raise DecodeError(f"{where}[{key}].feature: expected a JSON array")
                    for i, step in enumerate(steps):
                        _parse_feature_json(
                            step, entry.value.feature.add(), f"{where}[{key}].feature[{i}]"
                        )
        else:
            raise ValueError(f"unknown kind {kind!r} (expected one of {', '.join(KINDS)})")
    except json_format.ParseError as exc:
        raise DecodeError(f"not a valid {kind} in JSON: {exc}") from exc
    return bytes(msg.SerializeToString())


# --------------------------------------------------------------------------------------------
# Presentation helpers


_AUDIO_FIRST = frozenset((b"R", b"f", b"O", b"I", b"\xff"))  # RIFF/RF64, fLaC, OggS, ID3, MPEG


def classify_bytes(b: bytes) -> str:
    """What a bytes value holds: an image MIME type (``"image/jpeg"``, ``"image/png"``,
    ``"image/gif"``, ``"image/bmp"``, ``"image/webp"``, ``"image/tiff"``, by magic number),
    an audio MIME type (``"audio/wav"``, ``"audio/flac"``, ``"audio/ogg"``, ``"audio/mpeg"``,
    by magic number: :func:`codec.audio.sniff_audio`), ``"tensor"`` (a serialized
    TensorProto with a valid dtype and consistent content), ``"text"`` (UTF-8 without
    control characters; also the empty value) or ``"binary"``."""
    magic = image_magic(b)
    if magic is not None:
        return magic.mime
    if len(b) >= 12 and b[:1] in _AUDIO_FIRST:
        from codec.audio import AUDIO_FORMATS, sniff_audio

        audio = sniff_audio(b)
        if audio is not None:
            return AUDIO_FORMATS[audio]
    if is_serialized_tensor(b):
        return "tensor"
    if is_text(b):
        return "text"
    return "binary"
