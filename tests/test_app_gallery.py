"""The Gallery page through AppTest: what its grid element is sent (the page's tiles with
their pictures by URL, their marks from the journal, the next page, the focus from the URL
and whether the element must take it), the tile sizes, and what is no longer there: hidden
buttons bound to the grid's keys (a key must act once). The keys themselves, the marks and
the page turns are the element's: tests/test_e2e_gallery_grid.py drives them in Chromium,
tests/test_gallery_tiles.py tests their handling without a browser."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from app_support import start_app
from streamlit.testing.v1 import AppTest

import codec
from browser_app.edits import Journal
from browser_app.sample_data import write_sample
from browser_app.ui.widgets.gallery_grid import TILE_SIZES

GALLERY = "ui/pages/gallery.py"


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    r = tmp_path_factory.mktemp("gallery") / "root"
    write_sample(r)
    return r


def gallery(
    monkeypatch: pytest.MonkeyPatch,
    root: Path,
    record: int = 0,
    size: int = 25,
    file: str = "detection.tfrecord",
) -> AppTest:
    params = {"file": file, "record": str(record), "size": str(size)}
    at = start_app(monkeypatch, root, params=params, timeout=60)
    at.switch_page(GALLERY).run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def ask_ahead(at: AppTest, start: int) -> AppTest:
    """What the element does once it has shown the page at ``start``: ask for the next."""
    state = at.session_state.to_dict()
    (key,) = [k for k in state if str(k).startswith("tfb:w:gallery:grid:")]
    at.session_state[key] = {"ahead": start}
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def grid(at: AppTest) -> dict[str, Any]:
    """The data the page sent its grid element."""
    (element,) = at.get("bidi_component")
    assert element.proto.component_name == "tfrecord_browser.gallery"
    return dict(json.loads(element.proto.json))


def test_the_grid_is_sent_the_page_and_the_next_one(monkeypatch, root):
    at = gallery(monkeypatch, root, record=3)
    data = grid(at)
    assert (data["page"], data["size"], data["focus"], data["has_next"]) == (0, 25, 3, True)
    assert data["per_row"] == TILE_SIZES["Medium"].per_row and not data["dense"]
    tiles = data["tiles"]
    assert [t["record"] for t in tiles] == list(range(25))
    assert all(t["src"].startswith("/mock/media/") and "why" not in t for t in tiles)
    assert tiles[4]["caption"].startswith("#4 · ")
    # The page is not kept waiting for the next one: the element asks for it once shown,
    # and then it rides along (N shows it at once; its pictures are fetched ahead).
    assert data["next"] is None
    data = grid(ask_ahead(at, 0))
    assert data["tiles"] == tiles and data["next"]["page"] == 25
    assert [t["record"] for t in data["next"]["tiles"]] == list(range(25, 50))
    assert not set(t["src"] for t in tiles) & set(t["src"] for t in data["next"]["tiles"])
    # No Streamlit picture is drawn for the tiles, and no button stands in for a key.
    assert len(at.main.image) == 0
    keyed = [b.key for b in at.main.button if b.key and b.key.startswith("tfb:w:gallery:")]
    assert all(k.split(":")[3] in {"first", "prev", "next", "last"} for k in keyed), keyed


def test_the_last_page_has_no_next(monkeypatch, root):
    at = gallery(monkeypatch, root, record=59)
    data = grid(at)
    assert (data["page"], data["focus"], data["has_next"], data["next"]) == (50, 59, False, None)
    assert [t["record"] for t in data["tiles"]] == list(range(50, 60))


def test_marks_come_from_the_journal(monkeypatch, root, tmp_path):
    monkeypatch.setenv("TFRECORD_BROWSER_CACHE", str(tmp_path / "cache"))
    with codec.TFRecordDataset([str(root / "detection.tfrecord")]) as ds:
        j = Journal(ds)
        try:
            j.set_mark(2, "passed")
            j.set_mark(30, "flagged")
        finally:
            j.close()
    data = grid(ask_ahead(gallery(monkeypatch, root), 0))
    marks = {t["record"]: t.get("mark") for t in [*data["tiles"], *data["next"]["tiles"]]}
    assert marks[2] == "passed" and marks[30] == "flagged"
    assert {r for r, m in marks.items() if m} == {2, 30}
    assert data["can_mark"] and data["ack"] is None


def test_the_pager_moves_the_focus_the_element_must_take(monkeypatch, root):
    at = gallery(monkeypatch, root, record=3)
    before = grid(at)
    at.button(key="tfb:w:gallery:next").click().run()
    assert not at.exception
    after = grid(at)
    assert (after["page"], after["focus"]) == (25, 25)
    # The record changed outside the grid: a new epoch, so the element takes the focus.
    assert after["epoch"] == before["epoch"] + 1
    at.run()  # drawn again, nothing changed: the element keeps its own focus
    assert grid(at)["epoch"] == after["epoch"]


def test_tile_sizes(monkeypatch, root):
    at = gallery(monkeypatch, root)
    at.segmented_control(key="tfb:w:tile").set_value("Dense").run()
    assert not at.exception
    data = grid(at)
    assert data["dense"] and data["per_row"] == TILE_SIZES["Dense"].per_row
    at.segmented_control(key="tfb:w:tile").set_value("Large").run()
    data = grid(at)
    assert not data["dense"] and data["per_row"] == TILE_SIZES["Large"].per_row


def test_a_tile_without_picture_says_why(monkeypatch, root):
    data = grid(gallery(monkeypatch, root, file="damaged.tfrecord", size=25))
    without = [t for t in data["tiles"] if t["src"] is None]
    assert len(without) == 2 and len(data["tiles"]) == 12  # one damaged, one undecodable
    assert all(t["why"] for t in without)
    assert any(t.get("damaged") for t in without)


def test_the_focused_record_has_its_comment_box(monkeypatch, root):
    at = gallery(monkeypatch, root, record=7)
    boxes = [t for t in at.main.text_input if "record 7" in str(t.label)]
    assert len(boxes) == 1, [t.label for t in at.main.text_input]
    boxes[0].input("look at the left box").run()
    assert not at.exception
    data = grid(at)
    # A comment on an unmarked record flags it.
    assert next(t for t in data["tiles"] if t["record"] == 7).get("mark") == "flagged"
