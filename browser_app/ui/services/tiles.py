"""The gallery's pictures by URL: each thumbnail registered with Streamlit's media file
manager, which serves it at ``/media/<hash>.<ext>`` (the name is a hash of the bytes, so the
same picture always has the same URL and the browser fetches it once).

A picture stays served while the session's last run refers to it: each one is registered
under a place of its own (``slot`` and its position, like an element's place on the page),
and a later registration at the same place lets the earlier picture go. A fragment's run
keeps what other places hold; a full run of the script starts afresh. So the gallery
registers the page shown and the next page (whose pictures the browser fetches ahead) on
every run that draws it: both stay valid until a run draws other pages."""

from __future__ import annotations

from collections.abc import Sequence

from streamlit import runtime

from browser_app.view import GalleryItem

__all__ = ["tile_urls"]

_PLACE = "tfb-gallery-tiles"


def tile_urls(items: Sequence[GalleryItem], slot: str) -> list[str | None]:
    """The URL of each tile's picture (None for a tile without one), registered for this
    session under ``slot`` (``page``, ``next``…) and the tile's position; all None outside a
    running app (no media file manager)."""
    if not runtime.exists():
        return [None] * len(items)
    files = runtime.get_instance().media_file_mgr
    return [
        None
        if item.data is None
        else files.add(item.data, item.mime or "image/png", f"{_PLACE}.{slot}.{i}")
        for i, item in enumerate(items)
    ]
