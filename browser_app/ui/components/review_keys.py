"""The record view's review keys as an element drawn in the browser
(``assets/review_keys.js``): P passed, F flagged, J next record, K previous record.

Keys typed faster than the page is drawn again must each act once, in the order typed, on
the record they were meant for; a button with a keyboard shortcut cannot promise that (a key
pressed while the page runs presses the button of the record still shown, and two presses
of one button sent together count once). So the element owns the four keys once it runs:
it takes them before Streamlit's shortcuts can (the review bar's buttons keep theirs, which
show the keys and act only in the moment after the page is first drawn and before the
element's code has come). Each key is an *action* with a sequence number from the element
(``client`` names one element in one page load); the element sends every action not yet
acknowledged, each time, as the trigger value ``act``, and Python applies each number once
(:class:`Memory` remembers the last one applied) and acknowledges it in the next data
(``ack``). An action names the record it acts
on, or none when an earlier action of the queue moves the current record: it then acts where
that one landed. The element says "saving…" until its actions are acknowledged; the review
bar shows a mark once the journal holds it.

Only the record view runs at each key; what the rest of the page shows of the review (the
table's row and review column, the sidebar's counts) is asked for once the keys rest for
:data:`REST` (the trigger value ``rest``, sent once per state Python says is behind).

Where the server has the marks route (:mod:`browser_app.ui.routes`), a mark on a record the
element knows (no move before it waits) is first posted there with the session's token
(``mark`` in the data): the element says "saved" as soon as the route answers — the journal
holds the line then — and only then hands the action to Python, which applies it as any
other but does not write the mark again (``saved`` in :func:`handle`). A mark the route
refused or could not take is Python's to write, as before.

The host element (class ``tfb-review-keys``, ``data-testid="tfb-review-keys"``) says what is
shown, for tests: ``data-record`` (the record Python drew), ``data-queue`` (actions not yet
acknowledged), ``data-behind`` (what Python said the page has not drawn yet; "" when
nothing), ``data-rev`` (one more each time data from Python is applied), ``data-saved``
(the last mark the route saved, ``RECORD:STATUS``; "" when none) and ``data-rest`` (the state
whose catching-up run was last asked for, set as the request is sent; "" when none)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from browser_app.ui.components import served
from browser_app.ui.components.actions import MAX_ACTIONS, read_numbered

__all__ = [
    "MAX_ACTIONS",
    "NAME",
    "Action",
    "Effects",
    "Memory",
    "Saved",
    "data",
    "handle",
    "mount",
    "read_actions",
]

NAME = "tfrecord_browser.review_keys"
MARKS = ("passed", "flagged")
REST = 1.5  # seconds without a key before the rest of the page catches up (in the element)
REST_WHOLE = 4.0  # the same, when catching up runs the whole app (a key then waits for it)

Record = int | str  # a record's number, or the name of a new record of the journal


@dataclass(frozen=True)
class Action:
    """One key: ``mark`` the record with ``status``, or ``move`` ``step`` records on (-1:
    the previous one). ``record`` is the record it acts on; None: where the action before it
    left the current record."""

    seq: int
    kind: Literal["mark", "move"]
    record: Record | None = None
    status: str | None = None
    step: int = 0


def _int(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _record(value: object) -> Record | None:
    number = _int(value)
    if number is not None:
        return number if number >= 0 else None
    return value if isinstance(value, str) and 0 < len(value) <= 200 else None


def _action(raw: object) -> Action | None:
    """An action from the element's JSON, or None when it is not one (never trusted: a
    message may be forged or come from an older version of the element)."""
    if not isinstance(raw, Mapping):
        return None
    seq, kind = _int(raw.get("seq")), raw.get("kind")
    if seq is None or seq <= 0:
        return None
    record = _record(raw.get("record"))
    if raw.get("record") is not None and record is None:
        return None
    if kind == "mark":
        status = raw.get("status")
        return Action(seq, "mark", record, status) if status in MARKS else None
    if kind == "move":
        step = _int(raw.get("step"))
        return Action(seq, "move", record, step=step) if step in (-1, 1) else None
    return None


def read_actions(value: object) -> tuple[str, tuple[Action, ...]] | None:
    """The element's name and its actions, by number, from a trigger value ``act``
    (:func:`browser_app.ui.components.actions.read_numbered`); None when it is not one."""
    return read_numbered(value, _action)


@dataclass(frozen=True)
class Memory:
    """What the server remembers of the element between runs: the last action applied (the
    element that sent it and its number)."""

    client: str = ""
    seq: int = 0

    def ack(self) -> dict[str, Any] | None:
        return {"client": self.client, "seq": self.seq} if self.client else None


@dataclass
class Effects:
    """What applying actions does: the marks to write, in order (record, status), and the
    record to make current at the end (None: unchanged)."""

    marks: list[tuple[Record, str]] = field(default_factory=list)
    record: Record | None = None
    applied: list[int] = field(default_factory=list)
    saved: list[tuple[Record, str]] = field(default_factory=list)
    """Marks the marks route wrote already: applied, not to be written again."""


Saved = Callable[[str, int, Record, str], bool]
"""``saved(client, seq, record, status)``: whether the marks route wrote that action."""


def handle(
    value: object,
    memory: Memory,
    current: Record,
    step: Callable[[Record, int], Record],
    saved: Saved | None = None,
) -> tuple[Effects, Memory]:
    """The effects of a trigger value ``act`` when ``current`` is the current record, and
    the memory after them. ``step(record, n)`` is the record ``n`` records on from
    ``record`` in the order the person pages through (itself at either end). Actions already
    applied (a number at most the last one of the same element) are left out: an action sent
    again is applied once. A mark ``saved`` says the marks route wrote (asked only for a
    mark that named its record) goes to ``effects.saved``, not to ``effects.marks``."""
    effects = Effects()
    got = read_actions(value)
    if got is None:
        return effects, memory
    client, actions = got
    last = memory.seq if client == memory.client else 0
    here = current
    for a in actions:
        if a.seq <= last:
            continue
        effects.applied.append(a.seq)
        if a.record is not None:
            here = a.record
        if a.kind == "mark" and a.status is not None:
            wrote = (
                a.record is not None and saved is not None and saved(client, a.seq, here, a.status)
            )
            (effects.saved if wrote else effects.marks).append((here, a.status))
        elif a.kind == "move":
            here = step(here, a.step)
    if not effects.applied:
        return effects, memory
    if here != current:
        effects.record = here
    return effects, Memory(client, effects.applied[-1])


def data(
    record: Record | None,
    scope: str,
    memory: Memory,
    *,
    can_mark: bool,
    can_move: bool,
    behind: str = "",
    rest_waits: bool = False,
    rest_whole: bool = False,
    mark: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """What the element is sent: the record shown (None: the keys do nothing), the source it
    belongs to (``scope``: actions waiting for one source are never sent for another),
    whether marks can be saved and whether J / K move, the last action applied, and what the
    rest of the page has not drawn yet (``behind``: a token, "" when nothing; the element
    sends the trigger ``rest`` once per token when the keys rest) and whether a key typed
    while that run is under way waits for it (``rest_waits``: the run draws widgets the
    server sets itself, such as the pager's "Go to record"; else the key is sent at once,
    and its run takes the place of the one catching up). Catching up waits :data:`REST`
    without a key, or :data:`REST_WHOLE` when it runs the whole app (``rest_whole``): a key
    typed during that run waits for all of it. ``mark``: where the marks route is and this
    session's token for it (``{"url": ..., "token": ...}``); None where there is none."""
    return {
        "record": record,
        "scope": scope,
        "can_mark": can_mark,
        "can_move": can_move,
        "ack": memory.ack(),
        "behind": behind,
        "rest_ms": round((REST_WHOLE if rest_whole else REST) * 1000),
        "rest_waits": rest_waits,
        # Only where there is a route (the data stays as it was without one).
        **({"mark": dict(mark)} if mark and can_mark else {}),
    }


# -- on the page -------------------------------------------------------------------------------


def mount(
    key: str,
    sent: Mapping[str, Any],
    *,
    on_act: Callable[[], None],
    on_rest: Callable[[], None],
) -> Any:
    """Draw the element with ``sent`` (:func:`data`); ``on_act`` runs when it sends actions,
    ``on_rest`` when the keys rest and the page is behind (both before the script's body,
    as widget callbacks do)."""
    return served.renderer(NAME, "review_keys")(
        key=key, data=dict(sent), on_act_change=on_act, on_rest_change=on_rest
    )
