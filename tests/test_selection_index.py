"""Facets and feature sorts from the stored columnar index: the record facts
(:func:`browser_app.selection.index_facts`) and a feature's sort keys
(:func:`browser_app.selection.index_feature_keys`) equal those read from the records
(:func:`record_facts`, :func:`feature_keys`) on a dataset of 60,000 records past the automatic
limit, with damaged and recovered records, boxes with and without classes, class label
features inside and outside box layouts, an identifier, lists and bytes; a selection resolved
from either gives the same records in the same order; where the index cannot answer exactly
it says so (None) and the records are read."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from damage import damage

import codec
from browser_app.generators import write
from browser_app.selection import (
    NO_CLASS,
    RecordFacts,
    Selection,
    facet_counts,
    feature_keys,
    index_facts,
    index_feature_keys,
    record_facts,
    resolve,
)
from codec.columns_index import ColumnsIndex, columns_index, stored_index
from codec.detection import BBOX as BBOX_SIDES
from codec.example import encode_example
from codec.jobs.columns import MAX_LIST

RECORDS = 60_000
FILES = 3
CLASSES = ("cat", "dog", "bird")


def _example(i: int) -> bytes:
    rng = random.Random(i)
    f: dict[str, Any] = {
        "label": ("int64", [i % 7]),
        "label_id": ("int64", [i]),  # an identifier: more distinct values than classes
        "score": ("float", [rng.random()]),
        "name": ("bytes", [f"n{i}".encode()]),
    }
    if i % 5:
        f["weights"] = ("float", [rng.random() for _ in range(i % 4)])
    if i % 10 != 3:
        n = i % 4
        x = [rng.uniform(0, 0.5) for _ in range(n)]
        f["image/object/bbox/xmin"] = ("float", x)
        f["image/object/bbox/xmax"] = ("float", [v + 0.2 for v in x])
        f["image/object/bbox/ymin"] = ("float", x)
        f["image/object/bbox/ymax"] = ("float", [v + 0.3 for v in x])
        labels = [(i + k) % 3 + 1 for k in range(n)]
        if i % 6 != 1:
            f["image/object/class/label"] = ("int64", labels)
        if i % 4 != 1:
            f["image/object/class/text"] = ("bytes", [CLASSES[v - 1].encode() for v in labels])
    elif i % 20 == 3:
        # Class labels without boxes: a class label feature of the record, not a box's.
        f["image/object/class/label"] = ("int64", [i % 3 + 1])
    if i % 97 == 0:
        # Empty box lists: still a layout, which takes the class labels beside it.
        for s in ("xmin", "xmax", "ymin", "ymax"):
            f[f"image/object/bbox/{s}"] = ("float", [])
        f["image/object/class/label"] = ("int64", [2])
    return encode_example(f)


@pytest.fixture(scope="module")
def dataset(tmp_path_factory: pytest.TempPathFactory) -> tuple[list[str], Path]:
    """Three files of 20,000 records, the last one damaged in places; and a cache folder
    holding their index."""
    d = tmp_path_factory.mktemp("selection-index")
    per = RECORDS // FILES
    paths = [str(d / f"part-{k}.tfrecord") for k in range(FILES)]
    for k, path in enumerate(paths):
        write(path, [_example(k * per + j) for j in range(per)])
    raw = Path(paths[-1]).read_bytes()
    rng = random.Random(3)
    for _ in range(20):
        hurt = damage(rng, raw, hits=5)
        if len(hurt) > len(raw) // 2:
            break
    Path(paths[-1]).write_bytes(hurt)
    cache = d / "cache"
    with codec.TFRecordDataset(paths) as ds:
        columns_index(ds.files, executor="inline", cache_dir=cache)
    return paths, cache


@pytest.fixture(scope="module")
def both(dataset: tuple[list[str], Path]) -> tuple[RecordFacts, RecordFacts, ColumnsIndex, Any]:
    paths, cache = dataset
    ds = codec.TFRecordDataset(paths)
    index = stored_index(ds.files, cache_dir=cache)
    assert index is not None
    got = index_facts(index, ds)
    assert got is not None
    return record_facts(ds), got, index, ds


def test_the_facts_from_the_index_are_the_facts_read(both: Any) -> None:
    read, indexed, _index, _ds = both
    assert read.total == indexed.total == RECORDS - (RECORDS - read.total)
    assert read.total > 50_000
    # The dataset holds what the comparison is about.
    assert (read.status == 2).any() and (read.status == 1).any()
    assert NO_CLASS in read.classes and "cat (1)" in read.classes and "1" in read.classes
    assert "image/object/class/label = 2" in read.classes  # labels without boxes
    assert "label = 3" in read.classes
    assert not any(k.startswith("label_id") for k in read.classes)  # an identifier
    np.testing.assert_array_equal(indexed.status, read.status)
    np.testing.assert_array_equal(indexed.nbytes, read.nbytes)
    np.testing.assert_array_equal(indexed.boxes, read.boxes)
    assert indexed.status.dtype == read.status.dtype
    assert indexed.boxes.dtype == read.boxes.dtype
    assert list(indexed.classes) == list(read.classes)
    for k, records in read.classes.items():
        np.testing.assert_array_equal(indexed.classes[k], records, err_msg=k)
    assert indexed.class_keys == read.class_keys
    assert facet_counts(np.arange(read.total), indexed, {5: "passed"}) == facet_counts(
        np.arange(read.total), read, {5: "passed"}
    )


@pytest.mark.parametrize("name", ["score", "label", "weights", "name", "label_id", "absent"])
def test_sort_keys_from_the_index_are_the_keys_read(both: Any, name: str) -> None:
    _read, _indexed, index, ds = both
    got = index_feature_keys(index, name)
    assert got is not None
    want = feature_keys(ds, name)
    np.testing.assert_array_equal(got, want)  # NaN where NaN
    if name in ("score", "label", "weights"):
        assert np.isfinite(want).sum() > RECORDS // 2


@pytest.mark.parametrize(
    "sel",
    [
        Selection(sort="feature:score", descending=True),
        Selection(facets=(("class", "dog (2)"),), sort="feature:weights"),
        Selection(base="recovered", sort="boxes", descending=True),
        Selection(base="flagged", facets=(("status", "intact"),), sort="feature:label"),
        Selection(facets=(("class", "label = 4"), ("review", "unreviewed")), sort="bytes"),
    ],
)
def test_a_selection_resolves_the_same_from_either(both: Any, sel: Selection) -> None:
    read, indexed, index, ds = both
    marks = {r: ("flagged" if r % 3 else "passed") for r in range(0, RECORDS, 7)}
    name = sel.sort.removeprefix("feature:") if sel.sort.startswith("feature:") else None
    a = resolve(sel, read, marks=marks, sort_keys=feature_keys(ds, name) if name else None)
    b = resolve(
        sel, indexed, marks=marks, sort_keys=index_feature_keys(index, name) if name else None
    )
    assert len(a) > 10
    np.testing.assert_array_equal(a, b)


def test_what_the_index_leaves_out_is_read(tmp_path: Path) -> None:
    """A class label list too long for the index, a sort feature too long: not answered."""
    path = str(tmp_path / "long.tfrecord")
    write(
        path,
        [
            encode_example(
                {"labels": ("int64", list(range(MAX_LIST + 1))), "long": ("float", [0.5] * 99)}
            ),
            encode_example({"labels": ("int64", [1]), "long": ("float", [1.5])}),
        ],
    )
    with codec.TFRecordDataset([path]) as ds:
        index = columns_index(ds.files, executor="inline", cache_dir=tmp_path / "c")
        assert "labels" in index.left_out and "long" in index.left_out
        assert index_facts(index, ds) is None
        assert index_feature_keys(index, "long") is None
        assert stored_index(ds.files, cache_dir=tmp_path / "other") is None  # never built


def test_a_link_past_the_limit_applies_at_once_once_the_index_is_stored(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """A link's facet and feature sort on a dataset past the automatic limit wait for Apply
    while the index is not stored; once it is, they apply at once and the facets are
    counted, without reading a record for the facts or the sort keys (the reading
    functions fail if called), and the table shows what reading would select."""
    import sys

    from app_support import start_app

    from browser_app.ui.widgets import selection as selection_widget

    order_module = sys.modules["browser_app.ui.services.order"]  # not the function "order"
    path = tmp_path / "big.tfrecord"
    write(str(path), [_example(i) for i in range(400)])
    with codec.TFRecordDataset([str(path)]) as ds:
        read = record_facts(ds)
        keys = feature_keys(ds, "score")
    sel = Selection(facets=(("class", "cat (1)"),), sort="feature:score", descending=True)
    want = resolve(sel, read, marks={}, sort_keys=keys).tolist()
    assert 100 < len(want) < 400
    monkeypatch.setattr(selection_widget, "FACTS_AUTO_RECORDS", 10)  # 400 counts as large
    params = {"file": path.name, "facet": "class:cat (1)", "sort": "-feature:score"}
    params["size"] = "100"

    def table(at: Any) -> list[int]:
        return [int(x) for x in at.main.dataframe[0].value["#"].tolist()]

    at = start_app(monkeypatch, tmp_path, params=params, timeout=90)
    assert not at.exception, [e.value for e in at.exception]
    assert "The link selects" in " ".join(i.value for i in at.sidebar.info)
    assert table(at) == list(range(100))  # every record, until applied
    assert [b for b in at.sidebar.button if b.label == "Count facets"]

    with codec.TFRecordDataset([str(path)]) as ds:
        columns_index(ds.files, executor="inline")  # the cache the app reads (isolated)

    def unread(*_a: Any, **_k: Any) -> Any:
        raise AssertionError("read every record, though the index is stored")

    monkeypatch.setattr(order_module, "record_facts", unread)
    monkeypatch.setattr(order_module, "feature_keys", unread)
    at = start_app(monkeypatch, tmp_path, params=params, timeout=90)
    assert not at.exception, [e.value for e in at.exception]
    assert not [i for i in at.sidebar.info if "The link selects" in i.value]
    assert table(at) == want[:100]
    assert not [b for b in at.sidebar.button if b.label == "Count facets"]
    classes = next(p for p in at.sidebar.button_group if p.label == "Class")
    assert any(o.startswith("cat (1)") for o in classes.options)
    caption = " ".join(c.value for c in at.sidebar.caption)
    assert f"{len(want):,} of 400 records selected" in caption


def _crowded(i: int) -> bytes:
    """:func:`_example`, but every 250th record holds more boxes than the index keeps."""
    if i % 250 != 7:
        return _example(i)
    n = MAX_LIST + 1
    f: dict[str, Any] = {"label": ("int64", [i % 7])}
    for s in ("xmin", "ymin"):
        f[f"image/object/bbox/{s}"] = ("float", [0.1] * n)
    for s in ("xmax", "ymax"):
        f[f"image/object/bbox/{s}"] = ("float", [0.5] * n)
    f["image/object/class/label"] = ("int64", [k % 3 + 1 for k in range(n)])
    return encode_example(f)


def test_box_lists_too_long_for_the_index_read_the_records_without_boxes(
    tmp_path: Path,
) -> None:
    """The box and class label lists of the one box layout left out of the index (a record
    holds more boxes than it keeps): the class label features under it are read from the
    records without boxes only, and the facts are still those read from every record. With
    a second box layout the index cannot say, and None sends the app to the records."""
    path = str(tmp_path / "crowded.tfrecord")
    write(path, [_crowded(i) for i in range(3000)])
    with codec.TFRecordDataset([path]) as ds:
        index = columns_index(ds.files, executor="inline", cache_dir=tmp_path / "c")
        assert "image/object/class/label" in index.left_out
        assert "image/object/bbox/xmin" in index.left_out
        read = record_facts(ds)
        got = index_facts(index, ds)
        assert got is not None
        assert "image/object/class/label = 2" in read.classes  # labels without boxes
        assert int(read.boxes.max()) == MAX_LIST + 1
        assert list(got.classes) == list(read.classes)
        for k, records in read.classes.items():
            np.testing.assert_array_equal(got.classes[k], records, err_msg=k)
        assert got.class_keys == read.class_keys
        np.testing.assert_array_equal(got.boxes, read.boxes)
        unboxed = int(((read.boxes == 0) & (read.status != 2)).sum())
        assert index_facts(index, ds, read_at_most=unboxed) is not None
        assert index_facts(index, ds, read_at_most=unboxed - 1) is None  # no large read
    other = str(tmp_path / "two-layouts.tfrecord")
    extra = encode_example({f"image/detection/bbox/{s}": ("float", [0.5]) for s in BBOX_SIDES})
    write(other, [_crowded(i) for i in range(300)] + [extra])
    with codec.TFRecordDataset([other]) as ds:
        index = columns_index(ds.files, executor="inline", cache_dir=tmp_path / "c")
        assert index_facts(index, ds) is None
