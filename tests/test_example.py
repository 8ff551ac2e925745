"""codec.example: decoding, kind detection, strict encoding, JSON, presentation helpers."""

from __future__ import annotations

import math
import re
import struct
from pathlib import Path

import numpy as np
import pytest
from google.protobuf import json_format
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from codec import example as ex
from codec.errors import DecodeError, EncodeError
from codec.protos import example_pb2, tensor_pb2
from codec.tensor import serialize_tensor

SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])

# --------------------------------------------------------------------------------------------
# Strategies

int64s = st.integers(-(2**63), 2**63 - 1)
float32s = st.floats(width=32, allow_nan=True, allow_infinity=True)
features_st = st.one_of(
    st.builds(ex.Feature, st.just("int64"), st.lists(int64s, max_size=8)),
    st.builds(ex.Feature, st.just("float"), st.lists(float32s, max_size=8)),
    st.builds(ex.Feature, st.just("bytes"), st.lists(st.binary(max_size=40), max_size=5)),
    st.just(ex.Feature("none", [])),
    st.builds(ex.Feature, st.just("int64"), st.lists(int64s, min_size=50, max_size=200)),
)
keys = st.text(max_size=12)
feature_maps = st.dictionaries(keys, features_st, max_size=6)
feature_list_maps = st.dictionaries(keys, st.lists(features_st, max_size=4), max_size=4)


def same_values(a: list, b: list) -> bool:
    if len(a) != len(b):
        return False
    for x, y in zip(a, b):
        if isinstance(x, float) and isinstance(y, float):
            if math.isnan(x) and math.isnan(y):
                continue
            if x != y or math.copysign(1, x) != math.copysign(1, y):
                return False
        elif x != y or type(x) is not type(y):
            return False
    return True


def same_feature(a: ex.Feature, b: ex.Feature) -> bool:
    return a.type == b.type and same_values(a.values, b.values)


def same_record(a: ex.Record, b: ex.Record) -> bool:
    return (
        a.kind == b.kind
        and a.raw == b.raw
        and list(a.features) == list(b.features)
        and all(same_feature(a.features[k], b.features[k]) for k in a.features)
        and list(a.feature_lists) == list(b.feature_lists)
        and all(
            len(a.feature_lists[k]) == len(b.feature_lists[k])
            and all(same_feature(x, y) for x, y in zip(a.feature_lists[k], b.feature_lists[k]))
            for k in a.feature_lists
        )
    )


# --------------------------------------------------------------------------------------------
# Round trips


@SETTINGS
@given(feature_maps)
def test_example_round_trip(features: dict[str, ex.Feature]) -> None:
    payload = ex.encode_example(features)
    record = ex.decode(payload)
    assert same_record(record, ex.Record("example", features, {}))
    assert ex.encode(record) == payload
    assert same_record(ex._decode_slow(payload, "auto"), record)
    assert ex.detect_kind(payload) == "example"


@SETTINGS
@given(feature_maps, feature_list_maps)
def test_sequence_example_round_trip(
    context: dict[str, ex.Feature], lists: dict[str, list[ex.Feature]]
) -> None:
    payload = ex.encode_sequence_example(context, lists)
    record = ex.decode(payload)
    assert same_record(record, ex.Record("sequence_example", context, lists))
    assert ex.encode(record) == payload
    assert same_record(ex._decode_slow(payload, "auto"), record)
    assert ex.detect_kind(payload) == "sequence_example"


@settings(SETTINGS, max_examples=60)
@given(feature_maps, feature_list_maps, st.booleans())
def test_json_is_message_to_dict(
    context: dict[str, ex.Feature], lists: dict[str, list[ex.Feature]], sequence: bool
) -> None:
    if sequence:
        payload, kind, cls = (
            ex.encode_sequence_example(context, lists),
            "sequence_example",
            example_pb2.SequenceExample,
        )
    else:
        payload, kind, cls = ex.encode_example(context), "example", example_pb2.Example
    got = ex.to_json(payload, kind)
    want = json_format.MessageToDict(cls.FromString(payload))
    assert _sorted(got) == _sorted(want)
    back = ex.from_json(got, kind)
    # JSON's "NaN" has no sign or payload: compare values then, bytes otherwise.
    assert same_record(ex.decode(back), ex.decode(payload))
    if "NaN" not in repr(got):
        assert back == payload


def _sorted(obj: object) -> object:
    if isinstance(obj, dict):
        return {k: _sorted(obj[k]) for k in sorted(obj)}
    if isinstance(obj, list):
        return [_sorted(v) for v in obj]
    return repr(obj) if isinstance(obj, float) else obj


@SETTINGS
@given(feature_maps, feature_list_maps, st.data())
def test_damaged_payloads_agree_with_protobuf(
    context: dict[str, ex.Feature], lists: dict[str, list[ex.Feature]], data: st.DataObject
) -> None:
    """The fast wire walk and protobuf's parser agree on anything: flipped bytes, cuts."""
    payload = bytearray(ex.encode_sequence_example(context, lists))
    assume(payload)
    for _ in range(data.draw(st.integers(1, 3))):
        i = data.draw(st.integers(0, len(payload) - 1))
        payload[i] = data.draw(st.integers(0, 255))
    cut = data.draw(st.integers(0, len(payload)))
    damaged = bytes(payload[:cut])
    fast = ex.decode(damaged)
    assert same_record(fast, ex._decode_slow(damaged, "auto"))
    assert fast.kind == ex.detect_kind(damaged)
    for kind in ("example", "sequence_example"):
        try:
            forced = ex.decode(damaged, kind)
        except DecodeError:
            with pytest.raises(DecodeError):
                ex._decode_slow(damaged, kind)
        else:
            assert same_record(forced, ex._decode_slow(damaged, kind))


@SETTINGS
@given(st.binary(max_size=200))
def test_random_bytes_decode_or_raw(b: bytes) -> None:
    record = ex.decode(b)
    assert record.kind in ex.KINDS
    if record.kind == "raw":
        assert record.raw == b
    assert same_record(record, ex._decode_slow(b, "auto"))
    for kind in ("example", "sequence_example"):
        try:
            forced = ex.decode(b, kind)
        except DecodeError:
            continue
        assert forced.kind == kind
    assert ex.decode(b, "raw").raw == b


# --------------------------------------------------------------------------------------------
# Kind detection


def test_empty_payload_is_an_example() -> None:
    assert ex.detect_kind(b"") == "example"
    assert ex.decode(b"") == ex.Record("example", {}, {})
    assert ex.encode_example({}) == b"\n\x00"
    assert ex.decode(b"\n\x00") == ex.Record("example", {}, {})


def test_sequence_example_is_never_an_example() -> None:
    payload = ex.encode_sequence_example({"id": ("bytes", [b"a"])}, {"t": [("int64", [1])]})
    # The pitfall: it parses as an Example without error, feature lists silently dropped.
    assert example_pb2.Example.FromString(payload).features.feature["id"]
    record = ex.decode(payload)
    assert record.kind == "sequence_example"
    assert record.feature_lists["t"][0].values == [1]
    # An empty feature_lists field still marks a SequenceExample.
    assert ex.detect_kind(ex.encode_sequence_example({"a": ("int64", [1])}, {})) == (
        "sequence_example"
    )


def test_unknown_fields_make_a_payload_raw() -> None:
    good = ex.encode_example({"a": ("int64", [1])})
    assert ex.detect_kind(good + b"\x18\x05") == "raw"  # top-level field 3
    # Unknown field inside an Int64List (field 2, varint): nested, still raw.
    inner = b"\x10\x07"
    feature = b"\x1a\x02" + inner  # Feature{int64_list{field 2 = 7}}
    entry = b"\n\x01a" + b"\x12" + bytes([len(feature)]) + feature
    features = b"\n" + bytes([len(entry)]) + entry
    payload = b"\n" + bytes([len(features)]) + features
    assert ex.detect_kind(payload) == "raw"
    assert ex.decode(payload).kind == "raw"
    # Forcing the kind reads the known fields and ignores the rest.
    assert ex.decode(payload, "example").features["a"] == ex.Feature("int64", [])


def test_unpacked_lists_still_decode() -> None:
    """Non-canonical but valid encodings (unpacked repeated scalars) take the protobuf path."""
    ints = b"\x08\x05\x08\x80\x01"  # Int64List value=5, value=128, unpacked
    floats = b"\x0d" + struct.pack("<f", 1.5)
    feats = [(b"i", b"\x1a" + bytes([len(ints)]) + ints), (b"f", b"\x12\x05" + floats)]
    body = b""
    for key, feature in feats:
        entry = b"\n" + bytes([len(key)]) + key + b"\x12" + bytes([len(feature)]) + feature
        body += b"\n" + bytes([len(entry)]) + entry
    payload = b"\n" + bytes([len(body)]) + body
    record = ex.decode(payload)
    assert record.kind == "example"
    assert record.features["i"] == ex.Feature("int64", [5, 128])
    assert record.features["f"] == ex.Feature("float", [1.5])


def test_raw_payloads() -> None:
    for b in (b"\xff\xff\xff\xff", b"not a protobuf at all\x00\x01", b"\x0f\x07\x1f" * 5):
        assert ex.detect_kind(b) == "raw"
        record = ex.decode(b)
        assert record == ex.Record("raw", {}, {}, b)
        assert ex.encode(record) == b
        assert ex.to_json(b, "raw") == ex.to_json(b, "auto")
        assert ex.from_json(ex.to_json(b, "raw"), "raw") == b
        with pytest.raises(DecodeError):
            ex.decode(b, "example")
        with pytest.raises(DecodeError):
            ex.decode(b, "sequence_example")


def test_file_kind_majority() -> None:
    example = ex.encode_example({"a": ("int64", [1])})
    seq = ex.encode_sequence_example({}, {"a": [("int64", [1])]})
    assert ex.detect_file_kind([]) == "example"
    assert ex.detect_file_kind([example] * 3 + [seq]) == "example"
    assert ex.detect_file_kind([seq] * 3 + [example] * 2) == "sequence_example"
    assert ex.detect_file_kind([seq, example]) == "sequence_example"
    assert ex.detect_file_kind([b"\xff"] * 5 + [example]) == "raw"


def test_bad_kind_argument() -> None:
    with pytest.raises(ValueError):
        ex.decode(b"", "tfexample")


# --------------------------------------------------------------------------------------------
# Strict type checks


REJECTED = [
    ("int64", 3.5, "3.5 is not an int64"),
    ("int64", 3.0, "3.0 is not an int64"),
    ("int64", "3", "'3' is not an int64"),
    ("int64", 2**63, "9223372036854775808 is not an int64"),
    ("int64", -(2**63) - 1, "-9223372036854775809 is not an int64"),
    ("int64", None, "None is not an int64"),
    ("int64", b"1", "b'1' is not an int64"),
    ("float", "x", "'x' is not a float"),
    ("float", True, "True is not a float"),
    ("float", None, "None is not a float"),
    ("float", b"1.0", "b'1.0' is not a float"),
    ("float", 1e39, "1e+39 is out of float32 range"),
    ("float", 10**400, "is out of float32 range"),
    ("bytes", 5, "5 is not bytes"),
    ("bytes", None, "None is not bytes"),
    ("bytes", 1.5, "1.5 is not bytes"),
    ("bytes", ["nested"], "['nested'] is not bytes"),
]


@pytest.mark.parametrize(("type_", "value", "message"), REJECTED)
def test_rejected_values_name_feature_and_value(type_: str, value: object, message: str) -> None:
    with pytest.raises(EncodeError) as info:
        ex.make_feature(type_, [value], name="label")
    text = str(info.value)
    assert text.startswith("feature 'label': ")
    assert message in text
    assert f"expected {'an integer' if type_ == 'int64' else ''}" in text
    # The same through the encoders.
    with pytest.raises(EncodeError, match=re.escape("feature 'label'")):
        ex.encode_example({"label": (type_, [value])})
    with pytest.raises(EncodeError, match=re.escape("feature 'label[0]'")):
        ex.encode_sequence_example({}, {"label": [(type_, [value])]})


def test_rejection_message_matches_the_issue() -> None:
    with pytest.raises(EncodeError) as info:
        ex.make_feature("int64", [1, 3.5], name="label")
    assert str(info.value) == (
        "feature 'label': 3.5 is not an int64"
        " (expected an integer in [-9223372036854775808, 9223372036854775807])"
    )


def test_other_rejections() -> None:
    with pytest.raises(EncodeError, match="unknown feature type 'str'"):
        ex.make_feature("str", ["a"], name="x")
    with pytest.raises(EncodeError, match="None is not a list"):
        ex.make_feature("int64", None, name="x")  # type: ignore[arg-type]
    with pytest.raises(EncodeError, match="feature name 5 is not a str"):
        ex.encode_example({5: ("int64", [1])})  # type: ignore[dict-item]
    with pytest.raises(EncodeError, match="is not a Feature or a"):
        ex.encode_example({"a": [1, 2]})  # type: ignore[dict-item]
    with pytest.raises(EncodeError, match="cannot hold values"):
        ex.make_feature("none", [1])
    with pytest.raises(EncodeError, match="is not a list of features"):
        ex.encode_sequence_example({}, {"a": ex.Feature("int64", [1])})  # type: ignore[dict-item]
    with pytest.raises(EncodeError):
        ex.encode(ex.Record("raw", {}, {}, None))
    # A Feature built by hand is checked too.
    with pytest.raises(EncodeError, match="'x' is not an int64"):
        ex.encode_example({"a": ex.Feature("int64", ["x"])})


def test_accepted_values_are_normalised() -> None:
    f = ex.make_feature("int64", [True, np.int64(-5), np.uint8(7), 2**63 - 1, np.bool_(True)])
    assert f.values == [1, -5, 7, 2**63 - 1, 1]
    assert all(type(v) is int for v in f.values)
    f = ex.make_feature("float", [1, 2.5, np.float32(0.25), np.float64(math.inf), math.nan])
    assert f.values[:4] == [1.0, 2.5, 0.25, math.inf] and math.isnan(f.values[4])
    assert all(type(v) is float for v in f.values)
    f = ex.make_feature("float", [3.4028235e38, -3.4028235e38])  # float32 max, as printed
    assert f.values == [3.4028235e38, -3.4028235e38]
    f = ex.make_feature("bytes", ["é", b"x", bytearray(b"y"), memoryview(b"z")])
    assert f.values == ["é".encode(), b"x", b"y", b"z"]
    assert ex.make_feature("bytes", "solo").values == [b"solo"]
    assert ex.make_feature("int64", 5).values == [5]
    assert ex.make_feature("int64", np.arange(3)).values == [0, 1, 2]
    assert ex.make_feature("float", np.zeros((2, 2), np.float32)).values == [0.0] * 4
    assert ex.make_feature("int64", (i for i in range(2))).values == [0, 1]


def test_float_values_are_float32() -> None:
    record = ex.decode(ex.encode_example({"f": ("float", [0.9876, 0.1])}))
    values = record.features["f"].values
    assert values == [float(np.float32(0.9876)), float(np.float32(0.1))]
    assert [ex.format_float(v) for v in values] == ["0.9876", "0.1"]


def test_extreme_ints_are_exact() -> None:
    values = [-(2**63), 2**63 - 1, 2**53 + 1, -1, 0, 127, 128]
    record = ex.decode(ex.encode_example({"i": ("int64", values)}))
    assert record.features["i"].values == values
    many = list(range(-5000, 5000, 7))
    assert ex.decode(ex.encode_example({"i": ("int64", many)})).features["i"].values == many


# --------------------------------------------------------------------------------------------
# JSON


def test_from_json_accepts_proto_field_names() -> None:
    payload = ex.from_json(
        {"features": {"feature": {"a": {"int64_list": {"value": [1]}}}}}, "example"
    )
    assert ex.decode(payload).features["a"].values == [1]
    payload = ex.from_json(
        {"feature_lists": {"feature_list": {"t": {"feature": [{"floatList": {"value": [0.5]}}]}}}},
        "sequence_example",
    )
    assert ex.decode(payload).feature_lists["t"][0].values == [0.5]


@pytest.mark.parametrize(
    ("obj", "kind"),
    [
        ({"featuresx": {}}, "example"),
        ({"features": {"feature": {"a": {"int64List": {"value": ["x"]}}}}}, "example"),
        ({"features": {"feature": {"a": {"nope": {}}}}}, "example"),
        ([], "example"),
        ({"featureLists": {"featureList": {"a": {"feature": {}}}}}, "sequence_example"),
        (5, "raw"),
        ("not base64!", "raw"),
    ],
)
def test_from_json_rejects_invalid(obj: object, kind: str) -> None:
    with pytest.raises(DecodeError):
        ex.from_json(obj, kind)


def test_from_json_float_max() -> None:
    """json_format refuses its own text for float32's max; from_json does not."""
    payload = ex.from_json(
        {"features": {"feature": {"m": {"floatList": {"value": [3.4028235e38]}}}}}, "example"
    )
    assert ex.decode(payload).features["m"].values == [float(np.finfo(np.float32).max)]


# --------------------------------------------------------------------------------------------
# Presentation


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (0.9876000285148621, "0.9876"),
        (1.0, "1.0"),
        (-0.0, "-0.0"),
        (math.nan, "nan"),
        (math.inf, "inf"),
        (-math.inf, "-inf"),
        (3.4028234663852886e38, "3.4028235e+38"),
        (2.0**-149, "1e-45"),
        (0.1, "0.1"),
    ],
)
def test_format_float(value: float, text: str) -> None:
    assert ex.format_float(value) == text


def test_format_float_round_trips() -> None:
    rng = np.random.default_rng(1)
    for bits in rng.integers(0, 2**32, 2000, dtype=np.uint64):
        v = np.array([bits], dtype=np.uint32).view(np.float32)[0]
        if np.isnan(v):
            continue
        assert np.float32(ex.format_float(float(v))) == v


def test_classify_bytes() -> None:
    assert ex.classify_bytes(b"\xff\xd8\xff\xe0rest") == "image/jpeg"
    assert ex.classify_bytes(b"\x89PNG\r\n\x1a\n....") == "image/png"
    assert ex.classify_bytes(b"GIF89a...") == "image/gif"
    assert ex.classify_bytes(b"RIFF\x00\x00\x00\x00WEBPVP8 ") == "image/webp"
    assert ex.classify_bytes(b"II*\x00....") == "image/tiff"
    assert ex.classify_bytes(b"MM\x00*....") == "image/tiff"
    bmp = b"BM" + b"\x00" * 12 + struct.pack("<I", 40) + b"\x00" * 20
    assert ex.classify_bytes(bmp) == "image/bmp"
    assert ex.classify_bytes(b"BMW is a car maker, not a bitmap header") == "text"
    assert ex.classify_bytes(serialize_tensor(np.arange(6, dtype=np.float32))) == "tensor"
    assert ex.classify_bytes("héllo\nworld\t!".encode()) == "text"
    assert ex.classify_bytes(b"") == "text"
    assert ex.classify_bytes(b"\x00\x01\x02") == "binary"
    assert ex.classify_bytes(b"\xff\xfe") == "binary"
    # A TensorProto whose content does not match its shape is not a tensor.
    bad = tensor_pb2.TensorProto(dtype=1, tensor_content=b"\x00" * 8)
    bad.tensor_shape.dim.add().size = 3
    assert ex.classify_bytes(bad.SerializeToString()) == "binary"


# --------------------------------------------------------------------------------------------
# The .proto sources describe the descriptors built at import time


_FIELD = re.compile(
    r"^\s*(?:repeated\s+)?(map<\s*\w+\s*,\s*\w+\s*>|[\w.]+)\s+(\w+)\s*=\s*(\d+)", re.M
)


def _proto_fields(path: Path) -> dict[str, dict[str, int]]:
    """message name -> {field name: number}, for the simple .proto files we keep."""
    out: dict[str, dict[str, int]] = {}
    stack: list[tuple[str, str]] = []
    for line in path.read_text().splitlines():
        line = line.split("//")[0]
        m = re.match(r"\s*(message|enum|oneof)\s+(\w+)\s*{", line)
        if m:
            stack.append((m.group(1), m.group(2)))
            if m.group(1) == "message":
                out[".".join(n for k, n in stack if k == "message")] = {}
            continue
        if line.strip() == "}":
            stack.pop()
            continue
        f = _FIELD.match(line)
        if f and stack and stack[-1][0] != "enum":
            owner = ".".join(n for k, n in stack if k == "message")
            out[owner][f.group(2)] = int(f.group(3))
    return out


@pytest.mark.parametrize("name", ["example", "tensor"])
def test_proto_sources_match_descriptors(name: str) -> None:
    from codec.protos import POOL

    path = Path(example_pb2.__file__).with_name(f"{name}.proto")
    declared = _proto_fields(path)
    assert declared
    for message, fields in declared.items():
        desc = POOL.FindMessageTypeByName(f"tensorflow.{message}")
        assert {f.name: f.number for f in desc.fields} == fields, message


def test_records_pickle_and_replace() -> None:
    """Streamlit's cache pickles return values; dataclasses helpers work on the slots classes."""
    import dataclasses
    import pickle

    payload = ex.encode_sequence_example({"a": ("int64", [1])}, {"s": [("float", [0.5])]})
    record = ex.decode(payload)
    assert pickle.loads(pickle.dumps(record)) == record
    assert dataclasses.replace(record, kind="example").kind == "example"
    assert dataclasses.asdict(record)["feature_lists"] == {
        "s": [{"type": "float", "values": [0.5]}]
    }
    with pytest.raises(dataclasses.FrozenInstanceError):
        record.kind = "raw"  # type: ignore[misc]
