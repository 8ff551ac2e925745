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

__all__ = ["TileUrl", "picture_urls", "tile_urls"]

_PLACE = "tfb-gallery-tiles"


class TileUrl(str):
    """A tile picture's URL that also carries the URLs of the PNGs its layers refer to
    (``GalleryItem.blobs``, in order: the masks and class maps the browser draws over it)."""

    blob_urls: tuple[str, ...]

    def __new__(cls, url: str, blob_urls: Sequence[str] = ()) -> TileUrl:
        out = super().__new__(cls, url)
        out.blob_urls = tuple(blob_urls)
        return out


def tile_urls(items: Sequence[GalleryItem], slot: str) -> list[str | None]:
    """The URL of each tile's picture (None for a tile without one), registered for this
    session under ``slot`` (``page``, ``next``…) and the tile's position; all None outside a
    running app (no media file manager). A tile whose layers the browser draws has the URLs
    of their PNGs (registered under the tile's place and their position) on its
    :class:`TileUrl`."""
    place = f"{_PLACE}.{slot}"
    urls = picture_urls([(item.data, item.mime) for item in items], place)
    out: list[str | None] = []
    for i, (item, url) in enumerate(zip(items, urls)):
        if url is not None and item.blobs:
            blobs = picture_urls([(b, "image/png") for b in item.blobs], f"{place}.{i}")
            url = TileUrl(url, [u for u in blobs if u is not None])
        out.append(url)
    return out


def picture_urls(pictures: Sequence[tuple[bytes | None, str]], place: str) -> list[str | None]:
    """The URL of each ``(data, mime)`` picture (None for one without data), registered for
    this session under ``place`` (unique to the element showing them) and the picture's
    position; all None outside a running app (no media file manager)."""
    if not runtime.exists():
        return [None] * len(pictures)
    files = runtime.get_instance().media_file_mgr
    return [
        None if data is None else files.add(data, mime or "image/png", f"{place}.{i}")
        for i, (data, mime) in enumerate(pictures)
    ]
