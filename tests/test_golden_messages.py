"""The message layer against TensorFlow 2.21's own answers (tests/data/expected, see its README):
kinds, MessageToDict JSON, byte-exact re-encoding, and parse_tensor / serialize_tensor."""

from __future__ import annotations

import base64
import json

import numpy as np
import pytest
from conftest import DATA, EXPECTED, INTACT_GOLDEN

from codec import example as ex
from codec.reader import TFRecordFile
from codec.tensor import describe_tensor, parse_tensor, serialize_tensor

GOLDEN = [*INTACT_GOLDEN, *(f"shards/part-0000{k}-of-00003.tfrecord" for k in range(3))]

FILE_KIND = {"sequence.tfrecord": "sequence_example", "raw_records.tfrecord": "raw"}


def _expected(name: str) -> list[dict]:
    with open(EXPECTED / f"{name}.jsonl", encoding="utf-8") as f:
        return [json.loads(line) for line in f]


def _payloads(name: str) -> list[tuple[int, int, bytes]]:
    with TFRecordFile(DATA / name, use_cache=False) as f:
        return [(*f.span(i), f[i]) for i in range(len(f))]


@pytest.fixture(scope="module", params=GOLDEN)
def golden(request: pytest.FixtureRequest) -> tuple[str, list, list]:
    name = request.param
    return name, _payloads(name), _expected(name)


def test_record_count_and_spans(golden: tuple[str, list, list]) -> None:
    _, payloads, expected = golden
    assert len(payloads) == len(expected)
    for (offset, length, payload), exp in zip(payloads, expected):
        assert (offset, length, len(payload)) == (exp["offset"], exp["length"], exp["length"])


def test_kind_matches_tensorflow(golden: tuple[str, list, list]) -> None:
    _, payloads, expected = golden
    for (_, _, payload), exp in zip(payloads, expected):
        assert ex.detect_kind(payload) == exp["kind"], exp["index"]
        assert ex.decode(payload).kind == exp["kind"], exp["index"]


def test_file_kind(golden: tuple[str, list, list]) -> None:
    name, payloads, _ = golden
    assert ex.detect_file_kind(p for _, _, p in payloads) == FILE_KIND.get(name, "example")


def test_json_equals_message_to_dict(golden: tuple[str, list, list]) -> None:
    _, payloads, expected = golden
    for (_, _, payload), exp in zip(payloads, expected):
        assert ex.to_json(payload, exp["kind"]) == exp["record"], exp["index"]


def test_from_json_gives_back_the_bytes(golden: tuple[str, list, list]) -> None:
    """to_json keeps the written entry order, so from_json(to_json(p)) == p; TensorFlow's JSON
    (keys sorted) gives the same message, entries in sorted order."""
    _, payloads, expected = golden
    for (_, _, payload), exp in zip(payloads, expected):
        kind = exp["kind"]
        assert ex.from_json(ex.to_json(payload, kind), kind) == payload, exp["index"]
        again = ex.from_json(exp["record"], kind)
        assert ex.to_json(again, kind) == exp["record"], exp["index"]


def test_decode_encode_is_byte_exact(golden: tuple[str, list, list]) -> None:
    """TensorFlow's bytes come back exactly: map entries keep their written order."""
    _, payloads, expected = golden
    for (_, _, payload), exp in zip(payloads, expected):
        record = ex.decode(payload)
        assert ex.encode(record) == payload, exp["index"]


def test_fast_and_protobuf_paths_agree(golden: tuple[str, list, list]) -> None:
    _, payloads, _ = golden
    for _, _, payload in payloads:
        assert ex.decode(payload) == ex._decode_slow(payload, "auto") or _nan_equal(
            ex.decode(payload), ex._decode_slow(payload, "auto")
        )


def _nan_equal(a: ex.Record, b: ex.Record) -> bool:
    return json.dumps(_plain(a), sort_keys=True) == json.dumps(_plain(b), sort_keys=True)


def _plain(r: ex.Record) -> object:
    def f(feat: ex.Feature) -> object:
        return [feat.type, [repr(v) for v in feat.values]]

    return [
        r.kind,
        {k: f(v) for k, v in r.features.items()},
        {k: [f(s) for s in v] for k, v in r.feature_lists.items()},
    ]


def test_values_match_json() -> None:
    """Decoded Python values agree with TensorFlow's JSON: int64 exact, float32 text."""
    payloads = _payloads("edge_values.tfrecord")
    expected = _expected("edge_values.tfrecord")
    ints = ex.decode(payloads[0][2]).features
    assert ints["max"].values == [2**63 - 1]
    assert ints["min"].values == [-(2**63)]
    assert ints["beyond_js"].values == [2**53 + 1, -(2**53 + 1)]
    floats = ex.decode(payloads[1][2]).features
    assert ex.format_float(floats["big"].values[0]) == "3.4028235e+38"
    assert [ex.format_float(v) for v in floats["inf"].values] == ["inf", "-inf"]
    assert ex.format_float(floats["nan"].values[0]) == "nan"
    assert ex.format_float(floats["negzero"].values[0]) == "-0.0"
    assert floats["tiny"].values[0] == 2.0**-149
    empties = ex.decode(payloads[2][2]).features
    assert {k: (f.type, f.values) for k, f in empties.items()} == {
        "empty_bytes": ("bytes", []),
        "empty_float": ("float", []),
        "empty_int": ("int64", []),
        "empty_string": ("bytes", [b""]),
    }
    assert ex.decode(payloads[3][2]) == ex.Record("example", {}, {})
    for (_, _, payload), exp in zip(payloads, expected):
        record = ex.decode(payload)
        for name, feat in record.features.items():
            values = exp["record"]["features"]["feature"][name]
            key = {"bytes": "bytesList", "float": "floatList", "int64": "int64List"}[feat.type]
            shown = values[key].get("value", [])
            if feat.type == "int64":
                assert [str(v) for v in feat.values] == shown
            elif feat.type == "bytes":
                assert [base64.b64encode(v).decode() for v in feat.values] == shown


def test_float_text_matches_protobuf() -> None:
    payloads = _payloads("basic.tfrecord")
    expected = _expected("basic.tfrecord")
    for (_, _, payload), exp in zip(payloads, expected):
        value = ex.decode(payload).features["feature3"].values[0]
        want = exp["record"]["features"]["feature"]["feature3"]["floatList"]["value"][0]
        assert ex.format_float(value) == repr(want)


def test_sequence_example_keeps_feature_lists() -> None:
    payloads = _payloads("sequence.tfrecord")
    record = ex.decode(payloads[1][2])
    assert record.kind == "sequence_example"
    assert set(record.features) == {"video_id", "length"}
    assert set(record.feature_lists) == {"tokens", "frame_score", "frame_id"}
    assert [s.values for s in record.feature_lists["frame_id"]] == [[0], [1], [2], [3]]


# --------------------------------------------------------------------------------------------
# Tensors


def _tensor_cases() -> list[tuple[dict, bytes]]:
    answers = json.loads((EXPECTED / "tensors.tfrecord.tensors.json").read_text())
    payloads = _payloads("tensors.tfrecord")
    cases = []
    for answer, (_, _, payload) in zip(answers, payloads):
        feats = ex.decode(payload).features
        assert feats["name"].values == [answer["name"].encode()]
        cases.append((answer, feats["tensor"].values[0]))
    return cases


def _expected_values(answer: dict) -> list:
    enc = answer["encoding"]
    if enc == "integer-string":
        return [int(v) for v in answer["values"]]
    if enc == "base64":
        return [base64.b64decode(v) for v in answer["values"]]
    return list(answer["values"])


@pytest.mark.parametrize("case", _tensor_cases(), ids=lambda c: c[0]["name"])
def test_parse_tensor_matches_tensorflow(case: tuple[dict, bytes]) -> None:
    answer, data = case
    arr = parse_tensor(data)
    assert describe_tensor(data) == (answer["dtype"], tuple(answer["shape"]))
    assert list(arr.shape) == answer["shape"]
    flat = arr.reshape(-1).tolist()
    want = _expected_values(answer)
    # Exact: the JSON numbers are the float64 text of each float32/float16 value.
    assert flat == want
    dtype = answer["dtype"]
    assert arr.dtype == (np.dtype(object) if dtype == "string" else np.dtype(dtype))


@pytest.mark.parametrize("case", _tensor_cases(), ids=lambda c: c[0]["name"])
def test_serialize_tensor_is_byte_identical(case: tuple[dict, bytes]) -> None:
    _, data = case
    assert serialize_tensor(parse_tensor(data)) == data
    assert ex.classify_bytes(data) == "tensor"
