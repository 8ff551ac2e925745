"""Datasets that describe themselves, in the app (AppTest, generated TFDS and TFX folders):
a TFDS dataset opens from any level (data dir, name, config, version) as one split, the others
offered on the Overview page and carried by the link (``?file=FOLDER:SPLIT``); the Overview
shows the dataset's name, version, description, citation and homepage, its splits with their
declared and counted records, and what its metadata and first records say against each other;
a folder holding several datasets opens the first and offers the others; a TFX ExampleGen
output opens the same way; the Statistics page compares two splits (L-infinity distance with
class names); TensorBoard logs and saved datasets open by content and say what they left out;
the picker lists dataset folders and their splits; the services other parts of the app read
(class names, boxes) answer for a split's source."""

from __future__ import annotations

from pathlib import Path

import pytest
from app_support import no_crash, page_script, start_app
from streamlit.testing.v1 import AppTest

from browser_app.generators import events as E
from browser_app.generators import tfds as G
from browser_app.ui.services import datasets
from browser_app.ui.source import Source
from codec import TFRecordDataset
from codec.tfds import open_split_folder

SHAPES = "data/shapes/3.0.1"
VOC = "data/voc/2007/5.0.0"


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    r = tmp_path_factory.mktemp("tfds_app")
    G.write_image_classification(r / "data")  # shapes: train 40 (2 shards), test 12
    G.write_detection(r / "data", photos=False)  # voc/2007: train, validation, test
    G.write_image_classification(r / "one", name="mnistish", records={"train": 8, "test": 4})
    for what in ("shard_lengths", "wrong_shape", "short_labels"):
        G.plant(G.write_image_classification(r / "planted" / what, name=what), what)
    G.write_tfx_splits(r / "taxi")
    E.write_tensorboard(r / "logs", steps=3)
    (r / "logs" / "README.md").write_text("how these logs were made\n")
    E.write_saved_dataset(r / "saved", 6, shards=2)
    return r


def texts(elements) -> str:  # type: ignore[no-untyped-def]
    return "\n".join(str(e.value) for e in elements)


def opened(
    monkeypatch: pytest.MonkeyPatch, root: Path, spec: str, page: str | None = None
) -> AppTest:
    at = start_app(
        monkeypatch,
        root,
        params={"file": spec},
        timeout=60,
        script=page_script(page) if page else None,
    )
    no_crash(at)
    return at


def header(at: AppTest) -> str:
    return texts(at.main.caption)


def flashes(at: AppTest) -> str:
    return texts([*at.info, *at.warning, *at.error])


# -- opening a dataset folder ---------------------------------------------------------------


@pytest.mark.parametrize(
    "spec",
    ["one", "one/mnistish", "one/mnistish/3.0.1"],
    ids=["data dir", "name", "version"],
)
def test_a_tfds_folder_opens_its_train_split_from_any_level(monkeypatch, root, spec):
    at = opened(monkeypatch, root, spec)
    assert "8 records" in header(at)  # train only: not train and test merged (12)
    assert "2 files" in header(at)
    said = flashes(at)
    assert "TFDS dataset with 2 splits" in said and "train" in said and "test" in said
    assert at.query_params["file"] == spec


def test_a_config_level_and_a_split_in_the_link(monkeypatch, root):
    at = opened(monkeypatch, root, "data/voc/2007:validation")
    assert at.query_params["file"] == "data/voc/2007:validation"
    voc = open_split_folder(str(root / VOC))
    assert voc is not None
    n = voc.split("validation").declared_total
    assert f"{n:,} record" in header(at)
    assert not at.error


def test_an_unknown_split_names_the_splits_there_are(monkeypatch, root):
    at = opened(monkeypatch, root, f"{SHAPES}:nope")
    said = texts(at.error)
    assert "no split 'nope'" in said and "train, test" in said
    assert "file" not in at.query_params  # nothing stays open


# -- the Overview ----------------------------------------------------------------------------


def test_the_overview_describes_the_dataset_and_its_splits(monkeypatch, root):
    at = opened(monkeypatch, root, SHAPES, "overview")
    md = texts(at.main.markdown)
    assert "**shapes** · version 3.0.1 · TFDS dataset" in md.replace("\\", "")
    assert "Pictures of 8 shapes" in md
    assert "supervised: image → label" in md
    codes = [c.value for c in at.main.code]
    assert any("@misc{shapes" in c for c in codes)  # the citation
    links = at.get("link_button")
    assert links and links[0].proto.url == "https://example.invalid/shapes"
    splits = at.main.dataframe[0].value
    assert list(splits["split"]) == ["train · open", "test"]
    assert list(splits["declared"]) == [40, 12]
    assert list(splits["counted"]) == [40, 12]
    assert list(splits["check"]) == ["✓ as declared"] * 2
    assert "The metadata and the files agree" in texts(at.main.success)
    radio = at.radio[0]
    assert radio.value == "train"
    declared = next(d.value for d in at.main.dataframe if "kind" in d.value.columns)
    kinds = dict(zip(declared["feature"], declared["kind"]))
    assert kinds == {"image": "image", "label": "class label"}
    assert "8, names from label.labels.txt" in set(declared["classes"])


def test_choosing_another_split_opens_it_and_the_link_follows(monkeypatch, root):
    at = opened(monkeypatch, root, SHAPES, "overview")
    at.radio[0].set_value("test").run()
    no_crash(at)
    assert at.query_params["file"] == f"{SHAPES}:test"
    assert "12 records" in header(at)
    assert at.radio[0].value == "test"


@pytest.mark.parametrize(
    ("what", "said"),
    [
        ("shard_lengths", "declares 23"),
        ("wrong_shape", "declared shape (32, 32, 3)"),
        ("short_labels", "has no name"),
    ],
)
def test_what_the_metadata_and_the_files_disagree_on_is_said(monkeypatch, root, what, said):
    at = opened(monkeypatch, root, f"planted/{what}", "overview")
    warned = texts(at.main.warning)
    assert said in warned, warned
    assert "still open as plain records" in warned
    assert "40 records" in header(at)  # the data opens all the same


def test_a_folder_of_several_datasets_opens_the_first_and_offers_the_others(monkeypatch, root):
    at = opened(monkeypatch, root, "data", "overview")
    assert "holds 2 TFDS datasets or configs" in flashes(at)
    buttons = {b.label: b for b in at.main.button}
    assert set(buttons) >= {"data/shapes", "data/voc/2007"}
    assert buttons["data/shapes"].disabled  # the one open
    buttons["data/voc/2007"].click().run()
    no_crash(at)
    assert at.query_params["file"] == "data/voc/2007"
    assert "**voc**" in texts(at.main.markdown)
    assert at.radio[0].options[0].startswith("train")


def test_a_tfx_output_opens_its_train_split(monkeypatch, root):
    at = opened(monkeypatch, root, "taxi", "overview")
    assert "TFX ExampleGen output with 2 splits" in flashes(at)
    assert "30 records" in header(at)
    splits = at.main.dataframe[0].value
    assert dict(zip(splits["split"], splits["counted"])) == {"eval": 10, "train · open": 30}
    assert set(splits["check"]) == {"not declared"}


def test_a_large_dataset_counts_its_other_splits_when_asked(monkeypatch, root):
    from browser_app.ui import services

    monkeypatch.setattr(services, "AUTO_VERIFY_BYTES", 0)
    at = opened(monkeypatch, root, SHAPES, "overview")
    splits = at.main.dataframe[0].value
    assert list(splits["counted"].isna()) == [False, True]  # the open split only
    assert list(splits["check"]) == ["✓ as declared", "not counted"]
    at.button(key=f"tfb:w:split:count:{SHAPES}").click().run()
    no_crash(at)
    splits = at.main.dataframe[0].value
    assert list(splits["counted"]) == [40, 12]


def test_a_split_folder_of_a_tfx_output_opens_alone(monkeypatch, root):
    at = opened(monkeypatch, root, "taxi/Split-eval")
    assert "10 records" in header(at)
    assert "TFX" not in flashes(at)  # a folder of shards, not the output with its splits


# -- Statistics: two splits side by side -------------------------------------------------------


def test_statistics_compare_two_splits_with_class_names(monkeypatch, root):
    at = opened(monkeypatch, root, SHAPES)
    at.switch_page("ui/pages/statistics.py").run()  # through the router, as a person goes
    no_crash(at)
    toggle = next(t for t in at.toggle if t.label.startswith("Compare train"))
    toggle.set_value(True).run()
    no_crash(at)
    other = next(s for s in at.selectbox if s.label == "Compare train with")
    assert other.value == "test"
    table = at.main.dataframe[0].value
    row = table[table["feature"] == "label"].iloc[0]
    assert 0 < row["L∞ distance"] <= 1
    assert row["in train"] == row["in test"] == 1.0
    # The value where the shares differ most, by its class name.
    assert any(name in row["largest difference"] for name in G.SHAPES)
    assert at.get("vega_lite_chart")


def test_statistics_compare_a_tfx_output_train_and_eval(monkeypatch, root):
    at = opened(monkeypatch, root, "taxi", "statistics")
    next(t for t in at.toggle if t.label.startswith("Compare train")).set_value(True).run()
    no_crash(at)
    table = at.main.dataframe[0].value.set_index("feature")
    assert table.loc["company", "L∞ distance"] > 0  # text values: categorical
    assert table.loc["trip_miles", "JS divergence"] >= 0  # numbers: a divergence
    assert "mean eval" in table.columns


# -- boxes ------------------------------------------------------------------------------------


def test_a_tfds_bbox_feature_is_drawn_in_the_record_view(monkeypatch, root):
    at = opened(monkeypatch, root, "data/voc/2007:train")
    rec = TFRecordDataset(open_split_folder(str(root / VOC)).split("train").files)  # type: ignore[union-attr]
    try:
        from codec import example as ex

        n = len(ex.decode(rec.read(0), "auto").features["objects/label"].values)
    finally:
        rec.close()
    words = texts(at.main.caption)
    assert f"**Layers** · {n} box" in words, words


# -- found by content ---------------------------------------------------------------------------


def test_tensorboard_logs_open_and_say_what_was_left_out(monkeypatch, root):
    at = opened(monkeypatch, root, "logs")
    assert "3 files" in header(at)
    said = flashes(at)
    assert "left out 1 file" in said and "README.md" in said and "not TFRecord framing" in said


def test_the_overview_lists_what_a_folder_left_out(monkeypatch, root):
    at = opened(monkeypatch, root, "logs", "overview")
    left = next(d.value for d in at.main.dataframe if "why" in d.value.columns)
    assert dict(zip(left["file"], left["why"]))["logs/README.md"].startswith("not TFRecord framing")
    assert any(e.label.startswith("Left out: 1 file") for e in at.main.expander)


def test_a_saved_dataset_and_a_recursive_glob_open(monkeypatch, root):
    at = opened(monkeypatch, root, "saved")
    assert "2 files" in header(at)
    assert "snapshot.metadata" in flashes(at)
    at = opened(monkeypatch, root, "logs/**")
    assert "3 files" in header(at)


def test_the_launcher_reads_a_dataset_folder_without_looking_at_its_metadata_files(root):
    from browser_app.paths import expand_inside

    notes: list[str] = []
    files = expand_inside(root, "data/voc", on_skip=notes.append)
    assert notes == []  # its JSON and labels files are metadata, not files left out
    found = open_split_folder(str(root / VOC))
    assert found is not None and [Path(f).name for f in files] == [
        Path(f).name for f in found.files
    ]
    assert [Path(f).name for f in expand_inside(root, "taxi:eval")] == [
        "data_tfrecord-00000-of-00001.gz"
    ]


def test_the_picker_lists_dataset_folders_and_their_splits(monkeypatch, root):
    at = start_app(monkeypatch, root, timeout=60)
    no_crash(at)
    pick = at.sidebar.selectbox(key="tfb:w:pick")
    options = pick.options
    assert any(o.startswith(f"{SHAPES}  ·  TFDS dataset: 2 splits (test, train)") for o in options)
    assert any(o.startswith(f"{SHAPES}:test  ·  TFDS split") for o in options)
    assert any(o.startswith("taxi  ·  TFX ExampleGen output") for o in options)
    assert any(o.startswith("logs  ·  TensorBoard logs: 3 event files") for o in options)
    assert any(o.startswith("saved  ·  tf.data.Dataset.save folder") for o in options)
    pick.set_value(f"{SHAPES}:test").run()
    no_crash(at)
    assert at.query_params["file"] == f"{SHAPES}:test"
    assert "12 records" in header(at)


# -- what other parts of the app read -----------------------------------------------------------


def _source(root: Path, folder: str, split: str) -> Source:
    found = open_split_folder(str(root / folder))
    assert found is not None
    files = tuple(found.split(split).files)
    return Source(
        f"{folder}:{split}",
        f"{folder}:{split}",
        str(root),
        files,
        TFRecordDataset(list(files)),
        split_folder=found,
        split=split,
        folder_spec=folder,
    )


def test_class_names_and_boxes_are_served_for_a_split(root):
    src = _source(root, VOC, "train")
    names = datasets.class_names(src)
    assert names["objects/label"].name(14) == "person"
    assert names["labels"].name(0) == "aeroplane"
    boxes = datasets.box_features(src)
    assert [(b.key, b.label) for b in boxes] == [("objects/bbox", "objects/label")]
    assert datasets.class_names_at(str(root / "data/voc")).keys() == names.keys()
    assert datasets.first_checks(src) == []
    plain = Source("x", "x", str(root), src.paths, src.dataset)
    assert datasets.class_names(plain) == {} and datasets.box_features(plain) == ()
    src.dataset.close()
