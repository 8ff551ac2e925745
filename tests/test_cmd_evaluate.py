"""``tfrecord-browser evaluate`` as a person runs it: the known-answer datasets' figures in
the table and in ``--json``; the same bytes on every executor; ``--iou``, ``--agnostic``,
``--predictions`` (the join's misses said), class names from a label map beside the data or
``--names``; and the refusals and exit codes (no predictions, texts that cannot meet labels,
a bad threshold, damage)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from cli_support import run_cli

from browser_app.cli import main
from browser_app.generators import coco_label_map, write
from browser_app.generators.evaluation import known_dataset
from codec.example import decode, encode_example


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture(scope="module")
def swapped(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Any]:
    known = known_dataset("swapped", 16, seed=4)
    path = tmp_path_factory.mktemp("swapped") / "swapped.tfrecord"
    write(path, known.records)
    return path, known


def test_the_json_has_the_figures_of_the_known_answer(capsys, swapped) -> None:
    path, known = swapped
    code, out, err = run(capsys, "evaluate", str(path), "--json", "--executor", "inline")
    assert code == 0, err
    doc = json.loads(out)
    assert {"classes", "map", "map50", "map75"} <= set(doc)
    assert list(doc["classes"][0]) == [
        "name",
        "label",
        "ap",
        "ap50",
        "ap75",
        "ar100",
        "gt",
        "tp",
        "fp",
        "fn",
    ]
    for c in doc["classes"]:
        want = known.expected[c["label"]]
        assert c["name"] == known.names[c["label"]]
        for key in ("gt", "tp", "fp", "fn"):
            assert c[key] == want[key]
        assert c["ap"] == pytest.approx(want["ap"], abs=1e-12)
    assert doc["map"] == pytest.approx(known.map, abs=1e-12)
    assert doc["map"] == 0.5  # two classes swapped (AP 0), two right (AP 1)


def test_the_table(capsys, swapped) -> None:
    path, known = swapped
    code, out, _ = run(capsys, "evaluate", str(path), "--executor", "inline")
    assert code == 0
    lines = out.splitlines()
    assert lines[0].startswith("16 records, 16 evaluated; predictions matched class by class")
    head = next(i for i, line in enumerate(lines) if line.startswith("class "))
    assert lines[head].split() == [
        "class",
        "label",
        "AP",
        "AP50",
        "AP75",
        "AR@100",
        "GT",
        "TP",
        "FP",
        "FN",
    ]
    rows = {line.split()[0]: line.split() for line in lines[head + 2 : head + 6]}
    person = known.expected[1]
    assert rows["person"] == [
        "person",
        "1",
        "0.000",
        "0.000",
        "0.000",
        "0.000",
        str(person["gt"]),
        "0",
        str(person["fp"]),
        str(person["fn"]),
    ]
    assert rows["cat"][2:6] == ["1.000"] * 4
    mean = next(line for line in lines if line.startswith("mean (mAP)"))
    assert mean.split()[2:6] == ["0.500"] * 4


def test_every_executor_prints_the_same_bytes(capsys, swapped) -> None:
    path, _ = swapped
    outs = []
    for how in (["--executor", "inline"], ["--workers", "2"], []):
        code, out, err = run(capsys, "evaluate", str(path), "--json", *how)
        assert code == 0, err
        outs.append(out)
    assert outs[0] == outs[1] == outs[2]


def test_iou_and_agnostic(capsys, tmp_path) -> None:
    known = known_dataset("shifted", 12, seed=6)
    path = tmp_path / "shifted.tfrecord"
    write(path, known.records)
    code, out, _ = run(capsys, "evaluate", str(path), "--json", "--iou", "0.7")
    assert code == 0
    doc = json.loads(out)
    assert doc["iou"] == 0.7
    # the person boxes have IoU 0.52 and the car boxes 0.62: misses at 0.7; cats 0.78 are not
    tp = {c["label"]: c["tp"] for c in doc["classes"]}
    fn = {c["label"]: c["fn"] for c in doc["classes"]}
    assert tp[1] == tp[3] == 0 and fn[1] == known.expected[1]["gt"]
    assert tp[17] == known.expected[17]["gt"] and tp[18] == known.expected[18]["gt"]
    # AP does not depend on --iou
    assert doc["map"] == pytest.approx(known.map, abs=1e-12)
    code, out, _ = run(capsys, "evaluate", str(path), "--json", "--agnostic")
    doc = json.loads(out)
    assert [c["name"] for c in doc["classes"]] == ["any class"]
    assert doc["classes"][0]["gt"] == sum(v["gt"] for v in known.expected.values())
    assert doc["agnostic"] is True


def _sides(records: list[bytes], drop_labels: bool = False) -> tuple[list[bytes], list[bytes]]:
    truth, preds = [], []
    for payload in records:
        feats = {k: (f.type, f.values) for k, f in decode(payload).features.items()}
        if drop_labels:
            feats.pop("image/object/class/label")
        truth.append(encode_example({k: v for k, v in feats.items() if "/detection/" not in k}))
        preds.append(encode_example({k: v for k, v in feats.items() if "/object/" not in k}))
    return truth, preds


def test_predictions_in_a_second_dataset_with_misses_said(capsys, tmp_path) -> None:
    known = known_dataset("perfect", 10, seed=9)
    truth, preds = _sides(known.records)
    (tmp_path / "gt").mkdir()
    (tmp_path / "pr").mkdir()
    write(tmp_path / "gt" / "truth.tfrecord", truth)
    write(tmp_path / "pr" / "preds.tfrecord", preds[::-1][:8])  # reversed, the first two gone
    code, out, err = run(
        capsys, "evaluate", str(tmp_path / "gt"), "--predictions", str(tmp_path / "pr")
    )
    assert code == 0, err
    assert "predictions joined by image/source_id: 8 records paired" in out
    source_ids = [decode(t).features["image/source_id"].values[0].decode() for t in truth]
    assert f"  2 ground-truth records without predictions (left out): {source_ids[0]!r}" in out
    assert "LEFT OUT: 2 records: it has no partner in the other dataset (0, 1)" in out
    mean = next(line for line in out.splitlines() if line.startswith("mean (mAP)"))
    assert mean.split()[2:6] == ["1.000"] * 4


def test_class_texts_meet_labels_by_a_label_map(capsys, tmp_path) -> None:
    known = known_dataset("perfect", 8, seed=2)
    truth, preds = _sides(known.records, drop_labels=True)
    write(tmp_path / "truth.tfrecord", truth)
    write(tmp_path / "preds.tfrecord", preds)
    args = ["evaluate", str(tmp_path / "truth.tfrecord")]
    args += ["--predictions", str(tmp_path / "preds.tfrecord"), "--json"]
    code, out, err = run(capsys, *args)
    assert code == 2 and out == ""
    assert "image/object/class/text names the classes and image/detection/ numbers them" in err
    assert "--names image/detection/label=label_map.pbtxt" in err
    labels = tmp_path / "coco.pbtxt"
    labels.write_text(coco_label_map())
    code, out, err = run(capsys, *args, "--names", f"image/detection/label={labels}")
    assert code == 0, err
    assert json.loads(out)["map"] == 1.0
    # a label map beside the ground truth is found without asking
    (tmp_path / "label_map.pbtxt").write_text(coco_label_map())
    code, out, err = run(capsys, *args)
    assert code == 0, err
    doc = json.loads(out)
    assert doc["map"] == 1.0 and {c["name"] for c in doc["classes"]} <= set(known.names.values())


def test_refusals(capsys, tmp_path, swapped) -> None:
    path, known = swapped
    truth, _ = _sides(known.records)
    write(tmp_path / "truth.tfrecord", truth)
    code, out, err = run(capsys, "evaluate", str(tmp_path / "truth.tfrecord"))
    assert code == 2 and out == ""
    assert f"no predictions found in the first 16 records of {tmp_path / 'truth.tfrecord'}" in err
    code, _, err = run(capsys, "evaluate", str(path), "--iou", "0")
    assert code == 2 and "must be above 0 and at most 1" in err
    code, _, err = run(capsys, "evaluate", str(tmp_path / "nothing-here.tfrecord"))
    assert code == 2


def test_damage_is_said_and_exits_1(capsys, tmp_path, swapped) -> None:
    path, _ = swapped
    raw = bytearray(path.read_bytes())
    raw[len(raw) // 2] ^= 0x40  # inside a record's payload
    bad = tmp_path / "bad.tfrecord"
    bad.write_bytes(bytes(raw))
    code, out, err = run(capsys, "evaluate", str(bad), "--executor", "inline")
    assert code == 1, err
    assert "LEFT OUT: 1 record: its data CRC fails" in out


def test_the_command_line_runs_it(swapped, tmp_path) -> None:
    path, known = swapped
    got = run_cli("evaluate", str(path), "--json", cache=tmp_path / "cache")
    assert got.returncode == 0, got.stderr
    assert json.loads(got.stdout)["map"] == pytest.approx(known.map, abs=1e-12)
    helped = run_cli("--help")
    assert "evaluate" in helped.stdout
