"""The record view's review keys, without a browser: what the element's actions mean to
Python (:mod:`browser_app.ui.components.review_keys`), and that keys typed however fast —
sent again and again, acknowledged late — each act once, in the order typed, on the record
they were meant for."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as hs

from browser_app.ui.components import review_keys as keys

LAST = 9  # records 0..LAST in these tests


def step(record: keys.Record, n: int) -> keys.Record:
    assert isinstance(record, int)
    return min(LAST, max(0, record + n))


def act(actions: list[dict[str, Any]], client: str = "c") -> dict[str, Any]:
    return {"client": client, "actions": actions}


def test_marks_and_moves_apply_in_order_from_the_record_each_names():
    value = act(
        [
            {"seq": 1, "kind": "mark", "record": 4, "status": "passed"},
            {"seq": 2, "kind": "move", "record": 4, "step": 1},
            {"seq": 3, "kind": "mark", "record": None, "status": "flagged"},
            {"seq": 4, "kind": "move", "record": None, "step": -1},
            {"seq": 5, "kind": "move", "record": None, "step": -1},
        ]
    )
    effects, memory = keys.handle(value, keys.Memory(), 4, step)
    assert effects.marks == [(4, "passed"), (5, "flagged")]
    assert effects.record == 3
    assert effects.applied == [1, 2, 3, 4, 5]
    assert memory == keys.Memory("c", 5)
    assert memory.ack() == {"client": "c", "seq": 5}


def test_actions_already_applied_are_left_out():
    first = [{"seq": 1, "kind": "mark", "record": 2, "status": "passed"}]
    effects, memory = keys.handle(act(first), keys.Memory(), 2, step)
    assert effects.marks == [(2, "passed")]
    again = [*first, {"seq": 2, "kind": "move", "record": 2, "step": 1}]
    effects, memory = keys.handle(act(again), memory, 2, step)
    assert effects.marks == [] and effects.record == 3 and effects.applied == [2]
    # All of them already applied: nothing, and the memory stays.
    effects, same = keys.handle(act(again), memory, 3, step)
    assert effects.applied == [] and same == memory
    # Another element (a new page load) counts from 1 again.
    effects, memory = keys.handle(act(first, "d"), memory, 3, step)
    assert effects.marks == [(2, "passed")] and memory == keys.Memory("d", 1)


def test_an_action_without_record_acts_on_the_current_one():
    value = act([{"seq": 1, "kind": "mark", "record": None, "status": "flagged"}])
    effects, _ = keys.handle(value, keys.Memory(), "new-1", step)
    assert effects.marks == [("new-1", "flagged")] and effects.record is None


def test_moves_stop_at_the_ends():
    value = act([{"seq": i, "kind": "move", "record": None, "step": -1} for i in (1, 2, 3)])
    effects, _ = keys.handle(value, keys.Memory(), 1, step)
    assert effects.record == 0


def test_what_is_not_an_action_is_left_out():
    assert keys.read_actions(None) is None
    assert keys.read_actions({"client": "", "actions": []}) is None
    assert keys.read_actions({"client": "x" * 101, "actions": []}) is None
    assert keys.read_actions({"client": "c", "actions": "p"}) is None
    junk: list[Any] = [
        "p",
        {"seq": 0, "kind": "mark", "record": 1, "status": "passed"},
        {"seq": -1, "kind": "mark", "record": 1, "status": "passed"},
        {"seq": True, "kind": "mark", "record": 1, "status": "passed"},
        {"seq": 1.5, "kind": "mark", "record": 1, "status": "passed"},
        {"seq": 1, "kind": "mark", "record": 1, "status": "deleted"},
        {"seq": 1, "kind": "mark", "record": 1},
        {"seq": 1, "kind": "mark", "record": -1, "status": "passed"},
        {"seq": 1, "kind": "mark", "record": [1], "status": "passed"},
        {"seq": 1, "kind": "mark", "record": "", "status": "passed"},
        {"seq": 1, "kind": "move", "record": 1, "step": 2},
        {"seq": 1, "kind": "move", "record": 1},
        {"seq": 1, "kind": "open", "record": 1},
    ]
    got = keys.read_actions({"client": "c", "actions": junk})
    assert got == ("c", ())
    effects, memory = keys.handle({"client": "c", "actions": junk}, keys.Memory(), 1, step)
    assert effects.applied == [] and memory == keys.Memory()


def test_the_actions_read_are_bounded_and_by_number():
    many = [
        {"seq": n, "kind": "move", "record": None, "step": 1}
        for n in range(keys.MAX_ACTIONS + 50, 0, -1)
    ]
    got = keys.read_actions(act(many))
    assert got is not None
    _client, actions = got
    assert len(actions) == keys.MAX_ACTIONS
    assert [a.seq for a in actions] == sorted(a.seq for a in actions)


def test_the_data_sent_says_what_the_keys_do():
    sent = keys.data(
        7, "abc", keys.Memory("c", 3), can_mark=True, can_move=False, behind="7:2", rest_waits=True
    )
    assert sent == {
        "record": 7,
        "scope": "abc",
        "can_mark": True,
        "can_move": False,
        "ack": {"client": "c", "seq": 3},
        "behind": "7:2",
        "rest_ms": round(keys.REST * 1000),
        "rest_waits": True,
    }
    assert keys.data(None, "abc", keys.Memory(), can_mark=False, can_move=True)["ack"] is None
    # Catching up that runs the whole app waits longer for the keys to rest.
    whole = keys.data(7, "abc", keys.Memory(), can_mark=True, can_move=True, rest_whole=True)
    assert whole["rest_ms"] == round(keys.REST_WHOLE * 1000) > sent["rest_ms"]


# -- keys typed faster than the page is drawn ----------------------------------------------


class Element:
    """What ``assets/review_keys.js`` does with keys and data, in Python: an action names the
    record shown unless a move waits before it in the queue; the queue goes whole; data from
    Python drops what it acknowledges and shows its record."""

    def __init__(self, record: int) -> None:
        self.record = record
        self.queue: list[dict[str, Any]] = []
        self.seq = 0

    def key(self, letter: str) -> None:
        self.seq += 1
        moving = any(a["kind"] == "move" for a in self.queue)
        a: dict[str, Any] = {"seq": self.seq, "record": None if moving else self.record}
        if letter in "pf":
            a |= {"kind": "mark", "status": {"p": "passed", "f": "flagged"}[letter]}
        else:
            a |= {"kind": "move", "step": 1 if letter == "j" else -1}
        self.queue.append(a)

    def sent(self) -> dict[str, Any]:
        return act(list(self.queue))

    def data(self, record: int, memory: keys.Memory) -> None:
        ack = memory.ack()
        if ack is not None:
            self.queue = [a for a in self.queue if a["seq"] > ack["seq"]]
        self.record = record


def in_order(start: int, letters: str) -> tuple[list[tuple[int, str]], int]:
    """The marks and the last record of ``letters`` applied one by one from ``start``."""
    marks, here = [], start
    for letter in letters:
        if letter in "pf":
            marks.append((here, {"p": "passed", "f": "flagged"}[letter]))
        else:
            here = int(step(here, 1 if letter == "j" else -1))
    return marks, here


@settings(max_examples=300)
@given(
    start=hs.integers(0, LAST),
    events=hs.lists(
        hs.one_of(
            hs.sampled_from("pfjk"),  # a key
            hs.just("send"),  # the queue sent (the element sends at every key; resends too)
            hs.just("run"),  # Python applies the last queue sent and draws the page
            hs.just("lost"),  # a queue sent is dropped on the way
        ),
        max_size=40,
    ),
)
def test_keys_act_once_in_order_however_runs_and_sends_interleave(start, events):
    element = Element(start)
    memory, current = keys.Memory(), start
    marks: list[tuple[keys.Record, str]] = []
    waiting: dict[str, Any] | None = None  # the newest queue sent, not yet applied
    typed = ""

    def run() -> None:
        nonlocal memory, current, waiting
        if waiting is None:
            return
        effects, memory = keys.handle(waiting, memory, current, step)
        waiting = None
        marks.extend(effects.marks)
        if effects.record is not None:
            current = int(effects.record)
        element.data(current, memory)

    for event in events:
        if event in ("send", "run", "lost"):
            if event == "send" and element.queue:
                waiting = element.sent()
            elif event == "lost":
                waiting = None
            else:
                run()
            continue
        typed += event
        element.key(event)
        waiting = element.sent()  # newer queues replace older ones not yet applied
    # The keys rest: the element sends what is not acknowledged until all is.
    for _ in range(3):
        if element.queue:
            waiting = element.sent()
            run()
    assert not element.queue
    assert (marks, current) == in_order(start, typed)
