"""The gallery's keyboard through AppTest: each key's button (its ``on_click``, which the
shortcut presses in a browser) moves the focus (the current record), marks the focused
record, turns the page or opens the record; and where a move lands, for any page."""

from __future__ import annotations

from pathlib import Path

import pytest
from app_support import start_app
from hypothesis import given
from hypothesis import strategies as hs
from streamlit.testing.v1 import AppTest

import codec
from browser_app.edits import Journal
from browser_app.sample_data import write_sample
from browser_app.ui.widgets.gallery_grid import TILE_SIZES, move_target

GALLERY = "ui/pages/gallery.py"


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    r = tmp_path_factory.mktemp("gallery") / "root"
    write_sample(r)
    return r


def gallery(
    monkeypatch: pytest.MonkeyPatch, root: Path, record: int = 0, size: int = 25
) -> AppTest:
    params = {"file": "detection.tfrecord", "record": str(record), "size": str(size)}
    at = start_app(monkeypatch, root, params=params, timeout=30)
    at.switch_page(GALLERY).run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def press(at: AppTest, key: str) -> AppTest:
    at.button(key=f"tfb:w:gallery:key:{key}").click().run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def record(at: AppTest) -> int:
    value = at.query_params["record"]
    return int(value if isinstance(value, str) else value[0])


def marks(root: Path) -> dict:
    with codec.TFRecordDataset([str(root / "detection.tfrecord")]) as ds:
        j = Journal(ds)
        try:
            return {r: m.status for r, m in j.marks().items()}
        finally:
            j.close()


def test_arrows_and_jk_move_the_focus_and_the_page_follows(monkeypatch, root):
    at = gallery(monkeypatch, root, record=3)
    per_row = TILE_SIZES["Medium"].per_row
    assert record(press(at, "Right")) == 4
    assert record(press(at, "J")) == 5
    assert record(press(at, "Left")) == 4
    assert record(press(at, "K")) == 3
    assert record(press(at, "Down")) == 3 + per_row
    assert record(press(at, "Up")) == 3
    # Past the page's last tile: the next page, focused on its first tile.
    at = gallery(monkeypatch, root, record=24)
    assert record(press(at, "Right")) == 25
    tiles = [b.key for b in at.main.button if b.key and b.key.startswith("tfb:w:tile:")]
    assert tiles[0] == "tfb:w:tile:25" and len(tiles) == 25
    assert record(press(at, "Left")) == 24


def test_n_and_b_turn_the_page(monkeypatch, root):
    at = gallery(monkeypatch, root, record=7)
    assert record(press(at, "N")) == 25
    assert record(press(at, "N")) == 50
    assert record(press(at, "B")) == 25
    at = gallery(monkeypatch, root, record=0)
    assert at.button(key="tfb:w:gallery:key:B").disabled
    # The last page: no next page, and the focus stays on the last tile.
    at = gallery(monkeypatch, root, record=59)
    assert at.button(key="tfb:w:gallery:key:N").disabled
    assert record(press(at, "Right")) == 59


def test_p_and_f_mark_the_focused_record_in_the_journal(monkeypatch, root, tmp_path):
    at = gallery(monkeypatch, root, record=2)
    at.button(key="tfb:w:gallery:mark:passed").click().run()
    press(at, "Right")
    at.button(key="tfb:w:gallery:mark:flagged").click().run()
    assert not at.exception
    assert marks(root) == {2: "passed", 3: "flagged"}
    # The focus bar shows the focused record's mark; the tiles show theirs.
    assert at.button(key="tfb:w:gallery:mark:flagged").proto.type == "primary"
    assert at.button(key="tfb:w:gallery:mark:passed").proto.type != "primary"


def test_enter_opens_the_focused_record(monkeypatch, root):
    at = gallery(monkeypatch, root, record=9)
    at.button(key="tfb:w:gallery:open").click().run()
    assert not at.exception
    assert record(at) == 9
    # The Records page, with the record's view open.
    assert any(str(m.value).startswith("#### Record 9") for m in at.main.markdown)
    assert not at.main.button_group or not any(
        b.key and b.key.startswith("tfb:w:gallery:") for b in at.main.button
    )


def test_dense_tiles_have_no_mark_controls(monkeypatch, root):
    at = gallery(monkeypatch, root)
    with_controls = len(at.main.button_group)
    at.segmented_control(key="tfb:w:tile").set_value("Dense").run()
    assert not at.exception
    assert len(at.main.image) == 25
    assert len(at.main.button_group) < with_controls - 20


def _pages() -> hs.SearchStrategy[list[int | None]]:
    return hs.lists(hs.one_of(hs.none(), hs.integers(0, 10**6)), min_size=1, max_size=40).map(
        lambda xs: [None if x is None else 1000 + i for i, x in enumerate(xs)]
    )


@given(_pages(), hs.integers(-45, 45), hs.integers(0, 39))
def test_a_move_lands_on_a_record_of_the_page_or_leaves_it(records, step, at_pos):
    current = records[at_pos % len(records)]
    pos, overflow = move_target(records, current, step)
    if step == 0 and current is not None:
        assert (pos, overflow) == (records.index(current), 0)
    if overflow:
        assert pos is None and overflow == (1 if step > 0 else -1)
        here = records.index(current) if current in records else None
        if here is not None:
            beyond = here + step
            between = records[beyond:] if step > 0 else records[: max(0, beyond + 1)]
            # Leaving the page only when no record lies at or beyond the target.
            assert beyond >= len(records) or beyond < 0 or all(r is None for r in between)
    else:
        assert pos is not None and records[pos] is not None
        here = records.index(current) if current in records else None
        if here is not None and step:
            # It moves the way asked, at least as far as asked.
            assert (pos - here) * step > 0 and abs(pos - here) >= abs(step)
