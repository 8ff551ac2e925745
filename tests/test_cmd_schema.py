"""`tfrecord-browser schema`: JSON that matches the golden answer, text, exit codes."""

from __future__ import annotations

import argparse
import io
import json

import pytest
from conftest import DATA, EXPECTED

from browser_app.cli import build_parser, main
from browser_app.cli import schema as cli_schema
from browser_app.errors import InputError


def run(*argv: str) -> tuple[int, str]:
    """Run the command through its own parser (as the command line's dispatcher calls it)."""
    parser = argparse.ArgumentParser(prog="tfrecord-browser")
    sub = parser.add_subparsers(dest="command")
    cli_schema.register(sub)
    args = parser.parse_args(["schema", *argv])
    out = io.StringIO()
    code = args.handler(args, out)
    return code, out.getvalue()


def test_json_matches_golden_drift_answer():
    code, out = run(str(DATA / "drift.tfrecord"), "--json")
    assert code == 0
    got = json.loads(out)
    expected = json.loads((EXPECTED / "drift.tfrecord.schema.json").read_text())
    assert got["records"] == expected["records"]
    assert got["type_conflicts"] == expected["type_conflicts"]
    for name, want in expected["features"].items():
        for key, value in want.items():
            assert got["features"][name][key] == value, (name, key)
    assert got["missing"] == {"weight": [2, 3, 11, 19, 30]}
    assert got["sampled"] is False


def test_text_report_names_the_drift():
    code, out = run(str(DATA / "drift.tfrecord"))
    assert code == 0
    assert out.startswith("40 records")
    assert "label: float 2, int64 38" in out
    assert "type: label is int64 in most records but another type in 2 records: 7, 23" in out
    assert "missing: weight is missing from 5 records: 2, 3, 11, 19, 30" in out


def test_sample_is_labelled_in_both_forms():
    code, out = run(str(DATA / "basic.tfrecord"), "--sample", "8", "--json")
    doc = json.loads(out)
    assert code == 0 and doc["records"] == 8 and doc["sample"] == {"records": 8, "of": 64}
    _, text = run(str(DATA / "basic.tfrecord"), "--sample", "8")
    assert text.startswith("SAMPLE of 8 of 64 records")


def test_damage_exits_1_and_is_reported():
    code, out = run(str(DATA / "corrupt_data_crc.tfrecord"), "--json")
    assert code == 1
    assert json.loads(out)["damaged_records"] == [5]
    code, out = run(str(DATA / "garbage_between.tfrecord"))
    assert code == 1 and "other problems" in out


def test_many_files_global_numbers_and_statistics():
    code, out = run(str(DATA / "shards" / "part-*"), "--json", "--stats")
    doc = json.loads(out)
    assert code == 0 and doc["records"] == 64
    assert [f["first_record"] for f in doc["files"]] == [0, 22, 43]
    assert len(doc["statistics"]["shards"]) == 3
    assert sum(doc["statistics"]["features"]["feature3"]["histogram"]["counts"]) == 64


def test_sequence_example_text():
    code, out = run(str(DATA / "sequence.tfrecord"))
    assert code == 0
    assert "feature list tokens: bytes" in out and "steps: min 1" in out


def test_missing_file_is_an_input_error():
    with pytest.raises(InputError):
        run(str(DATA / "nope.tfrecord"))


@pytest.mark.parametrize("bad", [["--sample", "0"], ["--sample", "x"], ["--top", "-1"]])
def test_bad_options_are_usage_errors(bad, capsys):
    with pytest.raises(SystemExit) as info:
        run(str(DATA / "basic.tfrecord"), *bad)
    assert info.value.code == 2


def test_registered_in_the_main_cli(capsys):
    actions = build_parser()._subparsers._group_actions  # type: ignore[union-attr]
    assert "schema" in (actions[0].choices or {})
    assert main(["schema", str(DATA / "drift.tfrecord"), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["type_conflicts"] == {"label": [7, 23]}
