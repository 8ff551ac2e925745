"""The filter language: grammar, error positions, evaluation on odd data, dataset runs."""

from __future__ import annotations

import base64

import pytest
from conftest import DATA, expected_lines
from hypothesis import given, settings
from hypothesis import strategies as st

import codec
from codec.example import Feature, Record, encode_example
from codec.filters import FilterSyntaxError, compile_filter, filter_dataset

REC = Record(
    "example",
    {
        "label": Feature("int64", [3]),
        "width": Feature("int64", [120]),
        "feature1": Feature("int64", [4]),
        "feature2": Feature("bytes", [b"hotdog"]),
        "tags": Feature("bytes", [b"a", b"b"]),
        "image/height": Feature("int64", [60]),
        "weight": Feature("float", [0.10000000149011612]),  # 0.1 as float32 reads back
        "score.v2": Feature("float", [float("nan"), 2.5]),
        "my feature": Feature("int64", [1]),
        "is-crowd": Feature("int64", [0]),
        "empty": Feature("float", []),
        "blob": Feature("bytes", [b"\xff\xfe\x00"]),
    },
    {},
)


def m(expr: str, record=REC, index: int = 3, intact: bool = True) -> bool:
    return compile_filter(expr).matches(record, index=index, intact=intact)


@pytest.mark.parametrize(
    "expr, want",
    [
        ("label == 3 and width > 100", True),
        ("label == 3 and width > 200", False),
        ('"dog" in feature2', True),
        ('"cat" in feature2', False),
        ("has(weight)", True),
        ("has(nope)", False),
        ("not has(nope)", True),
        ("not intact", False),
        ("intact", True),
        ("len(tags) >= 2", True),
        ("len(tags) == 3", False),
        ("len(nope) == 0", True),
        ("len(empty) == 0", True),
        ('feature2 == "cat" or feature1 != 4', False),
        ('feature2 == "hotdog" or feature1 != 4', True),
        ("image/height > 50", True),
        ("image/height > 60", False),
        ("`my feature` == 1", True),
        ("weight == 0.1", True),
        ("weight < 0.2 and weight > 0.05", True),
        ('tags == "b"', True),
        ('tags != "a"', True),
        ("label in [1, 2, 3]", True),
        ("label in [1, 2]", False),
        ('feature2 in "a hotdog stand"', True),
        ("3 in label", True),
        ("index == 3", True),
        ("index < 3", False),
        ("score.v2 > 2", True),
        ("score.v2 != score.v2", True),
        ("not is-crowd", True),
        ("label", True),
        ("label == -3 or label == +3", True),
        ("label == 3.0", True),
        ("label >= 1e0", True),
        ("not (label == 3 or width < 0)", False),
        ("not label == 4", True),
        ("label == true", False),
        ("label not in [1, 2]", True),
        ("(((label == 3)))", True),
        ("label == 3 and (width == 1 or width == 120) and not has(x)", True),
    ],
)
def test_evaluation(expr, want):
    assert m(expr) is want


@pytest.mark.parametrize(
    "expr",
    [
        'label == "3"',  # a string against int64: false, not an error
        "feature2 > 3",
        "feature2 == 3",
        "empty > 0",
        "nope == 1",
        "nope != 1",
        "blob == 1",
        '"x" in label',
        "weight in feature2",
        'len(tags) == "2"',
        "score.v2 == score.v2 and score.v2 < 0",
    ],
)
def test_type_mismatches_are_false_never_errors(expr):
    assert m(expr) is False


def test_odd_records_never_raise():
    flt = compile_filter('label == 3 or "x" in tags or len(tags) > 1 or has(z)')
    odd = [
        (Record("raw", {}, {}, b"\x00"), False),  # no features at all
        (Record("example", {"label": Feature("bytes", [b"\xff"])}, {}), False),  # not UTF-8
        (Record("example", {"label": Feature("none", [])}, {}), False),
        (Record("example", {"tags": Feature("float", [float("inf")])}, {}), False),  # one value
        (Record("example", {"tags": Feature("float", [float("nan")] * 2)}, {}), True),  # two
        (Record("example", {"label": Feature("float", [3.0])}, {}), True),
        (Record("example", {"z": Feature("none", [])}, {}), True),  # present, if empty
        (object(), False),  # not even a record
    ]
    for rec, want in odd:
        assert flt.matches(rec, index=0, intact=True) is want, rec


def test_damaged_records_only_match_without_features():
    assert m("not intact", record=None, intact=False)
    assert m("index == 3", record=None, intact=False)
    assert not m("label == 3", record=None, intact=False)
    assert not m("not (label == 3)", record=None, intact=False)
    assert not m("not has(label)", record=None, intact=False)
    assert m("not intact or label == 3", record=None, intact=False)
    assert not m("not intact and label == 3", record=None, intact=False)


def test_sequence_example_feature_lists():
    rec = Record(
        "sequence_example",
        {"id": Feature("int64", [7])},
        {"tokens": [Feature("bytes", [b"a"]), Feature("bytes", [b"bb"])]},
    )
    assert m("has(tokens) and len(tokens) == 2", rec)
    assert m('"bb" in tokens', rec)
    assert m("id == 7", rec)


@pytest.mark.parametrize(
    "expr, position, words",
    [
        ("(label == 3", 0, "unbalanced '('"),
        ("label == 3)", 10, "unbalanced ')'"),
        ("((label == 3) and width > 1", 0, "unbalanced '('"),
        ("foo(x) > 1", 0, "unknown function 'foo'"),
        ("label == 3 and bar(tags)", 15, "unknown function 'bar'"),
        ("label == 3 garbage", 11, "unexpected 'garbage'"),
        ("label == 3 4", 11, "unexpected '4'"),
        ('feature2 == "cat', 12, "unterminated string"),
        ("feature2 == 'cat", 12, "unterminated string"),
        ("`my feature == 1", 0, "unterminated `name`"),
        ("label = 3", 6, "'=' is not an operator"),
        ("", 0, "empty filter"),
        ("   ", 3, "empty filter"),
        ("label ==", 8, "expected a value but found the end"),
        ("len(tags", 3, "unbalanced '('"),
        ("has()", 4, "has() takes a feature name"),
        ("has", 3, "has needs parentheses"),
        ("label == 3 and", 14, "expected a value"),
        ("label == 3 && width > 1", 11, "'&' is not an operator; use 'and'"),
        ("label in [1, 2", 9, "unbalanced '['"),
        ("label in [1, width]", 13, "a list holds literals"),
        ("label == 3 # comment", 11, "unexpected character '#'"),
        ("()", 1, "empty parentheses"),
        ("label == 12abc", 9, "bad number"),
        (r'feature2 == "a\q"', 14, "unknown escape"),
    ],
)
def test_syntax_errors_point_at_the_problem(expr, position, words):
    with pytest.raises(FilterSyntaxError) as info:
        compile_filter(expr)
    err = info.value
    assert err.position == position, str(err)
    assert words in err.message
    text = str(err).splitlines()
    if expr:
        assert text[1] == "  " + expr
        assert text[2] == "  " + " " * position + "^"


def test_syntax_error_is_a_value_error_and_a_codec_error():
    with pytest.raises(ValueError):
        compile_filter("(")
    with pytest.raises(codec.CodecError):
        compile_filter("(")


def test_names_with_slashes_dots_dashes_and_backquotes():
    f = compile_filter("image/object/bbox/xmin > 0.5 and a.b-c == 1 and `x y``z` == 2")
    assert f.names == ["a.b-c", "image/object/bbox/xmin", "x y`z"]
    assert compile_filter("`index` == 1").names == ["index"]
    assert compile_filter("index == 1").names == []


def test_strings_with_escapes():
    rec = Record("example", {"s": Feature("bytes", [b'a"b\n'])}, {})
    assert m(r's == "a\"b\n"', rec)
    assert m(r"s == 'a\x22b\n'", rec)
    assert m('"é" in s', Record("example", {"s": Feature("bytes", ["café".encode()])}, {}))


FEATURELESS = Record("example", {}, {})


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet="abl=<>!()\"`[],. 0123456789_-/&|#'\\", max_size=30))
def test_arbitrary_text_parses_or_fails_cleanly(text):
    try:
        flt = compile_filter(text)
    except FilterSyntaxError as err:
        assert 0 <= err.position <= len(text)
        return
    # No name these letters (a, b, l) can spell is one of REC's features: REC reads as a
    # record without features.
    assert not set(flt.names) & set(REC.features)
    assert flt.matches(REC, index=0, intact=True) is flt.matches(FEATURELESS, index=0, intact=True)
    damaged = flt.matches(None, index=0, intact=False)
    if flt.names:
        # Features unknown (Kleene logic): a match then holds whatever the features are,
        # none at all included.
        assert not damaged or flt.matches(FEATURELESS, index=0, intact=False)
    else:  # nothing about the record is looked at
        assert damaged is flt.matches(FEATURELESS, index=0, intact=False)


# -- over files ---------------------------------------------------------------------------


def basic_truth():
    rows = []
    for ln in expected_lines("basic.tfrecord"):
        feats = ln["record"]["features"]["feature"]
        rows.append(
            {
                "feature1": int(feats["feature1"]["int64List"]["value"][0]),
                "feature2": base64.b64decode(feats["feature2"]["bytesList"]["value"][0]),
            }
        )
    return rows


def test_filter_dataset_on_golden_file():
    rows = basic_truth()
    with codec.TFRecordFile(DATA / "basic.tfrecord") as f:
        got = filter_dataset(f, 'feature2 == "dog" and feature1 >= 1')
        assert got == [
            i for i, r in enumerate(rows) if r["feature2"] == b"dog" and r["feature1"] >= 1
        ]
        assert filter_dataset(f, "index >= 60") == [60, 61, 62, 63]
        assert (
            filter_dataset(f, "feature1 == 2", limit=3)
            == [i for i, r in enumerate(rows) if r["feature1"] == 2][:3]
        )


def test_filter_dataset_over_shards_uses_global_numbers():
    rows = basic_truth()
    with codec.TFRecordDataset(str(DATA / "shards" / "part-*")) as ds:
        got = filter_dataset(ds, 'feature2 == "cat"')
    # record i of the original file is in shard i % 3 at local position i // 3
    sizes = [22, 21, 21]
    starts = [0, 22, 43]
    want = sorted(starts[i % 3] + i // 3 for i, r in enumerate(rows) if r["feature2"] == b"cat")
    assert sizes == [len(range(k, 64, 3)) for k in range(3)]
    assert got == want


def test_filter_dataset_damaged_records():
    progress = []
    with codec.TFRecordFile(DATA / "corrupt_data_crc.tfrecord") as f:
        assert filter_dataset(f, "not intact", progress=lambda d, t: progress.append((d, t))) == [5]
        assert 5 not in filter_dataset(f, "has(feature1)")
        assert 5 not in filter_dataset(f, "not has(feature1) or feature1 >= 0")
        assert len(filter_dataset(f, "has(feature1)")) == 63
    assert progress[-1] == (64, 64)


def test_filter_dataset_accepts_text_and_raw_records(tmp_path):
    path = tmp_path / "mixed.tfrecord"
    codec.write_records(path, [encode_example({"a": ("int64", [1])}), b"\xff\x00junk"])
    with codec.TFRecordFile(path) as f:
        assert filter_dataset(f, "has(a)") == [0]
        assert filter_dataset(f, "not has(a)") == [1]
        with pytest.raises(FilterSyntaxError):
            filter_dataset(f, "a ==")
