"""The SQL page through AppTest (no browser): the index is built on opening a small dataset,
asked for on a larger one; a query's rows are the index's answer, each linked to its record;
DuckDB's errors and refused statements are said in words; "Select these" makes the result's
query the selection (in the URL as the query, its records in its order)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from app_support import no_crash, page_script, start_app
from streamlit.testing.v1 import AppTest

import codec
from browser_app.generators import coco, records, write
from browser_app.selection import Selection
from browser_app.ui.widgets import sql_box
from codec.columns_index import columns_index
from codec.example import encode_example
from codec.sql import query


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("sqlapp")
    plain = [
        encode_example({"label": ("int64", [i % 4]), "name": ("bytes", [f"r{i}".encode()])})
        for i in range(40)
    ]
    write(root / "plain.tfrecord", plain)
    write(root / "boxes.tfrecord", records(coco, 4, seed=1, masks=False, keypoints=False))
    return root


def page(monkeypatch: pytest.MonkeyPatch, root: Path, name: str) -> AppTest:
    return start_app(monkeypatch, root, str(root / name), timeout=60, script=page_script("sql"))


def _text(at: AppTest) -> Any:
    return next(t for t in at.text_area if t.label.startswith("SQL over"))


def test_a_query_and_its_links(monkeypatch: pytest.MonkeyPatch, root: Path) -> None:
    at = page(monkeypatch, root, "plain.tfrecord")
    no_crash(at)
    assert any("The table records: 40 records" in e.label for e in at.expander)
    sql = "SELECT record, label, name FROM records WHERE label = 2 ORDER BY record"
    _text(at).set_value(sql)
    at.run()
    no_crash(at)
    assert any(m.value.startswith("**10 rows** in ") for m in at.markdown)
    df = at.dataframe[-1].value
    with codec.TFRecordFile(str(root / "plain.tfrecord")) as f:
        want = query(columns_index([f], executor="inline"), sql).table.to_pylist()
    assert df[["record", "label", "name"]].to_dict("records") == want
    assert list(df["open"]) == [f"./?file=plain.tfrecord&record={r['record']}" for r in want]


def test_examples_fill_the_box(monkeypatch: pytest.MonkeyPatch, root: Path) -> None:
    at = page(monkeypatch, root, "boxes.tfrecord")
    pills = at.get("button_group")[0]
    first = sql_box.examples(_index(root, "boxes.tfrecord"))[0]
    assert first.startswith('SELECT "image/filename", count(*)')  # a feature of the dataset
    pills.set_value(first).run()
    no_crash(at)
    assert _text(at).value == first
    assert not at.error


def _index(root: Path, name: str) -> Any:
    with codec.TFRecordFile(str(root / name)) as f:
        return columns_index([f], executor="inline")


@pytest.mark.parametrize(
    ("sql", "words"),
    [
        ("SELECT nope FROM records", 'Referenced column "nope" not found'),
        ("COPY records TO '/tmp/x.csv'", "COPY statement is not allowed"),
        ("SELECT * FROM read_csv('/etc/passwd')", "may not read, write or attach"),
    ],
)
def test_errors_in_words(monkeypatch: pytest.MonkeyPatch, root: Path, sql: str, words: str) -> None:
    at = page(monkeypatch, root, "plain.tfrecord")
    _text(at).set_value(sql)
    at.run()
    assert not at.exception
    assert at.error
    assert any(words in c.value for c in at.code)


def test_select_these(monkeypatch: pytest.MonkeyPatch, root: Path) -> None:
    at = page(monkeypatch, root, "plain.tfrecord")
    _text(at).set_value("SELECT record FROM records WHERE label = 1 ORDER BY record DESC")
    at.run()
    button = next(b for b in at.button if b.label.startswith("Select these"))
    assert button.label == "Select these 10 records"
    button.click().run()
    no_crash(at)
    sql = "SELECT record FROM records WHERE label = 1 ORDER BY record DESC"
    want = Selection("sql", sql)
    assert at.query_params["sel"] == want.to_params()["sel"][0] == f"sql:{sql}"
    assert sql_box.selection_of(f"  {sql}\n") == want
    assert at.query_params["record"] == "37"  # the query's first record


def test_a_large_dataset_asks_first(monkeypatch: pytest.MonkeyPatch, root: Path) -> None:
    monkeypatch.setattr(sql_box, "AUTO_RECORDS", 3)
    at = page(monkeypatch, root, "boxes.tfrecord")
    no_crash(at)
    assert not at.text_area
    build = next(b for b in at.button if b.label == "Build the index")
    build.click().run()
    no_crash(at)
    assert _text(at) is not None
    _text(at).set_value("SELECT sum(boxes) AS boxes FROM records")
    at.run()
    df = at.dataframe[-1].value
    assert int(df["boxes"][0]) > 0
