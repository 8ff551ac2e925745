"""The editing front end through AppTest: the record editor, review marks, the Changes panel
and the export page, on a fresh copy of the sample dataset for every test.

The editor's tables are ``st.data_editor``s; AppTest cannot type into them, so a test seeds the
edit into the session (what the browser sends) and reruns, as docs/streamlit-testing.md says.
"""

from __future__ import annotations

import io
import json
import os
import re
from pathlib import Path
from typing import Any, ClassVar

import pytest
import streamlit.testing.v1.app_test as _apptest
from app_support import gallery_tiles, start_app
from app_support import no_crash as app_no_crash
from PIL import Image
from streamlit.runtime.memory_media_file_storage import MemoryMediaFileStorage
from streamlit.testing.v1 import AppTest

import codec
from browser_app.edits import Journal, journal_path
from browser_app.edits.cells import parse_bytes_cell
from browser_app.sample_data import write_sample
from browser_app.view import cell_reason, cell_text
from codec import example as ex
from codec.identity import FileIdentity


def _harness() -> None:
    """The editing parts as the records page and the Edit pages call them."""
    import streamlit as st

    from browser_app.ui import navigation, opening, services, state
    from browser_app.ui.pages import changes, export
    from browser_app.ui.widgets import editor, journal, messages, review, schema

    navigation.register({})  # no router here: no page links
    state.init()
    messages.show_flashes()
    page = st.session_state.get("harness_page", "edit")
    if page == "changes":
        changes.render()
    elif page == "overlay":
        src = opening.current_source()
        sel, inferred = state.selection(), schema.stored(src)
        view = services.page_view(src, 0, 10, sel=sel, schema=inferred)
        st.dataframe(view.rows)
        st.text(repr(view.records))
        st.text(repr(view.status))
        tiles = services.gallery_items(src, 0, 10, sel=sel, schema=inferred)
        st.text(repr([(t.index, t.caption) for t in tiles]))
    elif page == "export":
        export.render()
    else:
        src = opening.current_source()
        if src is not None:
            journal.sidebar_status(src)
            editor.render(src, state.record())
            review.render_marks(src, state.record())


@pytest.fixture
def root(tmp_path: Path) -> Path:
    r = tmp_path / "root"
    write_sample(r)
    return r


def harness(
    monkeypatch: pytest.MonkeyPatch, root: Path, name: str, record: int = 0, page: str = "edit"
) -> AppTest:
    params = {"file": name, "record": str(record)}
    at = start_app(monkeypatch, root, params=params, timeout=30, run=False, script=_harness)
    at.session_state["harness_page"] = page
    return at.run()


def no_crash(at: AppTest) -> None:
    """No exception (the harness draws a page's parts, whatever errors they show)."""
    app_no_crash(at, unshown=None)


def texts(elements: Any) -> str:
    """The elements' text as a reader sees it (Markdown escapes undone)."""
    return re.sub(r"\\(.)", r"\1", "\n".join(str(e.value) for e in elements))


def edit(at: AppTest, rows: dict[int, str], table: int = 0) -> AppTest:
    """Type values into the editor's ``table``-th table (row -> new text) and rerun."""
    key = at.data_editor[table].key
    at.session_state[key] = {
        "edited_rows": {r: {"values": v} for r, v in rows.items()},
        "added_rows": [],
        "deleted_rows": [],
    }
    return at.run()


def row_of(at: AppTest, feature: str, table: int = 0) -> int:
    df = at.data_editor[table].value
    col = "feature" if "feature" in df.columns else "step"
    return int(df.index[df[col] == feature][0])


def cell(at: AppTest, feature: str, column: str = "values", table: int = 0) -> str:
    df = at.data_editor[table].value
    return str(df.loc[df["feature"] == feature, column].iloc[0])


def button(at: AppTest, label: str) -> Any:
    found = [b for b in at.button if b.label == label]
    assert found, f"no button {label!r}: {[b.label for b in at.button]}"
    return found[0]


def progress_text(at: AppTest) -> str:
    return "\n".join(p.proto.text for p in at.get("progress"))


class _Recorder(MemoryMediaFileStorage):
    """Keeps the bytes behind every media URL (images, downloads) for the test to read."""

    store: ClassVar[dict[str, tuple[bytes, str, str]]] = {}

    def get_url(self, file_id: str) -> str:
        url = super().get_url(file_id)
        f = self.get_file(file_id)
        _Recorder.store[url] = (f.content, f.mimetype, f.filename or "")
        return url


@pytest.fixture
def media(monkeypatch: pytest.MonkeyPatch) -> dict[str, tuple[bytes, str, str]]:
    _Recorder.store = {}
    monkeypatch.setattr(_apptest, "MemoryMediaFileStorage", _Recorder)
    return _Recorder.store


def journal_for(root: Path, name: str) -> Journal:
    return Journal(codec.TFRecordDataset([str(root / name)]))


def png(width: int, height: int, color: tuple[int, int, int] = (200, 30, 30)) -> bytes:
    out = io.BytesIO()
    Image.new("RGB", (width, height), color).save(out, format="PNG")
    return out.getvalue()


# -- values ------------------------------------------------------------------------------


def test_cell_text_round_trips_every_type() -> None:
    cases = [
        ex.Feature("int64", [1, -2, 9223372036854775807]),
        ex.Feature("float", [0.5, float("inf")]),
        ex.Feature("bytes", [b"cat"]),
        ex.Feature("bytes", [b"[not a list]"]),
        ex.Feature("bytes", [b"hex:literal"]),
        ex.Feature("bytes", [b"a", b"\x00\xff", b""]),
        ex.Feature("bytes", []),
    ]
    for feat in cases:
        text = cell_text(feat)
        if feat.type == "bytes":
            assert parse_bytes_cell(text, feat) == feat.values, text
    assert cell_text(cases[3]) == "text:[not a list]"
    assert cell_text(cases[5]) == '["a", "hex:00ff", ""]'
    # A picture is a placeholder that keeps the stored bytes.
    picture = ex.Feature("bytes", [png(4, 4), b"x"])
    text = cell_text(picture)
    assert "PNG picture" in text
    assert parse_bytes_cell(text.replace('"x"', '"y"'), picture) == [png(4, 4), b"y"]


def test_a_cell_of_one_value_does_not_say_which_value_was_refused() -> None:
    reason = "value 0: not a whole number"
    assert cell_reason("1.5", reason) == "not a whole number"
    assert cell_reason(" 1.5, ", reason) == "not a whole number"
    assert cell_reason("1.5, 2", reason) == reason  # a list says which
    assert cell_reason("1, 2.5", "value 1: not a whole number") == "value 1: not a whole number"
    assert cell_reason("x", "record 3 is deleted") == "record 3 is deleted"


# -- the record editor ---------------------------------------------------------------------


def test_edit_a_value_is_saved_at_once_and_survives_paging(monkeypatch, root):
    at = harness(monkeypatch, root, "detection.tfrecord", 0)
    no_crash(at)
    assert "Editing Record 0" in texts(at.markdown)
    label = row_of(at, "image/object/class/label")
    at = edit(at, {label: "3"})
    no_crash(at)
    assert cell(at, "image/object/class/label") == "3"
    assert "edited" in cell(at, "image/object/class/label", "check")
    # On disk already: a journal opened from scratch sees it.
    with journal_for(root, "detection.tfrecord") as j:
        rec = j.effective_record(0)
        assert rec is not None and rec.features["image/object/class/label"].values == [3]
    # Page away and back: the edit is still there.
    at.query_params["record"] = "1"
    at = harness(monkeypatch, root, "detection.tfrecord", 1)
    assert "Editing Record 1" in texts(at.markdown)
    with journal_for(root, "detection.tfrecord") as j:
        one = j.source_record(1).features["image/object/class/label"].values
    assert cell(at, "image/object/class/label") == ", ".join(map(str, one))
    at = harness(monkeypatch, root, "detection.tfrecord", 0)
    assert cell(at, "image/object/class/label") == "3"
    # The sidebar counts the pending change.
    assert "1 pending change" in texts(at.sidebar.caption)


def test_bad_values_are_rejected_with_reasons_and_nothing_else_is_lost(monkeypatch, root):
    at = harness(monkeypatch, root, "detection.tfrecord", 2)
    rows = {
        row_of(at, "image/object/class/label"): "1.5",  # float into int64
        row_of(at, "image/object/bbox/xmin"): "abc",  # text into float
        row_of(at, "image/format"): "hex:zz",  # bad hex
        row_of(at, "image/filename"): "renamed.jpg",  # a good edit in the same batch
    }
    xmin_before = cell(at, "image/object/bbox/xmin")
    at = edit(at, rows)
    no_crash(at)
    errors = texts(at.error)
    assert "not a whole number" in errors
    assert "not a number" in errors
    assert "bad hex" in errors
    # Beside each field: the rejected text and the reason.
    assert "“1.5”" in cell(at, "image/object/class/label", "check")
    assert "not a whole number" in cell(at, "image/object/class/label", "check")
    assert "“abc”" in cell(at, "image/object/bbox/xmin", "check")
    assert "bad hex" in cell(at, "image/format", "check")
    # The stored values are untouched, and the good edit was saved.
    assert cell(at, "image/object/bbox/xmin") == xmin_before
    assert cell(at, "image/filename") == "renamed.jpg"
    with journal_for(root, "detection.tfrecord") as j:
        assert len(j.changes()) == 1
    # A later, valid value replaces the rejection.
    at = edit(at, {row_of(at, "image/object/class/label"): "4"})
    assert cell(at, "image/object/class/label") == "4"
    assert "not saved" not in cell(at, "image/object/class/label", "check")
    assert "“abc”" in cell(at, "image/object/bbox/xmin", "check")  # still shown
    assert cell(at, "image/filename") == "renamed.jpg"


def test_inexact_float_gets_a_note_and_int_range_is_checked(monkeypatch, root):
    at = harness(monkeypatch, root, "detection.tfrecord", 0)
    at = edit(
        at,
        {
            row_of(at, "image/object/bbox/xmin"): "0.1000000001",
            row_of(at, "image/height"): "9223372036854775808",
        },
    )
    no_crash(at)
    assert "not exactly representable as float32" in cell(at, "image/object/bbox/xmin", "check")
    assert cell(at, "image/object/bbox/xmin") == "0.1"
    assert "out of int64 range" in cell(at, "image/height", "check")
    assert cell(at, "image/height") == "112"


def test_replace_picture_checks_the_upload(monkeypatch, root):
    at = harness(monkeypatch, root, "detection.tfrecord", 0)
    up = at.file_uploader[0]
    assert "image/encoded[0]" in up.label
    up.set_value(("notes.png", b"this is not a picture", "image/png")).run()
    no_crash(at)
    assert "notes.png" in texts(at.error) and "not a decodable image" in texts(at.error)
    with journal_for(root, "detection.tfrecord") as j:
        assert not j.changes()
    # Other edits are kept while the upload is refused.
    at = edit(at, {row_of(at, "image/filename"): "kept.jpg"})
    new = png(40, 30)
    at.file_uploader[0].set_value(("red.png", new, "image/png")).run()
    button(at, "Keep the boxes").click().run()  # the picture has boxes: asked first
    no_crash(at)
    assert "Replaced picture image/encoded[0]" in texts(at.warning) + texts(at.success)
    # The declared size no longer matches: said so.
    assert "is 30 high" in texts(at.warning)
    assert cell(at, "image/filename") == "kept.jpg"
    with journal_for(root, "detection.tfrecord") as j:
        rec = j.effective_record(0)
        assert rec is not None and rec.features["image/encoded"].values == [new]


def test_add_delete_and_convert_features(monkeypatch, root):
    at = harness(monkeypatch, root, "detection.tfrecord", 0)
    base = "tfb:w:edit:act:detection.tfrecord:0"
    at.text_input(key=f"{base}:add:name").input("weight")
    at.selectbox(key=f"{base}:add:type").set_value("float")
    at.text_input(key=f"{base}:add:values").input("0.5, 2")
    at.button(key=f"{base}:add:go").click().run()
    no_crash(at)
    assert cell(at, "weight") == "0.5, 2.0"
    # The new feature is not in the rest of the dataset: a warning.
    assert "'weight' is not in the rest of the dataset" in texts(at.warning)
    # A conversion that loses values is refused, nothing changes.
    at.selectbox(key=f"{base}:conv:f").set_value("image/object/class/text")
    at.selectbox(key=f"{base}:conv:t").set_value("int64")
    at.button(key=f"{base}:conv:go").click().run()
    no_crash(at)
    assert "Not converted" in texts(at.error)
    assert cell(at, "image/object/class/text", "type") == "bytes"
    # One that keeps every value goes through, and the type now disagrees with the dataset.
    at.selectbox(key=f"{base}:conv:f").set_value("image/object/class/label")
    at.selectbox(key=f"{base}:conv:t").set_value("float")
    at.button(key=f"{base}:conv:go").click().run()
    no_crash(at)
    assert cell(at, "image/object/class/label", "type") == "float"
    assert "is float here but int64 in the rest of the dataset" in texts(at.warning)
    # Delete a feature.
    at.selectbox(key=f"{base}:del").set_value("image/filename")
    at.button(key=f"{base}:del:go").click().run()
    no_crash(at)
    assert "image/filename" not in list(at.data_editor[0].value["feature"])
    # A name already used is refused, with the name and values typed kept.
    at.text_input(key=f"{base}:add:name").input("weight")
    at.selectbox(key=f"{base}:add:type").set_value("int64")
    at.text_input(key=f"{base}:add:values").input("1.5")
    at.button(key=f"{base}:add:go").click().run()
    no_crash(at)
    assert "was not added" in texts(at.error)
    assert at.text_input(key=f"{base}:add:name").value == "weight"


def test_delete_duplicate_and_new_record_from_copy(monkeypatch, root):
    at = harness(monkeypatch, root, "detection.tfrecord", 5)
    button(at, "Duplicate").click().run()
    no_crash(at)
    assert "new record n1" in texts(at.success)
    # The new record is edited from its anchor's view.
    target = at.segmented_control(key="tfb:w:edit:target:detection.tfrecord:5")
    target.set_value("n1").run()
    assert "Editing New record n1 (after record 5)" in texts(at.markdown)
    at = edit(at, {row_of(at, "image/object/class/label"): "9"})
    no_crash(at)
    with journal_for(root, "detection.tfrecord") as j:
        assert j.added_records() == ["n1"]
        new = j.effective_record("n1")
        assert new is not None and new.features["image/object/class/label"].values == [9]
        src5 = j.effective_record(5)
        assert src5 is not None and src5.features["image/object/class/label"].values != [9]
    # New from copy, placed after another record: the view moves there and edits it.
    at.segmented_control(key="tfb:w:edit:target:detection.tfrecord:5").set_value(5).run()
    at.number_input(key="tfb:w:edit:rec:detection.tfrecord:5:after").set_value(7)
    button(at, "Create and edit it").click().run()
    no_crash(at)
    assert at.query_params["record"] == "7"
    assert "Editing New record n2 (after record 7)" in texts(at.markdown)
    # Delete the record, then undo the deletion.
    at = harness(monkeypatch, root, "detection.tfrecord", 5)
    button(at, "Delete record").click().run()
    no_crash(at)
    assert "is deleted" in texts(at.warning)
    with journal_for(root, "detection.tfrecord") as j:
        assert j.is_deleted(5)
    button(at, "Undo the deletion").click().run()
    no_crash(at)
    assert "Editing Record 5" in texts(at.markdown)


def test_sequence_example_context_and_steps(monkeypatch, root):
    at = harness(monkeypatch, root, "sequence.tfrecord", 0)
    no_crash(at)
    assert "Context features" in texts(at.markdown)
    assert len(at.data_editor) == 4  # context + frame_id, frame_score, tokens
    at = edit(at, {row_of(at, "label"): "5"})
    # frame_score: step 1 gets a new value; a bad one in step 2 is refused.
    at = edit(at, {1: "0.25", 2: "high"}, table=2)
    no_crash(at)
    steps = at.data_editor[2].value
    assert steps.loc[1, "values"] == "0.25"
    assert "not a number" in steps.loc[2, "check"]
    # tokens: bytes steps as JSON lists.
    at = edit(at, {1: '["one", "two", "three"]'}, table=3)
    no_crash(at)
    with journal_for(root, "sequence.tfrecord") as j:
        rec = j.effective_record(0)
        assert rec is not None
        assert rec.features["label"].values == [5]
        assert rec.feature_lists["frame_score"][1].values == [0.25]
        assert rec.feature_lists["tokens"][1].values == [b"one", b"two", b"three"]


def test_raw_and_damaged_records_can_only_be_deleted_or_duplicated(monkeypatch, root):
    at = harness(monkeypatch, root, "raw.tfrecord", 0)
    no_crash(at)
    assert "not an Example or SequenceExample" in texts(at.info)
    assert not at.data_editor
    at = harness(monkeypatch, root, "damaged.tfrecord", 5)
    no_crash(at)
    assert "is damaged" in texts(at.error)
    button(at, "Delete record").click().run()
    no_crash(at)
    with journal_for(root, "damaged.tfrecord") as j:
        assert j.is_deleted(5)


def test_edits_survive_a_restart_and_a_changed_source_is_explained(monkeypatch, root):
    at = harness(monkeypatch, root, "detection.tfrecord", 0)
    at = edit(at, {row_of(at, "image/object/class/label"): "3"})
    # A "server restart": every cache dropped, a new session.
    at = harness(monkeypatch, root, "detection.tfrecord", 0)
    assert cell(at, "image/object/class/label") == "3"
    # The source changes underneath the journal.
    path = root / "detection.tfrecord"
    with open(path, "ab") as f:
        f.write(codec.framing.encode_record(ex.encode_example({"x": ("int64", [1])})))
    at = harness(monkeypatch, root, "detection.tfrecord", 0)
    no_crash(at)
    assert "changed since its pending edits were made" in texts(at.warning)
    assert not at.data_editor
    old = journal_path([str(path)])
    button(at, "Keep the old edits aside").click().run()
    no_crash(at)
    assert "kept aside" in texts(at.info)
    assert not old.exists()
    assert any(".kept-" in p.name for p in old.parent.iterdir())
    assert cell(at, "image/object/class/label") == "1"


def test_records_table_and_gallery_show_the_pending_edits(monkeypatch, root):
    at = harness(monkeypatch, root, "detection.tfrecord", 0)
    at = edit(at, {row_of(at, "image/object/class/label"): "3"})
    at = harness(monkeypatch, root, "detection.tfrecord", 2)
    button(at, "Delete record").click().run()
    at = harness(monkeypatch, root, "detection.tfrecord", 5)
    button(at, "Duplicate").click().run()
    at = harness(monkeypatch, root, "detection.tfrecord", 0, page="overlay")
    no_crash(at)
    rows = at.dataframe[0].value
    assert len(rows) == 11  # ten records and the new one in place
    assert rows.loc[0, "status"].startswith("✎ edited")
    assert str(rows.loc[0, "image/object/class/label"]) == "3"
    assert rows.loc[2, "status"].startswith("– deleted")
    assert rows.loc[6, "status"] == "+ new record n1"
    assert rows.loc[1, "status"] == "✓ intact"
    records, statuses, tiles = (t.value for t in at.text)
    assert records == repr([0, 1, 2, 3, 4, 5, 5, 6, 7, 8, 9])
    assert "'edited'" in statuses and "'deleted'" in statuses and "'added'" in statuses
    assert "(None, 'new n1" in tiles and " · deleted" in tiles and "#0 · " in tiles


# -- review marks ----------------------------------------------------------------------------


def test_review_marks_from_the_record_view(monkeypatch, root):
    at = harness(monkeypatch, root, "detection.tfrecord", 3)
    assert "0 of 60 reviewed" in progress_text(at)
    button(at, "Flagged").click().run()
    no_crash(at)
    assert "Flagged" in texts(at.markdown)
    boxes = [t for t in at.text_input if t.label.startswith("Comment")]
    boxes[0].input("box too small").run()
    no_crash(at)
    with journal_for(root, "detection.tfrecord") as j:
        mark = j.marks()[3]
        assert (mark.status, mark.comment) == ("flagged", "box too small")
    assert "box too small" in texts(at.markdown)
    button(at, "Passed").click().run()
    with journal_for(root, "detection.tfrecord") as j:
        assert j.marks()[3].status == "passed"
        assert j.marks()[3].comment == "box too small"
    # Shortcuts are on the buttons.
    assert button(at, "Passed").proto.shortcut.upper() == "P"
    assert button(at, "Flagged").proto.shortcut.upper() == "F"
    # Next record.
    button(at, "Next record").click().run()
    assert at.query_params["record"] == "4"
    assert "1 of 60 reviewed" in progress_text(at)


def test_review_report_and_changes_panel(monkeypatch, root, media):
    at = harness(monkeypatch, root, "detection.tfrecord", 0)
    at = edit(at, {row_of(at, "image/object/class/label"): "3"})
    at = edit(at, {row_of(at, "image/filename"): "zero.jpg"})
    button(at, "Passed").click().run()
    at = harness(monkeypatch, root, "detection.tfrecord", 2)
    button(at, "Delete record").click().run()
    button(at, "Flagged").click().run()
    at = harness(monkeypatch, root, "detection.tfrecord", 0, page="changes")
    no_crash(at)
    md = texts(at.markdown)
    assert "3 pending changes" in md
    assert "Record 0" in md and "Record 2" in md and "deleted" in md
    before_after = at.dataframe[0].value
    label = before_after[before_after["feature"] == "image/object/class/label"].iloc[0]
    assert label["before"].endswith("1") and label["after"].endswith("3")
    # Undo one change.
    undo = [b for b in at.button if b.label == "Undo"]
    assert len(undo) == 3
    undo[0].click().run()
    no_crash(at)
    assert "2 pending changes" in texts(at.markdown)
    with journal_for(root, "detection.tfrecord") as j:
        rec = j.effective_record(0)
        assert rec is not None and rec.features["image/object/class/label"].values == [1]
    # Undo all needs the confirmation.
    assert button(at, "Undo all").disabled
    at.checkbox(key="tfb:w:changes:confirm").check().run()
    button(at, "Undo all").click().run()
    no_crash(at)
    assert "No pending changes" in texts(at.info)
    # Marks stay, and the review report has them.
    with journal_for(root, "detection.tfrecord") as j:
        assert {r: m.status for r, m in j.marks().items()} == {0: "passed", 2: "flagged"}
    assert "2 of 60 reviewed" in progress_text(at)
    csv_btn = at.download_button(key="tfb:w:review:csv")
    data, _mime, _name = media[csv_btn.proto.url]
    lines = data.decode().splitlines()
    assert lines[0].startswith("record,status,comment")
    assert lines[1].startswith("0,passed") and lines[2].startswith("2,flagged")
    js = json.loads(media[at.download_button(key="tfb:w:review:json").proto.url][0])
    assert js["reviewed"] == 2 and js["records"] == 60


# -- export ------------------------------------------------------------------------------------


def test_export_applies_edits_and_refuses_outside_the_root(monkeypatch, root, media):
    at = harness(monkeypatch, root, "detection.tfrecord", 0)
    at = edit(at, {row_of(at, "image/object/class/label"): "3"})
    at = harness(monkeypatch, root, "detection.tfrecord", 4)
    button(at, "Delete record").click().run()
    at = harness(monkeypatch, root, "detection.tfrecord", 0, page="export")
    no_crash(at)
    assert "2 pending changes will be applied" in texts(at.caption)
    assert at.text_input(key="tfb:w:export:dest").value == "exports/detection-edited.tfrecord"
    # Outside the root: refused before anything is written.
    at.text_input(key="tfb:w:export:dest").input("../outside.tfrecord").run()
    assert "Refused" in texts(at.error)
    at.text_input(key="tfb:w:export:dest").input("/tmp/outside.tfrecord").run()
    at.button(key="tfb:w:export:go").click().run()
    assert "outside the root" in texts(at.error)
    assert not (root.parent / "outside.tfrecord").exists()
    at.text_input(key="tfb:w:export:dest").input("exports/detection-edited.tfrecord").run()
    at.button(key="tfb:w:export:go").click().run()
    no_crash(at)
    assert "Export done" in texts(at.success) and "verified" in texts(at.success)
    out = root / "exports" / "detection-edited.tfrecord"
    with codec.TFRecordFile(str(out)) as f:
        assert len(f) == 59
        assert ex.decode(f[0]).features["image/object/class/label"].values == [3]
    # The download carries the same bytes; the source is untouched.
    data, _mime, name = media[at.download_button(key="tfb:w:export:download").proto.url]
    assert data == out.read_bytes() and name == "detection-edited.tfrecord"
    with codec.TFRecordFile(str(root / "detection.tfrecord")) as f:
        assert len(f) == 60
    # Exporting again over it asks first.
    at.button(key="tfb:w:export:go").click().run()
    assert "exists" in texts(at.error)


def test_export_formats_selection_and_replace_source(monkeypatch, root):
    at = harness(monkeypatch, root, "sequence.tfrecord", 0)
    at = edit(at, {row_of(at, "label"): "5"})
    at = harness(monkeypatch, root, "sequence.tfrecord", 0, page="export")
    at.selectbox(key="tfb:w:export:format").set_value("jsonl").run()
    assert at.text_input(key="tfb:w:export:dest").value == "exports/sequence-edited.jsonl"
    at.radio(key="tfb:w:export:selection").set_value("Records by number").run()
    at.text_input(key="tfb:w:export:range").input("0:3").run()
    at.button(key="tfb:w:export:go").click().run()
    no_crash(at)
    lines = (root / "exports" / "sequence-edited.jsonl").read_text().splitlines()
    assert len(lines) == 3
    first = json.loads(lines[0])
    assert first["record"]["context"]["feature"]["label"]["int64List"]["value"] == ["5"]
    # A bad range is a message.
    at.text_input(key="tfb:w:export:range").input("0:3, x").run()
    at.button(key="tfb:w:export:go").click().run()
    assert "cannot be read" in texts(at.error)
    # CSV of everything.
    at.radio(key="tfb:w:export:selection").set_value("All records").run()
    at.selectbox(key="tfb:w:export:format").set_value("csv").run()
    at.button(key="tfb:w:export:go").click().run()
    no_crash(at)
    assert (root / "exports" / "sequence-edited.csv").exists()
    # Replace the source: only after the confirmation; a backup is kept.
    before = (root / "sequence.tfrecord").read_bytes()
    assert at.button(key="tfb:w:export:replace").disabled
    assert "backup" in texts(at.markdown)
    at.checkbox(key="tfb:w:export:confirm_replace").check().run()
    at.button(key="tfb:w:export:replace").click().run()
    no_crash(at)
    assert (root / "sequence.tfrecord.bak").read_bytes() == before
    with codec.TFRecordFile(str(root / "sequence.tfrecord")) as f:
        assert ex.decode(f[0]).features["label"].values == [5]
    assert "previous source file is kept" in texts(at.info)


def test_export_uses_the_filter_result(monkeypatch, root):
    at = harness(monkeypatch, root, "detection.tfrecord", 0, page="export")
    # What the filter page stores (see browser_app/ui/pages/filter.py).
    src_key = repr(FileIdentity.of_paths([os.path.realpath(root / "detection.tfrecord")]))
    at.session_state["tfb:x:filter:selection"] = {
        "spec": "detection.tfrecord",
        "key": src_key,
        "expression": "index < 3",
        "records": [0, 1, 2],
        "complete": True,
        "for_export": True,
    }
    at.run()
    no_crash(at)
    assert at.radio(key="tfb:w:export:selection").value == "The filter's result"
    at.button(key="tfb:w:export:go").click().run()
    no_crash(at)
    with codec.TFRecordFile(str(root / "exports" / "detection-edited.tfrecord")) as f:
        assert len(f) == 3


# -- wired into the app ----------------------------------------------------------------------


def test_records_page_edits_in_place(monkeypatch, root):
    at = start_app(
        monkeypatch, root, params={"file": "detection.tfrecord", "record": "0"}, timeout=30
    )
    no_crash(at)
    assert "Record 0" in texts(at.main.markdown)  # View first
    at.segmented_control(key="tfb:w:detail:mode").set_value("Edit").run()
    no_crash(at)
    assert "Editing Record 0" in texts(at.main.markdown)
    at = edit(at, {row_of(at, "image/object/class/label"): "3"})
    no_crash(at)
    table = at.main.dataframe[0].value
    assert table.loc[0, "status"].startswith("✎ edited")
    assert int(table.loc[0, "image/object/class/label"]) == 3
    assert any("1 pending change" in p.proto.label for p in at.sidebar.get("page_link"))
    # Back to View: the detail shows the edited value, with a note.
    at.segmented_control(key="tfb:w:detail:mode").set_value("View").run()
    assert "pending change applied" in texts(at.main.info)
    # The new pages are in the navigation and draw without errors.
    at.switch_page("ui/pages/changes.py").run()
    no_crash(at)
    assert "1 pending change" in texts(at.main.markdown)
    at.switch_page("ui/pages/export.py").run()
    no_crash(at)
    assert at.text_input(key="tfb:w:export:dest").value == "exports/detection-edited.tfrecord"


def test_gallery_tiles_and_the_sidebar_show_the_journals_marks(monkeypatch, root):
    """A mark in the journal shows on its tile and in the sidebar's count. (Marks typed in the
    gallery's element land in the journal: tests/test_e2e_gallery_grid.py, in Chromium, and
    the element's actions: tests/test_gallery_tiles.py.)"""
    with journal_for(root, "detection.tfrecord") as j:
        j.set_mark(2, "flagged")
    at = start_app(
        monkeypatch, root, params={"file": "detection.tfrecord", "record": "0"}, timeout=30
    )
    at.switch_page("ui/pages/gallery.py").run()
    no_crash(at)
    tiles = gallery_tiles(at)
    assert len(tiles) == 25
    assert {t["record"]: t.get("mark") for t in tiles if t.get("mark")} == {2: "flagged"}
    assert "1 review mark" in texts(at.sidebar.caption)
