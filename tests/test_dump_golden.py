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
    assert got == expected_lines(name)


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
