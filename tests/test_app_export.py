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
