"""The gallery element's data, without a browser: the tiles Python sends (every text as it is,
pictures by URL, why a tile has none), the actions the element sends back and what Python
does with them (each numbered action once, however often it is sent; marks in the order
typed; page turns and opening land where they say), the pictures' URLs, and the element's
own moves (its JavaScript, run in Node when the machine has it)."""

from __future__ import annotations

import json
import random
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as hs
from streamlit.testing.v1 import AppTest

from browser_app.ui.components import gallery as g
from browser_app.view import GalleryItem
from codec.dataset import DAMAGED, INTACT, RECOVERED

JS = Path(g.__file__).parent / "assets" / "gallery.js"


def item(index: int | None = 1, **kw: Any) -> GalleryItem:
    base: dict[str, Any] = {"caption": f"#{index} · cat", "data": b"\xff\xd8jpeg"}
    base.update(mime="image/jpeg", status=INTACT)
    base.update(kw)
    return GalleryItem(index, **base)


# -- the tiles ---------------------------------------------------------------------------------


def test_a_tile_carries_its_record_caption_picture_and_mark() -> None:
    t = g.tile(item(7), "/media/ab.jpg", "flagged")
    assert t == {"record": 7, "caption": "#7 · cat", "src": "/media/ab.jpg", "mark": "flagged"}
    # What a tile has not is left out (a mark the element does not know too).
    plain = {"record": 7, "caption": "#7 · cat", "src": "/media/ab.jpg"}
    assert g.tile(item(7), "/media/ab.jpg", "maybe") == plain
    assert g.tile(item(7), "/media/ab.jpg", None) == plain


def test_a_tile_without_picture_says_why() -> None:
    damaged = g.tile(item(3, data=None, status=DAMAGED, error="bad CRC at byte 120"), None, None)
    assert damaged == {
        "record": 3,
        "caption": "#3 · cat",
        "src": None,
        "why": "bad CRC at byte 120",
        "damaged": True,
    }
    assert g.tile(item(3, data=None, status=DAMAGED), None, None)["why"] == "damaged"
    assert g.tile(item(3, data=None), None, None)["why"] == "no picture"
    recovered = g.tile(item(4, status=RECOVERED, bad_boxes=2), "/media/x.png", "passed")
    assert recovered["recovered"] and recovered["badges"] == ["⚠ 2 bad boxes", "◌ recovered"]
    assert "why" not in recovered and _data([recovered])["badge_help"] == g.BADGE_HELP
    # A tile of an added record opens nothing (its anchor's tile opens it).
    assert g.tile(item(None), "/media/x.png", None)["record"] is None


def test_text_from_the_data_is_sent_as_it_is() -> None:
    hostile = "<b>x</b><img src=x onerror=alert(1)>"
    t = g.tile(item(1, caption=f"#1 · {hostile}", error=hostile, data=None), None, None)
    # The element sets it with textContent: nothing is escaped or interpreted on the way.
    assert t["caption"] == f"#1 · {hostile}" and t["why"] == hostile
    assert json.loads(json.dumps(_data([t])))["tiles"][0]["caption"] == t["caption"]


def _data(
    tiles: list[dict[str, Any]],
    focus: int | None = None,
    next_tiles: list[dict[str, Any]] | None = None,
    ack: tuple[str, int] | None = None,
) -> dict[str, Any]:
    return g.page_data(
        grid="g1",
        page=100,
        size=50,
        has_next=True,
        per_row=6,
        dense=False,
        focus=focus,
        epoch=1,
        tiles=tiles,
        next_tiles=next_tiles or (),
        ack=ack,
    )


def test_the_page_data_holds_the_page_the_next_one_and_what_was_applied() -> None:
    tiles = [g.tile(item(r), f"/media/{r}.jpg", None) for r in (100, 101, 102)]
    nxt = [g.tile(item(r), f"/media/{r}.jpg", None) for r in (150, 151)]
    data = _data(tiles, focus=101, next_tiles=nxt, ack=("c1", 4))
    assert data["focus"] == 101 and data["page"] == 100 and data["size"] == 50
    assert data["grid"] == "g1"
    assert data["next"] == {"page": 150, "tiles": nxt, "has_next": False}
    assert data["ack"] == {"client": "c1", "seq": 4}
    # A focus off the page falls on its first tile with a record.
    off = _data([g.tile(item(None), None, None), *tiles], focus=7)
    assert off["focus"] == 100 and off["next"] is None and off["ack"] is None
    assert _data([g.tile(item(None), None, None)], focus=7)["focus"] is None


# -- the actions -------------------------------------------------------------------------------


def test_actions_are_read_checked_and_in_order() -> None:
    value = {
        "client": "c1",
        "actions": [
            {"seq": 3, "kind": "open", "record": 9},
            {"seq": 1, "kind": "mark", "record": 5, "status": "passed"},
            {"seq": 2, "kind": "page", "start": 50, "at": "first", "record": 50},
            {"seq": 4, "kind": "mark", "record": 6, "status": None},
            {"seq": 5, "kind": "mark", "record": 6, "status": "maybe"},  # not a status
            {"seq": True, "kind": "mark", "record": 6, "status": "passed"},  # not a number
            {"seq": 6, "kind": "mark", "record": -1, "status": "passed"},
            {"seq": 7, "kind": "page", "start": 0, "at": "middle"},
            {"seq": 8, "kind": "delete", "record": 1},
            {"seq": 0, "kind": "open", "record": 1},
            "nonsense",
        ],
    }
    client, actions = g.read_actions(value) or ("", ())
    assert client == "c1"
    assert [(a.seq, a.kind, a.record) for a in actions] == [
        (1, "mark", 5),
        (2, "page", 50),
        (3, "open", 9),
        (4, "mark", 6),
    ]
    assert actions[3].status is None and actions[1].start == 50
    bad: list[object] = [None, [], {"client": "", "actions": []}, {"client": "c", "actions": {}}]
    assert [g.read_actions(b) for b in bad] == [None] * len(bad)
    assert g.read_focus({"record": 12, "n": 3}) == 12
    assert g.read_focus({"record": "12"}) is None and g.read_focus(None) is None


def _facts(total: int | None = 1000, order: list[int] | None = None) -> g.PageFacts:
    def record_at(pos: int) -> int:
        return order[pos] if order is not None else pos

    return g.PageFacts(record_at=record_at, size=50, total=total)


def _act(client: str, *actions: dict[str, object]) -> dict[str, object]:
    return {"client": client, "actions": list(actions)}


def test_marks_are_applied_in_order_and_the_record_follows_the_focus() -> None:
    value = _act(
        "c1",
        {"seq": 1, "kind": "mark", "record": 5, "status": "passed"},
        {"seq": 2, "kind": "mark", "record": 6, "status": "flagged"},
        {"seq": 3, "kind": "mark", "record": 5, "status": None},
    )
    effects, memory = g.handle(value, 7, g.Memory(), _facts())
    assert effects.marks == [(5, "passed"), (6, "flagged"), (5, None)]
    assert effects.record == 7 and effects.opening is None
    assert (memory.client, memory.seq, memory.record) == ("c1", 3, 7)


def test_a_mark_the_route_saved_is_applied_but_not_written_again() -> None:
    """With the marks route, what it wrote (asked by the element's name, the action's number,
    record and status) is applied but left out of the marks Python writes; a cleared mark is
    never asked about (the route cannot clear), and one the route did not write is Python's."""
    wrote = {("c1", 1): (5, "passed"), ("c1", 3): (6, "passed")}
    asked: list[tuple[str, int, int | str, str]] = []

    def saved(client: str, seq: int, record: int | str, status: str) -> bool:
        asked.append((client, seq, record, status))
        return wrote.get((client, seq)) == (record, status)

    value = _act(
        "c1",
        {"seq": 1, "kind": "mark", "record": 5, "status": "passed"},
        {"seq": 2, "kind": "mark", "record": 5, "status": None},
        {"seq": 3, "kind": "mark", "record": 6, "status": "flagged"},  # route wrote passed
        {"seq": 4, "kind": "mark", "record": 7, "status": "flagged"},
    )
    effects, memory = g.handle(value, 7, g.Memory(), _facts(), saved)
    assert effects.saved == [(5, "passed")]
    assert effects.marks == [(5, None), (6, "flagged"), (7, "flagged")]
    assert [a[1] for a in asked] == [1, 3, 4]
    assert effects.record == 7 and (memory.client, memory.seq) == ("c1", 4)
    # Sent again: applied already, neither written nor asked about.
    asked.clear()
    effects, _ = g.handle(value, 7, memory, _facts(), saved)
    assert effects.saved == effects.marks == [] and asked == []
    # Without the route (saved None) every mark is Python's, as before.
    effects, _ = g.handle(value, 7, g.Memory(), _facts())
    assert effects.saved == [] and len(effects.marks) == 4


def test_the_marks_route_goes_into_the_data_only_where_there_is_one() -> None:
    route = {"url": "/tfb/mark", "token": "t" * 43}
    kw: dict[str, Any] = {
        "grid": "g", "page": 0, "size": 50, "has_next": False, "per_row": 6, "dense": False,
        "focus": 1, "epoch": 0, "tiles": [g.tile(item(1), "u", None)],
    }  # fmt: skip
    assert g.page_data(**kw, mark=route)["mark"] == route
    assert "mark" not in g.page_data(**kw)
    assert "mark" not in g.page_data(**kw, mark=route, can_mark=False)


def test_an_action_sent_again_is_applied_once() -> None:
    first = _act("c1", {"seq": 1, "kind": "mark", "record": 5, "status": "passed"})
    effects, memory = g.handle(first, 5, g.Memory(), _facts())
    assert effects.marks == [(5, "passed")]
    # The element had no answer yet: it sends the same action with the next one.
    again = _act(
        "c1",
        {"seq": 1, "kind": "mark", "record": 5, "status": "passed"},
        {"seq": 2, "kind": "mark", "record": 6, "status": "passed"},
    )
    effects, memory = g.handle(again, 6, memory, _facts())
    assert effects.marks == [(6, "passed")] and memory.seq == 2
    # The same message twice (a run that replays its trigger): nothing more.
    effects, same = g.handle(again, 6, memory, _facts())
    assert effects.marks == [] and effects.record is None and same == memory
    # Another element (the page loaded again) numbers from 1: its actions are new.
    effects, memory = g.handle(
        _act("c2", {"seq": 1, "kind": "mark", "record": 9, "status": "flagged"}),
        9,
        memory,
        _facts(),
    )
    assert effects.marks == [(9, "flagged")] and (memory.client, memory.seq) == ("c2", 1)


@settings(max_examples=200, deadline=None)
@given(
    hs.lists(
        hs.tuples(hs.integers(0, 30), hs.sampled_from(["passed", "flagged", None])),
        min_size=1,
        max_size=25,
    ),
    hs.lists(hs.integers(0, 25), min_size=1, max_size=12),
)
def test_resends_of_growing_queues_apply_every_action_once(marks, cuts) -> None:
    """The element keeps every unacknowledged action and sends them all each time; Python
    sees prefixes of the queue, repeated and out of step with its answers."""
    queue = [
        {"seq": i + 1, "kind": "mark", "record": r, "status": s} for i, (r, s) in enumerate(marks)
    ]
    memory, applied = g.Memory(), []
    acked = 0
    for cut in [*sorted(cuts), len(queue)]:
        unacked = [a for a in queue[:cut] if int(str(a["seq"])) > acked]
        effects, memory = g.handle(_act("c", *unacked), None, memory, _facts())
        applied += effects.marks
        if cut % 2:  # half the answers reach the element
            acked = memory.seq
    assert applied == [(r, s) for r, s in marks]


def test_page_turns_land_where_they_say() -> None:
    # The element had the next page: it says where the focus went.
    effects, memory = g.handle(
        _act("c", {"seq": 1, "kind": "page", "start": 50, "at": "first", "record": 50}),
        50,
        g.Memory(),
        _facts(),
    )
    assert effects.record == 50 and memory.record == 50
    # It did not (B, or ← on the first tile): Python puts it on the page's first or last
    # tile, positions of the selection turned into records; the element's stale focus does
    # not count.
    order = [10 * i for i in range(120)]
    for at, start, want in (("last", 50, 990), ("first", 50, 500), ("last", 100, 1190)):
        effects, _ = g.handle(
            _act("c", {"seq": 1, "kind": "page", "start": start, "at": at}),
            3,
            g.Memory(),
            _facts(total=120, order=order),
        )
        assert effects.record == want, (at, start)
    # While the index grows (no total), a page is taken at its word.
    effects, _ = g.handle(
        _act("c", {"seq": 1, "kind": "page", "start": 200, "at": "last"}),
        None,
        g.Memory(),
        _facts(total=None),
    )
    assert effects.record == 249


def test_opening_wins_over_the_focus() -> None:
    value = _act(
        "c",
        {"seq": 1, "kind": "mark", "record": 4, "status": "passed"},
        {"seq": 2, "kind": "open", "record": 4},
    )
    # Enter, then J before the run: the record opened is the one focused when Enter was typed.
    effects, memory = g.handle(value, 5, g.Memory(), _facts())
    assert effects.opening == 4 and effects.record == 4
    assert memory.opening == 4 and memory.record == 4


def test_the_epoch_moves_when_the_record_changes_outside_the_grid() -> None:
    m = g.Memory().seen(0)
    assert m.epoch == 1 and m.record == 0
    assert m.seen(0) is m  # drawn again: nothing changed
    _, m = g.handle(_act("c", {"seq": 1, "kind": "open", "record": 9}), 9, m, _facts())
    assert m.seen(9).epoch == 1  # the grid itself made 9 current
    assert m.seen(42).epoch == 2  # the pager did


# -- the pictures' URLs ------------------------------------------------------------------------


def _urls_script() -> None:
    import streamlit as st

    from browser_app.ui import services
    from browser_app.view import GalleryItem

    one = GalleryItem(1, "#1", b"\xff\xd8one", "image/jpeg")
    same = GalleryItem(2, "#2", b"\xff\xd8one", "image/jpeg")
    other = GalleryItem(3, "#3", b"\x89PNGother", "image/png")
    none = GalleryItem(4, "#4", None, "", "no picture")
    st.session_state["urls"] = services.tile_urls([one, same, other, none], "page")
    st.session_state["next"] = services.tile_urls([other], "next")


def test_pictures_are_served_by_urls_named_by_their_bytes() -> None:
    at = AppTest.from_function(_urls_script, default_timeout=30).run()
    assert not at.exception
    one, same, other, none = at.session_state["urls"]
    assert one == same and one.endswith(".jpg") and "/media/" in one
    assert other != one and other.endswith(".png") and none is None
    assert at.session_state["next"] == [other]


# -- the element's own moves (its JavaScript) --------------------------------------------------

_NODE = """
import {{ moveTarget, shownMark }} from {module};
const cases = JSON.parse(process.argv[1]);
console.log(JSON.stringify(cases.map(([kind, ...args]) =>
  kind === "move" ? moveTarget(...args) : shownMark(...args))));
"""


def _run_js(cases: list[list[object]]) -> list[object]:
    node = shutil.which("node")
    if node is None:
        pytest.skip("Node.js is not installed: the element's moves are tested in Chromium")
    code = _NODE.format(module=json.dumps(JS.as_uri()))
    out = subprocess.run(
        [node, "--input-type=module", "-e", code, json.dumps(cases)],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return list(json.loads(out.stdout))


def _move_cases() -> list[list[object]]:
    rng = random.Random(27)
    cases: list[list[object]] = [
        ["move", [None, None], None, 1],
        ["move", [None, 5, None], 5, -1],
        ["move", [1, 2, 3], 99, 1],  # a focus off the page counts from the first record
        ["move", [1, None, 3], 1, 1],  # a tile without record is stepped over
        ["move", [1, 2, None], 2, 1],  # ...and past the end leaves the page
    ]
    for _ in range(400):
        n = rng.randint(1, 40)
        records = [1000 + i if rng.random() < 0.8 else None for i in range(n)]
        cases.append(["move", records, records[rng.randrange(n)], rng.randint(-45, 45)])
    return cases


def test_a_move_lands_on_a_record_of_the_page_or_leaves_it() -> None:
    cases = _move_cases()
    got = _run_js(cases)
    assert got[:5] == [[-1, 1], [-1, -1], [1, 0], [2, 0], [-1, 1]]
    for (_kind, records, current, step), answer in zip(cases, got):
        assert isinstance(records, list) and isinstance(step, int) and isinstance(answer, list)
        pos, overflow = answer
        here = records.index(current) if current in records else None
        if overflow:
            assert pos == -1 and overflow == (1 if step > 0 else -1)
            if here is not None:
                beyond = here + step
                between = records[beyond:] if step > 0 else records[: max(0, beyond + 1)]
                # The page is left only when no record lies at or beyond the target.
                assert beyond >= len(records) or beyond < 0 or all(r is None for r in between)
        else:
            assert records[pos] is not None
            if here is not None and step:
                # It moves the way asked, at least as far as asked.
                assert (pos - here) * step > 0 and abs(pos - here) >= abs(step)
            if step == 0 and here is not None:
                assert pos == here


def test_a_tile_shows_its_last_pending_mark_else_the_saved_one() -> None:
    queue = [
        {"seq": 1, "kind": "mark", "record": 5, "status": "passed"},
        {"seq": 2, "kind": "page", "start": 50, "record": 50},
        {"seq": 3, "kind": "mark", "record": 5, "status": None},
        {"seq": 4, "kind": "mark", "record": 6, "status": "flagged"},
    ]
    got = _run_js(
        [
            ["mark", queue, 5, "flagged"],
            ["mark", queue, 6, ""],
            ["mark", queue, 7, "passed"],
            ["mark", queue[:1], 5, ""],
            ["mark", [], 5, None],
        ]
    )
    assert got == [["", True], ["flagged", True], ["passed", False], ["passed", True], ["", False]]
