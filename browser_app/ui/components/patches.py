"""The patches grid as one element drawn in the browser (``assets/patches.js``): what Python
sends it (:func:`page_data`), what it sends back (:func:`read_actions`), what Python does with
that (:func:`handle`) — plain functions of plain data, tested without a browser — and
:func:`mount`, which puts it on the page.

A tile is an *object* (its side, record and index: :func:`tile_key`), several a record; the
focus is a tile, a mark is its record's (every tile of the record shows it). The element owns
the keys: ←/→/↑/↓ and J/K move the focus with no run of the script; P/F (and the tiles' ✓/⚑),
Enter/O (and a click on a crop) and N/B are *actions*, numbered by the element (``client``
names one element in one page load), sent again until acknowledged (``ack`` in the data) and
applied once each (:class:`Memory` keeps the last number applied). A mark shows as pending
until acknowledged: the journal is written first. The focus is the state value ``focus``,
told with every action."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from browser_app.ui.components import served
from browser_app.ui.components.actions import count, read_numbered

__all__ = [
    "NAME",
    "Action",
    "Effects",
    "Memory",
    "handle",
    "mount",
    "page_data",
    "read_actions",
    "read_focus",
    "tile",
    "tile_key",
]

NAME = "tfrecord_browser.patches"
MARKS = ("passed", "flagged")
MAX_KEY = 64  # a tile key is short: ``t:<record>:<index>``


def tile_key(side: int, record: int, index: int) -> str:
    """A tile's name: its side (``t`` ground truth, ``p`` predictions), record and index."""
    return f"{'t' if side == 0 else 'p'}:{int(record)}:{int(index)}"


def tile(key: str, record: int, caption: str, url: str | None, mark: str | None) -> dict[str, Any]:
    """One tile as the element gets it: its key, its record, its caption (text), the URL of
    its crop (or ``why`` there is none) and its record's saved mark (left out when none)."""
    out: dict[str, Any] = {"key": key, "record": int(record), "caption": caption, "src": url}
    if url is None:
        out["why"] = "no picture"
    if mark in MARKS:
        out["mark"] = mark
    return out


def page_data(
    *,
    grid: str,
    page: int,
    pages: int,
    per_row: int,
    focus: str | None,
    tiles: Sequence[Mapping[str, Any]],
    can_mark: bool,
    ack: tuple[str, int] | None,
) -> dict[str, Any]:
    """Everything the element is sent: its name (``grid``), the page shown (1-based) of
    ``pages``, tiles a row, the focused tile (the first when ``focus`` is not on the page),
    the tiles, whether marks can be saved, and the last action applied (``ack``)."""
    keys = [t["key"] for t in tiles]
    if focus not in keys:
        focus = keys[0] if keys else None
    return {
        "grid": grid,
        "page": page,
        "pages": pages,
        "per_row": per_row,
        "focus": focus,
        "tiles": list(tiles),
        "can_mark": can_mark,
        "ack": None if ack is None else {"client": ack[0], "seq": ack[1]},
    }


ActionKind = Literal["mark", "page", "open"]


@dataclass(frozen=True)
class Action:
    """One action: ``mark`` a ``record`` with ``status`` (None clears it), turn ``step``
    pages (``page``), ``open`` a ``record``."""

    seq: int
    kind: ActionKind
    record: int | None = None
    status: str | None = None
    step: int = 0


def _action(raw: object) -> Action | None:
    """An action from the element's JSON, or None when it is not one (never trusted)."""
    if not isinstance(raw, Mapping):
        return None
    seq, kind, record = count(raw.get("seq")), raw.get("kind"), count(raw.get("record"))
    if not seq:
        return None
    if kind == "mark":
        status = raw.get("status")
        if record is None or not (status is None or status in MARKS):
            return None
        return Action(seq, "mark", record=record, status=status)
    if kind == "page":
        step = raw.get("step")
        return Action(seq, "page", step=step) if step in (-1, 1) else None
    if kind == "open":
        return None if record is None else Action(seq, "open", record=record)
    return None


def read_actions(value: object) -> tuple[str, tuple[Action, ...]] | None:
    """The element's name and its actions, by number, from a trigger value ``act``
    (:func:`browser_app.ui.components.actions.read_numbered`); None when it is not one."""
    return read_numbered(value, _action)


def read_focus(value: object) -> str | None:
    """The tile key of a state value ``focus`` (``{"tile": key, "n": told}``)."""
    got = value.get("tile") if isinstance(value, Mapping) else None
    return got if isinstance(got, str) and 0 < len(got) <= MAX_KEY else None


@dataclass(frozen=True)
class Memory:
    """What the server remembers of one patches grid between runs: the last action applied
    (its element and number) and the focused tile as last told."""

    client: str = ""
    seq: int = 0
    focus: str | None = None

    def ack(self) -> tuple[str, int] | None:
        return (self.client, self.seq) if self.client else None


@dataclass
class Effects:
    """What applying actions does: the marks to write in order (record, status or None),
    the pages to turn (a sum of steps), the record to open (None: none)."""

    marks: list[tuple[int, str | None]] = field(default_factory=list)
    turn: int = 0
    opening: int | None = None
    applied: list[int] = field(default_factory=list)


def handle(value: object, focus: str | None, memory: Memory) -> tuple[Effects, Memory]:
    """The effects of a trigger value ``act`` (``focus``: the element's focus told with it)
    and the memory after them; an action already applied (a number at most the last one of
    the same element) is left out, so one sent again is applied once."""
    effects = Effects()
    got = read_actions(value)
    if got is None:
        return effects, memory
    client, actions = got
    last = memory.seq if client == memory.client else 0
    for a in actions:
        if a.seq <= last:
            continue
        effects.applied.append(a.seq)
        if a.kind == "mark" and a.record is not None:
            effects.marks.append((a.record, a.status))
        elif a.kind == "page":
            effects.turn += a.step
        elif a.kind == "open" and a.record is not None:
            effects.opening = a.record
    if not effects.applied:
        return effects, memory
    memory = replace(
        memory,
        client=client,
        seq=effects.applied[-1],
        focus=memory.focus if focus is None else focus,
    )
    return effects, memory


def mount(
    key: str,
    data: Mapping[str, Any],
    on_act: Callable[[], None],
    on_focus: Callable[[], None],
) -> Any:
    """Draw the patches element with ``data`` (:func:`page_data`); ``on_act`` runs when it
    sends actions, ``on_focus`` when it tells its focus (before the script's body)."""
    return served.renderer(NAME, "patches")(
        key=key,
        data=dict(data),
        on_act_change=on_act,
        on_focus_change=on_focus,
    )
