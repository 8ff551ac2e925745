"""``tfrecord-browser filter`` and ``schema --label-map`` on a generated Object Detection
dataset with planted problems: every planted record is found, and nothing else."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import DATA

from browser_app.cli import main
from browser_app.sample_data import LABEL_MAP, PLANTS
from browser_app.sample_data import write_detection_checks as write_detection


@pytest.fixture(scope="module")
def planted(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, list[int]]]:
    path = tmp_path_factory.mktemp("od") / "od.tfrecord"
    return path, write_detection(path, 300)


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("kind", [k for k, expr in PLANTS.items() if expr])
def test_each_planted_problem_has_a_filter(capsys, planted, kind) -> None:
    path, records = planted
    code, out, err = run(capsys, "filter", str(path), PLANTS[kind])
    assert code == 0, err
    found = [int(x) for x in out.split()]
    assert found == records[kind], (kind, found, records[kind])


def test_filter_json_and_shards(capsys) -> None:
    code, out, _ = run(capsys, "filter", str(DATA / "shards" / "part-*"), "index >= 62", "--json")
    assert code == 0
    lines = [json.loads(x) for x in out.splitlines()]
    assert [(x["index"], x["local"]) for x in lines] == [(62, 19), (63, 20)]
    assert all(x["path"].endswith("part-00002-of-00003.tfrecord") for x in lines)


def test_filter_exit_codes(capsys) -> None:
    basic = str(DATA / "basic.tfrecord")
    code, out, err = run(capsys, "filter", basic, "feature1 == 99")
    assert (code, out) == (0, "") and "no record matches" in err
    code, out, err = run(capsys, "filter", basic, "feature1 ==")
    assert code == 2 and out == "" and "cannot be read" in err
    code, out, err = run(capsys, "filter", basic, "feature1 > 2 or featur2 == 'cat'")
    assert code == 2 and out == ""
    assert "no record has a feature named 'featur2'" in err and "did you mean 'feature2'" in err
    # has() may ask about any name.
    code, out, _ = run(capsys, "filter", basic, "not has(featur2)")
    assert code == 0 and len(out.split()) == 64


def test_list_comparisons_are_box_by_box(capsys, tmp_path) -> None:
    import codec

    payloads = [
        codec.encode_example({"lo": ("float", [0.1, 0.5]), "hi": ("float", [0.2, 0.9])}),
        codec.encode_example({"lo": ("float", [0.1, 0.95]), "hi": ("float", [0.2, 0.9])}),
    ]
    path = tmp_path / "boxes.tfrecord"
    codec.write_records(path, payloads)
    # Any-against-any would match both records (0.5 > 0.2); box by box only the second.
    assert run(capsys, "filter", str(path), "lo > hi")[1].split() == ["1"]
    assert run(capsys, "filter", str(path), "all(lo < hi)")[1].split() == ["0"]


def test_schema_json_findings_with_a_label_map(capsys, planted, tmp_path) -> None:
    path, records = planted
    label_map = tmp_path / "label_map.pbtxt"
    label_map.write_text(LABEL_MAP)
    code, out, _ = run(capsys, "schema", str(path), "--json", "--label-map", str(label_map))
    assert code == 1  # the planted damaged record
    doc = json.loads(out)
    checks = {f["check"]: set(f["records"]) for f in doc["findings"]}
    assert checks["label_map"] == set(records["label_map"])
    assert checks["box_range"] == set(records["box_range"])
    assert set().union(*checks.values()) == set().union(*records.values())
    for f in doc["findings"]:
        assert set(f) == {"check", "feature", "message", "count", "records"}
    code, out, _ = run(capsys, "schema", str(path), "--label-map", str(label_map))
    assert (
        "Findings:" in out and "label_map: image/object/class/label is not in the label map" in out
    )
    code, _, err = run(capsys, "schema", str(path), "--label-map", str(tmp_path / "nope"))
    assert code == 2 and "nope" in err
