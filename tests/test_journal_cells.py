"""A cell of the record editor's table read back into one edit: :meth:`Journal.set_cell` (and
:meth:`Journal.add_cell`, a new feature's values typed as a cell's) pick the command by the
feature's type and give the change that command gives; a text that does not fit raises the
command's :class:`ValueParseError` and nothing is recorded."""

from __future__ import annotations

import dataclasses
import io
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from conftest import DATA
from PIL import Image

import codec
from browser_app.edits import Change, Journal
from browser_app.edits.cells import parse_bytes_cell, placeholder
from browser_app.errors import EditError, ValueParseError
from codec.example import Feature, Record
from codec.kinds import SEQUENCE_EXAMPLE


def _copy(tmp_path: Path, name: str) -> Path:
    p = tmp_path / name
    shutil.copyfile(DATA / name, p)
    return p


def _png() -> bytes:
    out = io.BytesIO()
    Image.new("RGB", (3, 2), (10, 200, 10)).save(out, format="PNG")
    return out.getvalue()


@pytest.fixture
def two(tmp_path: Path) -> Iterator[tuple[Journal, Journal]]:
    """Two journals of their own over copies of the same data: one for the cell, one for the
    command it stands for."""
    journals = []
    for k in (1, 2):
        folder = tmp_path / f"j{k}"
        folder.mkdir()
        journals.append(Journal(str(_copy(folder, "basic.tfrecord")), path=folder / "j.jsonl"))
    yield journals[0], journals[1]
    for j in journals:
        j.close()


def _same(a: Change, b: Change) -> None:
    """The two changes are one change, made at different times."""
    assert dataclasses.replace(a, timestamp=0) == dataclasses.replace(b, timestamp=0)


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("feature1", "3, 4"),
        ("feature1", " -7 "),
        ("feature1", ""),
        ("feature3", "0.5 0.25\n1e-3"),
        ("feature3", "0.1000000001"),  # inexact: the change has the note
    ],
)
def test_a_number_cell_is_its_values_as_a_list(
    two: tuple[Journal, Journal], name: str, text: str
) -> None:
    cell, command = two
    ch = cell.set_cell(0, name, text)
    _same(ch, command.set_values(0, name, text))
    assert cell.effective_record(0) == command.effective_record(0)
    if text == "0.1000000001":
        assert ch.warnings and "not exactly representable" in ch.warnings[0]


@pytest.mark.parametrize(
    ("text", "values"),
    [
        ("cat", [b"cat"]),
        ("", [b""]),
        ("hex:00ff", [b"\x00\xff"]),
        ("text:[not a list]", [b"[not a list]"]),
        ("[not json", [b"[not json"]),
        ('["a", "hex:00ff", ""]', [b"a", b"\x00\xff", b""]),
        ("[]", []),
    ],
)
def test_a_bytes_cell_is_one_value_or_a_json_list(
    two: tuple[Journal, Journal], text: str, values: list[bytes]
) -> None:
    cell, command = two
    _same(cell.set_cell(0, "feature2", text), command.set_feature(0, "feature2", ("bytes", values)))
    rec = cell.effective_record(0)
    assert rec is not None and rec.features["feature2"].values == values


def test_placeholders_keep_the_values_they_stand_for(two: tuple[Journal, Journal]) -> None:
    j, _ = two
    png = _png()
    j.set_feature(0, "feature2", ("bytes", [png, b"x"]))
    text = f'["{placeholder(png, 0)}", "y"]'
    j.set_cell(0, "feature2", text)
    rec = j.effective_record(0)
    assert rec is not None and rec.features["feature2"].values == [png, b"y"]


@pytest.mark.parametrize(
    ("name", "text", "command"),
    [
        ("feature1", "1.5", lambda j: j.set_values(0, "feature1", "1.5")),
        ("feature1", "1, x", lambda j: j.set_values(0, "feature1", "1, x")),
        ("feature1", str(2**64), lambda j: j.set_values(0, "feature1", str(2**64))),
        ("feature3", "abc", lambda j: j.set_values(0, "feature3", "abc")),
        ("feature2", "hex:zz", lambda j: parse_bytes_cell("hex:zz", None)),
        ("feature2", '["ok", "hex:0"]', lambda j: parse_bytes_cell('["ok", "hex:0"]', None)),
    ],
)
def test_a_rejected_cell_raises_the_commands_error_and_records_nothing(
    tmp_path: Path, name: str, text: str, command: Callable[[Journal], object]
) -> None:
    jp = tmp_path / "j.jsonl"
    with Journal(str(_copy(tmp_path, "basic.tfrecord")), path=jp) as j:
        j.set_value(1, "feature1", 0, "9")
        size = jp.stat().st_size
        with pytest.raises(ValueParseError) as want:
            command(j)
        with pytest.raises(ValueParseError) as got:
            j.set_cell(0, name, text)
        assert str(got.value) == str(want.value) and got.value.reason == want.value.reason
        assert jp.stat().st_size == size and j.pending == 1
        assert j.effective_record(0) == j.source_record(0)


def test_a_cell_of_a_feature_or_record_that_is_gone(tmp_path: Path) -> None:
    with Journal(str(_copy(tmp_path, "basic.tfrecord"))) as j:
        j.delete_record(3)
        with pytest.raises(EditError, match=r"^record 3 is deleted$"):
            j.set_cell(3, "feature1", "1")
        with pytest.raises(EditError, match=r"^record 0 has no feature 'gone'$"):
            j.set_cell(0, "gone", "1")
        with pytest.raises(EditError, match=r"^record 0 has no step 0 of 'feature1'$"):
            j.set_cell(0, "feature1", "1", step=0)
        assert j.pending == 1


def test_a_steps_cell_is_read_by_its_lists_type(tmp_path: Path) -> None:
    folders = [tmp_path / "a", tmp_path / "b"]
    for f in folders:
        f.mkdir()
    with (
        Journal(str(_copy(folders[0], "sequence.tfrecord"))) as cell,
        Journal(str(_copy(folders[1], "sequence.tfrecord"))) as command,
    ):
        _same(
            cell.set_cell(1, "frame_score", "0.25, 0.5", step=2),
            command.set_step(1, "frame_score", 2, "0.25, 0.5"),
        )
        _same(cell.set_cell(1, "frame_id", "77", step=0), command.set_step(1, "frame_id", 0, "77"))
        rec = command.effective_record(1)
        assert rec is not None
        steps = list(rec.feature_lists["tokens"])
        steps[1] = Feature("bytes", [b"one", b"two"])
        _same(
            cell.set_cell(1, "tokens", '["one", "two"]', step=1),
            command.set_feature_list(1, "tokens", steps),
        )
        with pytest.raises(EditError, match=r"^record 1 has no step 9 of 'tokens'$"):
            cell.set_cell(1, "tokens", "x", step=9)
        with pytest.raises(ValueParseError, match="value 1: not a number"):
            cell.set_cell(1, "frame_score", "0.5, high", step=0)
        assert cell.effective_record(1) == command.effective_record(1)


def test_a_step_without_a_type_takes_its_lists(tmp_path: Path) -> None:
    lists = {
        "words": [Feature("none", []), Feature("bytes", [b"a"])],
        "scores": [Feature("none", []), Feature("float", [0.5])],
        "nothing": [Feature("none", [])],
    }
    with Journal(str(_copy(tmp_path, "sequence.tfrecord"))) as j:
        new = j.add_record(0, Record(SEQUENCE_EXAMPLE, {}, lists))
        j.set_cell(new, "words", '["x", "y"]', step=0)
        j.set_cell(new, "scores", "0.25, 1", step=0)
        with pytest.raises(EditError, match="has no type to parse values with"):
            j.set_cell(new, "nothing", "1", step=0)
        rec = j.effective_record(new)
        assert rec is not None
        assert rec.feature_lists["words"][0] == Feature("bytes", [b"x", b"y"])
        assert rec.feature_lists["scores"][0] == Feature("float", [0.25, 1.0])
        payload = j.effective_payload(new)
        assert payload is not None and codec.example.decode(payload) == rec


@pytest.mark.parametrize(
    ("type", "text", "values"),
    [
        ("bytes", '["a", "hex:00ff"]', [b"a", b"\x00\xff"]),
        ("bytes", "one line\nand another", [b"one line\nand another"]),
        ("bytes", "", []),
        ("int64", "1, 2 3", [1, 2, 3]),
        ("float", "", []),
    ],
)
def test_a_new_features_values_typed_as_a_cell(
    two: tuple[Journal, Journal], type: str, text: str, values: list[object]
) -> None:
    cell, command = two
    _same(cell.add_cell(0, "new", type, text), command.add_feature(0, "new", type, values))
    rec = cell.effective_record(0)
    assert rec is not None and rec.features["new"] == Feature(type, values)


def test_a_new_feature_whose_cell_does_not_fit_is_not_added(tmp_path: Path) -> None:
    with Journal(str(_copy(tmp_path, "basic.tfrecord"))) as j:
        with pytest.raises(ValueParseError, match="bad hex"):
            j.add_cell(0, "new", "bytes", "hex:0")
        with pytest.raises(ValueParseError, match="value 1: not a whole number"):
            j.add_cell(0, "new", "int64", "1, 2.5")
        with pytest.raises(EditError, match="already has a feature"):
            j.add_cell(0, "feature1", "int64", "1")
        assert j.pending == 0
