"""Pure presentation: codec values in, rows, captions and picture bytes out.

No Streamlit here (and no pandas): every function takes codec objects or plain values and
returns plain data (dataclasses, dicts, lists, str, bytes), so it can be tested and timed
without a server and cached with ``st.cache_data``.
"""

from __future__ import annotations

import base64
import io
import math
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

import codec
from codec import example as ex
from codec import images as im
from codec import values
from codec.tensor import describe_tensor, is_serialized_tensor, parse_tensor
from codec.values import format_float

__all__ = [
    "GalleryItem",
    "PageView",
    "Picture",
    "Slot",
    "ValueView",
    "feature_rows",
    "feature_summary",
    "format_bytes",
    "gallery_items",
    "hex_dump",
    "page_view",
    "record_pictures",
    "report_dict",
    "sequence_table",
    "tensor_view",
    "value_view",
]

STATUS_INTACT = codec.dataset.INTACT
STATUS_DAMAGED = codec.dataset.DAMAGED
STATUS_SKIPPED = codec.dataset.SKIPPED
PREVIEW_VALUES = 8  # values shown in a table cell before "…"
MAX_COLUMNS = 40  # feature columns in the page table
MAX_PICTURE_PIXELS = 40_000_000  # larger pictures are not decoded for display
# Shown in the table's picture column in place of a picture that cannot be decoded.
BROKEN_PICTURE = "data:image/svg+xml;base64," + base64.b64encode(
    b'<svg xmlns="http://www.w3.org/2000/svg" width="48" height="48" viewBox="0 0 48 48">'
    b'<rect x="2" y="2" width="44" height="44" rx="4" fill="#fdecea" stroke="#d93025"'
    b' stroke-width="2" stroke-dasharray="4 3"/><path d="M16 16 L32 32 M32 16 L16 32"'
    b' stroke="#d93025" stroke-width="3" stroke-linecap="round"/></svg>'
).decode("ascii")


format_bytes = values.format_bytes


def plural(n: int, word: str, words: str | None = None) -> str:
    return f"{n:,} {word if n == 1 else (words or word + 's')}"


# -- reading a page ----------------------------------------------------------------------


Slot = codec.Slot


# -- single values -----------------------------------------------------------------------


@dataclass(frozen=True)
class ValueView:
    """How to show one bytes value: ``kind`` is ``text``, ``image/<fmt>``, ``tensor`` or
    ``binary``; ``summary`` a one-line text; ``text`` the decoded text (for text values)."""

    kind: str
    summary: str
    text: str | None = None


def _short(s: str, limit: int = 60) -> str:
    s = s.replace("\n", "⏎").replace("\r", "")
    return s if len(s) <= limit else s[: limit - 1] + "…"


def value_view(b: bytes, limit: int = 60) -> ValueView:
    """Classify a bytes value and say it in a few words."""
    kind = ex.classify_bytes(b)
    if kind == "text":
        text = b.decode("utf-8")
        return ValueView("text", _short(text, limit), text)
    if kind == "tensor":
        try:
            dtype, shape = describe_tensor(b)
            dims = "×".join(str(d) for d in shape) or "scalar"
            return ValueView("tensor", f"<tensor {dtype} {dims}>")
        except codec.CodecError:
            return ValueView("binary", f"<{len(b):,} bytes>")
    if kind.startswith("image/"):
        return ValueView(kind, f"<{kind[6:].upper()} {format_bytes(len(b))}>")
    return ValueView("binary", f"<{len(b):,} bytes>")


def scalar_text(type_: str, v: Any, limit: int = 60) -> str:
    if type_ == "float":
        return format_float(v)
    if type_ == "int64":
        return str(v)
    return value_view(v, limit).summary


def values_preview(feat: ex.Feature, limit: int = PREVIEW_VALUES, width: int = 60) -> str:
    """``a, b, c, … (+12)`` for a feature's values."""
    shown = [scalar_text(feat.type, v, width) for v in feat.values[:limit]]
    more = len(feat.values) - len(shown)
    text = ", ".join(shown)
    if more > 0:
        text += f", … (+{more:,})"
    return text


def hex_dump(b: bytes, limit: int = 4096, start: int = 0) -> str:
    """An ``xxd``-style dump (offset, 16 hex bytes, printable text) of up to ``limit`` bytes."""
    chunk = b[start : start + limit]
    lines = []
    for pos in range(0, len(chunk), 16):
        row = chunk[pos : pos + 16]
        hexes = " ".join(f"{c:02x}" for c in row[:8]) + "  " + " ".join(f"{c:02x}" for c in row[8:])
        text = "".join(chr(c) if 32 <= c < 127 else "." for c in row)
        lines.append(f"{start + pos:08x}  {hexes:<48}  |{text}|")
    if len(b) > start + limit:
        lines.append(f"… {len(b) - start - limit:,} more bytes")
    return "\n".join(lines)


def text_preview(b: bytes, limit: int = 2000) -> str:
    """The bytes as text where they are printable, ``·`` elsewhere (a raw record's preview)."""
    s = b[:limit].decode("utf-8", "replace")
    out = "".join(c if (c.isprintable() or c in "\n\t") and c != "\ufffd" else "·" for c in s)
    return out + ("…" if len(b) > limit else "")


# -- tensors -----------------------------------------------------------------------------


@dataclass(frozen=True)
class TensorView:
    dtype: str
    shape: tuple[int, ...]
    values: str
    picture: bytes | None = None  # PNG when the tensor is image-shaped
    error: str | None = None


def tensor_view(b: bytes, max_values: int = 1000) -> TensorView:
    """dtype, shape and values of a serialized tensor (a PNG too when it is a picture)."""
    try:
        dtype, shape = describe_tensor(b)
    except codec.CodecError as exc:
        return TensorView("?", (), "", None, str(exc))
    try:
        arr = parse_tensor(b)
    except codec.CodecError as exc:
        return TensorView(dtype, shape, "", None, str(exc))
    if arr.dtype == object:
        shown = np.vectorize(lambda v: _short(v.decode("utf-8", "replace"), 40), otypes=[object])(
            arr
        )
        text = np.array2string(shown, threshold=max_values, separator=", ")
    else:
        text = np.array2string(arr, threshold=max_values, separator=", ", precision=6)
    picture = None
    if (
        arr.dtype == np.uint8
        and (arr.ndim == 2 or (arr.ndim == 3 and arr.shape[2] in (1, 3, 4)))
        and min(arr.shape[:2]) >= 2
    ):
        try:
            out = io.BytesIO()
            im.tensor_to_image(arr).save(out, format="PNG")
            picture = out.getvalue()
        except codec.ImageError:
            picture = None
    return TensorView(dtype, tuple(shape), text, picture)


# -- pictures ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Picture:
    """A picture ready to show: ``data`` in ``format`` (``JPEG``/``PNG``/``GIF``/``WEBP``):
    the stored bytes as they are, or a lossless PNG when it had to be drawn (raw pixels,
    tensors, boxes, formats browsers do not show). ``error`` replaces the picture when it
    cannot be decoded; ``note`` warns about a declared size that does not match."""

    feature: str
    index: int
    source: str
    caption: str
    data: bytes | None
    format: str
    width: int = 0
    height: int = 0
    error: str | None = None
    note: str | None = None
    boxes: int = 0
    step: int | None = None


_BROWSER = {"image/jpeg": "JPEG", "image/png": "PNG", "image/gif": "GIF", "image/webp": "WEBP"}


def _declared_size(record: ex.Record, ref: im.ImageRef) -> tuple[int | None, int | None]:
    prefix = ref.feature.rsplit("/", 1)[0] + "/" if "/" in ref.feature else ""
    out: list[int | None] = []
    for names in (("height", "image/height"), ("width", "image/width")):
        value = None
        for n in (prefix + names[0], *names):
            f = record.features.get(n)
            if f is not None and f.type == "int64" and len(f.values) == 1:
                value = int(f.values[0])
                break
        out.append(value)
    return out[0], out[1]


def _png(img: Any) -> bytes:
    out = io.BytesIO()
    if img.mode not in ("1", "L", "LA", "P", "RGB", "RGBA"):
        img = img.convert("RGBA" if "A" in img.getbands() else "RGB")
    img.save(out, format="PNG")
    return out.getvalue()


def _where(ref: im.ImageRef) -> str:
    name = ref.feature if ref.step is None else f"{ref.feature}[{ref.step}]"
    return name if ref.index == 0 else f"{name}[{ref.index}]"


def _raw_candidates(record: ex.Record, found: set[tuple[str, int]]) -> list[Picture]:
    """Raw-pixel features whose declared size does not match: shown as a message."""
    out: list[Picture] = []
    feats = record.features

    def dim(*names: str) -> int | None:
        for n in names:
            f = feats.get(n)
            if f is not None and f.type == "int64" and len(f.values) == 1:
                return int(f.values[0])
        return None

    h, w = dim("height", "image/height"), dim("width", "image/width")
    d = dim("depth", "channels", "image/channels") or 1
    if h is None or w is None:
        return out
    for name, feat in feats.items():
        if feat.type != "bytes" or len(feat.values) != 1 or (name, 0) in found:
            continue
        low = name.lower()
        if not ("raw" in low or "pixel" in low):
            continue
        v = feat.values[0]
        if ex.classify_bytes(v) != "binary":
            continue
        need = h * w * d
        out.append(
            Picture(
                name,
                0,
                "raw",
                name,
                None,
                "",
                w,
                h,
                error=(
                    f"Size mismatch: {len(v):,} bytes, but height × width × depth ="
                    f" {h} × {w} × {d} = {need:,} bytes."
                ),
            )
        )
    return out


def record_pictures(
    record: ex.Record, boxes: bool = True, limit: int = 16, decode: bool = True
) -> list[Picture]:
    """Every picture of a record (up to ``limit``), ready to show.

    Encoded JPEG/PNG/GIF/WebP go out as they are stored; with ``boxes`` and Object Detection
    boxes present, the first picture is drawn with its boxes (a lossless PNG)."""
    refs = im.find_images(record)[:limit]
    pictures: list[Picture] = []
    box_target = 0 if boxes and "image/object/bbox/xmin" in record.features else -1
    for n, ref in enumerate(refs):
        caption = _where(ref)
        fmt = {"encoded": ref.format.upper(), "raw": "raw pixels", "tensor": "uint8 tensor"}.get(
            ref.source, ref.source
        )
        try:
            if ref.source == "encoded":
                img = im.decode_image(ref.data) if decode else None
            else:
                img = ref.image()
        except codec.ImageError as exc:
            pictures.append(
                Picture(
                    ref.feature,
                    ref.index,
                    ref.source,
                    caption,
                    None,
                    "",
                    error=f"Cannot show this picture: {exc}",
                    step=ref.step,
                )
            )
            continue
        width, height = img.size if img is not None else (ref.width, ref.height)
        note = None
        if ref.source == "encoded" and img is not None:
            dh, dw = _declared_size(record, ref)
            if (dh is not None and dh != height) or (dw is not None and dw != width):
                note = (
                    f"Size mismatch: the record declares {dw if dw is not None else '?'}×"
                    f"{dh if dh is not None else '?'} but the picture is {width}×{height}."
                )
        drawn = 0
        if n == box_target and img is not None and ref.step is None:
            found = im.find_boxes(record, width, height)
            if found:
                img = im.draw_boxes(img, found)
                drawn = len(found)
        if drawn:
            data, out_fmt = _png(img), "PNG"
        elif ref.source == "encoded" and ref.mime in _BROWSER:
            data, out_fmt = ref.data, _BROWSER[ref.mime]
        else:
            data, out_fmt = (_png(img) if img is not None else ref.display_bytes()), "PNG"
        detail = f"{fmt} {width}×{height}"
        if ref.source == "encoded":
            detail += f", {format_bytes(len(ref.data))}"
        if drawn:
            detail += f", {plural(drawn, 'box', 'boxes')}"
        pictures.append(
            Picture(
                ref.feature,
                ref.index,
                ref.source,
                f"{caption} · {detail}",
                data,
                out_fmt,
                width,
                height,
                None,
                note,
                drawn,
                ref.step,
            )
        )
    if not refs:
        return _raw_candidates(record, set())
    return pictures + _raw_candidates(record, {(r.feature, r.index) for r in refs})


def _thumb_image(ref: im.ImageRef, size: int) -> tuple[Any, tuple[int, int]]:
    """A small PIL image of ``ref`` (JPEG decoded in draft mode) and the full size."""
    from PIL import Image

    img: Any
    if ref.source == "encoded":
        img = Image.open(io.BytesIO(ref.data))
        full = img.size  # before draft mode scales it down
        if img.width * img.height > MAX_PICTURE_PIXELS:
            raise codec.ImageError(f"{img.width}×{img.height} is too large to preview")
        if ref.format == "jpeg":
            img.draft("RGB" if img.mode not in ("L", "CMYK") else img.mode, (size, size))
        img.load()
    else:
        img = ref.image()
        full = img.size
    img.thumbnail((size, size))
    return img, full


def thumbnail(
    record: ex.Record, size: int = 72, boxes: bool = True, captions: bool = False
) -> tuple[bytes, str, int, int] | None:
    """``(bytes, mime, width, height)`` of a small picture of the record's first image, with
    its boxes drawn when asked; None when the record has no picture.
    Raises :class:`codec.ImageError` when it cannot be decoded."""
    refs = im.find_images(record)
    if not refs:
        return None
    ref = refs[0]
    try:
        img, (fw, fh) = _thumb_image(ref, size)
    except codec.ImageError:
        raise
    except (OSError, ValueError, SyntaxError, EOFError) as exc:
        raise codec.ImageError(f"{ref.format} cannot be decoded: {exc}") from exc
    if boxes and ref.step is None and "image/object/bbox/xmin" in record.features:
        found = im.find_boxes(record, fw, fh)
        if found:
            img = _thumb_boxes(img, found, img.width / fw, img.height / fh, captions)
    out = io.BytesIO()
    if img.mode in ("RGBA", "LA", "P"):
        img.save(out, format="PNG")
        mime = "image/png"
    else:
        if img.mode not in ("RGB", "L"):
            img = img.convert("RGB")
        img.save(out, format="JPEG", quality=85)
        mime = "image/jpeg"
    return out.getvalue(), mime, fw, fh


_BOX_COLOURS = ("#ff3b30", "#34c759", "#007aff", "#ff9500", "#af52de", "#5ac8fa", "#ffcc00")


def _thumb_boxes(img: Any, boxes: Sequence[im.Box], sx: float, sy: float, captions: bool) -> Any:
    """Boxes on a small picture: thin outlines, class text only when asked (and legible)."""
    if captions:
        scaled = [
            im.Box(
                b.xmin * sx,
                b.ymin * sy,
                b.xmax * sx,
                b.ymax * sy,
                b.text,
                b.label,
                b.normalized,
                b.index,
            )
            for b in boxes
        ]
        return im.draw_boxes(img, scaled)
    from PIL import ImageDraw

    out = img.convert("RGB")
    draw = ImageDraw.Draw(out)
    for b in boxes:
        colour = _BOX_COLOURS[(b.label if b.label is not None else b.index) % len(_BOX_COLOURS)]
        x0, x1 = sorted((b.xmin * sx, b.xmax * sx))
        y0, y1 = sorted((b.ymin * sy, b.ymax * sy))
        draw.rectangle([x0, y0, x1, y1], outline=colour, width=1)
    return out


def data_url(data: bytes, mime: str) -> str:
    return f"data:{mime};base64,{base64.b64encode(data).decode('ascii')}"


# -- the page table ----------------------------------------------------------------------


@dataclass
class PageView:
    """The table of one page: ``columns`` as ``(name, kind)`` with kind ``int``, ``float``,
    ``text``, ``image`` or ``status``; one dict per row in ``rows``; per row, the record number
    (None for a skipped region), the status and the problem text."""

    columns: list[tuple[str, str]] = field(default_factory=list)
    rows: list[dict[str, Any]] = field(default_factory=list)
    records: list[int | None] = field(default_factory=list)
    status: list[str] = field(default_factory=list)
    kinds: dict[str, int] = field(default_factory=dict)
    has_images: bool = False
    damaged: int = 0
    skipped: int = 0
    seconds: float = 0.0


def _status_text(slot: Slot) -> str:
    if slot.status == STATUS_INTACT:
        return "✓ intact"
    p = slot.problem
    if slot.status == STATUS_DAMAGED:
        return "✗ damaged: data CRC fails"
    kind = p.kind.replace("_", " ") if p else "skipped"
    return f"⚠ {format_bytes(slot.length)} skipped ({kind})"


def decode_slot(slot: Slot) -> ex.Record | None:
    if slot.payload is None:
        return None
    return ex.decode(slot.payload, "auto")


def page_view(slots: Sequence[Slot], thumb_size: int = 72, boxes: bool = True) -> PageView:
    """One row per slot: record number, status, offset, size, kind, a thumbnail (data URL)
    when a picture exists, then a column per feature: the value for single values (numbers
    stay numbers), ``[n] a, b, …`` for lists."""
    t0 = time.perf_counter()
    view = PageView()
    decoded: list[ex.Record | None] = []
    for s in slots:
        try:
            decoded.append(decode_slot(s))
        except codec.CodecError:  # pragma: no cover - auto decoding does not raise
            decoded.append(None)
    # Feature columns: in first-seen order; numeric when every value present is a single number.
    order: dict[str, None] = {}
    single_numeric: dict[str, str] = {}
    lists: set[str] = set()
    for rec in decoded:
        if rec is None:
            continue
        view.kinds[rec.kind] = view.kinds.get(rec.kind, 0) + 1
        for name, f in rec.features.items():
            order.setdefault(name, None)
            if len(f.values) == 1 and f.type in ("int64", "float"):
                prev = single_numeric.get(name)
                if prev is None or prev == f.type:
                    single_numeric[name] = f.type
                else:
                    lists.add(name)
            else:
                lists.add(name)
        for name in rec.feature_lists:
            order.setdefault("⋮" + name, None)
            lists.add("⋮" + name)
    names = list(order)[:MAX_COLUMNS]
    mixed = len(view.kinds) > 1
    thumbs: list[str | None] = []
    for rec in decoded:
        url = None
        if rec is not None:
            try:
                t = thumbnail(rec, thumb_size, boxes)
                if t is not None:
                    url = data_url(t[0], t[1])
                    view.has_images = True
            except codec.ImageError:
                url = BROKEN_PICTURE
                view.has_images = True
        thumbs.append(url)
    cols: list[tuple[str, str]] = [("#", "int"), ("status", "status")]
    if view.has_images:
        cols.append(("picture", "image"))
    if mixed or "raw" in view.kinds:
        cols.append(("kind", "text"))
    cols += [("offset", "int"), ("bytes", "int")]
    if "raw" in view.kinds:
        cols.append(("preview", "text"))
    for name in names:
        if name in lists or name not in single_numeric:
            cols.append((name, "text"))
        else:
            cols.append((name, "int" if single_numeric[name] == "int64" else "float"))
    view.columns = cols
    for s, rec, thumb in zip(slots, decoded, thumbs):
        row: dict[str, Any] = {
            "#": s.index,
            "status": _status_text(s),
            "offset": s.offset,
            "bytes": s.length,
        }
        if view.has_images:
            row["picture"] = thumb
        if rec is not None:
            row["kind"] = rec.kind.replace("_", " ")
            if rec.kind == "raw":
                row["preview"] = _short(text_preview(rec.raw or b"", 80), 60)
            for name in names:
                if name.startswith("⋮"):
                    steps = rec.feature_lists.get(name[1:])
                    row[name] = None if steps is None else f"{plural(len(steps), 'step')}"
                    continue
                feat = rec.features.get(name)
                if feat is None:
                    row[name] = None
                elif name in lists or name not in single_numeric:
                    if len(feat.values) == 1:
                        row[name] = scalar_text(feat.type, feat.values[0])
                    else:
                        row[name] = f"[{len(feat.values)}] {values_preview(feat, 4, 24)}"
                else:
                    v = feat.values[0]
                    row[name] = v if feat.type == "int64" else (None if math.isnan(v) else v)
        view.rows.append(row)
        view.records.append(s.index)
        view.status.append(s.status)
        if s.status == STATUS_DAMAGED:
            view.damaged += 1
        elif s.status == STATUS_SKIPPED:
            view.skipped += 1
    view.seconds = time.perf_counter() - t0
    return view


# -- record detail -----------------------------------------------------------------------


@dataclass(frozen=True)
class FeatureRow:
    name: str
    type: str
    length: int
    preview: str
    section: str = "features"  # "features", "context" or "feature_lists"


def feature_rows(record: ex.Record) -> list[FeatureRow]:
    """One row per feature (and per feature list) of a record."""
    section = "context" if record.kind == "sequence_example" else "features"
    rows = [
        FeatureRow(name, f.type, len(f.values), values_preview(f, PREVIEW_VALUES), section)
        for name, f in record.features.items()
    ]
    for name, steps in record.feature_lists.items():
        types = sorted({f.type for f in steps}) or ["none"]
        total = sum(len(f.values) for f in steps)
        rows.append(
            FeatureRow(
                name,
                "/".join(types),
                len(steps),
                f"{plural(len(steps), 'step')}, {plural(total, 'value')}",
                "feature_lists",
            )
        )
    return rows


def sequence_table(record: ex.Record, max_steps: int = 1000) -> tuple[list[str], list[dict]]:
    """A SequenceExample's feature lists as a steps × feature-lists table."""
    names = list(record.feature_lists)
    n = max((len(v) for v in record.feature_lists.values()), default=0)
    rows = []
    for step in range(min(n, max_steps)):
        row: dict[str, Any] = {"step": step}
        for name in names:
            steps = record.feature_lists[name]
            if step < len(steps):
                f = steps[step]
                row[name] = (
                    scalar_text(f.type, f.values[0], 40)
                    if len(f.values) == 1
                    else f"[{len(f.values)}] {values_preview(f, 4, 20)}"
                )
            else:
                row[name] = None
        rows.append(row)
    return ["step", *names], rows


def all_values(feat: ex.Feature, limit: int | None = None) -> list[str]:
    """Every value (up to ``limit``) of a feature as text, one per entry."""
    values = feat.values if limit is None else feat.values[:limit]
    return [scalar_text(feat.type, v, 200) for v in values]


# -- summaries for the overview ----------------------------------------------------------


def report_dict(r: codec.VerifyReport) -> dict[str, Any]:
    """A verify report as plain data (for caching and tables)."""
    return {
        "path": r.path,
        "compression": r.compression,
        "records": r.records,
        "damaged": r.damaged,
        "bytes": r.bytes,
        "skipped_bytes": r.skipped_bytes,
        "ok": r.ok,
        "problems": [
            {"kind": p.kind, "offset": p.offset, "end": p.end, "message": p.message, "path": p.path}
            for p in r.problems
        ],
    }


def feature_summary(ds: codec.TFRecordDataset, limit: int = 200) -> dict[str, Any]:
    """Kinds and features of the first ``limit`` records: for each feature, the types seen
    (with counts), how many records have it, and the shortest and longest list."""
    kinds: Counter[str] = Counter()
    feats: dict[str, dict[str, Any]] = {}
    seen = damaged = 0
    for i in range(limit):
        try:
            payload = ds.read(i)
        except IndexError:
            break
        except codec.CorruptRecordError:
            damaged += 1
            continue
        seen += 1
        rec = ex.decode(payload, "auto")
        kinds[rec.kind] += 1
        items = [(n, f, "features") for n, f in rec.features.items()]
        for n, steps in rec.feature_lists.items():
            items += [(n, f, "feature_lists") for f in steps[:1]] or [
                (n, ex.Feature("none", []), "feature_lists")
            ]
        for name, f, section in items:
            e = feats.setdefault(
                name,
                {
                    "name": name,
                    "section": section,
                    "types": Counter(),
                    "records": 0,
                    "min_len": None,
                    "max_len": None,
                    "example": "",
                    "content": Counter(),
                },
            )
            e["types"][f.type] += 1
            e["records"] += 1
            n_values = len(rec.feature_lists[name]) if section == "feature_lists" else len(f.values)
            e["min_len"] = n_values if e["min_len"] is None else min(e["min_len"], n_values)
            e["max_len"] = n_values if e["max_len"] is None else max(e["max_len"], n_values)
            if not e["example"] and f.values:
                e["example"] = values_preview(f, 3, 30)
            if f.type == "bytes" and f.values:
                e["content"][value_view(f.values[0]).kind] += 1
    out = []
    for e in feats.values():
        types = e["types"]
        e["type"] = " / ".join(t for t, _ in types.most_common())
        e["drift"] = len(types) > 1
        e["content"] = e["content"].most_common(1)[0][0] if e["content"] else ""
        e["types"] = dict(types)
        out.append(e)
    return {"records": seen, "damaged": damaged, "kinds": dict(kinds), "features": out}


# -- gallery -----------------------------------------------------------------------------


@dataclass(frozen=True)
class GalleryItem:
    index: int | None
    caption: str
    data: bytes | None
    mime: str
    error: str | None = None
    status: str = STATUS_INTACT


_LABEL_NAMES = (
    "image/object/class/text",
    "label",
    "image/class/text",
    "image/class/label",
    "class",
    "name",
    "caption",
    "note",
)


def record_label(rec: ex.Record) -> str:
    """A short label for a record: class text, label or name features when present."""
    for name in _LABEL_NAMES:
        f = rec.features.get(name)
        if f is not None and f.values:
            return values_preview(f, 3, 20)
    return ""


def gallery_items(slots: Sequence[Slot], size: int = 160, boxes: bool = True) -> list[GalleryItem]:
    """One tile per record of the page: a picture (boxes drawn with their class text when
    asked), a caption with the record number and label, or the problem."""
    out = []
    for s in slots:
        if s.index is None:
            continue
        if s.payload is None:
            msg = s.problem.message if s.problem else "damaged"
            out.append(
                GalleryItem(
                    s.index,
                    f"#{s.index} · damaged at byte {s.offset:,}",
                    None,
                    "",
                    msg,
                    STATUS_DAMAGED,
                )
            )
            continue
        rec = ex.decode(s.payload, "auto")
        label = record_label(rec)
        caption = f"#{s.index}" + (f" · {label}" if label else "")
        try:
            t = thumbnail(rec, size, boxes, captions=True)
        except codec.ImageError as exc:
            out.append(GalleryItem(s.index, caption, None, "", f"Cannot show: {exc}"))
            continue
        if t is None:
            out.append(GalleryItem(s.index, caption, None, "", "no picture in this record"))
            continue
        out.append(GalleryItem(s.index, caption, t[0], t[1]))
    return out


def is_tensor(b: bytes) -> bool:
    return is_serialized_tensor(b)
