"""Single values in words: a bytes value classified and summed up, a feature's values folded
into one line, a hex dump, printable text, and a serialized tensor's dtype, shape and values."""

from __future__ import annotations

import io
import re
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

import codec
from codec import example as ex
from codec import images as im
from codec.audio import describe_audio
from codec.kinds import FLOAT, INT64
from codec.names import ClassNames
from codec.tensor import MAX_BYTES, describe_tensor, parse_tensor, tensor_bytes
from codec.values import format_bytes, format_float, plural

__all__ = [
    "PREVIEW_VALUES",
    "TensorView",
    "ValueView",
    "all_values",
    "class_name",
    "hex_dump",
    "named_preview",
    "named_value",
    "plural",
    "scalar_text",
    "short_text",
    "tensor_view",
    "text_preview",
    "value_view",
    "values_preview",
]

PREVIEW_VALUES = 8  # values shown in a table cell before "…"

Scalar = int | float | bytes
"""One value of a feature: ``int`` (int64), ``float`` or ``bytes``."""


_MARKDOWN_INLINE = re.compile(r"([\\`*_\[\]<>$:~|&])")
_MARKDOWN_LINE_START = re.compile(r"^(\s*\d*)([#+\-=>.)])")
# Characters that reorder the text around them (bidirectional overrides, embeddings, isolates
# and marks): in a label they could reverse the app's own words.
_BIDI = re.compile("[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def label_text(s: str) -> str:
    """``s`` safe to stand in the app's own text: bidirectional controls shown as
    ``‹U+202E›`` instead of taking effect, line breaks as ``⏎``. For plain-text places (option
    lists, table headers); :func:`md_text` for Markdown."""
    s = _BIDI.sub(lambda m: f"‹U+{ord(m.group(0)):04X}›", s)
    return s.replace("\r\n", "⏎").replace("\n", "⏎").replace("\r", "⏎")


# Markdown turns bare URLs and e-mail addresses into links, and Streamlit turns
# ``:material/…:`` and ``:shortcode:`` into icons and emoji, after escapes are read; a word
# joiner (invisible, U+2060) after the scheme's first letter, ``www``, ``@`` or the colon
# stops them.
_AUTOLINK = re.compile(r"(?i)\b(?:h(?=ttps?:)|f(?=tp:)|w(?=ww\.))|@(?=[\w-]+\.\w)|:(?=[\w/])")


def md_text(s: str) -> str:
    """``s`` as literal text inside Markdown: every character Markdown or Streamlit's own
    syntax (``:red[…]``, ``:material/…:``, ``$…$``) would read is escaped, a list or heading
    marker at the start loses its meaning, line breaks become ``⏎``, bidirectional
    controls are shown, not obeyed (:func:`label_text`), and bare URLs and addresses stay
    text instead of becoming links. Text that comes from a file, a file
    name, the URL or a person goes through this before any ``st.markdown``, alert, caption or
    widget label."""
    s = _MARKDOWN_INLINE.sub(r"\\\1", _AUTOLINK.sub("\\g<0>\u2060", label_text(s)))
    return _MARKDOWN_LINE_START.sub(lambda m: m.group(1) + "\\" + m.group(2), s)


def md_code(s: str) -> str:
    """``s`` as an inline code span that nothing in it can end: fenced by more backticks than
    any run inside, bidirectional controls and line breaks shown (:func:`label_text`)."""
    s = label_text(s)
    longest = max((len(run) for run in re.findall(r"`+", s)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if s.startswith("`") or s.endswith("`") or not s.strip() else ""
    return f"{fence}{pad}{s}{pad}{fence}"


def short_text(s: str, limit: int = 60) -> str:
    """``s`` on one line (newlines as ``⏎``), cut to ``limit`` characters with ``…``."""
    s = s.replace("\n", "⏎").replace("\r", "")
    return s if len(s) <= limit else s[: limit - 1] + "…"


@dataclass(frozen=True)
class ValueView:
    """How to show one bytes value: ``kind`` is ``text``, ``image/<fmt>``, ``audio/<fmt>``
    (``audio/wav``, ``audio/flac``, ``audio/ogg``, ``audio/mpeg``), ``tensor`` or
    ``binary``; ``summary`` a one-line text; ``text`` the decoded text (for text values)."""

    kind: str
    summary: str
    text: str | None = None


def value_view(b: bytes, limit: int = 60) -> ValueView:
    """Classify a bytes value and say it in a few words."""
    kind = ex.classify_bytes(b)
    if kind == "text":
        text = b.decode("utf-8")
        return ValueView("text", short_text(text, limit), text)
    if kind == "tensor":
        try:
            dtype, shape = describe_tensor(b)
            dims = "×".join(str(d) for d in shape) or "scalar"
            return ValueView("tensor", f"<tensor {dtype} {dims}>")
        except codec.CodecError:
            return ValueView("binary", f"<{len(b):,} bytes>")
    if kind.startswith("image/"):
        return ValueView(kind, f"<{kind[6:].upper()} {format_bytes(len(b))}>")
    if kind.startswith("audio/"):
        info = describe_audio(b)
        words = info.text() if info is not None else kind
        return ValueView(kind, f"<{words}, {format_bytes(len(b))}>")
    return ValueView("binary", f"<{len(b):,} bytes>")


def scalar_text(type_: str, v: Scalar, limit: int = 60) -> str:
    """One value of a feature of type ``type_`` as text (bytes summed up by
    :func:`value_view`, floats in their shortest float32 form)."""
    if isinstance(v, bytes):
        return value_view(v, limit).summary
    return format_float(v) if type_ == FLOAT else str(v)


def values_preview(feat: ex.Feature, limit: int = PREVIEW_VALUES, width: int = 60) -> str:
    """``a, b, c, … (+12)`` for a feature's values."""
    shown = [scalar_text(feat.type, v, width) for v in feat.values[:limit]]
    more = len(feat.values) - len(shown)
    text = ", ".join(shown)
    if more > 0:
        text += f", … (+{more:,})"
    return text


Names = Mapping[str, ClassNames]
"""Class names by record key (:mod:`codec.names`): the names files bound to features."""

NAME_CHARS = 40  # characters of a class name shown in a cell or caption


def class_name(value: object, names: ClassNames | None) -> str | None:
    """The class name of an int64 ``value`` in ``names`` (cut to :data:`NAME_CHARS`), or
    None: no names, not a whole number, or a label the file does not name (a names file
    shorter than the labels used)."""
    if names is None or isinstance(value, (bool, float, bytes)):
        return None
    try:
        name = names.name(int(value))  # type: ignore[call-overload]
    except (TypeError, ValueError, OverflowError):
        return None
    return None if name is None else short_text(label_text(name), NAME_CHARS)


def named_value(value: object, names: ClassNames | None) -> str:
    """``2 (cat)``: an int64 value with its class name; the number alone when it has none."""
    name = class_name(value, names)
    return str(value) if name is None else f"{value} ({name})"


def named_preview(
    feat: ex.Feature,
    names: ClassNames | None,
    limit: int = PREVIEW_VALUES,
    width: int = 60,
    *,
    bare: bool = False,
) -> str:
    """:func:`values_preview` with class names: ``2 (cat), 5 (dog), … (+3)`` (``bare``:
    ``cat, dog``, a number where a label has no name). A feature that is not int64, or
    ``names`` None, is previewed as it is."""
    if names is None or feat.type != INT64:
        return values_preview(feat, limit, width)
    shown = []
    for v in feat.values[:limit]:
        name = class_name(v, names)
        shown.append(str(v) if name is None else name if bare else f"{v} ({name})")
    more = len(feat.values) - len(shown)
    text = ", ".join(shown)
    if more > 0:
        text += f", … (+{more:,})"
    return text


def all_values(feat: ex.Feature, limit: int | None = None) -> list[str]:
    """Every value (up to ``limit``) of a feature as text, one per entry."""
    values = feat.values if limit is None else feat.values[:limit]
    return [scalar_text(feat.type, v, 200) for v in values]


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
    """A serialized tensor to show: ``dtype``, ``shape``, the values as text, a PNG when the
    tensor is image-shaped (uint8 H×W or H×W×1/3/4), or the reason it cannot be read;
    ``decoded_bytes`` is what decoding it takes (known from its header alone)."""

    dtype: str
    shape: tuple[int, ...]
    values: str
    picture: bytes | None = None
    error: str | None = None
    decoded_bytes: int | None = None


def _looks_like_picture(arr: np.ndarray) -> bool:
    return (
        arr.dtype == np.uint8
        and (arr.ndim == 2 or (arr.ndim == 3 and arr.shape[2] in (1, 3, 4)))
        and min(arr.shape[:2]) >= 2
    )


def tensor_view(b: bytes, max_values: int = 1000, max_bytes: int = MAX_BYTES) -> TensorView:
    """dtype, shape and values of a serialized tensor (a PNG too when it is a picture).
    Decodes only when the array takes at most ``max_bytes`` (checked from the header before
    anything is allocated); otherwise ``values`` is empty and ``error`` says why."""
    try:
        dtype, shape = describe_tensor(b)
        need = tensor_bytes(dtype, shape)
    except codec.CodecError as exc:
        return TensorView("?", (), "", None, str(exc))
    try:
        arr = parse_tensor(b, max_bytes=max_bytes)
    except codec.CodecError as exc:
        return TensorView(dtype, shape, "", None, str(exc), need)
    if arr.dtype == object:
        shown = np.vectorize(
            lambda v: short_text(v.decode("utf-8", "replace"), 40), otypes=[object]
        )(arr)
        text = np.array2string(shown, threshold=max_values, separator=", ")
    else:
        text = np.array2string(arr, threshold=max_values, separator=", ", precision=6)
    picture = None
    if _looks_like_picture(arr):
        try:
            out = io.BytesIO()
            im.tensor_to_image(arr).save(out, format="PNG")
            picture = out.getvalue()
        except codec.ImageError:
            picture = None
    return TensorView(dtype, tuple(shape), text, picture, None, need)
