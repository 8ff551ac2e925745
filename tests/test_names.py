"""Class names from any names file (codec.names): each kind as its writers keep it, found by
name and content, a CSV's columns by its header, TFDS's file naming both ways, names beside
the data by convention, FEATURE=FILE specs, and the caps (a 100 MB file is refused without
being read)."""

from __future__ import annotations

import os
import time
import tracemalloc

import pytest

from browser_app.generators.tfds import SHAPES, write_names_files
from codec.errors import DecodeError
from codec.labelmap import MAX_LABEL_MAP_ITEMS
from codec.names import (
    CLASS_LABELS_CSV,
    CSV,
    LABEL_MAP,
    MAX_NAMES,
    MAX_NAMES_BYTES,
    PLAIN,
    TFDS_LABELS,
    VOCABULARY_CSV,
    detect_kind,
    feature_of_labels_file,
    labels_file_name,
    names_beside,
    parse_names,
    parse_names_spec,
    read_names,
    read_names_specs,
)


@pytest.fixture
def files(tmp_path):
    return write_names_files(tmp_path / "names")


def test_every_kind_read_with_its_own_indexes(files):
    tfds = read_names(str(files[TFDS_LABELS]))
    assert (tfds.kind, tfds.names) == (TFDS_LABELS, dict(enumerate(SHAPES)))
    vocab = read_names(str(files[VOCABULARY_CSV]))
    assert vocab.kind == VOCABULARY_CSV
    # The Name column, found by the header (the 4th column), a quoted description with a comma
    # and a line break in between not in the way.
    assert vocab.names == {0: "Game", 1: "Video game", 2: "Vehicle", 3: "Concert"}
    audioset = read_names(str(files[CLASS_LABELS_CSV]))
    assert audioset.kind == CLASS_LABELS_CSV
    assert audioset.names[1] == "Male speech, man speaking" and len(audioset) == 5
    plain = read_names(str(files[PLAIN]))
    assert plain.kind == PLAIN
    # index = line: the blank third line names nothing, and nothing is made up for it.
    assert plain.names == {0: "background", 1: "person", 3: "bicycle", 4: "car"}
    assert plain.name(2) is None and plain.name(99) is None
    label_map = read_names(str(files[LABEL_MAP]))
    assert (label_map.kind, label_map.names) == (LABEL_MAP, {1: "person", 2: "bicycle"})
    generic = read_names(str(files[CSV]))
    assert (generic.kind, generic.names) == (CSV, {0: "cat", 1: "dog"})


def test_tfds_labels_are_read_back_as_tfds_reads_them():
    # ClassLabel._load_names_from_file: split on \n, strip, blank lines dropped (so the index
    # is the place among the names, not the line).
    names = parse_names(b"cat\r\n\n  dog \n\nbird", source="label.labels.txt")
    assert names.names == {0: "cat", 1: "dog", 2: "bird"}
    assert names.index("dog") == 1 and names.index("cow") is None


def test_kind_by_name_and_content():
    assert detect_kind("objects-label.labels.txt", "item {") == TFDS_LABELS
    assert detect_kind("label_map.txt", "# classes\nitem {\n id: 1") == LABEL_MAP
    assert detect_kind("label_map.txt", "cat\ndog\n") == PLAIN
    assert detect_kind("anything.pbtxt", "") == LABEL_MAP
    assert detect_kind("vocabulary.csv", "Index,TrainVideoCount,Name\n") == VOCABULARY_CSV
    assert detect_kind("x.csv", "index,mid,display_name\n") == CLASS_LABELS_CSV
    assert detect_kind("x.csv", "id,class\n") == CSV
    assert detect_kind("coco.names", "person\nbicycle\n") == PLAIN


def test_csv_columns_found_by_header_in_any_order():
    names = parse_names("display_name,mid,index\nSpeech,/m/09x0r,7\n", source="a.csv")
    assert names.names == {7: "Speech"}
    names = parse_names("\ufeffclass_name\tid\ncat\t3\n", source="a.tsv")
    assert names.names == {3: "cat"}


@pytest.mark.parametrize(
    "text, words",
    [
        ("a,b\n1,x\n", "needs an index column"),
        ("index,name\none,x\n", "line 2: index 'one' is not a whole number"),
        ("index,name\n1,x\n1,y\n", "index 1 appears twice (lines 2 and 3)"),
        ("index,name\n1\n", "line 2 has 1 column"),
        ("index,name\n", "no class names"),
    ],
)
def test_csv_problems_in_words(text, words):
    with pytest.raises(DecodeError, match=r"a\.csv") as exc:
        parse_names(text, source="a.csv")
    assert words in str(exc.value)


def test_not_utf8_and_empty_refused():
    with pytest.raises(DecodeError, match="not UTF-8 text"):
        parse_names(b"cat\n\xff\xfe\n", source="x.txt")
    with pytest.raises(DecodeError, match="no class names"):
        parse_names(b"\n\n", source="x.labels.txt")


def test_label_maps_keep_their_parser_and_caps():
    with pytest.raises(DecodeError, match=r"label_map\.pbtxt: label map: the item at 0 has no id"):
        parse_names("item { name: 'x' }", source="label_map.pbtxt")
    many = "".join(f"item {{ id: {i} }}\n" for i in range(MAX_LABEL_MAP_ITEMS + 1))
    with pytest.raises(DecodeError, match="more than 100,000 classes"):
        parse_names(many, source="label_map.pbtxt")


def test_too_many_names_refused():
    text = "\n".join(f"c{i}" for i in range(MAX_NAMES + 1))
    for source in ("x.labels.txt", "x.txt"):
        with pytest.raises(DecodeError, match="more than 100,000 names"):
            parse_names(text, source=source)


def test_a_100_mb_names_file_is_refused_without_being_read(tmp_path):
    path = tmp_path / "label.labels.txt"
    with open(path, "wb") as f:
        f.truncate(100 << 20)  # sparse: 100 MB that cost nothing to make
    tracemalloc.start()
    start = time.monotonic()
    try:
        with pytest.raises(DecodeError) as exc:
            read_names(str(path))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert time.monotonic() - start < 1.0
    assert peak < 1 << 20  # nothing of it was read
    assert str(exc.value) == (
        f"names file: 104,857,600 bytes is too large for a names file (at most {MAX_NAMES_BYTES:,})"
    )


def test_a_pipe_is_refused_without_waiting(tmp_path):
    fifo = tmp_path / "names.txt"
    os.mkfifo(fifo)
    with pytest.raises(OSError, match="not a regular file"):
        read_names(str(fifo))
    with pytest.raises(IsADirectoryError):
        read_names(str(tmp_path))


def test_class_names_as_a_list():
    names = parse_names("a\nb\n\nd\n", source="x.txt")
    assert names.as_list() == ["a", "b", None, "d"]
    assert names.largest == 3
    assert parse_names("item { id: 1000000 name: 'x' }", source="m.pbtxt").as_list() == []
    assert (
        "4 class names from x.txt (names list)"
        in parse_names("a\nb\nc\nd", source="x.txt").describe()
    )


@pytest.mark.parametrize(
    "keys, file_name",
    [
        (("label",), "label.labels.txt"),
        (("objects", "label"), "objects-label.labels.txt"),
        (("image/class",), "image.class.labels.txt"),
        (("objects", "image/class"), "objects-image.class.labels.txt"),
        (("a", "b", "c"), "a-b-c.labels.txt"),
    ],
)
def test_labels_file_names_as_tfds_writes_them(keys, file_name):
    # feature_lib.convert_feature_name_to_filename, level by level (FeaturesDict.save_metadata)
    assert labels_file_name(keys) == file_name
    record_key = "/".join(keys)
    assert feature_of_labels_file(file_name) == record_key
    assert feature_of_labels_file(file_name, ["other", record_key]) == record_key


def test_labels_file_back_to_a_key_with_dashes_needs_the_keys():
    assert feature_of_labels_file("label-coarse.labels.txt", ["label-coarse"]) == "label-coarse"
    assert feature_of_labels_file("label-coarse.labels.txt", ["label"]) is None
    assert feature_of_labels_file("classes.txt") is None


def test_names_beside_the_data_by_convention(tmp_path, files):
    folder = files[TFDS_LABELS].parent
    data = folder / "train.tfrecord"
    data.write_bytes(b"")
    (folder / "objects-label.labels.txt").write_text("car\nbus\n")
    found = names_beside(str(folder))
    assert found["label"].kind == TFDS_LABELS
    assert found["objects/label"].names == {0: "car", 1: "bus"}
    assert found["image/object/class/label"].kind == LABEL_MAP
    assert found["labels"].kind in (VOCABULARY_CSV, CLASS_LABELS_CSV)
    # With the records' keys: only what names one of them; a label map names every
    # Object Detection class label key.
    found = names_beside(
        [str(data)], keys=["objects/label", "image/object/class/label", "gt/class/label"]
    )
    assert sorted(found) == ["gt/class/label", "image/object/class/label", "objects/label"]


def test_names_beside_leaves_out_what_cannot_be_read(tmp_path):
    (tmp_path / "label.labels.txt").write_bytes(b"\xff\xfe")
    problems: list[str] = []
    assert names_beside(str(tmp_path), problems=problems) == {}
    [problem] = problems
    assert problem.startswith(str(tmp_path / "label.labels.txt")) and "not UTF-8" in problem


def test_names_specs(files):
    assert parse_names_spec("label=classes.txt") == ("label", "classes.txt")
    assert parse_names_spec("objects-label.labels.txt") == (
        "objects/label",
        "objects-label.labels.txt",
    )
    with pytest.raises(ValueError, match="give FEATURE=FILE"):
        parse_names_spec("classes.txt")
    with pytest.raises(ValueError, match="both named"):
        parse_names_spec("=classes.txt")
    got = read_names_specs(
        [f"labels={files[CLASS_LABELS_CSV]}", f"image/object/class/label={files[LABEL_MAP]}"]
    )
    assert got["labels"].names[0] == "Speech"
    assert got["image/object/class/label"].names == {1: "person", 2: "bicycle"}
