"""The gallery's grid and its keyboard: tiles of even height, a focus ring on the current
record, and the keys of a review by keyboard.

The focused tile is the current record (:func:`state.record`, in the URL): moving the focus
moves the current record, the page follows it, and Enter opens it on the Records page. A tile
is a picture (or why there is none) and its caption; the caption is a button stretched over
the picture, so a click on the picture opens the record. Outside the dense size, a tile also
has its review mark control (:func:`review.tile_mark`).

Keys (also listed in the "Keys" popover): ←/→ or K/J move the focus by one tile, ↑/↓ by one
row (past the page's ends the page turns), P / F mark the focused record passed / flagged,
Enter opens it, N / B the next / previous page.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import streamlit as st

from browser_app import view
from browser_app.edits import FLAGGED, PASSED, Journal, Mark
from browser_app.ui import navigation, services, state
from browser_app.ui.source import Source
from browser_app.ui.widgets import review, schema
from browser_app.view import GalleryItem
from codec.dataset import DAMAGED

__all__ = ["KEYS_HELP", "TILE_SIZES", "TileSize", "focus_bar", "grid", "move_target", "tile_size"]


@dataclass(frozen=True)
class TileSize:
    """A tile size: tiles per row, the thumbnail's longest side in pixels, and whether tiles
    carry their own mark control (the dense size leaves it to the keys and the focus bar)."""

    per_row: int
    thumb: int
    controls: bool = True


TILE_SIZES: dict[str, TileSize] = {
    "Dense": TileSize(12, 96, controls=False),
    "Small": TileSize(8, 128),
    "Medium": TileSize(6, 160),
    "Large": TileSize(4, 224),
}
DEFAULT_SIZE = "Medium"

KEYS_HELP = """
| key | does |
| --- | --- |
| ← → or K J | focus the previous / next tile |
| ↑ ↓ | focus the tile above / below |
| P / F | mark the focused record passed / flagged |
| Enter | open the focused record on the Records page |
| N / B | next / previous page |

A click on a picture opens its record too. Marks are saved in the journal at once.
"""

_BADGE_HELP = (
    "⚠ bad box: a box of this record has a coordinate out of range, not a number, or"
    " inverted; it is drawn dashed and the record view says what is wrong."
    " ◌ recovered: found by searching past damaged bytes; see the record for why it might not"
    " be a record of the file."
)
_MARK_ICONS = {PASSED: ":material/check_circle:", FLAGGED: ":material/flag:"}
_FOCUS = "#2563eb"

# Tiles of even height: pictures in a 4:3 box (letterboxed), one-line captions stretched over
# the picture (a click on it opens the record), alerts cut to the same box.
_CSS = """
<style>
.st-key-tfb-gallery [class*="st-key-tfb-tile-"] { gap: 0.25rem; padding: 3px;
  border-radius: 6px; position: relative; }
.st-key-tfb-gallery [data-testid="stFullScreenFrame"],
.st-key-tfb-gallery [data-testid="stFullScreenFrame"] > div,
.st-key-tfb-gallery [data-testid="stImage"],
.st-key-tfb-gallery [data-testid="stImageContainer"] { width: 100% !important; }
.st-key-tfb-gallery [data-testid="stElementToolbar"] { display: none; }
.st-key-tfb-gallery [data-testid="stImage"] img { width: 100% !important; aspect-ratio: 4 / 3;
  object-fit: contain; background: #f3f4f6; image-rendering: auto; border-radius: 4px; }
.st-key-tfb-gallery [data-testid="stAlert"] { aspect-ratio: 4 / 3; overflow: hidden;
  font-size: 0.8rem; }
.st-key-tfb-gallery [data-testid="stAlert"] > div { padding: 0.4rem; }
.st-key-tfb-gallery .stButton button { min-height: 1.6rem; padding: 0 0.2rem; }
.st-key-tfb-gallery .stButton button p { white-space: nowrap; overflow: hidden;
  text-overflow: ellipsis; font-size: 0.8rem; }
.st-key-tfb-gallery .stButton button::before { content: ""; position: absolute; inset: 0; }
.st-key-tfb-gallery [class*="st-key-tfb-tile-"] * { position: static; }
.st-key-tfb-gallery [data-testid="stButtonGroup"] { flex-wrap: nowrap; position: relative;
  z-index: 1; }
.st-key-tfb-gallery [data-testid="stLayoutWrapper"]:has(> [class*="st-key-tfb-badges-"]) {
  position: absolute; top: 6px; left: 6px; right: 6px; z-index: 2; width: auto; }
.st-key-tfb-gallery-keys { position: absolute; width: 1px; height: 1px; overflow: hidden;
  clip-path: inset(50%); }
</style>
"""


def tile_size() -> tuple[str, TileSize]:
    """The tile size control; returns the chosen name and size."""
    name = st.segmented_control(
        "Tile size",
        list(TILE_SIZES),
        default=state.tile_size_name() or DEFAULT_SIZE,
        key=state.widget_key("tile"),
        label_visibility="collapsed",
        help="Dense: twelve a row, at least four rows of them on a laptop screen",
    )
    name = name if name in TILE_SIZES else DEFAULT_SIZE
    state.set_tile_size_name(name)
    return name, TILE_SIZES[name]


def move_target(
    records: Sequence[int | None], current: int | None, step: int
) -> tuple[int | None, int]:
    """Where a move of ``step`` tiles from the focused record ``current`` lands: ``(position,
    overflow)``, the tile's position on the page (tiles without a record are stepped over)
    and, when the move leaves the page, -1 / +1 (the position is then None)."""
    positions = [i for i, r in enumerate(records) if r is not None]
    if not positions:
        return None, 1 if step > 0 else -1
    here = records.index(current) if current in records else positions[0]
    target = here + step
    while 0 <= target < len(records) and records[target] is None:
        target += 1 if step > 0 else -1
    if target < 0:
        return None, -1
    if target >= len(records):
        return None, 1
    return target, 0


def _move(
    src: Source,
    records: tuple[int | None, ...],
    current: int | None,
    step: int,
    start: int,
    last: bool,
) -> None:
    """Move the focus; off the page, to the first tile of the next page or the last of the
    previous one (positions in the selection); on the last page the focus stays."""
    pos, overflow = move_target(records, current, step)
    if overflow > 0:
        if not last:
            state.set_record(_record_at(src, start + len(records)))
    elif overflow < 0:
        if start > 0:
            state.set_record(_record_at(src, start - 1))
    elif pos is not None:
        target = records[pos]
        if target is not None:
            state.set_record(target)


def _mark(src: Source, record: int | None, status: str) -> None:
    if record is not None:
        review.set_mark(src, record, status)


def _record_at(src: Source, position: int) -> int:
    return services.record_at(src, position, state.selection(), schema.stored(src))


def _page(src: Source, start: int) -> None:
    state.set_record(_record_at(src, start))


def _focused(items: Sequence[GalleryItem]) -> int | None:
    records = [it.index for it in items]
    current = state.record()
    if current in records:
        return current
    return next((r for r in records if r is not None), None)


def focus_bar(
    src: Source, items: Sequence[GalleryItem], start: int, per_row: int, total: int | None
) -> None:
    """The focused record with its mark buttons (P, F) and Open (Enter), the keys' help, and
    the hidden buttons behind the moving keys; drawn into the current horizontal container."""
    focused = _focused(items)
    records = tuple(it.index for it in items)
    size = state.page_size()
    last = total is not None and start + size >= total
    j = services.shared_journal(src)
    mark = j.marks().get(focused) if j is not None and focused is not None else None

    st.markdown(
        f"**#{focused}**" if focused is not None else "no record here",
        width="content",
    )
    for status, key in ((PASSED, "P"), (FLAGGED, "F")):
        st.button(
            review.LABELS[status],
            key=state.widget_key(f"gallery:mark:{status}"),
            icon=_MARK_ICONS[status],
            type="primary" if mark is not None and mark.status == status else "secondary",
            on_click=_mark,
            args=(src, focused, status),
            disabled=focused is None or j is None,
            shortcut=key,
        )
    if st.button(
        "Open",
        key=state.widget_key("gallery:open"),
        icon=":material/open_in_new:",
        disabled=focused is None,
        shortcut="Enter",
        help="Open the focused record on the Records page",
    ):
        if focused is not None:
            state.set_record(focused)
        navigation.goto("records")
    if focused is not None and j is not None:
        review.comment_popover(src, focused, j)
    with st.popover("", icon=":material/keyboard:", help="Keys"):
        st.markdown(KEYS_HELP)
    with st.container(key="tfb-gallery-keys"):
        for name, step, key in (
            ("Previous tile", -1, "Left"),
            ("Next tile", 1, "Right"),
            ("Previous tile (K)", -1, "K"),
            ("Next tile (J)", 1, "J"),
            ("Tile above", -per_row, "Up"),
            ("Tile below", per_row, "Down"),
        ):
            st.button(
                name,
                key=state.widget_key(f"gallery:key:{key}"),
                on_click=_move,
                args=(src, records, focused, step, start, last),
                shortcut=key,
            )
        st.button(
            "Next page (N)",
            key=state.widget_key("gallery:key:N"),
            on_click=_page,
            args=(src, start + size),
            shortcut="N",
            disabled=last,
        )
        st.button(
            "Previous page (B)",
            key=state.widget_key("gallery:key:B"),
            on_click=_page,
            args=(src, max(0, start - size)),
            shortcut="B",
            disabled=start == 0,
        )


def grid(src: Source, items: Sequence[GalleryItem], size: TileSize, j: Journal | None) -> None:
    """The tiles, ``size.per_row`` a row, with a focus ring on the focused record."""
    st.html(_CSS)
    focused = _focused(items)
    marks = j.marks() if j is not None else {}
    with st.container(key="tfb-gallery"):
        for row_start in range(0, len(items), size.per_row):
            cols = st.columns(size.per_row, gap="small")
            for pos, (col, item) in enumerate(
                zip(cols, items[row_start : row_start + size.per_row]), start=row_start
            ):
                with col, st.container(key=f"tfb-tile-{pos}"):
                    mark = marks.get(item.index) if item.index is not None else None
                    _tile(item, mark, pos)
                    if size.controls and item.index is not None:
                        review.tile_mark(src, item.index, j)
        if focused is not None:
            pos = [it.index for it in items].index(focused)
            # The ring, and the focused tile scrolled into view (a fixed script: only the
            # tile's position, a number, is put into it).
            st.html(
                f"<style>.st-key-tfb-tile-{pos} {{ outline: 3px solid {_FOCUS};"
                " outline-offset: 1px; }</style>"
                f"<script>setTimeout(() => {{ const t = document.querySelector("
                f"'.st-key-tfb-tile-{pos}'); if (t) t.scrollIntoView({{block: 'nearest'}});"
                " }, 50);</script>",
                unsafe_allow_javascript=True,
            )


def _tile(item: GalleryItem, mark: Mark | None, pos: int) -> None:
    if item.data is not None:
        st.image(
            item.data,
            output_format="PNG" if item.mime == "image/png" else "JPEG",
            width="stretch",
        )
    elif item.status == DAMAGED:
        st.error(view.md_text(item.error or "damaged"), icon=":material/error:")
    else:
        st.warning(view.md_text(item.error or "no picture"), icon=":material/broken_image:")
    if item.badges:  # laid over the picture's corner: the tile keeps its height
        with st.container(key=f"tfb-badges-{pos}"):
            st.markdown(
                " ".join(f":orange-badge[{view.md_text(b)}]" for b in item.badges),
                help=_BADGE_HELP,
            )
    if item.index is not None and st.button(
        view.md_text(item.caption),
        key=state.widget_key(f"tile:{item.index}"),
        type="tertiary",
        icon=_MARK_ICONS.get(mark.status) if mark is not None else None,
        width="stretch",
    ):
        state.set_record(item.index)
        navigation.goto("records")
