"""The records page through AppTest: the review column, the columns chosen and pinned per
dataset, and "Go to record" selecting that record's row."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from app_support import no_crash, start_app
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as hs
from streamlit.testing.v1 import AppTest

from browser_app.edits import FLAGGED, PASSED, Mark
from browser_app.sample_data import write_sample
from browser_app.view import review_cells, review_text


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    r = tmp_path_factory.mktemp("records") / "root"
    write_sample(r)
    return r


def app(monkeypatch: pytest.MonkeyPatch, root: Path, name: str, **params: str) -> AppTest:
    return start_app(monkeypatch, root, str(root / name), params=params)


def records_table(at: AppTest):  # type: ignore[no-untyped-def]
    (df,) = [d for d in at.main.dataframe if d.key and d.key.startswith("tfb:w:table:")]
    return df


def button(at: AppTest, label: str):  # type: ignore[no-untyped-def]
    (b,) = [b for b in at.main.button if b.label == label]
    return b


# -- the review column ----------------------------------------------------------------------


@settings(max_examples=60, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    hs.lists(
        hs.tuples(hs.sampled_from([PASSED, FLAGGED]), hs.text(max_size=120)),
        min_size=1,
        max_size=8,
    )
)
def test_review_cells_follow_the_marks(marks: list[tuple[str, str]]) -> None:
    by_record = {n: Mark(n, s, c, 0.0) for n, (s, c) in enumerate(marks)}  # type: ignore[arg-type]
    records: list[int | None] = [*range(len(marks) + 2), None]
    status = ["intact"] * (len(records) - 1) + ["skipped"]
    cells = review_cells(records, status, by_record)
    assert cells[-1] is None  # a skipped region has no review
    assert cells[-2] == cells[-3] == review_text(None)
    for n, (s, comment) in enumerate(marks):
        cell = cells[n]
        assert cell is not None
        assert cell.startswith("✓ passed" if s == PASSED else "⚑ flagged")
        words = " ".join(comment.split())
        if words:
            assert ": " in cell and "\n" not in cell
            assert cell.split(": ", 1)[1].rstrip("…") in words.replace("\n", "⏎")
        else:
            assert ": " not in cell


def test_review_column_shows_marks_and_comments(monkeypatch, root):
    at = app(monkeypatch, root, "detection.tfrecord", record="2")
    assert set(records_table(at).value["review"]) == {"· unreviewed"}
    at.main.text_input[0].set_value("boxes   off by one").run()  # a comment flags the record
    at = button(at, "Next record").click().run()
    button(at, "Passed").click().run()
    no_crash(at)
    review = list(records_table(at).value["review"])
    assert review[2] == "⚑ flagged: boxes off by one"
    assert review[3] == "✓ passed"
    assert review.count("· unreviewed") == len(review) - 2


# -- the columns ----------------------------------------------------------------------------


def _choose(at: AppTest, label: str, values: list[str]) -> AppTest:
    (box,) = [m for m in at.multiselect if m.label == label]
    return box.set_value(values).run()


def test_chosen_columns_are_remembered_for_the_dataset(monkeypatch, root):
    at = app(monkeypatch, root, "detection.tfrecord")
    every = list(records_table(at).proto.column_order) or list(records_table(at).value.columns)
    assert {"#", "status", "review", "picture", "image/format"} <= set(every)
    at = _choose(at, "Columns shown", ["review", "image/format"])
    at = _choose(at, "Pinned on the left", ["#", "image/format"])
    no_crash(at)
    table = records_table(at)
    assert list(table.proto.column_order) == ["#", "review", "image/format"]
    config = json.loads(table.proto.columns)
    assert config["image/format"]["pinned"] is True
    assert config["status"]["pinned"] is False
    # Another page of the same dataset keeps them; another dataset has its own.
    at = button(at, "Next").click().run()
    assert list(records_table(at).proto.column_order) == ["#", "review", "image/format"]
    at.sidebar.text_input(key="tfb:w:path").input("damaged.tfrecord").run()
    no_crash(at)
    assert "status" in list(records_table(at).proto.column_order)
    at.sidebar.text_input(key="tfb:w:path").input("detection.tfrecord").run()
    assert list(records_table(at).proto.column_order) == ["#", "review", "image/format"]


# -- go to record ---------------------------------------------------------------------------


def test_go_to_record_selects_its_row_and_scrolls_to_it(monkeypatch, root):
    at = app(monkeypatch, root, "detection.tfrecord")
    assert json.loads(records_table(at).proto.selection_default)["selection"]["rows"] == [0]
    at.number_input(key="tfb:w:jump").set_value(43).run()
    no_crash(at)
    table = records_table(at)
    assert json.loads(table.proto.selection_default)["selection"]["rows"] == [43 - 25]
    assert "Record 43" in "\n".join(m.value for m in at.main.markdown)
    scripts = [h.value for h in at.main.html if "<script>" in h.value]
    assert len(scripts) == 1 and "const row = 18" in scripts[0]
    # Selecting a row in the table keeps the widget (no scrolling, no new key).
    key = table.key
    at.session_state[key] = {"selection": {"rows": [3], "columns": [], "cells": []}}
    at.run()
    no_crash(at)
    assert at.query_params["record"] == "28"
    assert "Record 28" in "\n".join(m.value for m in at.main.markdown)
