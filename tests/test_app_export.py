"""The Export page through AppTest: CSV cells that a spreadsheet would run as formulas, and
every output an export writes checked before anything is written."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest
from test_app_edit import harness, no_crash, root, texts  # noqa: F401  (root: a fixture)

import codec
from codec import example as ex

FORMULAS = ['=HYPERLINK("http://x")', "-3", "plain", "@SUM(A1)"]


def _column(path: Path, name: str) -> list[str]:
    with open(path, newline="", encoding="utf-8") as f:
        return [row[name] for row in csv.DictReader(f)]


@pytest.fixture
def formulas(root: Path) -> Path:  # noqa: F811
    codec.write_records(
        root / "formulas.tfrecord",
        [ex.encode_example({"cell": ("bytes", [t.encode()])}) for t in FORMULAS],
    )
    return root


def test_csv_formula_cells_are_named_or_neutralised(monkeypatch, formulas):
    at = harness(monkeypatch, formulas, "formulas.tfrecord", 0, page="export")
    no_crash(at)
    assert not [c for c in at.checkbox if c.key == "tfb:w:export:neutralize"]  # TFRecord
    at.selectbox(key="tfb:w:export:format").set_value("csv").run()
    assert at.text_input(key="tfb:w:export:dest").value == "exports/formulas-edited.csv"
    assert not at.checkbox(key="tfb:w:export:neutralize").value
    at.button(key="tfb:w:export:go").click().run()
    no_crash(at)
    warned = texts(at.warning)
    assert "2 text cells start with" in warned and "records 0, 3" in warned
    assert "Neutralise formulas" in warned
    out = formulas / "exports" / "formulas-edited.csv"
    assert _column(out, "cell") == FORMULAS  # exact by default

    at.checkbox(key="tfb:w:export:neutralize").check().run()
    at.text_input(key="tfb:w:export:dest").input("exports/safe.csv").run()
    at.button(key="tfb:w:export:go").click().run()
    no_crash(at)
    assert "written with a leading '" in texts(at.success)
    assert "would run as" not in texts(at.warning)
    assert _column(formulas / "exports" / "safe.csv", "cell") == [
        "'" + t if t[0] in "=@" else t for t in FORMULAS
    ]


# -- every output checked before writing -----------------------------------------------------


def _shards(base: Path, n: int) -> list[Path]:
    return [base / "exports" / f"detection-edited-{k:05d}-of-{n:05d}.tfrecord" for k in range(n)]


def test_every_shard_is_checked_and_confirmed_before_writing(monkeypatch, root):  # noqa: F811
    at = harness(monkeypatch, root, "detection.tfrecord", 0, page="export")
    at.number_input(key="tfb:w:export:shards").set_value(3).run()
    three = _shards(root, 3)
    three[1].parent.mkdir()
    three[1].write_bytes(b"someone else's shard")
    at.run()
    no_crash(at)
    # Only the middle shard exists; the destination's own name does not.
    assert not (root / "exports" / "detection-edited.tfrecord").exists()
    assert "exports/detection-edited-00001-of-00003.tfrecord exists" in texts(at.caption)
    assert at.checkbox(key="tfb:w:export:overwrite").label == "It exists: replace it"
    at.button(key="tfb:w:export:go").click().run()
    assert "exists" in texts(at.error)
    assert three[1].read_bytes() == b"someone else's shard"
    assert not three[0].exists() and not three[2].exists()  # nothing written

    # Another file appears: the tick given for one file does not cover two.
    at.checkbox(key="tfb:w:export:overwrite").check().run()
    three[2].write_bytes(b"another")
    at.run()
    assert not at.checkbox(key="tfb:w:export:overwrite").value
    assert "2 of the files this export writes exist" in texts(at.caption)
    assert at.checkbox(key="tfb:w:export:overwrite").label == "They exist: replace them"
    at.button(key="tfb:w:export:go").click().run()
    assert "exist." in texts(at.error) and three[2].read_bytes() == b"another"

    at.checkbox(key="tfb:w:export:overwrite").check().run()
    at.button(key="tfb:w:export:go").click().run()
    no_crash(at)
    assert "Export done" in texts(at.success)
    got = [p for path in three for p in codec.TFRecordFile(str(path))]
    assert got == list(codec.TFRecordFile(str(root / "detection.tfrecord")))

    # Written: exporting again asks again, for all three.
    at.button(key="tfb:w:export:go").click().run()
    assert "3 of the files this export writes exist" in texts(at.caption)
    assert "exist." in texts(at.error)
    # Two shards are other names: nothing of them exists, nothing to confirm.
    at.number_input(key="tfb:w:export:shards").set_value(2).run()
    assert not [c for c in at.checkbox if c.key == "tfb:w:export:overwrite"]
    at.button(key="tfb:w:export:go").click().run()
    no_crash(at)
    assert all(p.exists() for p in _shards(root, 2))


def test_a_folder_of_pictures_is_confirmed_before_writing_into_it(monkeypatch, root):  # noqa: F811
    at = harness(monkeypatch, root, "detection.tfrecord", 0, page="export")
    at.selectbox(key="tfb:w:export:format").set_value("images").run()
    folder = root / "pictures"
    folder.mkdir()
    at.text_input(key="tfb:w:export:dest").input("pictures").run()
    assert "The folder exists" in texts(at.caption)
    at.button(key="tfb:w:export:go").click().run()
    assert "exists" in texts(at.error) and list(folder.iterdir()) == []
    at.checkbox(key="tfb:w:export:overwrite").check().run()
    at.button(key="tfb:w:export:go").click().run()
    no_crash(at)
    assert len(list(folder.iterdir())) == 60


def test_a_coco_export_names_its_categories_from_the_label_map(monkeypatch, root):  # noqa: F811
    """The Export page's COCO format: a new folder of instances.json, results.json and the
    pictures; the categories named by the label map the app found beside the records, the
    ground truth's class texts turned into its labels (as the evaluation reads them)."""
    import json

    at = harness(monkeypatch, root, "coco/predictions.tfrecord", 0, page="export")
    at.selectbox(key="tfb:w:export:format").set_value("coco").run()
    no_crash(at)
    assert at.text_input(key="tfb:w:export:dest").value == "exports/predictions-edited-coco"
    at.button(key="tfb:w:export:go").click().run()
    no_crash(at)
    out = root / "exports" / "predictions-edited-coco"
    instances = json.loads((out / "instances.json").read_text())
    results = json.loads((out / "results.json").read_text())
    names = {c["id"]: c["name"] for c in instances["categories"]}
    assert names[1] == "person"
    # Both sides speak of the label map's classes: the ground truth's texts became labels.
    assert {a["category_id"] for a in instances["annotations"]} <= set(names)
    assert {r["category_id"] for r in results} & {
        a["category_id"] for a in instances["annotations"]
    }
    assert len(instances["images"]) == 12
