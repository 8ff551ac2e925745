"""The edit journal: value parsing, checked edits, undo, persistence and source identity; its
parts (the journal file, the change set, the edited dataset and its pages, review reports)."""

from __future__ import annotations

import errno
import io
import json
import math
import os
import shutil
import struct
from pathlib import Path
from unittest.mock import ANY

import numpy as np
import pytest
from conftest import DATA
from hypothesis import given
from hypothesis import strategies as st
from PIL import Image

import codec
from browser_app import edits as J
from browser_app.edits import (
    Change,
    ChangeSet,
    Journal,
    RecordRef,
    check_value,
    convert_values,
    parse_value,
    parse_values,
    render_value,
    review,
)
from browser_app.edits.journal_file import (
    ChangeLine,
    Line,
    MarkLine,
    UndoLine,
    line_from_json,
    line_to_json,
)
from browser_app.edits.model import mark_status
from browser_app.errors import (
    ConversionError,
    EditError,
    JournalError,
    JournalMismatchError,
    ValueParseError,
)
from codec import example as ex
from codec.example import Feature
from codec.identity import FileIdentity


@pytest.fixture
def basic(tmp_path: Path) -> Path:
    p = tmp_path / "basic.tfrecord"
    shutil.copyfile(DATA / "basic.tfrecord", p)
    return p


def _copy(tmp_path: Path, name: str) -> Path:
    p = tmp_path / name
    shutil.copyfile(DATA / name, p)
    return p


def _png(width: int = 5, height: int = 4) -> bytes:
    out = io.BytesIO()
    Image.new("RGB", (width, height), (200, 10, 10)).save(out, format="PNG")
    return out.getvalue()


# -- parse_value -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "value"),
    [("0", 0), ("-12", -12), ("+7", 7), (" 42 ", 42), ("0x1f", 31), ("-0X10", -16)],
)
def test_int64_accepts_whole_numbers(text: str, value: int) -> None:
    assert parse_value("int64", text) == value


def test_int64_range_edges() -> None:
    assert parse_value("int64", str(2**63 - 1)) == 2**63 - 1
    assert parse_value("int64", str(-(2**63))) == -(2**63)
    with pytest.raises(ValueParseError, match="out of int64 range"):
        parse_value("int64", str(2**63))
    with pytest.raises(ValueParseError, match="out of int64 range"):
        parse_value("int64", str(-(2**63) - 1))


@pytest.mark.parametrize("text", ["1.5", "1.0", "1e3", "nan", "inf", ".5"])
def test_int64_rejects_floats_with_a_reason(text: str) -> None:
    with pytest.raises(ValueParseError) as info:
        parse_value("int64", text)
    assert "whole number" in info.value.reason
    assert "float" in info.value.reason  # points at the conversion


@pytest.mark.parametrize("text", ["", "abc", "12abc", "1 2", "--1"])
def test_int64_rejects_non_numbers(text: str) -> None:
    with pytest.raises(ValueParseError):
        parse_value("int64", text)


def test_float_notes_inexact_values_and_keeps_exact_ones_quiet() -> None:
    exact = check_value("float", "0.5")
    assert exact.value == 0.5 and exact.note is None
    # 0.1 is how float32(0.1) is written: typed back, it is what the app shows, no note.
    shown = check_value("float", "0.1")
    assert shown.value == float(np.float32(0.1)) and shown.note is None
    inexact = check_value("float", "0.1000000001")  # more digits than float32 holds
    assert inexact.value == float(np.float32(0.1))
    assert inexact.note is not None and "not exactly representable" in inexact.note
    big = check_value("float", "16777217")  # 2**24 + 1
    assert big.value == 16777216.0 and big.note is not None
    tiny = check_value("float", "1e-50")
    assert tiny.value == 0.0 and tiny.note is not None and "too small" in tiny.note


def test_float_specials_and_range() -> None:
    assert math.isnan(parse_value("float", "nan"))  # type: ignore[arg-type]
    assert parse_value("float", "-inf") == -math.inf
    assert parse_value("float", "Infinity") == math.inf
    assert math.copysign(1, parse_value("float", "-0.0")) == -1  # type: ignore[arg-type]
    assert parse_value("float", "3.4028235e38") == float(np.finfo(np.float32).max)
    with pytest.raises(ValueParseError, match="float32's range"):
        parse_value("float", "1e39")
    with pytest.raises(ValueParseError, match="not a number"):
        parse_value("float", "twelve")
    with pytest.raises(ValueParseError, match="not a number"):
        parse_value("float", "sNaN")


def test_bytes_syntax() -> None:
    assert parse_value("bytes", "cat") == b"cat"
    assert parse_value("bytes", "ключ") == "ключ".encode()
    assert parse_value("bytes", "hex:00ff10") == b"\x00\xff\x10"
    assert parse_value("bytes", "HEX:00 ff") == b"\x00\xff"
    assert parse_value("bytes", "base64:AP8Q") == b"\x00\xff\x10"
    assert parse_value("bytes", "text:hex:00") == b"hex:00"
    assert parse_value("bytes", "") == b""


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("hex:0g", "'g' is not a hex digit"),
        ("hex:abc", "odd number"),
        ("base64:A", "bad base64"),
        ("base64:@@@@", "bad base64"),
    ],
)
def test_bytes_rejects_bad_binary_forms(text: str, reason: str) -> None:
    with pytest.raises(ValueParseError) as info:
        parse_value("bytes", text)
    assert reason in info.value.reason


def test_unknown_type_is_refused() -> None:
    with pytest.raises(ValueParseError, match="unknown feature type"):
        parse_value("string", "x")


def test_parse_values_lists() -> None:
    assert parse_values("int64", "1, 2 3\n4") == ([1, 2, 3, 4], [])
    assert parse_values("int64", "") == ([], [])
    values, notes = parse_values("float", "0.5,0.1000000001")
    assert values == [0.5, float(np.float32(0.1))] and len(notes) == 1 and "value 1" in notes[0]
    assert parse_values("bytes", "a, b\nhex:00\n") == ([b"a, b", b"\x00"], [])
    with pytest.raises(ValueParseError, match="value 2"):
        parse_values("int64", "1,2,x")


@given(st.integers(min_value=-(2**63), max_value=2**63 - 1))
def test_render_int64_round_trips(v: int) -> None:
    assert parse_value("int64", render_value("int64", v)) == v


@given(st.floats(width=32, allow_nan=False))
def test_render_float_round_trips_exactly(v: float) -> None:
    back = parse_value("float", render_value("float", v))
    assert struct.pack("<f", back) == struct.pack("<f", v)  # type: ignore[arg-type]


@given(st.binary(max_size=40) | st.text(max_size=20).map(lambda s: s.encode("utf-8", "replace")))
def test_render_bytes_round_trips(v: bytes) -> None:
    assert parse_value("bytes", render_value("bytes", v)) == v


# -- conversion ---------------------------------------------------------------------------------


def test_convert_values_exact_ones() -> None:
    assert convert_values([1, 2**24, -5], "int64", "float") == [1.0, 2.0**24, -5.0]
    assert convert_values([1.0, -3.0], "float", "int64") == [1, -3]
    assert convert_values([7, -1], "int64", "bytes") == [b"7", b"-1"]
    assert convert_values([0.5, math.inf], "float", "bytes") == [b"0.5", b"inf"]
    assert convert_values([b"12", b"-3"], "bytes", "int64") == [12, -3]
    assert convert_values([b"0.5", b"1"], "bytes", "float") == [0.5, 1.0]


@pytest.mark.parametrize(
    ("values", "src", "dst", "bad"),
    [
        ([1, 2**24 + 1], "int64", "float", 1),
        ([1.5], "float", "int64", 0),
        ([1.0, math.nan], "float", "int64", 1),
        ([2.0**70], "float", "int64", 0),
        ([b"12", b"abc"], "bytes", "int64", 1),
        ([b"007"], "bytes", "int64", 0),
        ([b"0.1000000001"], "bytes", "float", 0),
        ([b"\xff"], "bytes", "float", 0),
    ],
)
def test_convert_values_refuses_losses(values: list, src: str, dst: str, bad: int) -> None:
    with pytest.raises(ConversionError) as info:
        convert_values(values, src, dst, name="f")
    assert [p[0] for p in info.value.problems] == [bad]
    assert "without losing values" in str(info.value)


# -- feature JSON ------------------------------------------------------------------------------


def test_feature_json_is_exact() -> None:
    nan_payload = float(np.array([0x7FC00001], dtype=np.uint32).view(np.float32)[0])
    feats = [
        Feature("int64", [2**63 - 1, -(2**63), 0, 2**53 + 1]),
        Feature("float", [0.1, -0.0, math.inf, -math.inf, math.nan, 1e-45, nan_payload]),
        Feature("bytes", [b"", b"\x00\xff", "ü".encode()]),
        Feature("none", []),
    ]
    for f in feats:
        obj = J.feature_to_json(f)
        back = J.feature_from_json(obj)
        assert back.type == f.type
        assert ex.encode_example({"x": back}) == ex.encode_example({"x": f})
    assert J.feature_to_json(feats[0])["values"][0] == "9223372036854775807"
    assert J.feature_to_json(feats[1])["values"][-1] == "0x7fc00001"


# -- journal edits -----------------------------------------------------------------------------


def test_edit_and_effective_record(basic: Path) -> None:
    with Journal(str(basic)) as j:
        before = j.effective_record(0)
        assert before is not None
        ch = j.set_value(0, "feature1", 0, "4")
        assert ch.before == Feature("int64", [before.features["feature1"].values[0]])
        assert ch.after == Feature("int64", [4])
        rec = j.effective_record(0)
        assert rec is not None and rec.features["feature1"].values == [4]
        assert [d.feature for d in j.diff(0)] == ["feature1"]
        assert j.changes_for(0) == [ch] and j.changes_for(1) == []
        assert j.diff(1) == []


def test_rejected_edits_leave_nothing_behind(basic: Path, tmp_path: Path) -> None:
    jp = tmp_path / "j.jsonl"
    with Journal(str(basic), path=jp) as j:
        j.set_value(2, "feature1", 0, "3")
        attempts = [
            (lambda: j.set_value(0, "feature1", 0, "2.5"), "whole number"),
            (lambda: j.set_value(0, "feature1", 0, str(2**64)), "out of int64 range"),
            (lambda: j.set_value(0, "feature2", 0, "hex:zz"), "not a hex digit"),
            (lambda: j.add_feature(0, "feature2", "bytes", ["x"]), "already has a feature"),
            (lambda: j.add_feature(0, "", "bytes", ["x"]), "non-empty"),
            (lambda: j.add_feature(0, "new", "string", ["x"]), "unknown feature type"),
            (lambda: j.convert_feature(0, "feature3", "int64"), "without losing values"),
            (lambda: j.replace_image(0, "feature2", 0, b"not an image"), "not a decodable image"),
            (lambda: j.set_value(0, "missing", 0, "1"), "no feature"),
            (lambda: j.set_value(0, "feature1", 5, "1"), "no value 5"),
            (lambda: j.set_feature(0, "feature1", ("float", [1.0])), "convert_feature"),
            (lambda: j.set_value(999, "feature1", 0, "1"), "out of range"),
            (lambda: j.set_step(0, "x", 0, "1"), "has no feature lists"),
        ]
        size = jp.stat().st_size
        for attempt, reason in attempts:
            with pytest.raises(EditError, match=reason):
                attempt()
        assert jp.stat().st_size == size  # nothing was written
        assert j.pending == 1
        rec = j.effective_record(0)
        assert rec is not None and rec == ex.decode(codec.TFRecordFile(str(basic)).read(0))


def test_add_delete_convert_and_replace_image(basic: Path) -> None:
    png = _png(5, 4)
    with Journal(str(basic)) as j:
        j.add_feature(1, "image/encoded", "bytes", [b"x"])
        j.add_feature(1, "image/height", "int64", "3")
        ch = j.replace_image(1, "image/encoded", 0, png)
        assert ch.detail["width"] == 5 and ch.detail["height"] == 4
        assert any("image/height" in w for w in ch.warnings)  # 3 != 4
        j.delete_feature(1, "feature0")
        conv = j.convert_feature(1, "feature1", "float")
        assert conv.after.type == "float"
        rec = j.effective_record(1)
        assert rec is not None
        assert rec.features["image/encoded"].values == [png]
        assert "feature0" not in rec.features
        assert rec.features["feature1"].type == "float"
        payload = j.effective_payload(1)
        assert payload is not None and ex.decode(payload) == rec


def test_raw_records_can_only_be_deleted_or_duplicated(tmp_path: Path) -> None:
    p = _copy(tmp_path, "raw_records.tfrecord")
    with Journal(str(p)) as j:
        with pytest.raises(EditError, match="only be deleted or duplicated"):
            j.add_feature(0, "x", "int64", [1])
        new = j.duplicate_record(0)
        j.delete_record(1)
        assert j.effective_payload(new) == codec.TFRecordFile(str(p)).read(0)
        assert list(j.order()) == [0, new, 2]


def test_sequence_example_edits(tmp_path: Path) -> None:
    p = _copy(tmp_path, "sequence.tfrecord")
    with Journal(str(p)) as j:
        rec = j.effective_record(1)
        assert rec is not None and rec.kind == "sequence_example"
        j.set_value(1, "video_id", 0, "renamed")
        j.set_step_value(1, "frame_id", 2, 0, "77")
        j.set_step(1, "frame_score", 0, "0.25, 0.5")
        j.add_feature_list(1, "extra", "int64", [[1], [2, 3]])
        with pytest.raises(ValueParseError):
            j.set_step_value(1, "frame_id", 0, 0, "1.5")
        with pytest.raises(EditError, match="no step 99"):
            j.set_step(1, "frame_id", 99, "1")
        out = j.effective_record(1)
        assert out is not None
        assert out.features["video_id"].values == [b"renamed"]
        assert out.feature_lists["frame_id"][2].values == [77]
        assert out.feature_lists["frame_score"][0].values == [0.25, 0.5]
        assert out.feature_lists["extra"][1].values == [2, 3]
        back = ex.decode(j.effective_payload(1) or b"")
        assert back == out
        names = {d.feature: d.section for d in j.diff(1)}
        assert names == {
            "video_id": "features",
            "frame_id": "feature_lists",
            "frame_score": "feature_lists",
            "extra": "feature_lists",
        }


def test_new_records_are_placed_after_their_anchor(basic: Path) -> None:
    with Journal(str(basic)) as j:
        a = j.duplicate_record(2)
        b = j.duplicate_record(2)
        c = j.add_record(a)  # a copy of a, after a
        d = j.add_record(5, copy_of=0)
        j.delete_record(3)
        assert list(j.order())[:9] == [0, 1, 2, a, c, b, 4, 5, d]
        assert j.count() == 64 - 1 + 4
        j.set_value(a, "feature1", 0, "9")
        undone = j.undo(next(ch.id for ch in j.changes() if ch.target == a))
        assert len(undone) == 2  # the new record and the edit made to it
        assert list(j.order())[:7] == [0, 1, 2, c, b, 4, 5]
        with pytest.raises(EditError, match="does not exist"):
            j.effective_record(a)


def test_undo_reverts_dependent_changes_and_undo_all(basic: Path) -> None:
    with Journal(str(basic)) as j:
        add = j.add_feature(4, "score", "float", [1.0])
        j.set_value(4, "score", 0, "2")
        keep = j.set_value(4, "feature1", 0, "1")
        assert j.undo(add.id) == [add.id, add.id + 1]
        rec = j.effective_record(4)
        assert rec is not None and "score" not in rec.features
        assert rec.features["feature1"].values == [1]
        assert [c.id for c in j.changes()] == [keep.id]
        j.delete_record(7)
        j.set_mark(4, "passed", "ok")
        assert j.undo_all() == [keep.id, keep.id + 1]
        assert j.pending == 0 and not j.is_deleted(7)
        assert j.marks()[4].status == "passed"  # marks are not changes
        j.redo(keep.id)
        assert j.pending == 1
        with pytest.raises(EditError, match="not pending"):
            j.undo(add.id)


def test_type_warnings() -> None:
    rec = ex.decode(ex.encode_example({"label": ("float", [1.0]), "id": ("bytes", [b"a"])}))
    warns = J.type_warnings(rec, {"label": "int64", "id": "bytes"})
    assert warns == ["feature 'label' is float here but int64 in the rest of the dataset"]
    assert J.type_warnings(rec, {"label": "float", "id": "bytes"}) == []
    assert "not in the rest" in J.type_warnings(rec, {"label": "float"})[0]


def test_changes_carry_schema_warnings(tmp_path: Path) -> None:
    p = _copy(tmp_path, "drift.tfrecord")
    with Journal(str(p), known_types={"id": "bytes", "label": "int64", "weight": "float"}) as j:
        ch = j.convert_feature(0, "label", "float")
        assert ch.warnings == (
            "feature 'label' is float here but int64 in the rest of the dataset",
        )
        assert j.set_value(1, "id", 0, "x").warnings == ()


# -- persistence -------------------------------------------------------------------------------


def test_journal_is_replayed_after_a_restart(basic: Path) -> None:
    with Journal(str(basic)) as j:
        j.set_value(0, "feature3", 0, "0.1000000001")
        j.set_feature(1, "feature3", Feature("float", [math.nan, -0.0, 1e-45]))
        j.set_value(2, "feature1", 0, str(2**62))
        j.set_value(2, "feature2", 0, "hex:00ff")
        new = j.duplicate_record(2)
        j.delete_record(9)
        j.set_mark(5, "flagged", "blurry")
        j.set_mark(6, "passed")
        j.set_mark(6, None)
        snapshot = {r: j.effective_payload(r) for r in (0, 1, 2, new, 9)}
        changes = [(c.id, c.op, c.target) for c in j.changes()]
        path = j.path
    assert path.parent.parent == Path(os.environ["TFRECORD_BROWSER_CACHE"])
    with Journal(codec.TFRecordDataset(str(basic))) as again:
        assert [(c.id, c.op, c.target) for c in again.changes()] == changes
        assert {r: again.effective_payload(r) for r in (0, 1, 2, new, 9)} == snapshot
        assert list(again.marks()) == [5] and again.marks()[5].comment == "blurry"
        assert again.effective_record(9) is None
        assert again.changes()[0].warnings  # the float32 note survived


def test_a_second_tab_sees_changes_and_ids_do_not_collide(basic: Path) -> None:
    one = Journal(str(basic))
    two = Journal(str(basic))
    try:
        a = one.set_value(0, "feature1", 0, "1")
        b = two.set_value(1, "feature1", 0, "1")  # catches up before writing
        assert b.id == a.id + 1
        n1 = one.duplicate_record(0)
        n2 = two.duplicate_record(1)
        assert n1 != n2
        assert [c.id for c in one.changes()] == [c.id for c in two.changes()]
        two.undo(a.id)
        assert one.changes_for(0) == []
    finally:
        one.close()
        two.close()


def test_batch_syncs_once(basic: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with Journal(str(basic)) as j:
        j.set_value(0, "feature1", 0, "1")  # creates the file
        calls: list[int] = []
        real = os.fsync

        def counting(fd: int) -> None:
            calls.append(fd)
            real(fd)

        monkeypatch.setattr(os, "fsync", counting)
        j.set_value(1, "feature1", 0, "1")
        assert len(calls) == 1
        calls.clear()
        with j.batch():
            for i in range(2, 6):
                j.set_value(i, "feature1", 0, "1")
            assert calls == []
        assert len(calls) == 1


def test_a_journal_that_cannot_be_saved_refuses_the_change(
    basic: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with Journal(str(basic)) as j:
        j.set_value(0, "feature1", 0, "1")

        def full(fd: int) -> None:
            raise OSError(errno.ENOSPC, "No space left on device")

        monkeypatch.setattr(os, "fsync", full)
        with pytest.raises(JournalError, match="No space left"):
            j.set_value(1, "feature1", 0, "1")
        assert j.changes_for(1) == []


def test_no_file_until_the_first_change(basic: Path) -> None:
    with Journal(str(basic)) as j:
        j.effective_record(0)
        assert not j.path.exists()
        j.set_mark(0, "passed")
        assert j.path.exists()


# -- source identity ---------------------------------------------------------------------------


def test_journal_refuses_a_changed_source(basic: Path) -> None:
    with Journal(str(basic)) as j:
        j.set_value(0, "feature1", 0, "1")
    with open(basic, "ab") as f:
        f.write(codec.encode_record(b"extra"))
    with pytest.raises(JournalMismatchError) as info:
        Journal(str(basic))
    msg = str(info.value)
    assert str(basic.resolve()) in msg and "size was 6,411 bytes, now 6,432" in msg
    assert any("size" in c for c in info.value.changes)


def test_same_size_same_mtime_different_bytes_is_noticed(basic: Path) -> None:
    with Journal(str(basic)) as j:
        j.set_value(0, "feature1", 0, "1")
    st = basic.stat()
    data = bytearray(basic.read_bytes())
    data[40] ^= 0xFF
    basic.write_bytes(bytes(data))
    os.utime(basic, ns=(st.st_atime_ns, st.st_mtime_ns))
    with pytest.raises(JournalMismatchError) as info:
        Journal(str(basic))
    assert info.value.changes == [f"{basic.resolve()}: the content differs"]
    # Setting the old journal aside lets the file be edited again.
    J.discard_journal(info.value.journal)
    with Journal(str(basic)) as fresh:
        assert fresh.pending == 0


def test_a_big_file_changed_at_its_end_is_noticed(tmp_path: Path) -> None:
    p = tmp_path / "big.tfrecord"
    codec.write_records(p, [bytes([i % 251]) * 1000 for i in range(200)])
    with Journal(str(p)) as j:
        j.set_mark(0, "passed")
    st = p.stat()
    data = bytearray(p.read_bytes())
    data[-10] ^= 0xFF
    p.write_bytes(bytes(data))
    os.utime(p, ns=(st.st_atime_ns, st.st_mtime_ns))
    with pytest.raises(JournalMismatchError) as info:
        Journal(str(p))
    assert info.value.changes == [f"{p.resolve()}: the last 64 KiB differ"]


def test_a_touched_file_is_refused_with_its_times(basic: Path) -> None:
    with Journal(str(basic)) as j:
        j.set_mark(0, "passed")
    st = basic.stat()
    os.utime(basic, ns=(st.st_atime_ns, st.st_mtime_ns + 10**9))
    with pytest.raises(JournalMismatchError, match="modified time was"):
        Journal(str(basic))


def test_ref_and_locate_over_shards() -> None:
    paths = sorted(str(p) for p in (DATA / "shards").glob("*.tfrecord"))
    with Journal(codec.TFRecordDataset(paths)) as j:
        n0 = len(codec.TFRecordFile(paths[0]))
        assert j.ref(paths[1], 2) == n0 + 2
        assert j.locate(n0 + 2) == (paths[1], 2)
        assert j.locate("n1") is None
        with pytest.raises(EditError, match="not one of"):
            j.ref(str(DATA / "basic.tfrecord"), 0)


# -- the journal file --------------------------------------------------------------------------


def _header(path: Path) -> str:
    ident = FileIdentity.of(path, content=True)
    return json.dumps(
        {"type": "header", "version": 1, "created": 1.0, "sources": [ident.to_json()]},
        separators=(",", ":"),
    )


# Lines as the journal has always written them (after the header).
_OLD_LINES = [
    '{"type":"change","id":1,"ts":10.5,"target":0,"op":"set_value","section":"features",'
    '"name":"feature1","before":{"type":"int64","values":["2"]},"after":{"type":"int64",'
    '"values":["5"]},"detail":{"index":0}}',
    '{"type":"change","id":2,"ts":11.0,"target":0,"op":"set_value","section":"features",'
    '"name":"feature3","before":{"type":"float","values":["0.46930736"]},"after":{"type":'
    '"float","values":["0.1"]},"detail":{"index":0},"warnings":["0.1 is not exactly '
    'representable as float32; stored as 0.10000000149011612"]}',
    '{"type":"change","id":3,"ts":12.0,"target":"n1","op":"add_record","section":"record",'
    '"name":null,"before":null,"after":null,"detail":{"after":2,"source":2,"duplicate":true,'
    '"kind":"example"},"payload":"ClEKEQoIZmVhdHVyZTESBRoDCgEBChMKCGZlYXR1cmUyEgcKBQoDZG9nChEK'
    'CGZlYXR1cmUwEgUaAwoBAQoUCghmZWF0dXJlMxIIEgYKBCJNg78="}',
    '{"type":"change","id":4,"ts":13.0,"target":"n1","op":"set_value","section":"features",'
    '"name":"feature2","before":{"type":"bytes","values":["ZG9n"]},"after":{"type":"bytes",'
    '"values":["AP8="]},"detail":{"index":0}}',
    '{"type":"change","id":5,"ts":14.0,"target":3,"op":"delete_record","section":"record",'
    '"name":null,"before":null,"after":null,"detail":{}}',
    '{"type":"mark","target":4,"status":"flagged","comment":"blurry","ts":15.0}',
    '{"type":"undo","ids":[2],"ts":16.0}',
    '{"type":"redo","ids":[2],"ts":17.0}',
]


def test_a_journal_written_before_opens_and_keeps_its_format(basic: Path, tmp_path: Path) -> None:
    jp = tmp_path / "old.jsonl"
    jp.write_text("\n".join([_header(basic), *_OLD_LINES]) + "\n")
    with Journal(str(basic), path=jp) as j:
        assert [(c.id, c.op, c.target) for c in j.changes()] == [
            (1, "set_value", 0),
            (2, "set_value", 0),
            (3, "add_record", "n1"),
            (4, "set_value", "n1"),
            (5, "delete_record", 3),
        ]
        rec = j.effective_record(0)
        assert rec is not None and rec.features["feature1"].values == [5]
        new = j.effective_record("n1")
        assert new is not None and new.features["feature2"].values == [b"\x00\xff"]
        assert j.is_deleted(3) and j.marks()[4].comment == "blurry"
        assert list(j.order())[:5] == [0, 1, 2, "n1", 4]
        assert j.duplicate_record(0) == "n2"
        j.undo(1)
    written = jp.read_text().splitlines()
    assert written[: len(_OLD_LINES) + 1][1:] == _OLD_LINES  # nothing rewritten
    change = json.loads(written[-2])
    assert list(change) == [
        "type",
        "id",
        "ts",
        "target",
        "op",
        "section",
        "name",
        "before",
        "after",
        "detail",
        "payload",
    ]
    assert change["id"] == 6 and change["target"] == "n2" and change["detail"]["after"] == 0
    assert json.loads(written[-1]) == {"type": "undo", "ids": [1], "ts": ANY}


def test_lines_round_trip() -> None:
    payload = ex.encode_example({"a": ("int64", [1])})
    lines: list[Line] = [
        ChangeLine(
            Change(
                1,
                4,
                "set_feature",
                "features",
                "x",
                Feature("int64", [1]),
                Feature("int64", [2]),
                3.0,
                {"index": 0},
                ("note",),
            )
        ),
        ChangeLine(
            Change(2, 4, "set_step", "feature_lists", "s", None, [Feature("float", [0.5])], 4.0)
        ),
        ChangeLine(
            Change(
                3,
                "n1",
                "add_record",
                "record",
                None,
                None,
                ex.decode(payload),
                5.0,
                {"after": 4, "source": None, "duplicate": False, "kind": "example"},
            ),
            payload,
        ),
        UndoLine((1, 2), 6.0),
        UndoLine((2,), 7.0, redo=True),
        MarkLine(4, "passed", "fine", 8.0),
        MarkLine("n1", None, "", 9.0),
    ]
    for line in lines:
        obj = json.loads(json.dumps(line_to_json(line)))
        assert line_from_json(obj, Path("j.jsonl")) == line


def test_a_half_written_line_is_read_when_it_is_complete(basic: Path, tmp_path: Path) -> None:
    jp = tmp_path / "j.jsonl"
    jp.write_text(_header(basic) + "\n")
    with Journal(str(basic), path=jp) as j:
        line = _OLD_LINES[0]
        with open(jp, "a") as f:
            f.write(line[:40])
        assert j.pending == 0  # another writer is still writing this line
        with open(jp, "a") as f:
            f.write(line[40:] + "\n")
        assert j.pending == 1
        rec = j.effective_record(0)
        assert rec is not None and rec.features["feature1"].values == [5]


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("{not json", "not JSON"),
        ('{"type":"note"}', "unknown line type 'note'"),
        (_OLD_LINES[0].replace("set_value", "rename"), "a change line is damaged"),
        ('{"type":"mark","target":1,"status":"maybe","comment":"","ts":1}', "status 'maybe'"),
        ('{"type":"mark","target":1.5,"status":null}', "bad record reference 1.5"),
    ],
)
def test_damaged_lines_are_refused(basic: Path, tmp_path: Path, line: str, message: str) -> None:
    jp = tmp_path / "j.jsonl"
    jp.write_text(_header(basic) + "\n" + line + "\n")
    with pytest.raises(JournalError, match=message):
        Journal(str(basic), path=jp)


def test_a_journal_of_other_files_is_refused(basic: Path, tmp_path: Path) -> None:
    other = _copy(tmp_path, "drift.tfrecord")
    jp = tmp_path / "j.jsonl"
    jp.write_text(_header(other) + "\n")
    with pytest.raises(JournalMismatchError, match="the journal is for"):
        Journal(str(basic), path=jp)


def test_a_journal_file_started_again_is_read_from_the_start(basic: Path, tmp_path: Path) -> None:
    jp = tmp_path / "j.jsonl"
    with Journal(str(basic), path=jp) as one, Journal(str(basic), path=jp) as two:
        one.set_value(0, "feature1", 0, "5")
        one.set_value(1, "feature1", 0, "5")
        assert two.pending == 2
        # Started again in place (shorter than what the second tab had read).
        jp.write_text(_header(basic) + "\n" + _OLD_LINES[5] + "\n")
        assert two.pending == 0 and list(two.marks()) == [4]
        rec = two.effective_record(0)
        assert rec is not None and rec.features["feature1"].values != [5]


def test_source_identity_is_the_cache_identity_with_content(basic: Path) -> None:
    (ident,) = J.source_identity([basic])
    assert ident == FileIdentity.of(basic, content=True) and ident.head_crc is not None
    assert FileIdentity.from_json(ident.to_json()).differences(ident) == []


# -- the change set ----------------------------------------------------------------------------


def _change(cid: int, target: RecordRef, name: str | None, section: str = "features") -> Change:
    op = "delete_record" if section == "record" else "set_feature"
    return Change(cid, target, op, section, name, None, None, float(cid))  # type: ignore[arg-type]


def test_change_set_undo_takes_what_builds_on_a_change() -> None:
    cs = ChangeSet()
    for ch in [_change(1, 0, "a"), _change(2, 0, "b"), _change(3, 0, "a"), _change(4, 1, "a")]:
        cs.apply(ChangeLine(ch))
    assert cs.undo_ids(1) == [1, 3]  # the same feature of the same record
    assert cs.undo_ids(2) == [2]
    cs.apply(ChangeLine(_change(5, 0, None, "record")))
    assert cs.undo_ids(1) == [1, 3, 5]  # a whole-record change builds on everything
    assert cs.touched() == [0, 1] and cs.deleted() == [0] and cs.pending == 5
    cs.apply(UndoLine((5,), 0.0))
    assert cs.deleted() == [] and cs.pending_ids() == [1, 2, 3, 4]
    with pytest.raises(EditError, match="not pending"):
        cs.undo_ids(5)
    assert cs.next_id == 6


def test_change_set_stamps_move_with_every_change_to_a_record() -> None:
    cs = ChangeSet()
    assert cs.stamp(0) == 0
    cs.apply(ChangeLine(_change(1, 0, "a")))
    first = cs.stamp(0)
    cs.apply(MarkLine(0, "passed", "", 1.0))
    assert cs.stamp(0) == first  # a mark is not a change
    cs.apply(UndoLine((1,), 2.0))
    undone = cs.stamp(0)
    cs.apply(UndoLine((1,), 3.0, redo=True))
    assert len({0, first, undone, cs.stamp(0)}) == 4
    cs.reset()
    assert cs.stamp(0) == 0 and cs.pending == 0 and cs.marks() == {}
    cs.apply(ChangeLine(_change(1, 0, "a")))
    assert cs.stamp(0) not in (0, first, undone)  # never given twice


# -- the edited dataset ------------------------------------------------------------------------


def test_page_of_the_edited_dataset(tmp_path: Path) -> None:
    p = _copy(tmp_path, "garbage_between.tfrecord")
    with Journal(str(p)) as j:
        source = {s.index: s for s in j.source.page(9, 12)}
        j.set_value(9, "feature1", 0, "4")
        j.set_value(9, "feature3", 0, "0.5")
        a = j.duplicate_record(9)
        b = j.add_record(a, copy_of=0)
        j.delete_record(10)
        page = j.page(9, 12)
        assert [(e.slot.index, e.edit, e.ref, e.changes) for e in page] == [
            (9, "edited", 9, 2),
            (9, "added", a, 1),
            (9, "added", b, 1),
            (None, "", None, 0),
            (10, "deleted", 10, 1),
            (11, "", 11, 0),
        ]
        edited, new_a, new_b, skipped, deleted, plain = page
        assert edited.slot.payload == j.effective_payload(9) != source[9].payload
        assert edited.slot.length == len(edited.slot.payload or b"")
        assert edited.slot.offset == source[9].offset and edited.slot.local == 9
        assert new_a.slot.payload == j.effective_payload(a) and new_a.slot.offset is None
        assert new_b.slot.payload == j.source.read(0)
        assert skipped.slot.status == "skipped" and skipped.slot.problem is not None
        assert deleted.slot == source[10] and plain.slot == source[11]
        assert [e.slot for e in j.page(20, 22)] == j.source.page(20, 22)  # nothing edited


def test_page_marks_a_deleted_damaged_record(tmp_path: Path) -> None:
    p = _copy(tmp_path, "corrupt_data_crc.tfrecord")
    with Journal(str(p)) as j:
        j.delete_record(5)
        (slot,) = j.page(5, 6)
        assert (slot.edit, slot.slot.status, slot.slot.payload) == ("deleted", "damaged", None)


def test_records_added_after_an_undone_record_keep_their_place(basic: Path) -> None:
    with Journal(str(basic)) as j:
        a = j.duplicate_record(2)
        c = j.add_record(a, copy_of=0)
        assert j.new_children(2) == [a, c]
        j.undo(j.changes_for(a)[0].id)
        assert list(j.order())[:5] == [0, 1, 2, c, 3]
        assert j.new_children(2) == [c]
        assert [e.ref for e in j.page(2, 4)] == [2, c, 3]
        assert j.count() == 65 and j.anchor(c) == 2


def test_a_second_tab_never_sees_a_stale_record(basic: Path) -> None:
    with Journal(str(basic)) as one, Journal(str(basic)) as two:
        before = two.effective_record(0)  # cached in the second tab
        one.set_value(0, "feature1", 0, "42")
        after = two.effective_record(0)
        assert before is not None and after is not None
        assert after.features["feature1"].values == [42] != before.features["feature1"].values
        one.undo_all()
        assert two.effective_record(0) == before


def test_a_journal_on_an_open_file_leaves_it_open(basic: Path) -> None:
    f = codec.TFRecordFile(str(basic))
    with Journal(f) as j:
        assert j.paths == [str(basic)]
        j.set_mark(0, "passed")
    assert not f.closed and f.read(0)
    f.close()


# -- model and review --------------------------------------------------------------------------


def test_vocabularies_and_record_order() -> None:
    assert len(J.OPS) == 12 and J.SECTIONS == ("features", "feature_lists", "record")
    assert J.MARK_STATUSES == ("passed", "flagged")
    assert mark_status("passed") == "passed" and mark_status(None) is None
    with pytest.raises(EditError, match="mark status"):
        mark_status("ok")
    assert J.sort_refs(["n10", 3, "n2", 1]) == [1, 3, "n2", "n10"]


def test_review_progress_and_report(basic: Path) -> None:
    with Journal(str(basic)) as j:
        new = j.duplicate_record(1)
        j.set_mark(new, "passed", "copy ok")
        j.set_mark(3, "flagged", "blurry, dark")
        j.set_mark(0, "passed")
        j.delete_record(0)
        j.set_value(3, "feature1", 0, "1")
        assert review.progress(j) == (2, 64, 1, 1)  # the deleted record's mark is left out
        rows = review.report_rows(j, lambda path: Path(path).name)
        assert [(r["record"], r["status"], r["file"], r["edited"], r["deleted"]) for r in rows] == [
            (0, "passed", "basic.tfrecord", True, True),
            (3, "flagged", "basic.tfrecord", True, False),
            (new, "passed", "", True, False),
        ]
        text = review.report_csv(rows).decode()
        assert text.splitlines()[0] == ",".join(review.REPORT_FIELDS)
        assert '3,flagged,"blurry, dark",' in text
        doc = json.loads(review.report_json(j, rows, "basic"))
        assert (doc["source"], doc["records"], doc["reviewed"], doc["flagged"]) == (
            "basic",
            64,
            2,
            1,
        )
        assert doc["marks"][2]["record"] == new


def test_the_public_surface_is_sorted_and_complete() -> None:
    def key(name: str) -> tuple[int, str]:
        return (0 if name.isupper() else 1 if name[0].isupper() else 2, name)

    assert J.__all__ == sorted(J.__all__, key=key)
    assert all(hasattr(J, name) for name in J.__all__)
    assert not hasattr(Journal, "delete_value") and not hasattr(Journal, "rename_feature")


def test_a_source_read_anonymously_is_asked_about_anonymously(tmp_path, monkeypatch):
    """A journal's identity checks ask about the source's files the way the source was
    opened: a public bucket read with --anon is asked without credentials too."""
    from browser_app.edits import journal_file

    path = tmp_path / "a.tfrecord"
    codec.write_records(path, [b"x", b"y"])
    asked: list[bool] = []
    real = journal_file.FileIdentity.of

    def of(p, *, content=False, anon=False):  # type: ignore[no-untyped-def]
        asked.append(anon)
        return real(p, content=content, anon=anon)

    monkeypatch.setattr(journal_file.FileIdentity, "of", staticmethod(of))
    for anon in (True, False):
        asked.clear()
        with codec.TFRecordDataset([str(path)], anon=anon) as ds:
            j = Journal(ds, path=tmp_path / f"j-{anon}.jsonl")
            j.identity()
            j.close()
        assert asked and set(asked) == {anon}


def test_a_journal_is_as_private_as_every_other_cache_file(tmp_path, monkeypatch):
    """One rule for what the cache holds: journals, indexes and inflated copies alike are
    readable and writable by their user alone, whatever the umask."""
    from codec.settings import CACHE_FILE_MODE

    monkeypatch.setenv("TFRECORD_BROWSER_CACHE", str(tmp_path / "cache"))
    old = os.umask(0o022)
    try:
        path = tmp_path / "a.tfrecord.gz"
        codec.write_records(path, [b"x", b"y"], compression="gzip")
        with codec.TFRecordDataset([str(path)]) as ds:
            assert len(ds) == 2
            j = Journal(ds)
            j.delete_record(0)
            j.close()
    finally:
        os.umask(old)
    cache = tmp_path / "cache"
    files = [p for p in cache.rglob("*") if p.is_file() and not p.name.endswith(".lock")]
    kinds = {p.parent.name for p in files}
    assert {"journals", "index", "inflated"} <= kinds, files
    assert {p.name: p.stat().st_mode & 0o777 for p in files} == {
        p.name: CACHE_FILE_MODE for p in files
    }
