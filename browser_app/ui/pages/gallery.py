"""Gallery: the page's pictures in a grid with their labels and review marks, for quick
spot-checks."""

from __future__ import annotations

import streamlit as st

from browser_app import view
from browser_app.ui import frame, navigation, services, state
from browser_app.ui.widgets import detail, pager, review
from browser_app.view import GalleryItem
from codec.dataset import DAMAGED

_BADGE_HELP = (
    "⚠ bad box: a box of this record has a coordinate out of range, not a number, or"
    " inverted; it is drawn dashed and the record view says what is wrong."
    " ◌ recovered: found by searching past damaged bytes; see the record for why it might not"
    " be a record of the file."
)
TILE_SIZES = {"Small": 112, "Medium": 160, "Large": 224}
_ROW_WIDTH = 1100  # pixels the tiles of a row share


def render() -> None:
    src = frame.start("Gallery")
    if src is None:
        return
    start, stop, _total = pager.pager(src, "gallery")
    left, mid, _ = st.columns([1, 2, 5], vertical_alignment="center")
    with left:
        boxes = detail.boxes_toggle("gallery")
    with mid:
        size_name = st.segmented_control(
            "Tile size",
            list(TILE_SIZES),
            default=state.get("tile", "Medium"),
            key=state.widget_key("tile"),
            label_visibility="collapsed",
        )
        state.put("tile", size_name or "Medium")
    size = TILE_SIZES.get(size_name or "Medium", 160)
    items = services.gallery_items(src, start, stop, size=size, boxes=boxes)  # edits applied
    if not items:
        st.info(f"No records from {start:,} on.")
        return
    pictures = sum(1 for it in items if it.data is not None)
    if not pictures:
        st.info(
            f"No pictures in records {start:,}–{stop - 1:,}. The Records page shows every feature."
        )
    per_row = max(3, min(10, _ROW_WIDTH // (size + 24)))
    with st.container(key="tfb-gallery"):
        for row_start in range(0, len(items), per_row):
            cols = st.columns(per_row)
            for col, item in zip(cols, items[row_start : row_start + per_row]):
                with col:
                    _tile(item)
                    if item.index is not None:
                        review.tile_mark(src, item.index)  # passed / flagged, comment


def _tile(item: GalleryItem) -> None:
    if item.data is not None:
        st.image(
            item.data,
            output_format="PNG" if item.mime == "image/png" else "JPEG",
            width="stretch",
        )
    elif item.status == DAMAGED:
        st.error(item.error or "damaged", icon=":material/error:")
    else:
        st.warning(item.error or "no picture", icon=":material/broken_image:")
    # Always one line here, so the tiles of a row stay aligned with or without a badge.
    st.markdown(
        " ".join(f":orange-badge[{view.md_text(b)}]" for b in item.badges) or "\u00a0",
        help=_BADGE_HELP if item.badges else None,
    )
    if item.index is not None and st.button(
        view.md_text(item.caption),
        key=state.widget_key(f"tile:{item.index}"),
        type="tertiary",
        help="Open this record on the Records page",
        width="stretch",
    ):
        state.set_record(item.index)
        navigation.goto("records")


if __name__ == "__main__":
    render()
