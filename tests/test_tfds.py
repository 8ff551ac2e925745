"""TFDS dataset folders and TFX ExampleGen splits (codec.tfds) on folders written as their tools
write them (browser_app.generators.tfds): found from any level, splits and features as the
metadata declares them, declared shard lengths checked against the files, and every lie of the
metadata a finding while the records still open; then the command line (info, dump)."""

from __future__ import annotations

import json
import shutil
import time
import tracemalloc
from pathlib import Path

import pytest
from cli_support import run_cli

from browser_app.generators.tfds import (
    PLANTS,
    SHAPES,
    VOC_LABELS,
    VOC_POSES,
    plant,
    write_detection,
    write_image_classification,
    write_tfx_splits,
)
from codec import TFRecordFile
from codec.example import decode
from codec.tfds import (
    BOUNDING_BOX,
    CLASS_LABEL,
    IMAGE,
    TENSOR,
    TEXT,
    TFDS,
    TFX,
    TfdsChoiceError,
    check_records,
    check_shard_lengths,
    open_split_folder,
    open_splits,
    open_tfds,
    parse_split_spec,
)


def _counts(split):
    out = []
    for p in split.files:
        with TFRecordFile(p) as f:
            out.append(len(f))
    return out


def _records(ds, split="train", limit=100):
    out = []
    for p in ds.split(split).files:
        with TFRecordFile(p) as f:
            for i in range(len(f)):
                out.append((len(out), decode(f.read(i))))
                if len(out) >= limit:
                    return out
    return out


@pytest.fixture
def shapes(tmp_path) -> Path:
    return write_image_classification(tmp_path / "data")


@pytest.fixture(scope="module")
def voc(tmp_path_factory) -> Path:
    return write_detection(tmp_path_factory.mktemp("voc"))


# -- finding the dataset ------------------------------------------------------------------------


def test_image_classification_opens_with_its_splits_and_names(shapes):
    ds = open_tfds(str(shapes))
    assert ds is not None
    assert (ds.name, ds.version, ds.config) == ("shapes", "3.0.1", None)
    assert ds.findings == () and ds.notes == ()
    assert ds.supervised_keys == ("image", "label")
    assert ds.description and ds.citation and ds.homepage == "https://example.invalid/shapes"
    assert [s.name for s in ds.splits] == ["train", "test"]
    train = ds.split("train")
    assert [Path(p).name for p in train.files] == [
        "shapes-train.tfrecord-00000-of-00002",
        "shapes-train.tfrecord-00001-of-00002",
    ]
    assert train.declared_records == [20, 20] and train.declared_total == 40
    assert train.num_bytes == sum(Path(p).stat().st_size for p in train.files)
    assert check_shard_lengths(train, _counts(train)) == []
    image, label = ds.features["image"], ds.features["label"]
    assert (image.kind, image.shape, image.dtype, image.encoding) == (
        IMAGE,
        (28, 28, 1),
        "uint8",
        "png",
    )
    assert (label.kind, label.num_classes, label.names_file) == (CLASS_LABEL, 8, "label.labels.txt")
    assert label.names is not None and label.names.as_list() == list(SHAPES)
    assert ds.class_names() == {"label": label.names}
    assert check_records(ds.features, _records(ds)) == []


@pytest.mark.parametrize("level", ["version", "name", "data_dir"])
def test_found_from_any_level(shapes, level):
    path = {"version": shapes, "name": shapes.parent, "data_dir": shapes.parent.parent}[level]
    ds = open_tfds(str(path))
    assert ds is not None and Path(ds.folder) == shapes


def test_the_newest_version_is_opened_and_said(shapes):
    older = shapes.parent / "2.0.0"
    shutil.copytree(shapes, older)
    (shapes.parent / "3.0.1.incompleteABC").mkdir()  # TFDS's unfinished build: never opened
    newer = shapes.parent / "10.0.0"
    shutil.copytree(shapes, newer)
    ds = open_tfds(str(shapes.parent))
    assert ds is not None and Path(ds.folder) == newer
    assert ds.versions == ("2.0.0", "3.0.1", "10.0.0")
    [note] = ds.notes
    assert "versions 2.0.0, 3.0.1, 10.0.0 found; opened 10.0.0, the newest" in note
    # dataset_info.json says 3.0.1, its folder 10.0.0: said.
    assert any("version 3.0.1, its folder is called 10.0.0" in f for f in ds.findings)


def test_a_data_dir_of_several_datasets_asks_which(shapes, tmp_path):
    write_detection(tmp_path / "data")
    with pytest.raises(TfdsChoiceError) as exc:
        open_tfds(str(tmp_path / "data"))
    assert "holds 2 TFDS datasets or configs (shapes, voc/2007): open one of them" in str(exc.value)
    assert len(exc.value.choices) == 2


def test_not_a_dataset(tmp_path):
    assert open_tfds(str(tmp_path)) is None
    assert open_tfds(str(tmp_path / "missing")) is None
    assert open_split_folder(str(tmp_path)) is None


# -- the detection layout -----------------------------------------------------------------------


def test_detection_dataset_features_and_labels_files(voc):
    ds = open_tfds(str(voc.parent.parent))  # <data_dir>/voc: through the config level
    assert ds is not None and (ds.name, ds.config, ds.version) == ("voc", "2007", "5.0.0")
    assert [s.name for s in ds.splits] == ["train", "validation", "test"]
    f = ds.features
    assert sorted(f) == [
        "image",
        "image/filename",
        "labels",
        "labels_no_difficult",
        "objects/bbox",
        "objects/is_difficult",
        "objects/is_truncated",
        "objects/label",
        "objects/pose",
    ]
    assert (f["objects/bbox"].kind, f["objects/bbox"].shape) == (BOUNDING_BOX, (None, 4))
    assert (f["objects/is_difficult"].kind, f["objects/is_difficult"].dtype) == (TENSOR, "bool")
    assert f["image/filename"].kind == TEXT
    assert f["image"].encoding is None and f["image"].shape == (None, None, 3)
    # Each ClassLabel's names from its own file, named as TFDS names it.
    assert f["objects/label"].names_file == "objects-label.labels.txt"
    assert f["objects/label"].names.as_list() == list(VOC_LABELS)
    assert f["objects/pose"].names.as_list() == list(VOC_POSES)
    assert f["labels"].names_file == "labels.labels.txt"
    assert f["labels"].sequence_lengths == (None,)
    assert not any(spec.ragged for spec in f.values())
    records = _records(ds)
    assert check_records(ds.features, records) == []
    rec = records[0][1]
    boxes = rec.features["objects/bbox"].values
    assert len(boxes) == 4 * len(rec.features["objects/label"].values) > 0
    ymin, xmin, ymax, xmax = boxes[:4]
    assert 0 <= ymin < ymax <= 1 and 0 <= xmin < xmax <= 1


# -- declared shard lengths ---------------------------------------------------------------------


def test_declared_shard_lengths_that_differ_are_findings(shapes):
    plant(shapes, "shard_lengths")
    ds = open_tfds(str(shapes))
    train = ds.split("train")
    assert train.declared_records == [23, 20]
    findings = check_shard_lengths(train, _counts(train))
    assert findings == [
        "split 'train': shapes-train.tfrecord-00000-of-00002 holds 20 records;"
        " dataset_info.json declares 23",
        "split 'train': 40 records in its files; dataset_info.json declares 43",
    ]


def test_a_missing_shard_is_a_finding_and_the_rest_opens(shapes):
    plant(shapes, "missing_shard")
    ds = open_tfds(str(shapes))
    train = ds.split("train")
    assert len(train.files) == 1 and [Path(p).name for p in train.missing] == [
        "shapes-train.tfrecord-00001-of-00002"
    ]
    assert any("1 of 2 declared shards missing" in f for f in ds.findings)
    assert check_shard_lengths(train, _counts(train)) == [
        "split 'train': 1 shard missing (20 declared records), first"
        " shapes-train.tfrecord-00001-of-00002",
        "split 'train': 20 records in its files; dataset_info.json declares 40",
    ]


def test_older_dataset_info_with_num_shards_and_statistics(shapes):
    info_path = shapes / "dataset_info.json"
    info = json.loads(info_path.read_text())
    for s in info["splits"]:
        n = len(s.pop("shardLengths"))
        s.pop("filepathTemplate")
        s["numShards"] = str(n)
        s["statistics"] = {"numExamples": "40" if s["name"] == "train" else "11"}
    info_path.write_text(json.dumps(info))
    ds = open_tfds(str(shapes))
    train, test = ds.split("train"), ds.split("test")
    assert len(train.files) == 2 and train.declared_records == [None, None]
    assert check_shard_lengths(train, _counts(train)) == []
    assert check_shard_lengths(test, _counts(test)) == [
        "split 'test': 12 records in its files; dataset_info.json declares 11"
    ]


# -- metadata that lies -------------------------------------------------------------------------


def test_a_wrong_shape_is_found_in_the_records(shapes):
    plant(shapes, "wrong_shape")
    ds = open_tfds(str(shapes))
    assert ds.features["image"].shape == (32, 32, 3)
    [finding] = check_records(ds.features, _records(ds))
    assert finding == (
        "image: a picture of 28×28 pixels; its declared shape (32, 32, 3) is 32×32"
        " (every record read, 40)"
    )


def test_a_labels_file_shorter_than_the_labels_used(shapes):
    plant(shapes, "short_labels")
    ds = open_tfds(str(shapes))
    label = ds.features["label"]
    assert len(label.names) == 4 and label.names.name(6) is None  # never made up
    assert "label.labels.txt has 4 names; features.json declares 8 classes for label" in ds.findings
    findings = check_records(ds.features, _records(ds))
    assert any(
        f.startswith("label: label 7 has no name: label.labels.txt has 4 names") for f in findings
    )


def test_records_against_a_features_json_of_other_types(shapes):
    doc = json.loads((shapes / "features.json").read_text())
    feats = doc["featuresDict"]["features"]
    feats["label"]["classLabel"]["numClasses"] = "3"
    feats["extra"] = {
        "pythonClassName": f"{F}.tensor_feature.Tensor",
        "tensor": {"dtype": "float32", "encoding": "none", "shape": {"dimensions": ["2"]}},
    }
    feats["image"] = {
        "pythonClassName": f"{F}.tensor_feature.Tensor",
        "tensor": {"dtype": "int64", "encoding": "none", "shape": {"dimensions": ["3"]}},
    }
    (shapes / "features.json").write_text(json.dumps(doc))
    ds = open_tfds(str(shapes))
    findings = check_records(ds.features, _records(ds, limit=10))
    assert (
        "image: stored as bytes values; a int64 tensor is stored as int64 (every record read, 10)"
        in findings
    )
    assert any(
        f.startswith("label: label ") and "outside its 3 classes (numClasses)" in f
        for f in findings
    )
    assert "extra: declared in features.json; none of the 10 records read has it" in findings


@pytest.mark.parametrize("what", ["bad_info", "huge_info"])
def test_an_unusable_dataset_info_still_opens_from_the_file_names(shapes, what):
    plant(shapes, what)
    tracemalloc.start()
    start = time.monotonic()
    try:
        ds = open_tfds(str(shapes))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert time.monotonic() - start < 2.0 and peak < 8 << 20  # never read whole
    assert ds is not None and ds.name == "shapes"
    [finding] = ds.findings
    if what == "bad_info":
        assert finding.startswith("dataset_info.json: not JSON (")
    else:
        assert finding == (
            "dataset_info.json: 104,857,600 bytes is too large for a dataset_info.json"
            " (at most 33,554,432); not read"
        )
    assert {s.name: len(s.files) for s in ds.splits} == {"train": 2, "test": 1}
    assert all(s.declared_total is None for s in ds.splits)
    assert ds.features["label"].names is not None  # features.json still used


def test_an_unusable_features_json_leaves_plain_records(shapes):
    plant(shapes, "bad_features")
    ds = open_tfds(str(shapes))
    assert ds.features == {} and ds.class_names() == {}
    [finding] = ds.findings
    assert finding.startswith("features.json: not JSON (")
    assert len(ds.split("train").files) == 2


def test_a_huge_labels_file_is_refused_quickly(shapes):
    plant(shapes, "huge_labels")
    start = time.monotonic()
    ds = open_tfds(str(shapes))
    assert time.monotonic() - start < 2.0
    assert ds.features["label"].names is None
    assert any(
        f.startswith("label.labels.txt: cannot be used (names file: 104,857,600 bytes")
        for f in ds.findings
    )


def test_a_template_naming_files_outside_the_folder_is_left_out(shapes):
    plant(shapes, "outside_template")
    ds = open_tfds(str(shapes))
    assert [s.name for s in ds.splits] == ["test"]
    assert any("names a file outside the dataset folder" in f for f in ds.findings)


@pytest.mark.parametrize(
    "info, words",
    [
        ([], "dataset_info.json: not a JSON object; not used"),
        ({"name": "shapes", "splits": "train"}, "splits is not a list"),
        ({"name": "shapes", "splits": [{"name": "../x"}]}, "is not a split name; left out"),
        (
            {"name": "shapes", "splits": [{"name": "train", "shardLengths": ["x"]}]},
            "shardLengths holds something not a count",
        ),
        (
            {"name": "shapes", "splits": [{"name": "train", "shardLengths": ["1"] * 100_001}]},
            "100,001 shards is more than 100,000; left out",
        ),
        (
            {
                "name": "shapes",
                "splits": [{"name": "t", "numShards": "1", "filepathTemplate": "{NOPE}"}],
            },
            "cannot be filled",
        ),
    ],
)
def test_dataset_info_fields_of_the_wrong_kind_are_findings(shapes, info, words):
    (shapes / "dataset_info.json").write_text(json.dumps(info))
    ds = open_tfds(str(shapes))
    assert ds is not None
    assert any(words in f for f in ds.findings), ds.findings


def test_deeply_nested_features_json_is_a_finding(shapes):
    (shapes / "features.json").write_text("[" * 100_000 + "]" * 100_000)
    ds = open_tfds(str(shapes))
    assert ds.features == {}
    assert any(f.startswith("features.json: ") for f in ds.findings)


# -- other feature trees ------------------------------------------------------------------------


F = "tensorflow_datasets.core.features"


def test_nested_sequences_are_ragged_and_translations_per_language(shapes):
    doc = {
        "pythonClassName": "tensorflow_datasets.core.features.features_dict.FeaturesDict",
        "featuresDict": {
            "features": {
                "tokens": {
                    "pythonClassName": f"{F}.sequence_feature.Sequence",
                    "sequence": {
                        "length": "-1",
                        "feature": {
                            "pythonClassName": f"{F}.sequence_feature.Sequence",
                            "sequence": {
                                "length": "3",
                                "feature": {
                                    "pythonClassName": f"{F}.tensor_feature.Tensor",
                                    "tensor": {"dtype": "int64", "encoding": "none", "shape": {}},
                                },
                            },
                        },
                    },
                },
                "clip": {
                    "pythonClassName": "tensorflow_datasets.core.features.video_feature.Video",
                    "video": {
                        "dtype": "uint8",
                        "encodingFormat": "png",
                        "shape": {"dimensions": ["-1", "64", "64", "3"]},
                    },
                },
                "speech": {
                    "pythonClassName": "tensorflow_datasets.core.features.audio_feature.Audio",
                    "audio": {
                        "dtype": "int64",
                        "encoding": "NONE",
                        "sampleRate": "16000",
                        "shape": {"dimensions": ["-1"]},
                    },
                },
                "translation": {
                    "pythonClassName": f"{F}.translation_feature.Translation",
                    "translation": {"languages": ["de", "en"]},
                },
            }
        },
    }
    (shapes / "features.json").write_text(json.dumps(doc))
    f = open_tfds(str(shapes)).features
    tokens = f["tokens"]
    assert tokens.ragged and tokens.sequence_lengths == (None, 3) and tokens.shape == (None, 3)
    assert tokens.record_keys == ("tokens/ragged_flat_values", "tokens/ragged_row_lengths_0")
    clip = f["clip"]
    assert (clip.kind, clip.shape, clip.item_shape, clip.encoding) == (
        "video",
        (None, 64, 64, 3),
        (64, 64, 3),
        "png",
    )
    assert clip.record_keys == ("clip",)
    speech = f["speech"]
    assert (speech.kind, speech.sample_rate, speech.encoding) == ("audio", 16000, "none")
    assert sorted(k for k in f if k.startswith("translation/")) == [
        "translation/de",
        "translation/en",
    ]


def test_legacy_features_json(shapes):
    doc = {
        "type": "tensorflow_datasets.core.features.features_dict.FeaturesDict",
        "content": {
            "image": {
                "type": "tensorflow_datasets.core.features.image_feature.Image",
                "content": {"shape": [28, 28, 1], "dtype": "uint8", "encoding_format": "png"},
            },
            "label": {
                "type": "tensorflow_datasets.core.features.class_label_feature.ClassLabel",
                "content": {"num_classes": 8},
            },
        },
    }
    (shapes / "features.json").write_text(json.dumps(doc))
    f = open_tfds(str(shapes)).features
    assert f["image"].shape == (28, 28, 1) and f["image"].encoding == "png"
    assert f["label"].num_classes == 8 and f["label"].names.as_list() == list(SHAPES)


# -- TFX ----------------------------------------------------------------------------------------


def test_tfx_splits(tmp_path):
    root = write_tfx_splits(tmp_path / "CsvExampleGen" / "examples" / "7")
    splits = open_splits(str(root))
    assert [s.name for s in splits] == ["eval", "train"]
    train = next(s for s in splits if s.name == "train")
    assert [Path(p).name for p in train.files] == [
        "data_tfrecord-00000-of-00002.gz",
        "data_tfrecord-00001-of-00002.gz",
    ]
    assert sum(_counts(train)) == 30 and check_shard_lengths(train, _counts(train)) == []
    folder = open_split_folder(str(root))
    assert folder.kind == TFX and folder.tfds is None and len(folder.files) == 3
    assert open_splits(str(tmp_path)) is None


def test_split_specs(shapes):
    assert parse_split_spec(f"{shapes}:train") == (str(shapes), "train")
    assert parse_split_spec(str(shapes)) == (str(shapes), None)
    # A URL by its form alone, asking no store (tests/test_tfds_remote.py opens them).
    assert parse_split_spec("gs://b/x:train") == ("gs://b/x", "train")
    assert parse_split_spec("s3://b/mnist/3.0.1/:test") == ("s3://b/mnist/3.0.1", "test")
    for url in (
        "https://host:8080",
        "https://host:8080/x",
        "s3://b/x-*:train",
        "s3://b/x@4:train",
        "s3://:train",
        "gs://b/x?sig=1:train",
        "s3://b/x.tfrecord",
    ):
        assert parse_split_spec(url) == (url, None), url
    assert parse_split_spec(f"{shapes}/nothing:train") == (f"{shapes}/nothing:train", None)
    folder = open_split_folder(str(shapes.parent))
    assert folder.kind == TFDS and folder.name == "shapes 3.0.1"
    with pytest.raises(KeyError, match=r"has no split 'dev' \(its splits: train, test\)"):
        folder.split("dev")


def test_every_plant_is_described():
    assert set(PLANTS) >= {"shard_lengths", "missing_shard", "short_labels", "wrong_shape"}


# -- the command line ---------------------------------------------------------------------------


def test_cli_info_json_lists_the_splits_with_their_records(shapes, tmp_path):
    r = run_cli("info", "--json", str(shapes.parent), cache=tmp_path / "cache")
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert len(doc["files"]) == 3
    [ds] = doc["datasets"]
    assert (ds["kind"], ds["dataset"], ds["version"], ds["findings"]) == (
        "tfds",
        "shapes",
        "3.0.1",
        [],
    )
    assert [
        (s["name"], s["records"], s["declared_records"], s["shards"]) for s in ds["splits"]
    ] == [
        ("train", 40, 40, 2),
        ("test", 12, 12, 1),
    ]
    assert ds["features"]["label"]["names"] == 8
    assert ds["features"]["label"]["names_file"] == "label.labels.txt"


def test_cli_info_says_what_does_not_check_out(shapes, tmp_path):
    plant(shapes, "shard_lengths")
    r = run_cli("info", f"{shapes}:train", cache=tmp_path / "cache")
    assert r.returncode == 1
    assert "shapes 3.0.1: TFDS dataset in" in r.stdout
    assert "train: 40 records in 2 shards (43 declared)" in r.stdout
    assert (
        "shapes-train.tfrecord-00000-of-00002 holds 20 records; dataset_info.json declares 23"
        in r.stdout
    )
    assert "test:" not in r.stdout  # one split asked for
    r = run_cli("info", "--json", str(shapes), "--split", "test", cache=tmp_path / "cache")
    assert r.returncode == 0
    assert [s["name"] for s in json.loads(r.stdout)["datasets"][0]["splits"]] == ["test"]


def test_cli_dump_one_split(shapes, tmp_path):
    a = run_cli("dump", f"{shapes.parent}:test", "--json", cache=tmp_path / "cache")
    b = run_cli("dump", str(shapes), "--split", "test", "--json", cache=tmp_path / "cache")
    assert a.returncode == b.returncode == 0, a.stderr
    assert a.stdout == b.stdout and len(a.stdout.splitlines()) == 12
    assert all("shapes-test.tfrecord" in json.loads(line)["path"] for line in a.stdout.splitlines())


def test_cli_dump_of_several_splits_asks_for_one(shapes, tmp_path):
    r = run_cli("dump", str(shapes), cache=tmp_path / "cache")
    assert r.returncode == 2
    assert (
        "holds the splits train, test of shapes 3.0.1: dump one of them"
        f" ({shapes}:train or --split train)" in r.stderr
    )


@pytest.mark.parametrize(
    "args, words",
    [
        (["info", "{data}:dev"], "has no split 'dev' (its splits: train, test)"),
        (
            ["info", "{dir}", "--split", "train"],
            "holds 2 TFDS datasets or configs (shapes, voc/2007)",
        ),
        (
            ["info", "{data}/shapes-train.tfrecord-00000-of-00002", "--split", "train"],
            "is not a dataset folder",
        ),
    ],
)
def test_cli_split_errors_in_words(shapes, tmp_path, args, words):
    write_detection(shapes.parent.parent, photos=False)
    argv = [a.format(data=shapes, dir=shapes.parent.parent) for a in args]
    r = run_cli(*argv, cache=tmp_path / "cache")
    assert r.returncode == 2, r.stdout
    assert words in r.stderr


def test_cli_tfx_splits(tmp_path):
    root = write_tfx_splits(tmp_path / "examples")
    r = run_cli("info", "--json", str(root), cache=tmp_path / "cache")
    assert r.returncode == 0, r.stderr
    [ds] = json.loads(r.stdout)["datasets"]
    assert ds["kind"] == "tfx"
    assert {s["name"]: s["records"] for s in ds["splits"]} == {"eval": 10, "train": 30}
    r = run_cli("dump", f"{root}:eval", "--json", cache=tmp_path / "cache")
    assert r.returncode == 0 and len(r.stdout.splitlines()) == 10
