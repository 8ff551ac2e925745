"""The gallery's tiles: one per record of a page, a thumbnail with its boxes and class text, a
caption with the record number, its label and its pending edit, or the reason there is no
picture. A clip's tile is its first frame with that frame's boxes, captioned with the clip's
label and its frames; a record of audio without a picture shows its waveform and length."""

from __future__ import annotations

import hashlib
import io
import os
import struct
import zipfile
from collections.abc import Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

import codec
from browser_app.edits.model import ADDED, DELETED, EDITED, EditedSlot
from codec import example as ex
from codec.dataset import DAMAGED, INTACT, RECOVERED
from codec.detection import ClassKey
from codec.layers import LayerOptions

from .media import (
    MediaHints,
    clip_thumbnail,
    find_audio,
    find_frames,
    sound_badge,
    waveform_tile,
)
from .pictures import thumbnail
from .table import PageItem, as_edited_slot
from .values import Names, named_preview, plural

__all__ = ["PACK_MAGIC", "GalleryItem", "LayerPack", "gallery_items", "layer_pack", "record_label"]


@dataclass(frozen=True)
class GalleryItem:
    """One tile: ``index`` is the record to open (``None`` for an added record, whose anchor's
    tile opens it), ``data`` the thumbnail in ``mime`` or ``None`` with ``error`` saying why;
    ``status`` is the slot's (``intact``, ``recovered`` or ``damaged``); ``bad_boxes`` how
    many of its boxes have a problem (drawn dashed; the record view says what).
    ``overlay``: the layers the browser draws over ``data`` itself (None: drawn in it, or
    none), referring to the PNGs of ``blobs`` by position
    (:func:`codec.layers.browser_overlay`)."""

    index: int | None
    caption: str
    data: bytes | None
    mime: str
    error: str | None = None
    status: str = INTACT
    bad_boxes: int = 0
    overlay: dict[str, object] | None = field(default=None, hash=False)
    blobs: tuple[bytes, ...] = ()

    @property
    def badges(self) -> list[str]:
        """Short warnings shown on the tile."""
        out = []
        if self.bad_boxes:
            out.append(f"⚠ {plural(self.bad_boxes, 'bad box', 'bad boxes')}")
        if self.status == RECOVERED:
            out.append("◌ recovered")
        return out


_LABEL_NAMES = (
    "image/object/class/text",
    "label",
    "clip/label/string",
    "image/class/text",
    "image/class/label",
    "class",
    "name",
    "caption",
    "instrument_family_str",  # NSynth's (its "note" is a number)
    "note",
)


def record_label(rec: ex.Record, names: Names | None = None) -> str:
    """A short label for a record: class text, label or name features when present. With
    ``names`` (class names by feature), a feature that has them comes first and its labels
    are shown by name (``cat, dog``; a label the names file does not name stays a number)."""
    bound = names or {}
    keys = [k for k in _LABEL_NAMES if k in bound]
    keys += [k for k in bound if k not in _LABEL_NAMES]
    keys += [k for k in _LABEL_NAMES if k not in bound]
    for name in keys:
        f = rec.features.get(name)
        if f is not None and f.values:
            return named_preview(f, bound.get(name), 3, 20, bare=True)
    return ""


def _caption(e: EditedSlot, what: str) -> str:
    """``#12 · what``, marked with the pending edit; an added record is ``new n1 · what``."""
    head = f"new {e.ref}" if e.edit == ADDED else f"#{e.slot.index}"
    caption = f"{head} · {what}" if what else head
    if e.edit == DELETED:
        return f"{caption} · deleted"
    if e.edit == EDITED:
        return f"{caption} · ✎"
    return caption


def _tile(
    e: EditedSlot,
    size: int,
    boxes: bool,
    normalized: bool | None,
    hidden: Iterable[ClassKey] = (),
    options: LayerOptions | None = None,
    names: Names | None = None,
    hints: MediaHints | None = None,
    in_browser: bool = False,
) -> GalleryItem:
    s = e.slot
    index = None if e.edit == ADDED else s.index
    if s.payload is None:
        msg = s.problem.message if s.problem else "damaged"
        where = f"damaged at byte {s.offset:,}" if s.offset is not None else "damaged"
        return GalleryItem(index, _caption(e, where), None, "", msg, DAMAGED)
    rec = ex.decode(s.payload, "auto")
    label = record_label(rec, names)
    caption = _caption(e, label)
    status = s.status
    frames = find_frames(rec, hints)
    if frames is not None:  # a clip: its first frame, its label and its length
        label = label or frames.label
        caption = _caption(e, " · ".join(x for x in (label, plural(frames.count, "frame")) if x))
        try:
            data, mime = clip_thumbnail(rec, frames, size, boxes)
        except codec.ImageError as exc:
            return GalleryItem(index, caption, None, "", f"Cannot show: {exc}", status)
        return GalleryItem(index, caption, data, mime, None, status)
    try:
        t = thumbnail(
            rec,
            size,
            boxes,
            captions=True,
            normalized=normalized,
            hidden=hidden,
            options=options,
            in_browser=in_browser,
        )
    except codec.ImageError as exc:
        return GalleryItem(index, caption, None, "", f"Cannot show: {exc}", status)
    if t is None:
        return _sound_tile(e, rec, label, size, index, status, hints)
    return GalleryItem(
        index, caption, t.data, t.mime, None, status, t.bad_boxes, t.overlay, t.blobs
    )


def _sound_tile(
    e: EditedSlot,
    rec: ex.Record,
    label: str,
    size: int,
    index: int | None,
    status: str,
    hints: MediaHints | None = None,
) -> GalleryItem:
    """The tile of a record without a picture: its first audio clip's waveform (a flat line
    with the format for audio that is played, not drawn), its length in the caption; or "no
    picture in this record"."""
    clips = find_audio(rec, hints)
    if not clips:
        return GalleryItem(index, _caption(e, label), None, "", "no picture in this record", status)
    clip = clips[0]
    length = f"{clip.seconds:.2f} s" if clip.seconds is not None else plural(clip.count, "sample")
    caption = _caption(e, " · ".join(x for x in (label, length) if x))
    data = waveform_tile(clip, size) or sound_badge(clip.mime, size)
    return GalleryItem(index, caption, data, "image/png", None, status)


_TILE_THREADS = max(1, min(4, os.cpu_count() or 1))
"""Tiles drawn at once: decoding pictures and masks (Pillow, zlib) and blending layers (numpy)
let go of the interpreter lock, so a page's tiles draw side by side on every core."""


def gallery_items(
    items: Sequence[PageItem],
    size: int = 160,
    boxes: bool = True,
    normalized: bool | None = None,
    hidden: Iterable[ClassKey] = (),
    options: LayerOptions | None = None,
    names: Names | None = None,
    hints: MediaHints | None = None,
    in_browser: bool = True,
) -> list[GalleryItem]:
    """One tile per record of the page (skipped regions have none): the record's main
    picture with its layers as ``options`` say (boxes with their class text when asked, read
    as the dataset's ``normalized`` decision; predictions at or above the score threshold;
    masks, class map, keypoints), a caption with the record number, label and pending edit
    (``#3 · cat · ✎``, ``#4 · dog · deleted``, ``new n1 · cat``), or the problem. The boxes of
    ``hidden`` classes are not drawn; labels are named by ``names`` (:func:`record_label`);
    clips and audio are also known by the dataset's metadata (``hints``, a TFDS ``Video`` or
    ``Audio`` feature whatever its name). Tiles are drawn on several threads, in page order.

    ``in_browser`` (the app's gallery): a tile is the photograph's own thumbnail and its
    layers are drawn by the browser (``GalleryItem.overlay``; masks and class maps sent as
    their stored PNGs, never decoded here), except where a browser cannot draw them exactly
    (N·H·W float masks, 16-bit maps…: drawn here, :func:`browser_app.view.pictures.thumbnail`)."""
    edited = [e for e in (as_edited_slot(item) for item in items) if e.slot.index is not None]
    off = frozenset(hidden)

    def tile(e: EditedSlot) -> GalleryItem:
        return _tile(e, size, boxes, normalized, off, options, names, hints, in_browser)

    if len(edited) < 4 or _TILE_THREADS == 1:
        return [tile(e) for e in edited]
    with ThreadPoolExecutor(_TILE_THREADS, thread_name_prefix="tfb-tile") as pool:
        return list(pool.map(tile, edited))


PACK_MAGIC = b"PK\x03\x04"
"""The first bytes of a page's pack of layer PNGs (:func:`layer_pack`): a ZIP archive's."""

_EPOCH = (1980, 1, 1, 0, 0, 0)  # every entry's date: the same PNGs, the same bytes


@dataclass(frozen=True)
class LayerPack:
    """The PNGs a page's tiles draw over their pictures (``GalleryItem.blobs``), stored once
    each in one file the browser fetches in one request: ``data`` is a ZIP archive whose
    entries are stored as they are (not compressed again: PNGs are compressed already, and
    the app's server compresses no ZIP it sends, where it would spend 35-50 ms a page of 100
    compressing 1.8 MB of PNGs by a sixth). Its first entry is named by a BLAKE2b digest of
    the PNGs (so the file's first bytes differ whenever any of it does), then ``0.png``,
    ``1.png``…; ``parts`` gives, per tile, the ``[offset, length]`` in ``data`` of each of its
    blobs' bytes in order (empty for a tile without any)."""

    data: bytes
    parts: tuple[tuple[tuple[int, int], ...], ...]


def layer_pack(blobs: Sequence[Sequence[bytes]]) -> LayerPack | None:
    """The pack of the PNGs of a page's tiles (``blobs``: each tile's, in order), or None when
    no tile has any. Nothing is decoded: the stored bytes go in as they are, a PNG that
    several tiles refer to once."""
    if not any(blobs):
        return None
    unique: dict[bytes, int] = {}
    for tile_blobs in blobs:
        for b in tile_blobs:
            unique.setdefault(b, len(unique))
    digest = hashlib.blake2b(b"".join(unique), digest_size=16).hexdigest()
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_STORED) as z:
        z.writestr(zipfile.ZipInfo(digest, _EPOCH), b"")
        for b, i in unique.items():
            z.writestr(zipfile.ZipInfo(f"{i}.png", _EPOCH), b)
        entries = z.infolist()[1:]
    data = out.getvalue()
    at = [_entry_data(data, e.header_offset) for e in entries]
    parts = tuple(tuple((at[unique[b]], len(b)) for b in tile_blobs) for tile_blobs in blobs)
    return LayerPack(data, parts)


def _entry_data(data: bytes, header: int) -> int:
    """Where the bytes of the ZIP entry whose local header is at ``header`` begin: after the
    header's 30 bytes, its name and its extra field (their lengths at 26 and 28)."""
    name, extra = struct.unpack_from("<HH", data, header + 26)
    return header + 30 + name + extra
