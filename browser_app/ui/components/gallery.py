"""The gallery grid as one element drawn in the browser (``assets/gallery.js``): what Python
sends it (:func:`page_data`), what it sends back (actions: :func:`read_actions`), and what
Python does with those (:func:`handle`) — plain functions of plain data, tested without a
browser — and :func:`mount`, which puts it on the page.

The element owns the gallery's keys: ←/→/↑/↓/J/K move the focus without a run of the script;
P/F (and the tiles' mark buttons), N/B (and a move past the page's end) and Enter (and a
click) are *actions*. Each action has a sequence number from the element (``client`` names
one element in one page load); the element sends every action not yet acknowledged, each
time, as the trigger value ``act``, and Python applies each number once (:class:`Memory`
remembers the last one applied) and acknowledges it in the next data (``ack``). A mark shows
as pending until then: the journal is written before the mark is shown as saved. The focus
is the state value ``focus``, told with every action and before a pointer goes down elsewhere
on the page (so a widget's run knows it); a move alone sends nothing. The state value
``ahead`` asks for the next page once a page is shown: the page itself is not kept waiting
while the next one's thumbnails are drawn.

``epoch`` in the data changes when the current record changed outside the grid (the pager,
"Go to record", another page): the element then takes the focus Python sends; otherwise it
keeps its own, which may be ahead of what Python knows.

Where the server has the marks route (:mod:`browser_app.ui.routes`; ``mark`` in the data, its
URL and this session's token), a mark passed or flagged is first posted there — in the order
made, and only while every mark before it in the queue was saved there too, so the journal
keeps the order the marks were made in — and its tile leaves its pending state as soon as
the route answers (the journal holds the line then); the action still goes to Python, which
applies it without writing it again (``saved`` in :func:`handle`). A mark the route refused
or could not take, and a cleared mark, are Python's to write as before."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from browser_app.ui.components import served
from browser_app.ui.components.actions import count, read_numbered
from browser_app.ui.components.review_keys import Saved
from browser_app.view import GalleryItem
from codec import layers as L
from codec.dataset import DAMAGED, RECOVERED

__all__ = [
    "BADGE_HELP",
    "NAME",
    "Action",
    "Effects",
    "Memory",
    "PageFacts",
    "handle",
    "mount",
    "page_data",
    "read_actions",
    "tile",
]

NAME = "tfrecord_browser.gallery"
MARKS = ("passed", "flagged")

BADGE_HELP = (
    "⚠ bad box: a box of this record has a coordinate out of range, not a number, or"
    " inverted; it is drawn dashed and the record view says what is wrong."
    " ◌ recovered: found by searching past damaged bytes; see the record for why it might not"
    " be a record of the file."
)


# -- what the element draws -------------------------------------------------------------------


def tile(item: GalleryItem, url: str | None, mark: str | None) -> dict[str, Any]:
    """One tile as the element gets it: its record (None: a tile that opens nothing), its
    caption, the URL of its picture or why there is none, its badges, its saved mark, and
    the layers the element draws over the picture (``layers``: ``GalleryItem.overlay`` with
    ``urls``, those of the PNGs it refers to, which ``url`` carries when it is a
    :class:`~browser_app.ui.services.tiles.TileUrl`). What a tile has not (no problem, no
    badge, no mark, no layers) is left out: a page is sent on every run."""
    out: dict[str, Any] = {"record": item.index, "caption": item.caption, "src": url}
    if url is not None and item.overlay is not None:
        blob_urls = list(getattr(url, "blob_urls", ()))
        if len(blob_urls) == len(item.blobs):
            out["layers"] = {**item.overlay, "urls": blob_urls}
    if url is None:
        out["why"] = item.error or ("damaged" if item.status == DAMAGED else "no picture")
    if item.status == DAMAGED:
        out["damaged"] = True
    if item.status == RECOVERED:
        out["recovered"] = True
    if item.badges:
        out["badges"] = item.badges
    if mark in MARKS:
        out["mark"] = mark
    return out


def page_data(
    *,
    grid: str,
    page: int,
    size: int,
    has_next: bool,
    per_row: int,
    dense: bool,
    focus: int | None,
    epoch: int,
    tiles: Sequence[Mapping[str, Any]],
    next_tiles: Sequence[Mapping[str, Any]] = (),
    next_has_next: bool = False,
    can_mark: bool = True,
    ack: tuple[str, int] | None = None,
    mark: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """Everything the element is sent: its name (``grid``: the element drawn afresh by
    Streamlit keeps its focus and its actions under it), the page (``page``, the position of
    its first tile;
    ``size`` records a page; whether there is a next one), the grid's shape, the focus
    (``focus``, with the ``epoch`` that says whether the element must take it), the tiles and
    the next page's (shown at once on N or →, their pictures fetched ahead), whether marks
    can be saved, and the last action applied (``ack``: the element's name and number).
    ``mark``: where the marks route is and this session's token for it (``{"url": ...,
    "token": ...}``, :func:`browser_app.ui.widgets.review.mark_route`); None where there is
    none (the data then has no ``mark``)."""
    records = [t.get("record") for t in tiles]
    if focus not in records:
        focus = next((r for r in records if r is not None), None)
    nxt = None
    if next_tiles:
        nxt = {"page": page + size, "tiles": list(next_tiles), "has_next": next_has_next}
    return {
        "grid": grid,
        "page": page,
        "size": size,
        "has_next": has_next,
        "per_row": per_row,
        "dense": dense,
        "focus": focus,
        "epoch": epoch,
        "tiles": list(tiles),
        "next": nxt,
        "can_mark": can_mark,
        "badge_help": BADGE_HELP,
        "palette": PALETTE_HEX if _class_maps(tiles, next_tiles) else None,
        "ack": None if ack is None else {"client": ack[0], "seq": ack[1]},
        **({"mark": dict(mark)} if mark and can_mark else {}),
    }


PALETTE_HEX = L.PALETTE.tobytes().hex()
"""The class map colours (:data:`codec.layers.PALETTE`, value by value, RGB), for the element
to colour class maps as the server does."""


def _class_maps(*pages: Sequence[Mapping[str, Any]]) -> bool:
    return any("class_maps" in (t.get("layers") or {}) for tiles in pages for t in tiles)


# -- what the element sends back ---------------------------------------------------------------

ActionKind = Literal["mark", "page", "open"]


@dataclass(frozen=True)
class Action:
    """One action of the element: ``mark`` a ``record`` with ``status`` (None clears it);
    turn to the ``page`` at position ``start`` with the focus on ``record`` (or, when the
    element had not that page's tiles, on its ``at`` ``first`` or ``last`` tile); ``open`` a
    ``record``."""

    seq: int
    kind: ActionKind
    record: int | None = None
    status: str | None = None
    start: int | None = None
    at: Literal["first", "last"] = "first"


def _action(raw: object) -> Action | None:
    """An action from the element's JSON, or None when it is not one (never trusted: a
    message may be forged or come from an older version of the element)."""
    if not isinstance(raw, Mapping):
        return None
    seq, kind, record = count(raw.get("seq")), raw.get("kind"), count(raw.get("record"))
    if seq is None or seq == 0:
        return None
    if kind == "mark":
        status = raw.get("status")
        if record is None or not (status is None or status in MARKS):
            return None
        return Action(seq, "mark", record=record, status=status)
    if kind == "page":
        start = count(raw.get("start"))
        at = raw.get("at")
        if start is None or at not in ("first", "last"):
            return None
        return Action(seq, "page", record=record, start=start, at=at)
    if kind == "open":
        return None if record is None else Action(seq, "open", record=record)
    return None


def read_actions(value: object) -> tuple[str, tuple[Action, ...]] | None:
    """The element's name and its actions, by number, from a trigger value ``act``
    (:func:`browser_app.ui.components.actions.read_numbered`); None when it is not one."""
    return read_numbered(value, _action)


def read_focus(value: object) -> int | None:
    """The record of a state value ``focus`` (``{"record": N, "n": told}``)."""
    return count(value.get("record")) if isinstance(value, Mapping) else None


def read_ahead(value: object) -> int | None:
    """The page of a state value ``ahead``: the position of the first tile of the page the
    element has shown and wants the next page of."""
    return count(value)


# -- what Python does with them ----------------------------------------------------------------


@dataclass(frozen=True)
class Memory:
    """What the server remembers of one gallery between runs: the last action applied (its
    element and number), the record the grid itself made current, the epoch (one more each
    time the current record changed outside the grid) and a record to open on this run."""

    client: str = ""
    seq: int = 0
    record: int | None = None
    epoch: int = 0
    opening: int | None = None

    def ack(self) -> tuple[str, int] | None:
        return (self.client, self.seq) if self.client else None

    def seen(self, current: int) -> Memory:
        """Memory as a run draws the grid with ``current`` the current record: a record the
        grid did not make current moves the epoch on (the element takes the focus sent)."""
        if current == self.record:
            return self
        return replace(self, record=current, epoch=self.epoch + 1)


@dataclass(frozen=True)
class PageFacts:
    """What the handler needs to know of pages: the record at a position of the selection
    (``record_at``) and how many positions there are (``total``, None while not known)."""

    record_at: Callable[[int], int]
    size: int
    total: int | None


@dataclass
class Effects:
    """What applying actions does: the marks to write, in order (record, status or None),
    and the record to make current (None: unchanged) and to open (None: none)."""

    marks: list[tuple[int, str | None]] = field(default_factory=list)
    record: int | None = None
    opening: int | None = None
    applied: list[int] = field(default_factory=list)
    saved: list[tuple[int, str]] = field(default_factory=list)
    """Marks the marks route wrote already: applied, not to be written again."""


def handle(
    value: object,
    focus: int | None,
    memory: Memory,
    pages: PageFacts,
    saved: Saved | None = None,
) -> tuple[Effects, Memory]:
    """The effects of a trigger value ``act`` (with ``focus``, the element's state value
    told in the same message), and the memory after them. Actions already applied (a number
    at most the last one of the same element) are left out: an action sent again is applied
    once. The current record ends on the element's focus, or on the record opened. A mark
    ``saved(client, seq, record, status)`` says the marks route wrote goes to
    ``effects.saved``, not to ``effects.marks`` (a cleared mark is never the route's)."""
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
            status = a.status
            if status is not None and saved and saved(client, a.seq, a.record, status):
                effects.saved.append((a.record, status))  # the route wrote it
            else:
                effects.marks.append((a.record, status))
        elif a.kind == "page" and a.start is not None:
            effects.record = a.record if a.record is not None else _landing(a, pages)
        elif a.kind == "open" and a.record is not None:
            effects.opening = a.record
    if not effects.applied:
        return effects, memory
    if effects.opening is not None:
        effects.record = effects.opening
    elif focus is not None and not any(
        a.kind == "page" and a.record is None for a in actions if a.seq in effects.applied
    ):
        effects.record = focus
    record = memory.record if effects.record is None else effects.record
    memory = replace(
        memory, client=client, seq=effects.applied[-1], record=record, opening=effects.opening
    )
    return effects, memory


def _landing(a: Action, pages: PageFacts) -> int:
    """The record a turn to a page the element had not lands on: its first or last tile."""
    start = a.start or 0
    if pages.total is not None:
        start = min(start, max(0, pages.total - 1))
    if a.at == "last":
        stop = start + pages.size
        if pages.total is not None:
            stop = min(stop, pages.total)
        return pages.record_at(max(start, stop - 1))
    return pages.record_at(start)


# -- on the page -------------------------------------------------------------------------------


def mount(
    key: str,
    data: Mapping[str, Any],
    on_act: Callable[[], None],
    on_focus: Callable[[], None],
) -> Any:
    """Draw the gallery element with ``data`` (:func:`page_data`); ``on_act`` runs when it
    sends actions, ``on_focus`` when it tells a new focus (both before the script's body, as
    widget callbacks do). Returns its result (``focus``, ``act``)."""
    return served.renderer(NAME, "gallery")(  # its code by URL, once a page load
        key=key,
        data=dict(data),
        on_act_change=on_act,
        on_focus_change=on_focus,
        on_ahead_change=_nothing,  # read by the next run's body (a state value needs one)
    )


def _nothing() -> None:
    return None
