"""The records page through AppTest: the review column, the columns chosen and pinned per
dataset, "Go to record" selecting that record's row, and the review keys' handler (what the
keys element sends, applied once and in order: the journal, the current record, the URL,
the table's row and review column, the acknowledgement sent back)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from app_support import go_to_record, no_crash, start_app
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as hs
from streamlit.testing.v1 import AppTest

import codec
from browser_app.edits import FLAGGED, PASSED, Journal, Mark
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
    go_to_record(at).set_value(43).run()
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


# -- the review keys ------------------------------------------------------------------------

# The records page, and a button that hands the handler what the keys element would send
# (the value put in session state as "typed"): the element itself runs only in a browser
# (tests/test_e2e_records_review.py types the keys).
_KEYS_PAGE = """
import streamlit as st
from browser_app.ui import opening, state
from browser_app.ui.pages import records
from browser_app.ui.widgets import review
state.init()
state.apply_linked_selection()  # as the sidebar does for a dataset of this size
records.render()
src = opening.current_source()
st.button(
    "Type keys",
    key="type-keys",
    on_click=lambda: review.apply_keys(src, st.session_state.get("typed")),
)
"""


def keys_page(monkeypatch: pytest.MonkeyPatch, root: Path, record: int, **params: str) -> AppTest:
    at = start_app(
        monkeypatch,
        root,
        params={"file": "detection.tfrecord", "record": str(record), **params},
        script=_KEYS_PAGE,
    )
    no_crash(at)
    return at


def typed(at: AppTest, client: str, actions: list[dict[str, Any]]) -> AppTest:
    """The keys element sends ``actions`` (every one not yet acknowledged, as it does), and
    the page is drawn whole again (AppTest keeps only the elements of a run that named the
    parts to run, the body at a page turn: a run of the whole page shows them all)."""
    at.session_state["typed"] = {"client": client, "actions": actions}
    button(at, "Type keys").click().run()
    no_crash(at)
    at.run()
    no_crash(at)
    return at


def key(seq: int, letter: str, record: int | None = None) -> dict[str, Any]:
    """The action the element makes of ``letter`` (``record``: the record shown, or None
    when a move before it waits)."""
    if letter in "pf":
        return {
            "seq": seq,
            "kind": "mark",
            "record": record,
            "status": {"p": PASSED, "f": FLAGGED}[letter],
        }
    return {"seq": seq, "kind": "move", "record": record, "step": 1 if letter == "j" else -1}


def keys_data(at: AppTest) -> dict[str, Any]:
    """What the page sent its keys element."""
    (element,) = [
        e for e in at.get("bidi_component") if e.proto.component_name.endswith("review_keys")
    ]
    return dict(json.loads(element.proto.json))


def marks_of(root: Path) -> dict[Any, tuple[str, str]]:
    with Journal(codec.TFRecordDataset([str(root / "detection.tfrecord")])) as j:
        return {r: (m.status, m.comment) for r, m in j.marks().items()}


def journal_lines(root: Path) -> int:
    with Journal(codec.TFRecordDataset([str(root / "detection.tfrecord")])) as j:
        return len(j.path.read_text().splitlines()) if j.path.exists() else 0


def heading(at: AppTest) -> str:
    return next(m.value for m in at.main.markdown if m.value.startswith("#### Record"))


@pytest.fixture
def fresh(tmp_path: Path) -> Path:
    """A sample of its own (marks are written into its journal)."""
    r = tmp_path / "root"
    write_sample(r)
    return r


def test_keys_typed_ahead_act_in_order_each_once(monkeypatch, fresh):
    at = keys_page(monkeypatch, fresh, 5)
    assert keys_data(at)["record"] == 5 and keys_data(at)["ack"] is None
    # P, J, F, J, P, K typed before the page was drawn again: the moves' targets are not
    # known to the element, so the actions after a move name no record.
    sent = [key(1, "p", 5), key(2, "j", 5), key(3, "f"), key(4, "j"), key(5, "p"), key(6, "k")]
    at = typed(at, "tab-1", sent)
    assert marks_of(fresh) == {5: (PASSED, ""), 6: (FLAGGED, ""), 7: (PASSED, "")}
    assert at.query_params["record"] == "6"
    assert heading(at) == "#### Record 6"
    assert keys_data(at)["record"] == 6
    assert keys_data(at)["ack"] == {"client": "tab-1", "seq": 6}
    lines = journal_lines(fresh)
    # The same actions sent again (an answer lost on the way), with one more: only the new
    # one acts.
    at = typed(at, "tab-1", [*sent, key(7, "f", 6)])
    assert marks_of(fresh)[6] == (FLAGGED, "")
    assert journal_lines(fresh) == lines + 1
    assert keys_data(at)["ack"] == {"client": "tab-1", "seq": 7}
    # Another page load of the element counts from 1 again.
    at = typed(at, "tab-2", [key(1, "j", 6), key(2, "p")])
    assert at.query_params["record"] == "7"
    assert marks_of(fresh)[7] == (PASSED, "")
    assert journal_lines(fresh) == lines + 2


def test_the_table_follows_the_keys_with_its_row_and_review_column(monkeypatch, fresh):
    at = keys_page(monkeypatch, fresh, 2)
    name = records_table(at).key
    at = typed(at, "t", [key(1, "p", 2), key(2, "j", 2), key(3, "j")])
    table = records_table(at)
    # The same table, the current record's row selected in it from the server.
    assert table.key == name
    assert list(at.session_state[table.key]["selection"]["rows"]) == [4]
    review = list(table.value["review"])
    assert review[2] == "✓ passed" and review[3] == review[4] == "· unreviewed"
    assert "1 of 60 reviewed" in "\n".join(p.proto.text for p in at.get("progress"))
    assert keys_data(at)["behind"] == ""  # the whole page drawn: nothing to catch up


def test_a_key_past_the_pages_end_turns_the_page(monkeypatch, fresh):
    at = keys_page(monkeypatch, fresh, 24)
    assert int(records_table(at).value["#"].iloc[0]) == 0
    name = records_table(at).key
    at = typed(at, "t", [key(1, "f", 24), key(2, "j", 24)])
    assert at.query_params["record"] == "25"
    assert heading(at) == "#### Record 25"
    table = records_table(at)
    assert int(table.value["#"].iloc[0]) == 25
    # The same table for every page (its rows change in place), the row selected with them.
    assert table.key == name
    assert list(at.session_state[table.key]["selection"]["rows"]) == [0]
    at = typed(at, "t", [key(3, "k", 25)])
    assert heading(at) == "#### Record 24"
    assert list(records_table(at).value["review"])[24] == "⚑ flagged"


def test_keys_at_the_ends_of_the_selection_stay(monkeypatch, fresh):
    at = keys_page(monkeypatch, fresh, 0)
    at = typed(at, "t", [key(1, "k", 0), key(2, "k"), key(3, "p")])
    assert at.query_params["record"] == "0"
    assert marks_of(fresh) == {0: (PASSED, "")}
    assert keys_data(at)["ack"] == {"client": "t", "seq": 3}


def test_keys_within_unreviewed_records_go_to_the_next_unreviewed(monkeypatch, fresh):
    at = keys_page(monkeypatch, fresh, 3, sel="unreviewed")
    assert "Record 3" in heading(at)
    at = typed(at, "t", [key(1, "p", 3), key(2, "j", 3), key(3, "p"), key(4, "j")])
    assert set(marks_of(fresh)) == {3, 4}
    assert at.query_params["record"] == "5"
    # The table lists the unreviewed records only: the two marked ones have left it.
    shown = [int(n) for n in records_table(at).value["#"]]
    assert 3 not in shown and 4 not in shown and 5 in shown


def test_forged_or_broken_actions_do_nothing(monkeypatch, fresh):
    at = keys_page(monkeypatch, fresh, 5)
    for junk in (
        [{"seq": 1, "kind": "mark", "record": 5, "status": "deleted"}],
        [{"seq": 0, "kind": "mark", "record": 5, "status": PASSED}],
        [{"seq": 1, "kind": "move", "record": 5, "step": 40}],
        [{"seq": "1", "kind": "mark", "record": 5, "status": PASSED}],
        [{"seq": 1, "kind": "mark", "record": -3, "status": PASSED}],
    ):
        at = typed(at, "t", junk)
    assert marks_of(fresh) == {}
    assert at.query_params["record"] == "5"
    assert keys_data(at)["ack"] is None
