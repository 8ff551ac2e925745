"""Schema inference, drift and statistics: the golden drift file, generated datasets with
known statistics, and the vectorised route checked against the exact decoder."""

from __future__ import annotations

import base64
import io
import itertools
import json
import math

import numpy as np
import pytest
from conftest import DATA, EXPECTED, INTACT_GOLDEN, expected_lines
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from PIL import Image

import codec
import codec.schema.infer
import codec.schema.scan
from codec import example, schema
from codec.example import encode_example, encode_sequence_example
from codec.schema import (
    Histogram,
    Schema,
    SchemaBuilder,
    ValueCounter,
    infer_schema,
)
from codec.values import image_size


def exact_schema(path, **opts) -> dict:
    """The schema built record by record through codec.example.decode: the reference."""
    b = SchemaBuilder()
    with codec.TFRecordFile(path, **opts) as f:
        for info in f.records():
            if info.data is None:
                b.add_damaged(info.index)
            else:
                b.add_record(info.index, example.decode(info.data))
    out = Schema(b).to_json()
    out.pop("problems")
    return out


def fast_schema(path, **opts) -> dict:
    out = infer_schema(path, **opts).to_json()
    out.pop("problems")
    out.pop("files")
    return out


# -- the golden drift file ------------------------------------------------------------------


def test_golden_drift_matches_expected():
    expected = json.loads((EXPECTED / "drift.tfrecord.schema.json").read_text())
    got = infer_schema(DATA / "drift.tfrecord").to_json()
    assert got["records"] == expected["records"]
    assert got["type_conflicts"] == expected["type_conflicts"]
    assert set(got["features"]) == set(expected["features"])
    for name, want in expected["features"].items():
        for key, value in want.items():
            assert got["features"][name][key] == value, (name, key)


def test_golden_drift_missing_and_lengths_agree_with_the_records():
    lines = expected_lines("drift.tfrecord")
    got = infer_schema(DATA / "drift.tfrecord").to_json()
    feats = [ln["record"]["features"]["feature"] for ln in lines]
    assert got["missing"] == {"weight": [i for i, f in enumerate(feats) if "weight" not in f]}
    lengths = [len(f["tags"]["bytesList"].get("value", [])) for f in feats]
    assert got["features"]["tags"]["mean_len"] == pytest.approx(sum(lengths) / len(lengths))
    float_labels = [i for i, f in enumerate(feats) if "floatList" in f["label"]]
    assert got["type_conflicts"]["label"] == float_labels


@pytest.mark.parametrize("name", [*INTACT_GOLDEN, "corrupt_data_crc.tfrecord"])
def test_vectorised_route_equals_exact_decoder(name):
    assert fast_schema(DATA / name) == exact_schema(DATA / name)


def test_damaged_records_are_counted_not_described():
    got = infer_schema(DATA / "corrupt_data_crc.tfrecord").to_json()
    assert got["damaged_records"] == [5]
    assert got["records"] == 63
    assert got["features"]["feature0"]["present"] == 63


def test_sequence_examples_context_and_feature_lists():
    lines = expected_lines("sequence.tfrecord")
    got = infer_schema(DATA / "sequence.tfrecord").to_json()
    assert got["kinds"] == {"sequence_example": 10}
    assert set(got["features"]) == {"length", "video_id"}
    steps = [len(ln["record"]["featureLists"]["featureList"]["tokens"]["feature"]) for ln in lines]
    tokens = got["feature_lists"]["tokens"]
    assert (tokens["min_steps"], tokens["max_steps"]) == (min(steps), max(steps))
    assert tokens["present"] == 10
    assert tokens["steps"] == sum(steps)
    assert got["feature_lists"]["frame_score"]["types"] == {"float": sum(steps)}


def test_images_formats_sizes_and_undecodable():
    got = infer_schema(DATA / "images_png.tfrecord").to_json()
    images = got["features"]["picture"]["images"]
    assert images["formats"] == {"png": 4}
    assert images["undecodable"] == 0
    lines = expected_lines("images_png.tfrecord")
    want: dict[tuple[int, int], int] = {}
    for ln in lines:
        b = base64.b64decode(
            ln["record"]["features"]["feature"]["picture"]["bytesList"]["value"][0]
        )
        with Image.open(io.BytesIO(b)) as im:
            want[im.size] = want.get(im.size, 0) + 1
    assert {(w, h): c for w, h, c in images["sizes"]} == want


def jpeg(w: int, h: int, color=(200, 30, 30)) -> bytes:
    buf = io.BytesIO()
    Image.new("RGB", (w, h), color).save(buf, "JPEG", quality=80)
    return buf.getvalue()


def png(w: int, h: int) -> bytes:
    buf = io.BytesIO()
    Image.new("L", (w, h), 7).save(buf, "PNG")
    return buf.getvalue()


def test_image_size_reads_headers():
    assert image_size(jpeg(33, 17)) == ("jpeg", 33, 17)
    assert image_size(png(5, 9)) == ("png", 5, 9)
    gif = io.BytesIO()
    Image.new("P", (4, 6)).save(gif, "GIF")
    assert image_size(gif.getvalue()) == ("gif", 4, 6)
    bmp = io.BytesIO()
    Image.new("RGB", (7, 3)).save(bmp, "BMP")
    assert image_size(bmp.getvalue()) == ("bmp", 7, 3)
    assert image_size(b"hello world") is None
    assert image_size(b"\xff\xd8\xff\xe0" + b"\x00" * 4) is None


def test_undecodable_images_are_listed(tmp_path):
    good = jpeg(20, 10)
    payloads = [
        encode_example({"img": ("bytes", [good])}),
        encode_example({"img": ("bytes", [good[: len(good) // 2]])}),  # cut: no EOI marker
        encode_example({"img": ("bytes", [b"\x89PNG\r\n\x1a\n" + b"\x00" * 30])}),  # no IHDR
        encode_example({"img": ("bytes", [png(3, 4)])}),
    ]
    path = tmp_path / "img.tfrecord"
    codec.write_records(path, payloads)
    images = infer_schema(path).to_json()["features"]["img"]["images"]
    assert images["formats"] == {"jpeg": 2, "png": 2}
    assert images["undecodable_records"] == [1, 2]
    assert sorted(map(tuple, images["sizes"])) == [(3, 4, 1), (20, 10, 2)]


# -- generated datasets with known statistics ----------------------------------------------


def write(tmp_path, payloads, name="gen.tfrecord"):
    path = tmp_path / name
    codec.write_records(path, payloads)
    return path


def test_known_numeric_and_text_statistics(tmp_path):
    rng = np.random.default_rng(7)
    n = 3000
    ints = rng.integers(-50, 50, n)
    floats = rng.standard_normal(n).astype(np.float32)
    floats[[10, 20]] = np.nan
    floats[30] = np.inf
    floats[40] = -np.inf
    words = [b"cat"] * 1500 + [b"dog"] * 1000 + [b"emu"] * 500
    rng.shuffle(words)
    payloads = [
        encode_example(
            {
                "i": ("int64", [int(ints[k])]),
                "f": ("float", [float(floats[k])]),
                "w": ("bytes", [words[k]]),
                "multi": ("int64", list(range(k % 4))),
            }
        )
        for k in range(n)
    ]
    got = infer_schema(write(tmp_path, payloads)).to_json()
    assert got["records"] == n
    fi = got["features"]["i"]
    assert fi["numeric"]["min"] == int(ints.min()) and fi["numeric"]["max"] == int(ints.max())
    assert fi["numeric"]["mean"] == pytest.approx(ints.mean())
    counts = dict(zip(*np.unique(ints, return_counts=True)))
    top = fi["int_values"]["top"]
    assert all(counts[v] == c for v, c in top)
    assert top[0][1] == max(counts.values())
    assert fi["int_values"]["distinct"] == len(counts)
    ff = got["features"]["f"]["numeric"]
    finite = floats[np.isfinite(floats)]
    assert (ff["nan"], ff["posinf"], ff["neginf"]) == (2, 1, 1)
    assert ff["min"] == pytest.approx(float(finite.min()))
    assert ff["max"] == pytest.approx(float(finite.max()))
    assert ff["mean"] == pytest.approx(float(finite.astype(np.float64).mean()), rel=1e-6)
    assert got["features"]["w"]["bytes"]["top"] == [["cat", 1500], ["dog", 1000], ["emu", 500]]
    multi = got["features"]["multi"]
    assert (multi["min_len"], multi["max_len"]) == (0, 3)
    assert multi["mean_len"] == pytest.approx(1.5)
    assert got["type_conflicts"] == {} and got["missing"] == {} and got["length_drift"] == {}
    stats = infer_schema(write(tmp_path, payloads)).statistics()
    hist = stats["features"]["f"]["histogram"]
    assert sum(hist["counts"]) == len(finite)
    assert hist["edges"][0] <= finite.min() and hist["edges"][-1] >= finite.max()
    assert stats["features"]["multi"]["lengths"] == [[0, 750], [1, 750], [2, 750], [3, 750]]
    assert stats["features"]["w"]["values"][0] == ["cat", 1500]


def test_drift_detection_with_record_numbers(tmp_path):
    payloads = []
    for k in range(100):
        feats: dict = {"label": ("int64", [k % 3]), "box": ("float", [0.1, 0.2, 0.3, 0.4])}
        if k in (5, 50):
            feats["label"] = ("float", [1.0])
        if k not in (7, 8, 99):
            feats["weight"] = ("float", [0.5])
        if k in (3, 60):
            feats["box"] = ("float", [0.1, 0.2])
        if k >= 90:
            feats["late"] = ("bytes", [b"x"])
        payloads.append(encode_example(feats))
    got = infer_schema(write(tmp_path, payloads)).to_json()
    assert got["type_conflicts"] == {"label": [5, 50]}
    assert got["missing"]["weight"] == [7, 8, 99]
    assert got["missing"]["late"] == list(range(90))
    assert got["missing_counts"]["late"] == 90
    assert got["length_drift"] == {"box": {"usual_len": 4, "count": 2, "records": [3, 60]}}


def test_missing_features_across_chunks_and_processes(tmp_path, monkeypatch):
    monkeypatch.setattr(schema.scan, "_CHUNK", 64)
    monkeypatch.setattr(schema.infer, "_PARALLEL_MIN", 0)
    payloads = []
    for k in range(1000):
        feats: dict = {"a": ("int64", [k])}
        if k % 97 == 0:
            feats["rare"] = ("bytes", [b"r"])
        if k >= 700:
            feats["late"] = ("float", [1.5])
        payloads.append(encode_example(feats))
    path = write(tmp_path, payloads)
    one = infer_schema(path).to_json()
    two = infer_schema(path, workers=2).to_json()
    assert one == two
    assert one["missing"]["late"] == list(range(700))
    assert one["missing_counts"]["rare"] == 1000 - len(range(0, 1000, 97))
    assert one["features"]["a"]["numeric"]["max"] == 999


def test_shards_have_their_own_statistics():
    s = infer_schema(str(DATA / "shards" / "part-*"))
    assert s.records == 64
    assert [f.records for f in s.files] == [22, 21, 21]
    assert [f.first_record for f in s.files] == [0, 22, 43]
    assert sum(sh.records for sh in s.shards.values()) == 64
    stats = s.statistics()
    assert set(stats["shards"]) == {f.path for f in s.files}
    per_shard = [
        dict(map(tuple, sh["features"]["feature1"]["values"])) for sh in stats["shards"].values()
    ]
    total = dict(map(tuple, stats["features"]["feature1"]["values"]))
    assert {k: sum(p.get(k, 0) for p in per_shard) for k in total} == total


def test_sample_is_labelled(tmp_path):
    got = infer_schema(DATA / "basic.tfrecord", sample=10)
    assert got.is_sample and got.records == 10
    doc = got.to_json()
    assert doc["sampled"] is True and doc["sample"] == {"records": 10, "of": 64}
    assert infer_schema(DATA / "basic.tfrecord").to_json()["sampled"] is False


def test_progress_reaches_the_total():
    calls = []
    infer_schema(DATA / "basic.tfrecord", progress=lambda d, t: calls.append((d, t)))
    assert calls[-1] == (64, 64)
    assert all(d <= t for d, t in calls)


def test_irregular_encodings_take_the_exact_route(tmp_path):
    # Hand-made wire bytes: unpacked floats, a repeated key (the last wins), an empty
    # Feature, a non-UTF-8 key and an Example with two `features` fields.
    def entry(key: bytes, feature: bytes) -> bytes:
        body = b"\x0a" + bytes([len(key)]) + key + b"\x12" + bytes([len(feature)]) + feature
        return b"\x0a" + bytes([len(body)]) + body

    def ex(*entries: bytes) -> bytes:
        feats = b"".join(entries)
        return b"\x0a" + bytes([len(feats)]) + feats

    unpacked = b"\x12\x0a" + b"\x0d\x00\x00\x80\x3f" + b"\x0d\x00\x00\x00\x40"  # [1.0, 2.0]
    int1 = b"\x1a\x03\x0a\x01\x01"
    int2 = b"\x1a\x03\x0a\x01\x02"
    payloads = [
        ex(entry(b"f", unpacked)),
        ex(entry(b"k", int1), entry(b"k", int2)),
        ex(entry(b"e", b"")),
        ex(entry(b"k", int1)) + ex(entry(b"f", unpacked)),
        encode_example({"k": ("int64", [5]), "f": ("float", [3.0])}),
    ]
    path = write(tmp_path, payloads)
    got = fast_schema(path)
    assert got == exact_schema(path)
    assert got["features"]["f"]["numeric"]["max"] == 3.0
    assert got["features"]["k"]["int_values"]["top"] == [[1, 1], [2, 1], [5, 1]]
    assert got["features"]["e"]["types"] == {"none": 1}


feature_values = st.one_of(
    st.tuples(st.just("int64"), st.lists(st.integers(-(2**63), 2**63 - 1), max_size=5)),
    st.tuples(
        st.just("float"),
        st.lists(st.floats(width=32, allow_nan=True, allow_infinity=True), max_size=5),
    ),
    st.tuples(st.just("bytes"), st.lists(st.binary(max_size=12), max_size=300)),
)
names = st.sampled_from(["a", "b", "image/x", "é", "long_feature_name.v2", ""])


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.dictionaries(names, feature_values, max_size=5), min_size=1, max_size=12))
def test_property_vectorised_equals_exact(tmp_path_factory, records):
    tmp = tmp_path_factory.mktemp("prop")
    path = write(tmp, [encode_example(r) for r in records])
    assert fast_schema(path) == exact_schema(path)


def test_sequence_example_drift_in_feature_lists(tmp_path):
    payloads = [
        encode_sequence_example({"id": ("int64", [k])}, {"x": [("int64", [1])] * (k + 1)})
        for k in range(5)
    ]
    payloads.append(encode_sequence_example({"id": ("int64", [5])}, {"x": [("float", [1.0])]}))
    payloads.append(encode_sequence_example({"id": ("int64", [6])}, {"y": [("bytes", [b"a"])]}))
    got = infer_schema(write(tmp_path, payloads)).to_json()
    x = got["feature_lists"]["x"]
    assert (x["min_steps"], x["max_steps"], x["present"]) == (1, 5, 6)
    assert x["type_conflicts"] == [5]
    assert x["missing_records"] == [6]
    assert got["feature_lists"]["y"]["missing_records"] == [0, 1, 2, 3, 4, 5]


# -- the bounded pieces -------------------------------------------------------------------


def test_value_counter_exact_then_bounded():
    from codec.schema.counters import mix64

    c = ValueCounter(capacity=100, sketch=512)
    seen = 0

    def add(values):  # every occurrence with its own key, as records give them
        nonlocal seen
        c.add(values, mix64(np.arange(seen, seen + len(values), dtype=np.uint64)))
        seen += len(values)

    add([b"a"] * 50 + [b"b"] * 30)
    assert c.exact and c.distinct() == 2 and c.top(1) == [(b"a", 50)]
    for chunk in range(20):
        add([f"v{chunk}-{k}".encode() for k in range(1000)] + [b"a"] * 10)
    assert not c.exact
    assert not c.counts and len(c._keys) <= c.budget  # bounded
    est = c.distinct()
    assert abs(est - 20_002) / 20_002 < 0.15
    (value, count), *_ = c.top(1)
    assert value == b"a"  # a heavy hitter is found in the sample
    assert abs(count - 250) / 250 < 0.4


def test_value_counter_merge_matches_single_pass():
    a, b, whole = ValueCounter(50), ValueCounter(50), ValueCounter(50)
    xs = [k % 30 for k in range(300)]
    ys = [k % 40 for k in range(300)]
    a.add(xs)
    b.add(ys)
    whole.add(xs + ys)
    a.merge(b)
    assert a.exact and a.counts == whole.counts and a.distinct() == 40


def test_histogram_covers_every_value():
    h = Histogram(bins=8)
    h.add(np.array([0.0, 1.0, 2.0]))
    h.add(np.array([-100.0, 50.0, np.nan, np.inf]))
    h.add(np.array([1e6]))
    j = h.to_json()
    assert sum(j["counts"]) == 6
    assert j["edges"][0] <= -100 and j["edges"][-1] > 1e6
    assert len(j["edges"]) == len(j["counts"]) + 1 <= 9
    other = Histogram(bins=8)
    other.add(np.arange(10.0))
    h.merge(other)
    assert sum(h.to_json()["counts"]) == 16


@settings(max_examples=60, deadline=None)
@given(
    values=st.lists(
        st.floats(allow_nan=False, allow_infinity=False, width=32), min_size=1, max_size=300
    ),
    cuts=st.lists(st.integers(0, 300), max_size=5),
    integer=st.booleans(),
)
def test_histogram_does_not_depend_on_how_values_are_split(values, cuts, integer):
    arr = np.array(values, np.float64)
    if integer:
        arr = np.rint(np.clip(arr, -1e15, 1e15))
    whole = Histogram(integer=integer)
    whole.add(arr)
    bounds = sorted({0, len(arr), *[min(c, len(arr)) for c in cuts]})
    parts = []
    for lo, hi in itertools.pairwise(bounds):
        h = Histogram(integer=integer)
        h.add(arr[lo:hi])
        parts.append(h)
    # Merged in a different order than the values came in.
    merged = Histogram(integer=integer)
    for h in reversed(parts):
        merged.merge(h)
    assert merged.to_json() == whole.to_json()
    j = whole.to_json()
    assert sum(j["counts"]) == len(arr) and len(j["counts"]) <= 64
    assert j["edges"][0] <= arr.min() and arr.max() < j["edges"][-1]
    if integer:
        assert all(float(e).is_integer() for e in j["edges"])


def test_integer_features_with_few_values_get_exact_bars(tmp_path):
    labels = [5] * 1440 + [42] + [k % 6 for k in range(300)]
    payloads = [encode_example({"label": ("int64", [v])}) for v in labels]
    stats = infer_schema(write(tmp_path, payloads)).statistics()
    f = stats["features"]["label"]
    bars = dict((v, c) for v, c in f["bars"])
    assert bars[5] == 1440 + 50 and bars[42] == 1
    assert sum(bars.values()) == len(labels)
    hist = f["histogram"]
    assert all(float(e).is_integer() for e in hist["edges"])
    # The bin holding 5 holds every 5, and 42 has a bin of its own that is not empty.
    at = next(i for i, e in enumerate(hist["edges"][:-1]) if e <= 5 < hist["edges"][i + 1])
    assert hist["counts"][at] >= 1490
    at42 = next(i for i, e in enumerate(hist["edges"][:-1]) if e <= 42 < hist["edges"][i + 1])
    assert hist["counts"][at42] == 1


def test_numeric_stats_of_int64_extremes():
    got = infer_schema(DATA / "edge_values.tfrecord").to_json()
    nums = [f["numeric"] for f in got["features"].values() if "numeric" in f]
    assert any(n["min"] == -(2**63) for n in nums)
    assert any(n["max"] == 2**63 - 1 for n in nums)
    assert any(n["nan"] for n in nums) and any(n["posinf"] and n["neginf"] for n in nums)
    assert all(isinstance(n["mean"], (float, type(None))) for n in nums)
    assert not any(isinstance(n["mean"], float) and math.isnan(n["mean"]) for n in nums)


# -- detection checks -------------------------------------------------------------------------


def test_every_planted_detection_problem_is_a_finding_and_nothing_else(tmp_path):
    from browser_app.sample_data import LABEL_MAP
    from browser_app.sample_data import write_detection_checks as write_detection
    from codec.labelmap import parse_label_map

    path = tmp_path / "od.tfrecord"
    planted = write_detection(path, 300)
    expected = {
        "damaged": {"damaged"},
        "missing": {"missing_label"},
        "undecodable": {"undecodable"},
        "object_lengths": {"object_lengths", "missing_label"},
        "box_not_finite": {"box_not_finite"},
        "box_range": {"box_range"},
        "box_inverted": {"box_inverted"},
        "label_map": {"label_map"},
        "label_text": {"label_text"},
        "image_size": {"image_size"},
    }
    doc = infer_schema(path, label_map=parse_label_map(LABEL_MAP).names).to_json()
    found: set[int] = set()
    for f in doc["findings"]:
        allowed = set().union(*(planted[k] for k in expected[f["check"]]))
        assert set(f["records"]) == allowed, f
        assert f["count"] == len(f["records"])
        found |= set(f["records"])
    assert found == set().union(*planted.values())
    assert {f["check"] for f in doc["findings"]} == set(expected)
    assert doc["detection"]["image/object/"]["normalized"] is True
    # Without a label map the label checks fall back to "one label, one text".
    bare = infer_schema(path).to_json()
    (lt,) = [f for f in bare["findings"] if f["check"] == "label_text"]
    assert set(lt["records"]) == set(planted["label_text"])
    assert "1 is 'cat' in most boxes but 'dog'" in lt["message"]
    assert not [f for f in bare["findings"] if f["check"] == "label_map"]


def test_detection_checks_do_not_depend_on_the_split(tmp_path, monkeypatch):
    from browser_app.sample_data import write_detection_checks as write_detection

    path = tmp_path / "od.tfrecord"
    write_detection(path, 300)
    one = infer_schema(path).to_json()
    monkeypatch.setattr(codec.schema.scan, "_CHUNK", 17)
    monkeypatch.setattr(codec.schema.infer, "_PARALLEL_MIN", 0)
    two = infer_schema(path, workers=2).to_json()
    assert one["findings"] == two["findings"] and one["detection"] == two["detection"]


def test_pixel_coordinates_are_decided_for_the_dataset(tmp_path):
    payloads = []
    for k in range(50):
        x0, x1 = (10.0, 60.0) if k != 7 else (10.0, 700.0)  # one box beyond a 640 picture
        payloads.append(
            encode_example(
                {
                    "image/height": ("int64", [480]),
                    "image/width": ("int64", [640]),
                    "image/object/bbox/xmin": ("float", [x0]),
                    "image/object/bbox/xmax": ("float", [x1]),
                    "image/object/bbox/ymin": ("float", [5.0]),
                    "image/object/bbox/ymax": ("float", [50.0]),
                }
            )
        )
    doc = infer_schema(write(tmp_path, payloads)).to_json()
    det = doc["detection"]["image/object/"]
    assert det["normalized"] is False
    assert det["checks"] == {"box_range": {"count": 1, "records": [7]}}
