"""The plain-text forms of the command line: records (``dump``) and the schema report."""

from __future__ import annotations

from typing import Any

import numpy as np
from conftest import DATA

from browser_app.view.text import format_record_text, format_schema, hex_preview
from codec import example as ex
from codec.schema import findings, infer_schema
from codec.tensor import serialize_tensor


def test_format_record_text() -> None:
    tensor = serialize_tensor(np.zeros((2, 3), np.uint8))
    payload = ex.encode_example(
        {
            "label": ("int64", [3]),
            "score": ("float", [0.9876]),
            "name": ("bytes", ["cat"]),
            "jpeg": ("bytes", [b"\xff\xd8\xff\xe0" + b"\x00" * 10]),
            "blob": ("bytes", [bytes(range(40))]),
            "t": ("bytes", [tensor]),
            "many": ("int64", list(range(30))),
        }
    )
    text = format_record_text(ex.decode(payload))
    assert text.splitlines()[0] == "kind: example"
    assert "label (int64, 1): [3]" in text
    assert "score (float, 1): [0.9876]" in text
    assert "name (bytes, 1): ['cat']" in text
    assert "<image/jpeg: 14 bytes>" in text
    assert "<binary: 40 bytes: 00 01 02" in text
    assert "<tensor uint8 [2, 3]:" in text
    assert "… 10 more" in text
    seq = ex.decode(ex.encode_sequence_example({}, {"tok": [("bytes", [b"a"]), ("bytes", [])]}))
    text = format_record_text(seq)
    assert "feature_lists:" in text and "tok (2 steps):" in text and "[1] (bytes, 0): []" in text
    assert format_record_text(ex.decode(b"\xff")).startswith("kind: raw\nraw: <binary: 1")


def test_hex_preview() -> None:
    assert hex_preview(b"ab\x00") == "61 62 00  |ab.| (3 bytes)"
    assert hex_preview(bytes(100), limit=2) == "00 00  |..| … (100 bytes)"


def _feature(types: dict[str, int], present: int, **more: Any) -> dict[str, Any]:
    return {"types": types, "present": present, "min_len": 1, "mean_len": 1.0, "max_len": 1, **more}


def _drift_doc() -> dict[str, Any]:
    """A schema's JSON form with one finding of every check (and a long record list)."""
    images = {
        "count": 3,
        "formats": {"png": 3},
        "sizes": [[4, 4, 3]],
        "undecodable": 1,
        "undecodable_records": [9],
    }
    steps = {"min_steps": 1, "mean_steps": 1.5, "max_steps": 2}
    return {
        "records": 40,
        "kinds": {"sequence_example": 40},
        "damaged": 0,
        "damaged_records": [],
        "problems": 0,
        "sampled": False,
        "features": {
            "label": _feature({"int64": 38, "float": 2}, 40),
            "weight": _feature({"float": 20}, 20),
            "box": _feature({"float": 40}, 40),
            "image": _feature({"bytes": 40}, 40, images=images),
        },
        "feature_lists": {
            "tokens": _feature(
                {"bytes": 30, "int64": 1}, 31, missing=9, missing_records=[1, 2], **steps
            ),
        },
        "type_conflicts": {"label": [7, 23]},
        "missing": {"weight": list(range(20))},
        "missing_counts": {"weight": 20},
        "length_drift": {"box": {"usual_len": 4, "count": 3, "records": [5, 6, 8]}},
    }


def _drift_lines(text: str) -> list[str]:
    lines = text.splitlines()
    return lines[lines.index("Findings:") + 1 :]


def test_schema_drift_lines_are_the_findings_with_their_records() -> None:
    doc = _drift_doc()
    doc["feature_lists"]["tokens"]["type_conflicts"] = [3]
    text = format_schema(doc)
    assert _drift_lines(text) == [
        "  type: label is int64 in most records but another type in 2 records: 7, 23",
        "  type: feature list tokens changes type in 1 record: 3",
        "  missing: weight is missing from 20 records: 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11,"
        " … (8 more)",
        "  missing: feature list tokens is missing from 9 records: 1, 2, … (7 more)",
        "  length: box has 4 values in most records but a different number in 3 records: 5, 6, 8",
        "  undecodable: image holds 1 picture that cannot be decoded: 9",
    ]
    # One line per finding, each starting with its check and sentence.
    found = findings(doc)
    assert len(_drift_lines(text)) == len(found)
    for line, f in zip(_drift_lines(text), found, strict=True):
        assert line.startswith(f"  {f.check}: {f.message}: ")
    # The rest of the report is untouched by the drift.
    assert text.startswith("40 records (sequence_example 40)\n\nlabel: int64 38, float 2\n")
    assert "  UNDECODABLE images: 1 (records 9)" in text
    assert "feature list tokens: bytes 30, int64 1\n  steps: min 1, mean 1.5, max 2" in text


def test_schema_without_findings_says_so() -> None:
    schema = infer_schema(str(DATA / "sequence.tfrecord"))
    text = format_schema(schema.to_json())
    assert text.endswith(
        "\nNo findings: every feature has one type and is in every record, and nothing else"
        " the checks look for was found.\n"
    )
    assert "Findings:" not in text


def test_schema_text_of_a_drifting_file() -> None:
    doc = infer_schema(str(DATA / "drift.tfrecord")).to_json()
    assert _drift_lines(format_schema(doc)) == [
        "  type: label is int64 in most records but another type in 2 records: 7, 23",
        "  missing: weight is missing from 5 records: 2, 3, 11, 19, 30",
    ]
