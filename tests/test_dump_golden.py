"""`tfrecord-browser dump --json` against TensorFlow's own answers for every golden file."""

from __future__ import annotations

import json

import pytest
from conftest import DATA, INTACT_GOLDEN, expected_lines

from browser_app.cli import main

GOLDEN = [*INTACT_GOLDEN, *(f"shards/part-0000{k}-of-00003.tfrecord" for k in range(3))]


@pytest.mark.parametrize("name", GOLDEN)
def test_dump_json_equals_tensorflow(capsys, name):
    code = main(["dump", str(DATA / name), "--json"])
    out, err = capsys.readouterr()
    assert code == 0, err
    got = [json.loads(line) for line in out.splitlines()]
    # TensorFlow's answer, plus the file and the record's number in it on every line.
    assert [{k: v for k, v in g.items() if k not in ("path", "local")} for g in got] == (
        expected_lines(name)
    )
    assert all(g["path"] == str(DATA / name) and g["local"] == g["index"] for g in got)


def test_dump_over_shards_numbers_records_globally(capsys):
    code = main(["dump", str(DATA / "shards" / "part-*"), "--json", "--records=-1,0,22"])
    out, _ = capsys.readouterr()
    assert code == 0
    lines = [json.loads(line) for line in out.splitlines()]
    assert [(g["index"], g["local"], g["path"].rsplit("/", 1)[-1]) for g in lines] == [
        (0, 0, "part-00000-of-00003.tfrecord"),
        (22, 0, "part-00001-of-00003.tfrecord"),
        (63, 20, "part-00002-of-00003.tfrecord"),
    ]
    expected = expected_lines("shards/part-00002-of-00003.tfrecord")[20]
    assert lines[2]["record"] == expected["record"]
    code = main(["dump", str(DATA / "shards" / "part-*"), "--records", "63"])
    out, _ = capsys.readouterr()
    assert out.startswith("record 63 (") and "part-00002-of-00003.tfrecord record 20)" in out


def test_dump_marks_records_found_after_damage(capsys):
    code = main(["dump", str(DATA / "garbage_between.tfrecord"), "--json"])
    out, _ = capsys.readouterr()
    assert code == 1
    lines = [json.loads(line) for line in out.splitlines()]
    assert len(lines) == 64
    assert [g.get("recovered", False) for g in lines] == [False] * 10 + [True] * 54


def test_dump_text_is_readable(capsys):
    code = main(["dump", str(DATA / "basic.tfrecord"), "--records", "0"])
    out, _ = capsys.readouterr()
    assert code == 0
    assert out.startswith("record 0  offset 0  length 87  example")
    assert "feature2" in out and "chicken" in out and "0.46930736" in out


def test_dump_forced_kind_that_does_not_fit(capsys):
    code = main(["dump", str(DATA / "raw_records.tfrecord"), "--kind", "example", "--json"])
    out, err = capsys.readouterr()
    assert code == 1 and out == ""
    assert "raw_records.tfrecord: record 0 at byte 0" in err
    assert "Traceback" not in err


def test_sequence_examples_keep_their_feature_lists(capsys):
    main(["dump", str(DATA / "sequence.tfrecord"), "--records", "1", "--json"])
    line = json.loads(capsys.readouterr().out)
    assert line["kind"] == "sequence_example"
    lists = line["record"]["featureLists"]["featureList"]
    assert set(lists) == {"tokens", "frame_score", "frame_id"}
