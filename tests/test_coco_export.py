"""The COCO export: pycocotools reads ``instances.json`` (COCO) and ``results.json``
(``loadRes``), and COCOeval on them gives ``tfrecord-browser evaluate --json``'s figures to
1e-6, on generated records with plausible predictions and on the known-answer datasets; the
pictures beside them are the records' pictures at the sizes the images say; categories carry
the class names; what cannot be written is counted in the report; an existing destination is
refused."""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from PIL import Image
from pycocotools.coco import COCO
from pycocotools.cocoeval import COCOeval
from test_evaluate_job import _labelled

from browser_app.cli import main
from browser_app.errors import ExportError
from browser_app.export.coco import export_coco
from browser_app.generators import predictions, records, write
from browser_app.generators.evaluation import known_dataset
from codec.example import decode, encode_example


def _evaluate(capsys: pytest.CaptureFixture[str], path: Path) -> dict[str, Any]:
    code = main(["evaluate", str(path), "--json", "--executor", "inline"])
    out, err = capsys.readouterr()
    assert code == 0, err
    return json.loads(out)


def _cocoeval(folder: Path) -> COCOeval:
    with contextlib.redirect_stdout(io.StringIO()):
        gt = COCO(str(folder / "instances.json"))
        dt = gt.loadRes(str(folder / "results.json"))
        e = COCOeval(gt, dt, "bbox")
        e.evaluate()
        e.accumulate()
        e.summarize()
    return e


def _same_figures(e: COCOeval, doc: dict[str, Any]) -> None:
    assert e.stats[0] == pytest.approx(doc["map"], abs=1e-6)
    assert e.stats[1] == pytest.approx(doc["map50"], abs=1e-6)
    assert e.stats[2] == pytest.approx(doc["map75"], abs=1e-6)
    assert e.stats[8] == pytest.approx(doc["mar100"], abs=1e-6)
    # per class: COCOeval's precision at area "all", 100 detections, by category id order
    precision = e.eval["precision"][:, :, :, 0, 2]
    by_id = dict(zip(e.params.catIds, range(len(e.params.catIds))))
    for c in doc["classes"]:
        k = by_id[c["label"]]
        p = precision[:, :, k]
        ap = float(np.mean(p[p > -1])) if (p > -1).any() else None
        if c["ap"] is None:
            assert ap is None
        else:
            assert ap == pytest.approx(c["ap"], abs=1e-6), c["name"]


@pytest.mark.parametrize("seed", [3, 8])
def test_generated_predictions_evaluate_the_same_in_pycocotools(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], seed: int
) -> None:
    payloads = [
        _labelled(p) for p in records(predictions, 40, seed=seed, n_detections=20, max_side=96)
    ]
    path = tmp_path / "preds.tfrecord"
    write(path, payloads)
    report = export_coco(str(path), tmp_path / "coco")
    assert report.ok and not report.inexact
    doc = _evaluate(capsys, path)
    assert doc["map"] > 0.05  # something to compare: neither nothing found nor all
    _same_figures(_cocoeval(tmp_path / "coco"), doc)


@pytest.mark.parametrize("scenario", ["shifted", "swapped", "missing", "extra", "crowd"])
def test_known_answers_evaluate_the_same_in_pycocotools(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], scenario: str
) -> None:
    known = known_dataset(scenario, 12, seed=2)
    path = tmp_path / f"{scenario}.tfrecord"
    write(path, known.records)
    export_coco(str(path), tmp_path / "coco")
    doc = _evaluate(capsys, path)
    assert doc["map"] == pytest.approx(known.map, abs=1e-9)
    _same_figures(_cocoeval(tmp_path / "coco"), doc)


def test_the_files_as_a_coco_tool_reads_them(tmp_path: Path) -> None:
    known = known_dataset("crowd", 6, seed=1)
    path = tmp_path / "crowd.tfrecord"
    write(path, known.records)
    folder = tmp_path / "out"
    report = export_coco(str(path), folder)
    inst = json.loads((folder / "instances.json").read_text())
    results = json.loads((folder / "results.json").read_text())
    assert sorted(p.name for p in folder.iterdir()) == sorted(
        ["instances.json", "results.json", *(i["file_name"] for i in inst["images"])]
    )
    assert report.images == len(inst["images"]) == 6
    assert {c["id"]: c["name"] for c in inst["categories"]} == known.names
    for img, payload in zip(inst["images"], known.records):
        f = decode(payload).features
        with Image.open(folder / img["file_name"]) as pic:
            assert pic.size == (img["width"], img["height"])
            assert pic.size == (f["image/width"].values[0], f["image/height"].values[0])
        assert img["source_id"] == f["image/source_id"].values[0].decode()
        # the boxes in pixels, in the record's order
        mine = [a for a in inst["annotations"] if a["image_id"] == img["id"]]
        xmin = f["image/object/bbox/xmin"].values
        assert [a["bbox"][0] for a in mine] == pytest.approx(
            [x * img["width"] for x in xmin], rel=1e-12
        )
        assert [a["iscrowd"] for a in mine] == list(f["image/object/is_crowd"].values)
        for a in mine:
            assert a["area"] == pytest.approx(a["bbox"][2] * a["bbox"][3], rel=1e-12)
    assert len(results) == sum(
        len(decode(p).features["image/detection/score"].values) for p in known.records
    )


def test_what_cannot_be_written_is_counted(tmp_path: Path) -> None:
    known = known_dataset("perfect", 3, seed=1)
    feats = {k: (f.type, f.values) for k, f in decode(known.records[1]).features.items()}
    feats["image/detection/score"] = ("float", feats["image/detection/score"][1][:-1])
    no_picture = {k: v for k, v in feats.items() if not k.startswith("image/encoded")}
    no_picture["image/detection/score"] = (
        "float",
        list(decode(known.records[1]).features["image/detection/score"].values),
    )
    path = tmp_path / "odd.tfrecord"
    write(path, [known.records[0], encode_example(feats), encode_example(no_picture)])
    report = export_coco(str(path), tmp_path / "coco")
    assert report.inexact == {
        "objects not written: its object lists disagree in length (or predictions have no"
        " scores)": 1,
        "objects not written: objects of a record without a picture (a COCO annotation needs"
        " an image)": 1,
    }
    inst = json.loads((tmp_path / "coco" / "instances.json").read_text())
    assert [i["id"] for i in inst["images"]] == [1, 2]
    assert {a["image_id"] for a in inst["annotations"]} == {1}


def test_an_existing_destination_is_refused(tmp_path: Path) -> None:
    known = known_dataset("perfect", 2, seed=1)
    path = tmp_path / "p.tfrecord"
    write(path, known.records)
    (tmp_path / "there").mkdir()
    with pytest.raises(ExportError, match="exists"):
        export_coco(str(path), tmp_path / "there")
    assert list((tmp_path / "there").iterdir()) == []


def test_the_command_line_export_names_classes_from_the_label_map_beside_the_data(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`export --format coco` on records whose ground truth names classes by text, with a
    label_map.pbtxt beside them (the sample's COCO predictions): the categories are the
    label map's, the texts become its labels, and COCOeval on the files gives evaluate's
    figures (with the texts left as they were, no prediction would meet its object)."""
    from browser_app.sample_data import write_sample

    write_sample(tmp_path / "sample")
    src = tmp_path / "sample" / "coco" / "predictions.tfrecord"
    out = tmp_path / "coco-out"
    assert main(["export", str(src), str(out), "--format", "coco", "--executor", "inline"]) == 0
    capsys.readouterr()
    doc = _evaluate(capsys, src)
    assert doc["map"] > 0.5
    instances = json.loads((out / "instances.json").read_text())
    names = {c["id"]: c["name"] for c in instances["categories"]}
    assert names[1] == "person" and names[3] == "car"
    _same_figures(_cocoeval(out), doc)
