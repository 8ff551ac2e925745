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
from browser_app.view.gallery import layer_pack

__all__ = ["PACK_MIME", "TileUrl", "picture_urls", "tile_urls"]

_PLACE = "tfb-gallery-tiles"


class TileUrl(str):
    """A tile picture's URL that also carries the addresses of the PNGs its layers refer to
    (``GalleryItem.blobs``, in order: the masks and class maps the browser draws over it):
    each is the URL of the page's pack of them (:func:`browser_app.view.gallery.layer_pack`)
    with ``#at=OFFSET,LENGTH``, where it is in the pack, so the browser fetches the pack
    once for the page."""

    blob_urls: tuple[str, ...]

    def __new__(cls, url: str, blob_urls: Sequence[str] = ()) -> TileUrl:
        out = super().__new__(cls, url)
        out.blob_urls = tuple(blob_urls)
        return out


PACK_MIME = "application/zip"  # what it is (layer_pack); and no ZIP is compressed again


def tile_urls(items: Sequence[GalleryItem], slot: str) -> list[str | None]:
    """The URL of each tile's picture (None for a tile without one), registered for this
    session under ``slot`` (``page``, ``next``…) and the tile's position; all None outside a
    running app (no media file manager). The PNGs of the layers the browser draws over the
    tiles that have a picture go in one pack for the page (one request; content-addressed
    like the pictures: the same PNGs, the same URL), registered under the slot's place; such
    a tile's URL is a :class:`TileUrl` with the addresses of its PNGs in the pack."""
    place = f"{_PLACE}.{slot}"
    urls = picture_urls([(item.data, item.mime) for item in items], place)
    pack = layer_pack([item.blobs if url is not None else () for item, url in zip(items, urls)])
    if pack is None:
        return urls
    (pack_url,) = picture_urls([(pack.data, PACK_MIME)], f"{place}.pack")
    if pack_url is None:
        return urls
    return [
        url
        if url is None or not parts
        else TileUrl(url, [f"{pack_url}#at={o},{n}" for o, n in parts])
        for url, parts in zip(urls, pack.parts)
    ]


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
